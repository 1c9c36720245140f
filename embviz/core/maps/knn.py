"""Each row's nearest rows by cosine in the full table (what the Neighbours tab lists),
for the maps' neighbour graphs, and how many of them a 2-D map keeps.

The graph is exact, with one tie rule (the lower row first), so the same rows give the same
graph whatever the device, the chunking or the process that computed it; it is kept for the
model so a second map of the same rows skips it."""

from __future__ import annotations

from typing import Any

import hashlib
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from scipy.spatial import cKDTree

from embviz.core.cache import Source, cache_root, keep_in_cache, remove_entry
from embviz.core.device import every_idle_core
from embviz.core.errors import ProgressFn, no_progress
from embviz.core.model import EmbeddingModel
from embviz.core.seal import Sealed
from embviz.core.table.neighbours import self_neighbours
from embviz.core.table.similarity import UNIT_TABLE, matmul, row_norms, unit_scales, unit_table

KNN_CACHE = "table_knn"  # model.cache key: (ids digest, k, positions, cosines) of the last graph
TABLE_DIGEST = "table_sha256"  # model.cache key: a digest of every value of the table
GRAPH_FILE = "graph.npz"
DISK_ROWS = 10_000  # graphs of this many rows or more are kept on disk too: they take seconds to minutes
CHUNK_SCORES = 1 << 24  # scores per chunk of the sampled rows' search (64 MB of float32), one buffer reused
# Scores per chunk of the all-rows search on a GPU: at 2M rows, 64 MB is 8 rows a chunk, each chunk a full read of
# the table; 1 GB is 134 rows, and the products run near the chip's peak rather than its memory's.
GPU_BLOCK = 1 << 28
GRAPH_VERSION = "exact"  # in a kept graph's name: graphs kept before the one tie rule are not read
FAITHFUL_K = 10
FAITHFUL_SAMPLE = 1000
# Multiply-adds the caption's exact search may take: about 5 s on one busy core (22 G/s);
# a 2M × 300 table is then measured on 200 rows rather than 1,000 (27 s).
FAITHFUL_WORK = 1.2e11
FAITHFUL_MIN_SAMPLE = 200
WIDE_SEARCH = 1e10  # multiply-adds from which the search uses every core the window leaves idle


def _digest(ids: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(ids, dtype=np.int64).tobytes()).hexdigest()


def unit_rows(model: EmbeddingModel, ids: np.ndarray) -> torch.Tensor:
    """The unit rows of `ids`, in order (the whole unit table when ids are every row). A
    subset is divided by its norms while the unit table is not built, as the unit table
    would divide it: a map of 10,000 sampled rows of a 2M-row table copies no 2.4 GB."""
    whole = ids.size == model.vocab_size
    if whole or UNIT_TABLE in model.cache or unit_scales(model) is None:
        unit = unit_table(model)
        return unit if whole else unit.index_select(0, torch.as_tensor(ids, device=unit.device))
    index = torch.as_tensor(ids, device=model.table.device)
    return model.table.index_select(0, index) / row_norms(model).index_select(0, index)[:, None]


