"""Figure 16: a two-million-row word2vec table (bench.synthetic.write_word2vec_clusters).

Each open runs in a fresh process (PEAK's VmHWM for its memory), the source file read through
once beforehand so that every loader finds it in the OS's file cache, and timed from before its
imports: first opens with an empty cache folder beside gensim's loader on the same file, then
cached opens beside the app's fixed start-up (imports and the toy4 lesson model)."""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

from bench.figures import Context, Figure
from bench.measure import LIMIT, PEAK, run_child
from bench.synthetic import BIG_QUICK, BIG_ROWS, write_word2vec_clusters

# The text figure: a .vec of this many rows (its text is about 3.5 times the table; gensim's text
# reader takes a Python step per number, so two million rows would take it many minutes).
TEXT_ROWS = (200_000, 300)
TEXT_QUICK = (5_000, 64)
# Peak memory is judged at the size too, the app alone: at 200k rows the interpreter and
# torch (about 300 MiB) are most of it.
TEXT_BIG_ROWS = (2_000_000, 300)

# What a child prints besides its time: peak memory, and the part of its resident memory that
# is file pages (the mapped cache), which the OS shares with every process that maps the file.
_RESIDENT = PEAK + (
    "def shared():\n"
    "    total, mapped = 0, False\n"
    "    for line in open('/proc/self/smaps'):\n"
    "        first = line.split()[0]\n"
    "        if '-' in first and not first.endswith(':'):\n"
    "            mapped = line.rstrip().endswith('table.npy')\n"
    "        elif mapped and first == 'Rss:':\n"
    "            total += int(line.split()[1]) * 1024\n"
    "    return total\n"
)


def _open_code(source: str) -> str:
    """Times the open, and the open with embviz's imports (the app's start-up is those and the toy4 model)."""
    return _RESIDENT + LIMIT + f"""
import time
t = time.perf_counter()
from embviz.core import open_checkpoint
o, c = time.perf_counter(), time.process_time()
m = open_checkpoint({source!r}, 'cpu')
s, cpu = time.perf_counter() - t, time.process_time() - c
mapped, seal = m.cache.get('mapped_table'), None
if mapped is not None:  # the seal's check of every byte of the table, which the cached open just made
    from embviz.core.seal import Sealed
    r = time.perf_counter()
    Sealed(mapped.path.parent, None).check('table.npy')
    seal = time.perf_counter() - r
print(json.dumps({{'s': s, 'open': time.perf_counter() - o, 'cpu': cpu, 'rss': peak(), 'shared': shared(),
                  'rows': m.vocab_size, 'notes': m.notes, 'seal': seal}}))
"""


def _gensim_code(path: str, binary: bool = True) -> str:
    return _RESIDENT + LIMIT + f"""
import time
from gensim.models import KeyedVectors
t, c = time.perf_counter(), time.process_time()
kv = KeyedVectors.load_word2vec_format({path!r}, binary={binary!r})
s, cpu = time.perf_counter() - t, time.process_time() - c
print(json.dumps({{'open': s, 'cpu': cpu, 'rss': peak(), 'rows': len(kv.index_to_key)}}))
"""


def _read_through(path: Path) -> None:
    with path.open("rb", buffering=0) as f:
        while f.read(64 * 2**20):
            pass


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    rows, dim = BIG_QUICK if args.quick else BIG_ROWS
    # figure 17's names: one file on disk for both
    name = f"w2v-{rows // 1_000_000}M.bin" if rows >= 1_000_000 else f"w2v-{rows // 1000}k.bin"
    path = write_word2vec_clusters(Path(args.workdir) / "big" / name, rows, dim)
    table = rows * dim * 4
    size = f"{rows:,} × {dim}"
    _read_through(path)
    ours, theirs, cached = [], [], []
    with tempfile.TemporaryDirectory(dir=args.workdir) as scratch:
        for i in range(args.repeats_child):
            theirs.append(run_child(_gensim_code(str(path))))
            env = {"EMBVIZ_CACHE_DIR": str(Path(scratch) / f"first-{i}")}
            ours.append(run_child(_open_code(str(path)), env))
        assert all(r["rows"] == rows for r in ours + theirs)
        start = [run_child(_open_code("toy4")) for _ in range(args.repeats_child)]
        env = {"EMBVIZ_CACHE_DIR": str(Path(scratch) / "first-0")}
        cached = [run_child(_open_code(str(path)), env) for _ in range(args.repeats_child)]
    assert all(r["rows"] == rows and not r["notes"] for r in cached), "a cached open read the file again"
    median = lambda runs, key: statistics.median(r[key] for r in runs)  # noqa: E731
    record(16, f"first open of a {size} word2vec binary ({table / 2**30:.1f} GiB table, empty cache)",
           median(ours, "open"), "s", median(theirs, "open"), "gensim load_word2vec_format(binary=True)", "≤ 1×",
           note=f"CPU {median(ours, 'cpu'):.1f} s vs gensim's {median(theirs, 'cpu'):.1f} s; imports not timed; "
                "includes hashing the file and writing the cache")
    record(16, "peak memory of that first open / table bytes", max(r["rss"] for r in ours) / table, "×",
           max(r["rss"] for r in theirs) / table, "gensim", "≤ 1.3×",
           note=f"{max(r['rss'] for r in ours) / 2**20:,.0f} MiB for a {table / 2**20:,.0f} MiB table "
                "(includes the interpreter and torch)")
    record(16, f"cached open of the {size} table (mapped), with imports", median(cached, "s"), "s", median(start, "s"),
           "imports and opening the toy4 lesson model (the app's start-up)", "≤ baseline + 1 s",
           note=f"{median(cached, 's') - median(start, 's'):+.2f} s beyond start-up, of which the seal's check of "
                f"every byte {median(cached, 'seal'):.2f} s")
    peak = max(r["rss"] for r in cached)
    record(16, "peak memory of a cached open / table bytes", peak / table, "×", target="≤ 1.3×",
           note=f"the table is mapped, not read: {max(r['shared'] for r in cached) / table:.0%} of it resident after the "
                "open (its row norms are cached); pages the OS shares with every process that maps the cache")
    fig_text_open(args, record)


