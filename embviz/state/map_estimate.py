"""How long a t-SNE or UMAP map will take on a CPU, from rates measured on the 2-core
bench machine, and the honest choices offered before a long one: all rows (with that
estimate), only the first N rows (a word2vec or GloVe file lists its most frequent words
first), or a map of a sample with every other row placed among its nearest sampled rows.
Plain arithmetic (no torch): the map panel asks it before it submits anything."""

from __future__ import annotations

import math
from dataclasses import dataclass

LONG_MAP_ROWS = 100_000  # above this on a CPU, the panel asks before a t-SNE or UMAP starts
SAMPLE_ROWS = 10_000  # the sample a "placed" map draws, and the first N of "first"
# Rates, CPU, both cores (bench figures 5 and 12 and bench/big_maps.py): long products use
# every core the window leaves idle (device.every_idle_core), and the estimate assumes it does.
GEMM_RATE = 40e9  # multiply-adds per second of a float32 matrix product
GPU_GEMM_RATE = 20e12  # the same on a data-centre GPU, float32
TSNE_ROW_ITERATION_S = 0.95e-6  # openTSNE's FFT gradient: 35 s for 49,152 rows × 750 iterations
TSNE_ITERATIONS = 750
UMAP_ROW_S = 1.0e-3  # umap-learn's layout, its graph given: 10,000 rows in about 10 s
# openTSNE's Annoy index and affinities, 300 dimensions: 1.13 ms of one core per row at 30,000
# rows. Its trees (5 + √n / 20) and their depth (log n) grow with the rows: 7.6× that at 2M.
ANNOY_ROW_CPU_S = 1.13e-3
ANNOY_MEASURED_ROWS = 30_000
CORES = 2
CHILD_START_S = 5.0  # a fresh interpreter, openTSNE or umap-learn imported
EXACT_GRAPH_ROWS = 100_000  # projection.EXACT_KNN_ROWS: above it the graph is approximate on a CPU


@dataclass(frozen=True)
class MapChoice:
    """One way to draw the map: `rows` drawn by the method, `placed` more placed among them."""

    key: str  # "all", "first" or "placed"
    rows: int
    placed: int
    seconds: float

    def label(self, method: str) -> str:
        name = {"tsne": "t-SNE", "umap": "UMAP"}.get(method, method)
        if self.key == "all":
            return f"{name} of all {self.rows:,} rows — about {duration(self.seconds)}"
        if self.key == "first":
            return (f"{name} of the first {self.rows:,} rows only (the most frequent words in a word2vec or "
                    f"GloVe file) — about {duration(self.seconds)}")
        return (f"{name} of {self.rows:,} sampled rows, the other {self.placed:,} placed beside their nearest "
                f"sampled rows — about {duration(self.seconds)}")


def graph_seconds(rows: int, dim: int, on_gpu: bool = False) -> float:
    """Each row's nearest rows: exact (rows² · dim) up to EXACT_GRAPH_ROWS, an index above;
    on a GPU exact always, at a rate that makes it small beside the CPU's layout."""
    if on_gpu:
        return rows * rows * dim / GPU_GEMM_RATE
    if rows <= EXACT_GRAPH_ROWS:
        return rows * rows * dim / GEMM_RATE
    return rows * _annoy_row_s(rows) * dim / 300 / CORES


def _annoy_row_s(rows: int) -> float:
    def trees(n: int) -> float:
        return 5 + float(n**0.5) / 20

    growth = trees(rows) / trees(ANNOY_MEASURED_ROWS) * math.log(rows) / math.log(ANNOY_MEASURED_ROWS)
    return ANNOY_ROW_CPU_S * growth


def map_seconds(method: str, rows: int, dim: int, on_gpu: bool = False) -> float:
    """Seconds for a t-SNE or UMAP of `rows` rows of `dim` values, graph included (UMAP's
    layout is umap-learn's, on the CPU, even beside a GPU)."""
    layout = rows * TSNE_ROW_ITERATION_S * TSNE_ITERATIONS if method == "tsne" else rows * UMAP_ROW_S
    return CHILD_START_S + graph_seconds(rows, dim, on_gpu) + layout + rows * dim / GEMM_RATE * 100  # PCA-50 start


def place_seconds(sampled: int, placed: int, dim: int, on_gpu: bool = False) -> float:
    """The placed rows' nearest sampled rows, an exact search (placed · sampled · dim)."""
    return placed * sampled * dim / (GPU_GEMM_RATE if on_gpu else GEMM_RATE)


def map_choices(method: str, rows: int, dim: int, on_gpu: bool, sample: int = SAMPLE_ROWS) -> list[MapChoice]:
    """The choices to offer before a t-SNE or UMAP of `rows` rows, all rows first; none
    (draw at once) for a short map: PCA and word-pair axes, LONG_MAP_ROWS rows or fewer, or
    a t-SNE on a GPU, whose torch gradient handles every row."""
    if method not in ("tsne", "umap") or (on_gpu and method == "tsne") or rows <= LONG_MAP_ROWS:
        return []
    sample = min(sample, rows)
    few = map_seconds(method, sample, dim, on_gpu)
    return [MapChoice("all", rows, 0, map_seconds(method, rows, dim, on_gpu)),
            MapChoice("first", sample, 0, few),
            MapChoice("placed", sample, rows - sample, few + place_seconds(sample, rows - sample, dim, on_gpu))]


def duration(seconds: float) -> str:
    """"40 seconds", "12 minutes", "3.5 hours": as a teacher would say it."""
    if seconds < 90:
        return f"{max(1, round(seconds, -1 if seconds >= 20 else 0)):.0f} seconds"
    if seconds < 90 * 60:
        return f"{round(seconds / 60):.0f} minutes"
    return f"{seconds / 3600:.1f} hours"
