"""Figure 17: maps and lookups on a two-million-row word2vec table (bench.synthetic's
clusters, written here once): PCA against a plain numpy unit-row PCA, the faithfulness
caption, a t-SNE of a sample with the other rows placed (against its estimate),
neighbours against a numpy matrix-vector product, the analogy benchmark against its
matrix products. The table is read with numpy (figure 16 times the app's open); the
app's own functions are timed on it, with the thread counts the app uses."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch

from bench.figures import Context, Figure
from bench.measure import median_time
from bench.synthetic import BIG_QUICK, BIG_ROWS, write_word2vec_clusters

NUMBER = 17  # the figure this module measures


def big_file(args) -> tuple[Path, int, int]:
    rows, dim = BIG_QUICK if args.quick else BIG_ROWS
    name = f"w2v-{rows // 1_000_000}M.bin" if rows >= 1_000_000 else f"w2v-{rows // 1000}k.bin"
    path = Path(args.workdir) / "big" / name
    return write_word2vec_clusters(path, rows, dim), rows, dim


def read_table(path: Path, rows: int, dim: int) -> tuple[np.ndarray, list[str]]:
    """The vectors and words of bench.synthetic's file, read by numpy through one mapped view."""
    with path.open("rb") as f:
        header = f.readline()
    width = len(str(rows - 1))
    record = np.dtype([("word", f"S{width + 2}"), ("vec", "<f4", (dim,)), ("nl", "S1")])
    mapped = np.memmap(path, dtype=record, mode="r", offset=len(header), shape=(rows,))
    table = np.empty((rows, dim), dtype=np.float32)
    for start in range(0, rows, 100_000):  # in pieces: no second full-size temporary
        table[start : start + 100_000] = mapped["vec"][start : start + 100_000]
    words = [w.decode().rstrip() for w in mapped["word"]]
    del mapped
    return table, words


def big_model(args):
    """The table as the app holds it, its first words renamed to the analogy questions' words
    (the synthetic file's words are w0000000…), so the benchmark has questions to answer."""
    from embviz.core.readers.assemble import assemble
    from embviz.core.table.analogy_benchmark import read_questions
    from embviz.core.table.vocab import vocabulary_from_words

    path, rows, dim = big_file(args)
    table, words = read_table(path, rows, dim)
    questions = read_questions()
    asked = list(dict.fromkeys(w.lower() for q in questions for w in q.words))
    words[: len(asked)] = asked
    model = assemble(name=path.name, source=str(path), table=torch.from_numpy(table), vocab=vocabulary_from_words(words),
                     device=torch.device("cpu"), kind="table")
    return model, questions