def self_top_k(rows: torch.Tensor, k: int, progress: ProgressFn, span: tuple[float, float],
               stage: str, block: int | None = None, threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(positions, cosines), each (n, k), of every row's k nearest other rows by cosine, best
    first, exact, ties to the lower position: the one all-rows search. On the CPU it is the
    sieve of core.table.neighbours (on `threads` threads, the compute threads by default); on
    a GPU, chunks of `block` float32 products keep each row's candidates within float32's
    error of its k-th best, and the same float64 verdict as the sieve's decides among them."""
    n = rows.shape[0]
    if k < 1:
        return np.empty((n, 0), dtype=np.int64), np.empty((n, 0), dtype=np.float32)
    if rows.device.type == "cpu":
        positions = self_neighbours(rows, k, progress, span, stage, threads or torch.get_num_threads())
    else:
        positions = _device_nearest(rows, k, progress, span, stage, block or GPU_BLOCK)
    return positions, _cosines(rows, positions)


def _device_nearest(rows: torch.Tensor, k: int, progress: ProgressFn, span: tuple[float, float], stage: str,
                    block: int) -> np.ndarray:
    n, d = rows.shape
    # A float32 product of unit rows is within d·u/(1 − d·u) of the exact one, in any order of sums.
    error = 2 * d * 2.0**-24 / (1 - d * 2.0**-24) + 1e-7
    chunk = max(1, min(n, block // n))
    scores = torch.empty((chunk, n), dtype=torch.float32, device=rows.device)
    wide = rows.to(torch.float32)
    exact = wide.cpu().numpy().astype(np.float64)
    positions = np.empty((n, k), dtype=np.int64)
    lo, hi = span
    with torch.inference_mode():
        for start in range(0, n, chunk):
            count = min(chunk, n - start)
            part = scores[:count]
            torch.mm(wide[start : start + count], wide.T, out=part)
            diagonal = torch.arange(count, device=rows.device)
            part[diagonal, diagonal + start] = -torch.inf  # a row is not its own neighbour
            floor = torch.topk(part, k).values[:, -1:] - error
            for r, candidates in enumerate(torch.split((part >= floor).nonzero()[:, 1].cpu(),
                                                       (part >= floor).sum(1).cpu().tolist())):
                positions[start + r] = _best(exact, start + r, candidates.numpy(), k)
            progress(lo + (hi - lo) * (start + count) / n, stage, None)
    return positions


def _best(exact: np.ndarray, row: int, candidates: np.ndarray, k: int) -> np.ndarray:
    """The k best of `candidates` for `row` by float64 score, ties to the lower position."""
    score = exact[candidates] @ exact[row]
    return candidates[np.lexsort((candidates, -score))[:k]]


def _cosines(rows: torch.Tensor, positions: np.ndarray) -> np.ndarray:
    """Each row's float32 cosine with each of its neighbours, a few thousand rows at a time."""
    cosines = np.empty(positions.shape, dtype=np.float32)
    index = torch.as_tensor(positions, device=rows.device)
    step = max(1, (1 << 22) // max(1, positions.shape[1] * rows.shape[1]))
    with torch.inference_mode():
        for start in range(0, rows.shape[0], step):
            near = rows[index[start : start + step]].float()
            cosines[start : start + step] = torch.einsum("rkd,rd->rk", near, rows[start : start + step].float()).cpu().numpy()
    return cosines


def table_knn(model: EmbeddingModel, ids: np.ndarray, k: int, progress: ProgressFn = no_progress,
              span: tuple[float, float] = (0.0, 1.0), stage: str = "nearest rows in the full table",
              ) -> tuple[np.ndarray, np.ndarray]:
    """(positions into `ids`, cosines), each (n, k), best first: every row's k nearest
    other rows among `ids` by cosine over all of the table's dimensions, exact."""
    ids = np.asarray(ids, dtype=np.int64)
    k = min(k, ids.size - 1)
    kept = kept_knn(model, ids, k)
    if kept is not None:
        return kept
    positions, cosines = self_top_k(unit_rows(model, ids), k, progress, span, stage)
    keep_knn(model, ids, positions, cosines)
    return positions, cosines


def kept_knn(model: EmbeddingModel, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The kept graph of these rows cut to k neighbours, if one with at least k is kept:
    in memory, or on disk from an earlier session for a big one."""
    cached = model.cache.get(KNN_CACHE)
    key = _digest(np.asarray(ids, dtype=np.int64))
    if cached is None or cached[0] != key or cached[1] < k:
        cached = _read_disk(model, ids, k)
        if cached is None:
            return None
        model.cache[KNN_CACHE] = cached
    return cached[2][:, :k], cached[3][:, :k]


def keep_knn(model: EmbeddingModel, ids: np.ndarray, positions: np.ndarray, cosines: np.ndarray) -> None:
    """Keep the graph of these rows for the model: the last one only (49k × 90 is 35 MB),
    and a big one on disk too, so a t-SNE in a later session skips it."""
    model.cache[KNN_CACHE] = (_digest(np.asarray(ids, dtype=np.int64)), positions.shape[1], positions, cosines)
    if len(ids) >= DISK_ROWS:
        def write(scratch: Path) -> None:
            np.savez(scratch / GRAPH_FILE, positions=positions.astype(np.int32), cosines=cosines.astype(np.float32))

        key = _disk_key(model, ids)
        # Sealed with its key as its source: an entry moved under another table's key is not read.
        keep_in_cache(cache_root() / "knn", f"{key}-k{positions.shape[1]}", write, Source(key, "", True))


def _disk_key(model: EmbeddingModel, ids: np.ndarray) -> str:
    """The exact table (every value) and the rows: a graph read back is this table's."""
    def table_digest() -> str:
        digest = hashlib.sha256()
        digest.update(np.ascontiguousarray(model.table.detach().float().cpu().numpy()).data)
        return digest.hexdigest()[:24]

    return f"{model.derived(TABLE_DIGEST, table_digest)}-{_digest(np.asarray(ids, dtype=np.int64))[:16]}-{GRAPH_VERSION}"


def _read_disk(model: EmbeddingModel, ids: np.ndarray, k: int) -> tuple[Any, ...] | None:
    if len(ids) < DISK_ROWS:
        return None
    key = _disk_key(model, ids)
    prefix = key + "-k"
    folder = cache_root() / "knn"
    for entry in sorted(folder.glob(prefix + "*")) if folder.is_dir() else []:
        try:
            kept = int(entry.name[len(prefix):])
            if kept < k:
                continue
            # Every byte as written (a shuffled graph is not this table's), no more than the arrays take.
            graph = Sealed(entry, key).arrays(GRAPH_FILE, len(ids) * kept * 8 + (1 << 16))
            positions, cosines = graph["positions"], graph["cosines"]
        except (OSError, ValueError, KeyError):  # DamagedEntry is a ValueError
            remove_entry(entry)  # damaged: the graph is computed again, and kept anew
            continue
        if (positions.dtype == np.int32 and cosines.dtype == np.float32
                and positions.shape == cosines.shape == (len(ids), kept)
                and (positions >= 0).all() and (positions < len(ids)).all()):
            return _digest(np.asarray(ids, dtype=np.int64)), kept, positions.astype(np.int64), cosines
    return None


def _sample_neighbours(model: EmbeddingModel, ids: np.ndarray, picked: np.ndarray, k: int) -> np.ndarray:
    """Positions of the picked rows' k nearest other rows among `ids`, exact: the picked
    rows against the table a block of rows at a time, each block's best k merged into the
    running best. One product per block rather than one pass over the whole table per
    few picked rows (at 2M rows, 125 reads of the table for 1,000 picked). From the
    raw rows and their 1 / norms while the unit table is not built, so the first PCA map
    needs no copy of the table (a query's own norm does not change its ranking)."""
    scale = None if UNIT_TABLE in model.cache else unit_scales(model)
    whole = ids.size == model.vocab_size
    if scale is None:
        rows = unit_rows(model, ids)
    else:
        index = torch.as_tensor(ids, device=model.table.device)
        rows = model.table if whole else model.table.index_select(0, index)
        scale = scale if whole else scale[index]
    n = rows.shape[0]
    at = torch.as_tensor(picked, device=rows.device)
    queries = rows.index_select(0, at)
    block = max(k + 1, CHUNK_SCORES // max(1, len(picked)))
    best_scores = torch.full((len(picked), k), -torch.inf, dtype=rows.dtype, device=rows.device)
    best = torch.zeros((len(picked), k), dtype=torch.long, device=rows.device)
    own = torch.arange(len(picked), device=rows.device)
    wide = rows.device.type == "cpu" and len(picked) * rows.numel() >= WIDE_SEARCH
    with torch.inference_mode(), every_idle_core() if wide else nullcontext():
        for start in range(0, n, block):
            scores = matmul(queries, rows[start : start + block].T)
            if scale is not None:
                scores *= scale[None, start : start + block]
            inside = (at >= start) & (at < start + scores.shape[1])
            scores[own[inside], at[inside] - start] = -torch.inf  # not its own neighbour
            values, where = torch.topk(scores, min(k, scores.shape[1]))
            merged = torch.cat([best_scores, values], dim=1)
            candidates = torch.cat([best, where + start], dim=1)
            best_scores, order = torch.topk(merged, k)
            best = candidates.gather(1, order)
    return best.cpu().numpy()


def faithful_sample(rows: int, dim: int, sample: int = FAITHFUL_SAMPLE) -> int:
    """How many rows the caption measures: `sample`, fewer for a big table, so the exact
    search (sample × rows × dim multiply-adds) stays near FAITHFUL_WORK; never fewer than
    FAITHFUL_MIN_SAMPLE (about ±3 points on the share)."""
    affordable = int(FAITHFUL_WORK // max(1, rows * dim))
    return min(rows, sample, max(FAITHFUL_MIN_SAMPLE, affordable))


def cached_knn(model: EmbeddingModel, ids: np.ndarray) -> np.ndarray | None:
    """The kept graph of exactly these rows (positions, best first), if there is one."""
    cached = model.cache.get(KNN_CACHE)
    return cached[2] if cached is not None and cached[0] == _digest(np.asarray(ids, dtype=np.int64)) else None


@dataclass(frozen=True)
class Faithfulness:
    """The share of each row's k nearest rows in the full table that are also among its
    k nearest points on the map, averaged over `sample` of the map's `rows`."""

    share: float
    k: int
    sample: int
    rows: int
    method: str = "exact"  # "exact": an exact search of every row; "graph": the map's own neighbour graph

    def caption(self) -> str:
        """What the map keeps, short enough for a projector's caption (`how_measured` says the rest)."""
        share = f"{self.share:.0%}" if self.share >= 0.1 else f"{self.share:.1%}"  # "0%" would read as a bug
        return f"keeps {share} of each token's {self.k} nearest neighbours"

    def how_measured(self) -> str:
        sampled = f"on {self.sample:,} sampled rows" if self.sample < self.rows else f"on all {self.rows:,} rows"
        how = "an exact search" if self.method == "exact" else "the map's neighbour graph"
        return f"Measured {sampled}, their true neighbours from {how}."

    def as_dict(self) -> dict[str, Any]:
        return {"share": self.share, "k": self.k, "sample": self.sample, "rows": self.rows, "method": self.method}


def neighbour_preservation(model: EmbeddingModel, ids: np.ndarray, coords: np.ndarray, k: int = FAITHFUL_K,
                           sample: int | None = None, seed: int = 0,
                           knn: np.ndarray | None = None) -> Faithfulness | None:
    """How faithful a map of the rows `ids` is to the table's own neighbours (None for
    a map too small to ask). `knn` (positions, best first) is used when it is given.
    `sample` rows are measured (by default FAITHFUL_SAMPLE, fewer for a big table when
    no graph is at hand: `faithful_sample`)."""
    ids = np.asarray(ids, dtype=np.int64)
    n = ids.size
    k = min(k, n - 1)
    if k < 1:
        return None
    if knn is None:
        knn = cached_knn(model, ids)  # the graph a t-SNE or UMAP of these rows just used
    graph = knn is not None and knn.shape[1] >= k
    if sample is None:
        sample = FAITHFUL_SAMPLE if graph else faithful_sample(n, model.dim)
    picked = np.arange(n) if n <= sample else np.sort(np.random.default_rng(seed).choice(n, sample, replace=False))
    if knn is not None and graph:
        true = knn[picked, :k]
    else:
        true = _sample_neighbours(model, ids, picked, k)
    _, near = cKDTree(np.asarray(coords, dtype=np.float64)).query(np.asarray(coords, dtype=np.float64)[picked], k=min(k + 1, n))
    kept = 0
    for row, own, truth in zip(near, picked, true):
        on_map = [p for p in row if p != own][:k]
        kept += len(set(on_map) & set(truth.tolist()))
    return Faithfulness(share=kept / (k * len(picked)), k=k, sample=len(picked), rows=n,
                        method="graph" if graph else "exact")
