"""t-SNE of a big map in a child process: openTSNE unmodified, with its C FFT gradient,
on every core, under its own interpreter lock.

In the window's process the optimiser shares the GIL with the GUI thread and its
threads with the window's core; here the window's process only polls a progress file
while the child works, so the window stays responsive and both cores do the work.
Previews come back through that file (written whole, then renamed), and a cancel kills
the child at once. The neighbour graph, when the parent has none for these rows, is
computed in the child too (exact, chunked, every core) and handed back to be kept.
"""

from __future__ import annotations

import os
import tempfile
from typing import Callable

import numpy as np

from embviz.core.child import ProgressFile, progress_writer, run_in_child
from embviz.core.device import busy_cores
from embviz.core.errors import ProgressFn
from embviz.core.maps.file_rows import FileRows, rows_in_child
from embviz.core.maps.tsne_schedule import FIRST_STEP, PHASES, STEP, precomputed_knn_index

CHILD_BLOCK = 1 << 26  # scores per chunk of the graph (256 MB): larger products run nearer the core's peak
# The convergence stop: after the exaggeration, every CHECK_EVERY iterations the map's
# share of kept true 10-NN is measured on CHECK_SAMPLE rows; the run ends once CHECK_EVERY
# iterations gained less than STOP_GAIN of it. On all 49,152 SmolLM2 rows the share is
# 0.360 at 500 iterations and 0.367 at 750, which took 47 s more.
CHECK_EVERY = 50
CHECK_FROM = 350  # iterations before the first check
CHECK_SAMPLE = 2000
STOP_GAIN = 0.003
GRAPH_SPAN = (0.05, 0.3)  # the share of the progress bar the neighbour graph takes
REPORT_EVERY_S = 0.2  # the child writes the graph's progress at most this often


def tsne_in_child(
    rows: np.ndarray | FileRows | None, graph: tuple[np.ndarray, np.ndarray] | None, init: np.ndarray, k: int,
    perplexity: float, seed: int, exact: bool, progress: ProgressFn,
) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None, str | None]:
    """(coordinates, the graph the child computed or None, a note on an early stop).
    Either `graph` (positions, cosines) or the unit `rows` to compute it from (or the cache
    file the child makes them from); `exact` picks the exact graph over openTSNE's Annoy
    index for the rows."""
    with tempfile.TemporaryDirectory(prefix="embviz-tsne-") as folder:
        report = ProgressFile(folder, (0.05, "t-SNE: starting"))
        found: tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None, str | None] = run_in_child(
            optimise, (rows, graph, init, k, perplexity, seed, exact, report.path), progress, "t-SNE",
            measure=report.measure)
    return found


def optimise(rows: np.ndarray | FileRows | None, graph: tuple[np.ndarray, np.ndarray] | None, init: np.ndarray, k: int, perplexity: float,
             seed: int, exact: bool, report_path: str,
             ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None, str | None]:
    """Run in the child: the graph if needed, the affinities, then the optimiser in steps."""
    import torch
    from openTSNE import TSNEEmbedding
    from openTSNE.affinity import PerplexityBasedNN

    from embviz.core.device import limit_compute_threads
    from embviz.core.maps.knn import self_top_k

    threads = limit_compute_threads(_threads())
    rows = rows_in_child(rows)
    report = progress_writer(report_path, REPORT_EVERY_S)
    computed = None
    stage = "t-SNE: each row's nearest rows in the full table"
    if graph is None and exact:
        graph = computed = self_top_k(torch.from_numpy(rows), k, lambda f, s, _p: report(f, s), GRAPH_SPAN, stage,
                                       block=CHILD_BLOCK)
    report(GRAPH_SPAN[1], "t-SNE: affinities")
    if graph is not None:
        affinities = PerplexityBasedNN(perplexity=perplexity, knn_index=precomputed_knn_index(*graph), n_jobs=threads,
                                       random_state=seed, verbose=False)
    else:  # Annoy on the unit rows: their euclidean order is the cosine order
        affinities = PerplexityBasedNN(rows, perplexity=perplexity, method="annoy", n_jobs=threads,
                                       random_state=seed, verbose=False)
    # openTSNE's FFT gradient is for 1-D and 2-D maps; a 3-D one takes its Barnes-Hut octree.
    gradient = "fft" if init.shape[1] <= 2 else "bh"
    embedding = TSNEEmbedding(init, affinities, negative_gradient_method=gradient, n_jobs=threads, random_state=seed,
                              verbose=False)
    total, done = sum(p[0] for p in PHASES), 0
    lo = GRAPH_SPAN[1]
    check = _kept_share(graph[0], seed) if graph is not None else None
    shares: list[float] = []
    for n_iter, exaggeration, momentum in PHASES:
        steps = [FIRST_STEP, STEP - FIRST_STEP] + [STEP] * (n_iter // STEP - 1) if done == 0 else [STEP] * (n_iter // STEP)
        for step in steps:
            embedding = embedding.optimize(step, exaggeration=exaggeration, momentum=momentum, learning_rate="auto",
                                           inplace=True, n_jobs=threads)
            done += step
            coords = np.asarray(embedding, dtype=np.float32)
            report(lo + (1 - lo) * done / total, "t-SNE: optimising", coords)
            if check is not None and done >= CHECK_FROM and done % CHECK_EVERY == 0:
                shares.append(check(coords))
                if len(shares) > 1 and shares[-1] - shares[-2] < STOP_GAIN:
                    note = (f"t-SNE stopped after {done} of {total} iterations: the last {CHECK_EVERY} kept only "
                            f"{max(0.0, shares[-1] - shares[-2]):.1%} more of each row's 10 nearest rows.")
                    return coords, computed, note
    return np.asarray(embedding, dtype=np.float32), computed, None


def _threads() -> int:
    """Every core when nothing else is running; beside other busy work, the cores left.
    The child runs at the niceness of every child of the app (embviz.core.child), below the
    window's thread. Where the system schedules sessions as groups (Linux's autogroups) that
    niceness weighs only against the app's own threads: beside two other sessions' busy work,
    a spinning child took the same wall time at niceness 0 and 10. Without such groups a
    niced child yields to other programs too (a t-SNE at niceness 10 beside busy work once
    took 183 s instead of 39 s to its first picture)."""
    cores = os.cpu_count() or 1
    return max(1, cores - busy_cores())


def _kept_share(positions: np.ndarray, seed: int) -> Callable[[np.ndarray], float]:
    """A function of a map: the share of each sampled row's 10 nearest rows in the table
    (the graph's first 10) that are among its 10 nearest points on the map."""
    from scipy.spatial import cKDTree

    n = positions.shape[0]
    k = min(10, positions.shape[1], n - 1)
    picked = np.random.default_rng(seed).choice(n, min(CHECK_SAMPLE, n), replace=False)
    truth = positions[picked, :k]

    def share(coords: np.ndarray) -> float:
        _, near = cKDTree(coords).query(coords[picked], k + 1)
        near = near[:, 1:]  # the point itself comes first
        return float((near[:, :, None] == truth[:, None, :]).any(-1).sum(1).mean() / k)

    return share
