"""A big map drawn from a sample: t-SNE or UMAP lays out a seeded sample of the rows,
and every other row goes where its nearest sampled rows (by cosine over all of the
table's dimensions) are, at the median of their positions — openTSNE's `prepare_partial`
starting layout, without its optimisation. Beyond 100,000 rows on a CPU, a t-SNE of all
rows takes an hour or more; this takes minutes, and the caption still measures how many of
each row's true neighbours the whole map keeps."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import torch

from embviz.core.device import every_idle_core

from embviz.core.errors import ProgressFn, no_progress
from embviz.core.model import EmbeddingModel
from embviz.core.maps.knn import WIDE_SEARCH, unit_rows
from embviz.core.table.similarity import UNIT_TABLE, matmul, unit_scales, unit_table

PLACE_NEIGHBOURS = 10
BLOCK = 1 << 24  # scores per chunk (64 MB of float32)


def sample_positions(n: int, sample: int, seed: int = 0) -> np.ndarray:
    """Sorted positions of a seeded sample of `sample` of `n` rows (all of them when n ≤ sample)."""
    if n <= sample:
        return np.arange(n, dtype=np.int64)
    return np.sort(np.random.default_rng(seed).choice(n, sample, replace=False)).astype(np.int64)


def nearest_sampled(model: EmbeddingModel, queries: np.ndarray, anchors: np.ndarray, k: int = PLACE_NEIGHBOURS,
                    progress: ProgressFn = no_progress, span: tuple[float, float] = (0.0, 1.0),
                    stage: str = "placing the other rows") -> np.ndarray:
    """(len(queries), k) positions into `anchors` (row ids) of each query row's k nearest
    anchor rows by cosine, best first, exact. A query's own length does not change its
    ranking, so queries are read raw."""
    # Raw query rows while no unit table is built (so placing two million rows makes no
    # second copy of the table), unless some row needs unit_table's care (NaN, zero).
    rows = model.table if UNIT_TABLE not in model.cache and unit_scales(model) is not None else unit_table(model)
    keys_t = unit_rows(model, anchors).T.contiguous()
    k = min(k, len(anchors))
    chunk = max(1, BLOCK // max(1, len(anchors)))
    out = np.empty((len(queries), k), dtype=np.int64)
    lo, hi = span
    wide = rows.device.type == "cpu" and len(queries) * keys_t.numel() >= WIDE_SEARCH
    with torch.inference_mode(), every_idle_core() if wide else nullcontext():
        for start in range(0, len(queries), chunk):
            picked = torch.as_tensor(queries[start : start + chunk], device=rows.device)
            scores = matmul(rows.index_select(0, picked), keys_t)
            out[start : start + chunk] = torch.topk(scores, k).indices.cpu().numpy()
            progress(lo + (hi - lo) * min(1.0, (start + chunk) / len(queries)), stage, None)
    return out


def place_rows(model: EmbeddingModel, ids: np.ndarray, sampled: np.ndarray, sampled_coords: np.ndarray,
               progress: ProgressFn = no_progress, span: tuple[float, float] = (0.0, 1.0),
               k: int = PLACE_NEIGHBOURS) -> np.ndarray:
    """Coordinates for every row of `ids`: the sampled ones (positions `sampled` into
    ids) where the map put them, each other one at the median of its k nearest sampled rows."""
    coords = np.empty((ids.size, sampled_coords.shape[1]), dtype=np.float32)
    coords[sampled] = sampled_coords
    others = np.setdiff1d(np.arange(ids.size), sampled, assume_unique=True)
    if others.size:
        near = nearest_sampled(model, ids[others], ids[sampled], k, progress, span,
                               f"placing the other {others.size:,} rows beside their nearest sampled rows")
        coords[others] = np.median(sampled_coords[near], axis=1)
    return coords