def write_vec(path: Path, rows: int, dim: int, seed: int = 0) -> Path:
    """A fastText-style .vec (a `V D` header, then `word v1 … vD` lines) of unit-scale numbers,
    written by pyarrow's CSV writer a chunk at a time, once, and reused."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv

    marker = path.with_name(path.name + ".done")
    if path.is_file() and marker.is_file() and marker.read_text() == f"{rows} {dim} {seed}":
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    options = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    with path.open("wb") as f:
        f.write(f"{rows} {dim}\n".encode())
        for start in range(0, rows, 20_000):
            n = min(20_000, rows - start)
            vecs = rng.normal(size=(n, dim)).astype(np.float32)
            columns = {"w": pa.array([f"t{i}" for i in range(start, start + n)])}
            columns.update({f"c{j}": pa.array(vecs[:, j]) for j in range(dim)})
            pcsv.write_csv(pa.table(columns), f, write_options=options)
    marker.write_text(f"{rows} {dim} {seed}")
    return path


def fig_text_open(args, record) -> None:
    rows, dim = TEXT_QUICK if args.quick else TEXT_ROWS
    path = write_vec(Path(args.workdir) / "big" / f"vec-{rows // 1000}k.vec", rows, dim)
    table = rows * dim * 4
    _read_through(path)
    ours, theirs = [], []
    with tempfile.TemporaryDirectory(dir=args.workdir) as scratch:
        for i in range(args.repeats_child):
            theirs.append(run_child(_gensim_code(str(path), binary=False)))
            ours.append(run_child(_open_code(str(path)), {"EMBVIZ_CACHE_DIR": str(Path(scratch) / f"first-{i}")}))
    assert all(r["rows"] == rows for r in ours + theirs)
    median = lambda runs, key: statistics.median(r[key] for r in runs)  # noqa: E731
    record(16, f"first open of a {rows:,} × {dim} .vec text file ({path.stat().st_size / 2**30:.2f} GiB, empty cache)",
           median(ours, "open"), "s", median(theirs, "open"), "gensim load_word2vec_format(binary=False)", "≤ 1×",
           note=f"CPU {median(ours, 'cpu'):.1f} s vs gensim's {median(theirs, 'cpu'):.1f} s; imports not timed")
    record(16, "peak memory of that text open / table bytes", max(r["rss"] for r in ours) / table, "×",
           max(r["rss"] for r in theirs) / table, "gensim", "≤ 1.3×",
           note=f"{max(r['rss'] for r in ours) / 2**20:,.0f} MiB for a {table / 2**20:,.0f} MiB table "
                "(includes the interpreter and torch, about 300 MiB)")
    if not args.quick:
        fig_big_text_peak(args, record)


def fig_big_text_peak(args, record) -> None:
    rows, dim = TEXT_BIG_ROWS
    path = write_vec(Path(args.workdir) / "big" / f"vec-{rows // 1000}k.vec", rows, dim)
    table = rows * dim * 4
    with tempfile.TemporaryDirectory(dir=args.workdir) as scratch:
        run = run_child(_open_code(str(path)), {"EMBVIZ_CACHE_DIR": scratch})
    assert run["rows"] == rows
    record(16, f"peak memory of a first open of a {rows:,} × {dim} .vec text file / table bytes", run["rss"] / table,
           "×", target="≤ 1.3×",
           note=f"{run['rss'] / 2**20:,.0f} MiB for a {table / 2**20:,.0f} MiB table, {path.stat().st_size / 2**30:.1f} GiB of "
                f"text read in {run['open']:.0f} s (CPU {run['cpu']:.0f} s); gensim not run at this size (many minutes)")


FIGURE = Figure(16, run, order=410)
