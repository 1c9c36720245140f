"""How long comparing two models takes: every shared token's k nearest neighbours in both
tables and the Jaccard of each pair of sets (embviz.core.table.compare), beside a plain numpy
computation of the same scores (chunked products, argpartition, Python sets).

    python bench/compare.py [--n 30000] [--k 50] [--widths 576,50] [--no-baseline]

Synthetic tables (seeded Gaussian rows) of the given widths stand for the two models; the
default pair is SmolLM2-135M's 576 beside GloVe's 50. Targets (issue 23): 30,000 shared
tokens ≤ 5 s, 100,000 ≤ 60 s, on two cores. embviz's search runs on every core (threads of
its own); numpy's BLAS is left uncapped, so it has every core too. Prints wall and CPU
seconds and the load average (on a shared machine the wall time alone says little), then
one JSON line: the figures and their ratio, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from embviz.core.table.compare import compare, shared_tokens  # noqa: E402
from embviz.core.model import EmbeddingModel  # noqa: E402
from embviz.core.table.vocab import vocabulary_from_words  # noqa: E402

CHUNK_SCORES = 1 << 24  # the baseline multiplies as many scores at a time as embviz does


def synthetic(n: int, dim: int, seed: int) -> EmbeddingModel:
    rows = torch.from_numpy(np.random.default_rng(seed).standard_normal((n, dim), dtype=np.float32))
    words = [f"w{i}" for i in range(n)]
    return EmbeddingModel(name=f"random {n}×{dim}", source="", table=rows, vocab=vocabulary_from_words(words),
                          device=torch.device("cpu"), storage_dtype="float32", kind="table")


def numpy_neighbours(table: np.ndarray, k: int) -> list[set[int]]:
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    chunk = max(1, CHUNK_SCORES // len(unit))
    found: list[set[int]] = []
    for start in range(0, len(unit), chunk):
        scores = unit[start:start + chunk] @ unit.T
        scores[np.arange(len(scores)), np.arange(start, start + len(scores))] = -np.inf
        found += [set(row.tolist()) for row in np.argpartition(-scores, k, axis=1)[:, :k]]
    return found


def numpy_jaccard(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    return np.array([len(x & y) / len(x | y) for x, y in zip(numpy_neighbours(a, k), numpy_neighbours(b, k))])


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30_000, help="shared tokens")
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--widths", default="576,50", help="the two tables' widths")
    parser.add_argument("--no-baseline", action="store_true", help="skip the numpy computation (minutes at 100,000)")
    args = parser.parse_args()
    dim_a, dim_b = (int(w) for w in args.widths.split(","))
    a, b = synthetic(args.n, dim_a, 0), synthetic(args.n, dim_b, 1)
    print(f"{args.n:,} shared tokens, widths {dim_a} and {dim_b}, k = {args.k}; "
          f"{torch.get_num_threads()} threads, load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    shared = shared_tokens(a, b)
    compare(a, b, shared_tokens(*(synthetic(600, d, 2) for d in (dim_a, dim_b))), args.k)  # compiled kernels loaded
    result, wall, cpu = timed(lambda: compare(a, b, shared, args.k))
    print(f"embviz  {wall:7.2f} s wall  {cpu:7.2f} s CPU   mean Jaccard {result.mean_jaccard:.4f}", flush=True)
    figures = {"shared": args.n, "k": args.k, "widths": [dim_a, dim_b], "embviz (s)": round(wall, 2),
               "embviz CPU (s)": round(cpu, 2), "target (s)": 5 if args.n <= 30_000 else 60}
    if not args.no_baseline:
        jaccard, base, base_cpu = timed(lambda: numpy_jaccard(a.table.numpy(), b.table.numpy(), args.k))
        same = np.allclose(jaccard, result.jaccard)
        print(f"numpy   {base:7.2f} s wall  {base_cpu:7.2f} s CPU   mean Jaccard {jaccard.mean():.4f}"
              f"   same scores: {'yes' if same else 'NO'}")
        figures.update({"numpy (s)": round(base, 2), "ratio embviz / numpy": round(wall / base, 3),
                        "same scores": bool(same)})
    figures["load average at the end"] = round(os.getloadavg()[0], 1)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
