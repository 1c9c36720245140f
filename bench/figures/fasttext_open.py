"""22: a fastText .bin (200,000 words × 100, 500,000 buckets, written here), first and cached open,
beside gensim's `load_facebook_model` of the same file; each open in a fresh process, timed after
its imports (gensim's take seconds, embviz's torch too)."""

from __future__ import annotations

import statistics
import struct
import tempfile
from pathlib import Path

import numpy as np

from bench.figures import Context, Figure
from bench.measure import LIMIT, PEAK, run_child

NUMBER = 22
LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyzéü"))


def write_fasttext_bin(path: Path, words: list[str], dim: int, bucket: int, seed: int = 0) -> None:
    """Facebook's .bin layout (version 12, unsupervised skip-gram, n-grams of 3 to 6), random rows."""
    rng = np.random.default_rng(seed)
    args = struct.pack("<12id", dim, 5, 5, 1, 5, 1, 2, 2, bucket, 3, 6, 100, 1e-4)
    entries = b"".join(w.encode() + b"\0" + struct.pack("<qb", len(words) - i, 0) for i, w in enumerate(words))
    with path.open("wb") as f:
        f.write(struct.pack("<ii", 793712314, 12) + args)
        f.write(struct.pack("<iiiqq", len(words), len(words), 0, 10 * len(words), -1) + entries)
        for rows in (len(words) + bucket, len(words)):  # the input matrix (words, then buckets), the output one
            f.write(struct.pack("<?qq", False, rows, dim))
            for start in range(0, rows, 100_000):
                rng.standard_normal((min(100_000, rows - start), dim), dtype=np.float32).tofile(f)


def synthetic_words(count: int, seed: int = 0) -> list[str]:
    """`count` distinct words of 3 to 14 letters (a random stem, then the index in letters)."""
    rng = np.random.default_rng(seed)
    stems = ["".join(LETTERS[rng.integers(0, len(LETTERS), rng.integers(2, 8))]) for _ in range(count)]
    return [stem + _letters(i) for i, stem in enumerate(stems)]


def _letters(i: int) -> str:
    out = "a" if i == 0 else ""
    while i:
        i, digit = divmod(i, 26)
        out += chr(97 + digit)
    return out


def fasttext_file(workdir: Path, words: int, dim: int, bucket: int) -> Path:
    path = workdir / f"fasttext-{words}x{dim}-{bucket}.bin"
    if not path.is_file():
        workdir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        write_fasttext_bin(tmp, synthetic_words(words), dim, bucket)
        tmp.replace(path)
    return path


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    words, dim, bucket = (20_000, 50, 50_000) if args.quick else (200_000, 100, 500_000)
    path = fasttext_file(Path(args.workdir), words, dim, bucket)
    code = PEAK + LIMIT + f"""
import time
from embviz.core import open_checkpoint
t = time.perf_counter()
m = open_checkpoint({str(path)!r}, {args.device!r})
t2 = time.perf_counter()
m.subwords.vector('unseenword')
print(json.dumps({{'open': t2 - t, 'oov': time.perf_counter() - t2, 'rss': peak()}}))
"""
    baseline = PEAK + f"""
import time
from gensim.models.fasttext import load_facebook_model
t = time.perf_counter()
m = load_facebook_model({str(path)!r})
print(json.dumps({{'open': time.perf_counter() - t, 'rss': peak()}}))
"""
    gensim: list[dict] = []
    firsts: list[dict] = []
    cached: list[dict] = []
    why = ""
    for _ in range(args.repeats_child):  # interleaved, so that a busy spell on a shared machine hits both
        try:
            gensim.append(run_child(baseline))
        except RuntimeError as exc:
            why = str(exc)
        with tempfile.TemporaryDirectory() as cache:
            firsts.append(run_child(code, {"EMBVIZ_CACHE_DIR": cache}))
            cached.append(run_child(code, {"EMBVIZ_CACHE_DIR": cache}))
    base = statistics.median(g["open"] for g in gensim) if gensim else None
    base_note = f"gensim peak RSS {max(g['rss'] for g in gensim) / 2**20:,.0f} MiB" if gensim else f"gensim: {why}"
    size = f"{path.stat().st_size / 2**20:,.0f} MiB"
    first = statistics.median(r["open"] for r in firsts)
    record(NUMBER, f"fastText .bin ({size}, {words:,} words × {dim}, {bucket:,} buckets), first open",
           first, "s", base, "gensim load_facebook_model", "≤ 1×",
           note=f"peak RSS {max(r['rss'] for r in firsts) / 2**20:,.0f} MiB; {base_note}")
    record(NUMBER, "the same fastText .bin, cached open", statistics.median(r["open"] for r in cached), "s",
           base, "gensim load_facebook_model",
           note=f"first out-of-vocabulary vector {statistics.median(r['oov'] for r in cached):.2f} s (reads the header)")


FIGURE = Figure(NUMBER, run, order=415)