def cpu_seconds() -> float:
    """CPU time of this process and its finished children: on a busy machine, a truer measure
    of the work than the wall time."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def numpy_unit_pca(units: np.ndarray) -> np.ndarray:
    """A plain numpy PCA of unit rows, the floor: the mean, the scatter uᵀu (syrk), eigh, one product."""
    n = units.shape[0]
    mean = units.mean(axis=0, dtype=np.float64)
    scatter = (units.T @ units).astype(np.float64) - n * np.outer(mean, mean)
    _, vectors = np.linalg.eigh(scatter / (n - 1))
    comps = vectors[:, ::-1][:, :2].astype(np.float32)
    return units @ comps - (mean @ comps).astype(np.float32)


def csv_seconds(args, model, ids: np.ndarray, coords: np.ndarray, record) -> None:
    """`project --out`'s CSV of the whole map, against the csv.writer row-by-row loop it replaced."""
    import csv

    from embviz.cli.map_csv import map_csv

    texts, out = model.vocab.texts, Path(args.workdir) / "big" / "map.csv"

    def ours():
        with out.open("w", newline="", encoding="utf-8") as f:
            f.writelines(map_csv(ids, coords, texts))

    def row_by_row():
        with out.open("w", newline="", encoding="utf-8") as f:
            writer = csv.writer(f)
            writer.writerow(["id", "token", "x", "y"])
            for i, (x, y) in zip(ids.tolist(), coords.tolist()):
                writer.writerow([i, texts[i], f"{x:.6g}", f"{y:.6g}"])

    repeats = max(1, args.repeats // 3)
    took, base = median_time(ours, repeats), median_time(row_by_row, repeats)
    out.unlink(missing_ok=True)
    record(NUMBER, f"CSV of a map of {ids.size:,} rows (project --out)", took, "s", base,
           "csv.writer, a row at a time (the same bytes)", "" if args.quick else "≤ 0.5×")


def search_seconds(args, model, record) -> None:
    """The map's plain-text search of the whole vocabulary (a word it does not hold: every
    token looked at), against a Python pass over every token, as the search was."""
    from embviz.core.table.search import search_tokens

    texts = model.vocab.texts
    t = time.perf_counter()
    search_tokens(model.vocab, "no such word")  # joins the lowered texts: once per vocabulary
    first = time.perf_counter() - t
    repeats = max(3, args.repeats)
    ours = median_time(lambda: search_tokens(model.vocab, "no such word"), repeats)
    base = median_time(lambda: [i for i, text in enumerate(texts) if text.lower() == "no such word"], repeats)
    record(NUMBER, f"plain-text search of {len(texts):,} tokens", ours * 1000, "ms", base * 1000,
           "a Python pass over every token's lowercase", "" if args.quick else "≤ 0.2×",
           f"the first search of a vocabulary joins its lowered texts: {first:.2f} s")


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    from embviz.core.device import every_idle_core
    from embviz.state.map_estimate import map_seconds, place_seconds
    from embviz.core.maps.knn import neighbour_preservation
    from embviz.core.maps.projection import pca, project
    from embviz.core.table.analogy_benchmark import SCORES, evaluate, token_form
    from embviz.core.table.similarity import UNIT_TABLE, nearest_neighbours, unit_table

    t = time.perf_counter()
    model, questions = big_model(args)
    rows, dim = model.vocab_size, model.dim
    size = f"{rows:,} × {dim}"
    print(f"[17] read {size} with numpy in {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    ids = np.arange(rows)
    repeats = max(1, args.repeats // 3)

    def goal(target: str) -> str:
        """The issue's targets are for two million rows; --quick's small table is a smoke test."""
        return "" if args.quick else target

    # The first map after opening: no unit table built, the rows scaled chunk by chunk.
    coords = pca(model, ids)[0]
    assert UNIT_TABLE not in model.cache
    units = unit_table(model).numpy()
    model.cache.pop(UNIT_TABLE)  # held by `units` only: PCA goes on without it, as the first map does
    raw = model.table.numpy()
    ours, built, base, base_raw = [], [], [], []
    # In turns, a busy machine's swings falling on all four; each turn on one thread count
    # for all (every core when nothing else runs, as the app's PCA decides for itself).
    for _ in range(max(3, repeats)):
        with every_idle_core() as threads:
            ours.append(median_time(lambda: pca(model, ids), 1))
            base_raw.append(median_time(lambda: numpy_unit_pca(raw / np.linalg.norm(raw, axis=1, keepdims=True)), 1))
            base.append(median_time(lambda: numpy_unit_pca(units), 1))
            model.cache[UNIT_TABLE] = torch.from_numpy(units)  # as after a first neighbour lookup
            built.append(median_time(lambda: pca(model, ids), 1))
            model.cache.pop(UNIT_TABLE)
    ours, built, base, base_raw = (float(np.median(v)) for v in (ours, built, base, base_raw))
    floor = f"numpy unit-row PCA (mean, uᵀu, eigh, one product) on a built unit table, {threads} thread(s)"
    record(NUMBER, f"PCA of all {size} rows (synthetic word2vec)", ours, "s", base_raw,
           f"numpy: unit rows made from the table, then the same PCA, {threads} thread(s)", goal("≤ 1.1×"),
           f"the app's first map: no unit table, rows scaled chunk by chunk; {ours / base:.2f}× the built-table floor")
    record(NUMBER, f"PCA of all {size} rows, the unit table built", built, "s", base, floor, goal("≤ 1.1×"),
           "after a neighbour lookup or a t-SNE has built it")
    del units
    csv_seconds(args, model, ids, coords, record)
    search_seconds(args, model, record)
    t, cpu = time.perf_counter(), cpu_seconds()
    faithful = neighbour_preservation(model, ids, coords)
    wall, cpu = time.perf_counter() - t, cpu_seconds() - cpu
    record(NUMBER, f"faithfulness caption of a PCA map of {rows:,} rows", wall, "s", target=goal("≤ 10 s"),
           note=f"{faithful.caption()} ({faithful.how_measured()}); {cpu:.1f} s of CPU time, all threads: near the wall time of an idle core")

    units = unit_table(model).numpy()
    query = rows // 2
    ours = median_time(lambda: nearest_neighbours(model, query, 10), args.repeats * 3)
    q = units[query]

    def numpy_top10():
        scores = units @ q
        top = np.argpartition(-scores, 11)[:11]
        return top[np.argsort(-scores[top])]

    base = median_time(numpy_top10, args.repeats * 3)
    record(NUMBER, f"cosine top-10 over {rows:,} rows", ours * 1000, "ms", base * 1000,
           "numpy matvec + argpartition on a pre-normalised table", goal("≤ 1.2×"))

    kept = [q for q in questions if None not in (token_form(model, w.lower()) for w in q.words)]
    asked = kept[: 2048 if args.quick else 1024]
    evaluate(model, asked[:1])  # what a model works out once (its vocabulary's case), not each run
    quads = torch.tensor([[token_form(model, w.lower()) for w in q.words] for q in asked])
    batch = max(1, min(1024, SCORES // rows))
    table = unit_table(model)

    def floor():
        with torch.inference_mode():
            for start in range(0, len(quads), batch):
                qq = quads[start : start + batch]
                (table[qq[:, 1]] - table[qq[:, 0]] + table[qq[:, 2]]) @ table.T

    with every_idle_core() as threads:  # both on one thread count, as evaluate decides for itself
        ours = median_time(lambda: evaluate(model, asked), 1)
        base = median_time(floor, 1)
    record(NUMBER, f"analogy benchmark, {len(asked):,} questions over {rows:,} rows", ours, "s", base,
           f"the same matrix products alone ({batch} questions a product, {threads} thread(s))", goal("≤ 1.3×"))

    # Past 100,000 rows (the map panel asks first), but not two million: placing those takes
    # minutes that figure 17's other rows do not need; the estimate is checked all the same.
    # A quick run maps 1,000 of 10,000 rows: a t-SNE that small runs in this process, so no child to start.
    mapped = ids[: 10_000 if args.quick else min(rows, 200_000)]
    sample = 10_000 if mapped.size > 100_000 else 1_000 if args.quick else 2_000
    t, cpu = time.perf_counter(), cpu_seconds()
    sampled = project(model, "tsne", mapped, sample=sample)
    took, cpu = time.perf_counter() - t, cpu_seconds() - cpu
    estimated = map_seconds("tsne", sample, dim) + place_seconds(sample, mapped.size - sample, dim)
    faithful = neighbour_preservation(model, mapped, sampled.coords)
    record(NUMBER, f"t-SNE of {sample:,} sampled rows of the first {mapped.size:,}, the others placed", took, "s",
           estimated, "the estimate the map panel shows", goal("≤ 2× its estimate"),
           f"{cpu:.0f} s of CPU time (this process and the t-SNE's child); {faithful.caption()} ({faithful.how_measured()})")


FIGURE = Figure(NUMBER, run, order=420)
