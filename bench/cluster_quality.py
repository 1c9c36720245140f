"""Cluster quality (issue 22): how well each clustering keeps the six built-in word sets
together, at k = 50 on the default model (SmolLM2-135M).

    python bench/cluster_quality.py [--k 50] [--seed 0]

A set's score is how many of its tokens (as the window resolves the words: a bare word is
its mid-sentence " word" token when there is one) share the set's most common cluster. A
giant cluster would score well on every set, so each row also shows its largest cluster.
Times are wall-clock and CPU seconds of the clustering step alone (the neighbour graph is
read back from the disk cache, the centred unit table is built before timing).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

SETS = ROOT / "assets" / "wordsets.json"


def wordset_ids(model) -> dict[str, list[int]]:
    """Each built-in word set's token ids, words that are not one token left out."""
    from embviz.bridge.handlers.table import resolve_all

    sets = json.loads(SETS.read_text(encoding="utf-8"))
    return {name: resolve_all(model.vocab, words)[0] for name, words in sets.items()}


def wordset_scores(assignment: np.ndarray, sets: dict[str, list[int]]) -> dict[str, tuple[int, int]]:
    """(tokens in the set's most common cluster, tokens) per set; `assignment` is indexed by token id."""
    return {name: (int(np.bincount(assignment[ids] - assignment.min()).max()), len(ids)) for name, ids in sets.items()}


def _timed(run: Callable[[], np.ndarray]) -> tuple[np.ndarray, float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    assignment = run()
    return assignment, time.perf_counter() - wall, time.process_time() - cpu


def methods(model, k: int, seed: int) -> dict[str, Callable[[], np.ndarray]]:
    """Each method's assignment of every row, by token id."""
    from sklearn.cluster import MiniBatchKMeans
    from threadpoolctl import threadpool_limits

    from embviz.core.device import compute_threads
    from embviz.core.maps.clusters import _graph, _kmeans
    from embviz.core.errors import no_progress
    from embviz.core.table.similarity import unit_table

    plain = unit_table(model).cpu().numpy()

    def reference() -> np.ndarray:
        with threadpool_limits(compute_threads(), user_api="openmp"):
            return MiniBatchKMeans(k, random_state=seed).fit_predict(plain)

    return {
        "graph (Leiden, 10-NN cosine graph; default)": lambda: _graph(model, k, no_progress, seed).assignment,
        "kmeans (MiniBatchKMeans defaults, centred rows)": lambda: _kmeans(model, k, no_progress, seed).assignment,
        "reference: MiniBatchKMeans defaults, unit rows": reference,
    }


def table(model, k: int, seed: int) -> str:
    from embviz.core.maps.clusters import neighbour_graph
    from embviz.core.table.similarity import unit_table

    unit_table(model, centered=True)  # built once per model, as in the window
    neighbour_graph(model, np.arange(model.vocab_size))  # read back (or built once) before any timing
    sets = wordset_ids(model)
    head = ["method", "clusters", "largest", *sets, "wall s", "CPU s"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for name, run in methods(model, k, seed).items():
        assignment, wall, cpu = _timed(run)
        scores = wordset_scores(assignment, sets)
        sizes = np.bincount(assignment[assignment >= 0])
        cells = [name, str(np.count_nonzero(sizes)), f"{sizes.max():,}",
                 *(f"{kept}/{total}" for kept, total in scores.values()), f"{wall:.2f}", f"{cpu:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from embviz.core.checkpoint import open_checkpoint
    from embviz.core.device import limit_compute_threads

    limit_compute_threads()
    print(table(open_checkpoint(None, "cpu"), args.k, args.seed))


if __name__ == "__main__":
    main()
