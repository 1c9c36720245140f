"""2-D and 3-D maps of the table's rows: PCA (exact, covariance + eigh), t-SNE (openTSNE,
live previews and cancel) and UMAP (umap-learn, in a child process that a cancel
terminates). t-SNE's and UMAP's neighbour graphs come from the full table by cosine,
the neighbours the Neighbours tab lists; PCA-50 gives only their starting layout.

Maps are computed on unit rows by default, the same cosine geometry that the
neighbour and analogy searches use. Every projection returns the true row ids
it used, so a subset never renumbers tokens, and says how many of each row's 10
nearest rows in the table it keeps as nearest points on the map (`knn.neighbour_preservation`,
asked for separately so that the map is drawn before it is measured; in 3-D it is measured
among the 3-D points). A 3-D map takes the same path as a 2-D one with three components.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np
import torch

from embviz.core.child import run_in_child
from embviz.core.device import compute_threads, every_idle_core
from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.maps.file_rows import FileRows, file_rows, rows_in_child
from embviz.core.maps.kept_maps import kept_pca
from embviz.core.maps.knn import keep_knn, kept_knn, table_knn, unit_rows
from embviz.core.model import EmbeddingModel
from embviz.core.table.similarity import UNIT_TABLE, matmul, unit_scales, unit_table
from embviz.core.maps.tsne_schedule import PHASES, STEP, precomputed_knn_index
from embviz.core.maps.tsne_gradient import TorchObjective

METHODS = ("pca", "tsne", "umap")
_CHUNK = 16384
_SCATTER_BYTES = 64 << 20
# Centre the chunks when the mean row's squared length is above this share of the rows' mean
# squared length: float32 products would then lose the variance to the subtraction.
_CANCELLING_MEAN = 0.9
MIN_TSNE_ROWS = 10
# Above this many rows on a CPU, t-SNE runs in a child process on every core (tsne_child);
# smaller maps take a second or two in the worker, with openTSNE's Barnes-Hut.
CHILD_TSNE_ROWS = 1000
# A PCA of more values than this takes seconds on one core: it uses every core the window
# leaves idle (0.1 s to find out, nothing for smaller tables).
WIDE_PCA_VALUES = 100_000_000
EXACT_KNN_ROWS = 100_000  # above this on a CPU, the exact graph (n² work) gives way to an approximate index
UMAP_NEIGHBOURS = 15
DIMS = (2, 3)


@dataclass
class Projection:
    method: str
    ids: np.ndarray  # (n,) int64 true row ids
    coords: np.ndarray  # (n, dims) float32, dims 2 or 3
    explained: list[float] = field(default_factory=list)  # PCA: variance share per axis
    notes: list[str] = field(default_factory=list)
    sampled: int = 0  # t-SNE, UMAP: rows laid out by the method, the others placed beside them; 0 for all


def select_rows(model: EmbeddingModel, limit: int | None = None, keep: np.ndarray | None = None) -> np.ndarray:
    """True row ids to project: those kept by the mask, then the first `limit` of them."""
    ids = np.arange(model.vocab_size, dtype=np.int64) if keep is None else np.flatnonzero(keep).astype(np.int64)
    if limit is not None:
        if limit < 1:
            raise EmbvizError(f"The row limit must be at least 1 (got {limit}).")
        ids = ids[:limit]
    if ids.size == 0:
        raise EmbvizError("No rows are left to project with this filter.")
    return ids


def _rows(model: EmbeddingModel, ids: np.ndarray, normalize: bool) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(rows, per-row scale or None). Unit rows come as raw rows and their 1 / norms when
    the unit table is not built yet: the first map then needs no 113 MB copy of the table."""
    scale = None
    if not normalize:
        source = torch.nan_to_num(model.table, nan=0.0, posinf=0.0, neginf=0.0)
    elif UNIT_TABLE in model.cache or (scale := unit_scales(model)) is None:
        source = unit_table(model)
    else:
        source = model.table
    if ids.size == model.vocab_size:
        return source, scale
    index = torch.as_tensor(ids, device=source.device)
    return source.index_select(0, index), None if scale is None else scale[index]


def pca_components(x: torch.Tensor, n_components: int, scale: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
    """(mean, components (D, k), explained variance ratio) of the rows of x (each times its scale)."""
    n, d = x.shape
    k = min(n_components, d)
    mean32 = _column_mean(x, scale)
    cov = _centred_scatter(x, mean32, scale) / max(n - 1, 1)
    evals, comps = _top_eigenpairs(cov, k)
    # Deterministic signs: the largest loading of each axis is positive (as sklearn does).
    signs = torch.sign(comps.gather(0, comps.abs().argmax(dim=0, keepdim=True)))
    signs[signs == 0] = 1
    comps = comps * signs
    total = float(torch.trace(cov))  # the sum of all eigenvalues, without computing them
    ratio = (evals.clamp_min(0) / total).cpu().numpy() if total > 0 else np.zeros(k)
    return mean32, comps.float(), ratio


def _column_mean(x: torch.Tensor, scale: torch.Tensor | None) -> torch.Tensor:
    """Mean row, float32 chunk sums added in float64. Chunk sums as weights·chunk (a BLAS
    matrix-vector product): torch's float64-accumulating sum took 167 ms at 49k × 576."""
    weights = scale if scale is not None else torch.ones(x.shape[0], dtype=x.dtype, device=x.device)
    start = torch.zeros(x.shape[1], dtype=torch.float64, device=x.device)  # 0 + s is s: the same sums
    total = sum((matmul(weights[i : i + _CHUNK], x[i : i + _CHUNK]).double() for i in range(0, x.shape[0], _CHUNK)), start)
    return (total / x.shape[0]).float()


def _centred_scatter(x: torch.Tensor, mean: torch.Tensor, scale: torch.Tensor | None) -> torch.Tensor:
    """Σ (xᵢ − mean)(xᵢ − mean)ᵀ in float64, as Σ xᵢxᵢᵀ − n·mean·meanᵀ: float32 chunk
    products (numpy sees chunkᵀ·chunk and calls syrk, half a general product's work)
    added in float64. Rows that need no scaling are never copied; scaled ones pass through
    one reused buffer. When the mean is most of every row, the subtraction would cancel
    the variance away: the chunks are centred first instead."""
    n = x.shape[0]
    second = _scatter(x, scale, None)
    mean64 = mean.double()
    if float(mean64 @ mean64) > _CANCELLING_MEAN * float(torch.trace(second)) / max(n, 1):
        return _scatter(x, scale, mean)
    return second - n * torch.outer(mean64, mean64)


def _scatter(x: torch.Tensor, scale: torch.Tensor | None, centre: torch.Tensor | None) -> torch.Tensor:
    """Σ yᵢyᵢᵀ in float64 for yᵢ = xᵢ·scaleᵢ − centre, from float32 chunks."""
    n, d = x.shape
    # Rows that need no copy go to BLAS in one call, as a plain numpy PCA does: OpenBLAS
    # splits a product over its threads badly when the rows are few, worst when another
    # process holds a core. Copies go through ~64 MB chunks.
    copied = scale is not None or centre is not None
    rows = max(_CHUNK, _SCATTER_BYTES // (4 * d)) if copied else max(n, 1)
    scatter = torch.zeros((d, d), dtype=torch.float64, device=x.device)
    buffer = torch.empty_like(x[:rows]) if copied else None
    for i in range(0, n, rows):
        chunk = x[i : i + rows]
        if buffer is not None:
            chunk = buffer[: chunk.shape[0]]
            if scale is None:
                assert centre is not None  # copied: one of the two is given
                torch.sub(x[i : i + rows], centre, out=chunk)
            else:
                torch.mul(x[i : i + rows], scale[i : i + rows, None], out=chunk)
                if centre is not None:
                    chunk.sub_(centre)
        scatter += matmul(chunk.T, chunk).double()
    return scatter


def _top_eigenpairs(cov: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The k largest eigenvalues (descending) and their eigenvectors (D, k). torch rather
    than scipy's top-k-only LAPACK call (13 ms instead of 40–60 ms at D = 576): scipy
    holds the GIL throughout, which stalled the window (bench figure 9)."""
    evals, evecs = torch.linalg.eigh(cov)
    return evals.flip(0)[:k], evecs.flip(1)[:, :k]


def pca_transform(x: torch.Tensor, mean: torch.Tensor, comps: torch.Tensor, scale: torch.Tensor | None = None) -> np.ndarray:
    # x·C − mean·C rather than (x − mean)·C: no centred copy of the table.
    projected = matmul(x, comps)
    if scale is not None:
        projected *= scale[:, None]
    return (projected - mean @ comps).cpu().numpy()


def pca(model: EmbeddingModel, ids: np.ndarray, n_components: int = 2, normalize: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(coords (n, n_components), explained variance ratio); missing axes are zeros."""
    x, scale = _rows(model, ids, normalize)
    wide = x.device.type == "cpu" and x.numel() >= WIDE_PCA_VALUES
    with torch.inference_mode(), every_idle_core() if wide else nullcontext():
        mean, comps, ratio = pca_components(x, n_components, scale)
        coords = pca_transform(x, mean, comps, scale)
    if coords.shape[1] < n_components:  # a one-column table still gets a 2-D map
        coords = np.hstack([coords, np.zeros((coords.shape[0], n_components - coords.shape[1]), np.float32)])
        ratio = np.concatenate([ratio, np.zeros(n_components - ratio.size)])
    return coords.astype(np.float32), ratio


def project(
    model: EmbeddingModel,
    method: str = "pca",
    ids: np.ndarray | None = None,
    normalize: bool = True,
    progress: ProgressFn = no_progress,
    seed: int = 0,
    threads: int | None = None,
    sample: int | None = None,
    dims: int = 2,
) -> Projection:
    """A map of the given rows (all rows by default) in `dims` (2 or 3) components. `normalize` picks unit or raw
    rows for PCA (and so for t-SNE's and UMAP's starting layout); their neighbour graphs
    are always the table's cosine neighbours. With `sample`, a t-SNE or UMAP lays out
    that many of the rows (placement.sample_positions) and places the others by their
    nearest sampled rows."""
    if method not in METHODS:
        raise EmbvizError(f"Unknown projection '{method}': use pca, tsne or umap.")
    if dims not in DIMS:
        raise EmbvizError(f"A map has 2 or 3 dimensions, not {dims}.")
    ids = select_rows(model) if ids is None else np.asarray(ids, dtype=np.int64)
    if sample is not None and method != "pca" and sample < ids.size:
        return _sampled(model, method, ids, sample, normalize, progress, seed, threads, dims)
    if method == "pca":
        progress(0.0, "PCA", None)
        # The map, not t-SNE's starting layout: kept in the cache folder for a model read
        # from a file the cache knows, so the next launch draws it without computing.
        coords, ratio = kept_pca(model, ids, dims, normalize, lambda: pca(model, ids, dims, normalize))
        progress(1.0, "PCA done", coords)
        return Projection("pca", ids, coords, [float(r) for r in ratio])
    if method == "tsne":
        return _tsne(model, ids, normalize, progress, seed, threads, dims)
    return _umap(model, ids, normalize, progress, seed, dims)


def _sampled(model: EmbeddingModel, method: str, ids: np.ndarray, sample: int, normalize: bool, progress: ProgressFn,
             seed: int, threads: int | None, dims: int) -> Projection:
    from embviz.core.maps.placement import PLACE_NEIGHBOURS, place_rows, sample_positions

    if sample < MIN_TSNE_ROWS:
        raise EmbvizError(f"A sample of {sample} rows is too small to map; take at least {MIN_TSNE_ROWS}.")
    sampled = sample_positions(ids.size, sample, seed)

    def first_part(fraction: float, stage: str = "", preview: object = None) -> None:
        progress(0.8 * fraction, stage, preview)

    part = project(model, method, ids[sampled], normalize, first_part, seed, threads, dims=dims)
    coords = place_rows(model, ids, sampled, part.coords, progress, (0.8, 1.0))
    name = "t-SNE" if method == "tsne" else "UMAP"
    note = (f"{name} of {sampled.size:,} sampled rows; the other {ids.size - sampled.size:,} placed at the median "
            f"of their {PLACE_NEIGHBOURS} nearest sampled rows.")
    progress(1.0, f"{name} done", coords)
    return Projection(method, ids, coords, notes=part.notes + [note], sampled=int(sampled.size))


def word_pair_axes_map(model: EmbeddingModel, ids: np.ndarray, x: tuple[int, int], y: tuple[int, int]) -> Projection:
    """TF Projector's custom projection: the unit rows on two directions taken from word
    pairs (x = x[0] → x[1]; y = y[0] → y[1], made orthogonal to x), origin at x[0]."""
    from embviz.core.table.analogy import pair_axes

    axes = pair_axes(model, x, y)
    units = unit_rows(model, ids)
    with torch.inference_mode():
        coords = matmul(units, axes.T.contiguous()) - (unit_table(model)[x[0]] @ axes.T)
    label = model.vocab.label
    notes = [f"Axes: x = {label(x[0])} → {label(x[1])}, y = {label(y[0])} → {label(y[1])} (made orthogonal to x)."]
    return Projection("axes", ids, coords.cpu().numpy().astype(np.float32), notes=notes)


def _threads(threads: int | None) -> int:
    return threads or compute_threads()


def _tsne(model: EmbeddingModel, ids: np.ndarray, normalize: bool, progress: ProgressFn, seed: int,
          threads: int | None, dims: int) -> Projection:
    n = ids.size
    if n < MIN_TSNE_ROWS:
        raise EmbvizError(f"t-SNE needs at least {MIN_TSNE_ROWS} rows; this selection has {n}. Use PCA instead.")
    notes = []
    perplexity = 30.0
    if n - 1 < 3 * perplexity:
        perplexity = max(2.0, (n - 1) / 3)
        notes.append(f"Perplexity lowered to {perplexity:.1f}: t-SNE needs three times as many rows as its perplexity.")
    progress(0.0, "t-SNE: PCA to 50 dimensions", None)
    x50, _ = pca(model, ids, min(50, model.dim), normalize)
    init = x50[:, :dims] if x50.shape[1] >= dims else np.hstack([x50, np.zeros((n, dims - x50.shape[1]), np.float32)])
    std = init[:, 0].std()
    init = (init / (std if std > 0 else 1.0) * 1e-4).astype(np.float64)  # openTSNE's recommended scale
    stage = "t-SNE: each row's nearest rows in the full table"
    progress(0.05, stage, init.astype(np.float32))
    jobs = _threads(threads)
    k = min(n - 1, int(3 * perplexity))
    on_gpu = model.device.type == "cuda"
    exact = n <= EXACT_KNN_ROWS or on_gpu
    if not on_gpu and n > CHILD_TSNE_ROWS:
        from embviz.core.maps.tsne_child import tsne_in_child

        graph = kept_knn(model, ids, k) if exact else None
        rows = None if graph is not None else _child_rows(model, ids)
        coords, computed, stopped = tsne_in_child(rows, graph, init, k, perplexity, seed, exact, progress)
        if computed is not None:
            keep_knn(model, ids, *computed)
        return _finished(ids, coords, notes + ([stopped] if stopped else []), progress)
    # Imported here, not above: a big map's child imports openTSNE itself (a second here).
    from openTSNE import TSNEEmbedding
    from openTSNE.affinity import PerplexityBasedNN

    if exact:
        positions, cosines = table_knn(model, ids, k, progress, (0.05, 0.3), stage)
        knn_index = precomputed_knn_index(positions, cosines)
        affinities = PerplexityBasedNN(perplexity=perplexity, knn_index=knn_index, n_jobs=jobs, random_state=seed, verbose=False)
    else:  # Annoy on the full unit rows: their euclidean order is the cosine order
        affinities = PerplexityBasedNN(unit_rows(model, ids).cpu().numpy(), perplexity=perplexity, method="annoy", n_jobs=jobs,
                                       random_state=seed, verbose=False)
    # On a GPU our own FFT gradient (torch, off the GIL, 2-D only); small and 3-D maps keep
    # openTSNE's Barnes-Hut.
    method = TorchObjective(model.device) if on_gpu and dims == 2 else "bh"
    embedding = TSNEEmbedding(init, affinities, negative_gradient_method=method, n_jobs=jobs, random_state=seed, verbose=False)
    total, done = sum(p[0] for p in PHASES), 0
    for n_iter, exaggeration, momentum in PHASES:
        # Steps of our own rather than openTSNE callbacks: those also evaluate the KL
        # divergence, which costs time and holds the GIL (bench figure 9).
        for _ in range(n_iter // STEP):
            embedding = embedding.optimize(STEP, exaggeration=exaggeration, momentum=momentum,
                                           learning_rate="auto", inplace=True)
            done += STEP
            progress(0.3 + 0.7 * done / total, "t-SNE: optimising", np.asarray(embedding, dtype=np.float32))
    return _finished(ids, np.asarray(embedding, dtype=np.float32), notes, progress)


def _child_rows(model: EmbeddingModel, ids: np.ndarray) -> np.ndarray | FileRows:
    """The unit rows a child process fits: the cache file's path when the table maps one (the
    child maps it and scales the rows itself), else the rows, copied to it through a file."""
    from_file = file_rows(model, ids)
    return from_file if from_file is not None else unit_rows(model, ids).cpu().numpy()


def _finished(ids: np.ndarray, coords: np.ndarray, notes: list[str], progress: ProgressFn) -> Projection:
    if not np.isfinite(coords).all():
        raise EmbvizError("t-SNE diverged (NaN coordinates); try PCA or fewer rows.")
    progress(1.0, "t-SNE done", coords)
    return Projection("tsne", ids, coords, notes=notes)


def _umap(model: EmbeddingModel, ids: np.ndarray, normalize: bool, progress: ProgressFn, seed: int,
          dims: int) -> Projection:
    n = ids.size
    if n < 4:
        raise EmbvizError(f"UMAP needs at least 4 rows; this selection has {n}. Use PCA instead.")
    progress(0.0, "UMAP: PCA to 50 dimensions", None)
    x50, _ = pca(model, ids, min(50, model.dim), normalize)
    neighbours = min(UMAP_NEIGHBOURS, n - 1)  # umap-learn counts each row as its own first neighbour
    if n <= EXACT_KNN_ROWS or model.device.type == "cuda":
        positions, cosines = table_knn(model, ids, neighbours - 1, progress, (0.05, 0.4),
                                       "UMAP: each row's nearest rows in the full table")
        own = np.arange(n, dtype=np.int64)[:, None]
        knn = (np.hstack([own, positions]), np.hstack([np.zeros((n, 1), np.float32), 1.0 - cosines]).astype(np.float32))
        data: np.ndarray | FileRows = x50  # the graph is given; the rows only seed the starting layout
    else:  # umap-learn's own index, on the full unit rows by cosine
        knn = None
        data = _child_rows(model, ids)
    # umap-learn reports no progress and cannot be interrupted: a child process can.
    coords = run_in_child(umap_coords, (data, seed, neighbours, knn, dims), progress, "UMAP: running, no progress until it ends",
                          fraction=0.45)
    if not np.isfinite(coords).all():
        raise EmbvizError("UMAP produced NaN coordinates; try PCA or fewer rows.")
    progress(1.0, "UMAP done", coords)
    return Projection("umap", ids, coords)


def umap_coords(x: np.ndarray | FileRows, seed: int, neighbours: int,
                knn: tuple[np.ndarray, np.ndarray] | None, dims: int = 2) -> np.ndarray:
    """umap-learn's layout in `dims` components by cosine, from a precomputed neighbour graph (each row
    first in its own list) when one is given (run in a child process)."""
    import warnings

    import umap  # slow to import (numba), so only when asked for

    rows = rows_in_child(x)
    assert rows is not None
    n = rows.shape[0]
    reducer = umap.UMAP(n_components=dims, n_neighbors=neighbours, min_dist=0.1, metric="cosine", random_state=seed,
                        n_jobs=1, init="pca" if n > 2 else "random",
                        precomputed_knn=(None, None, None) if knn is None else knn)
    with warnings.catch_warnings():  # "no search index, so no transform": none is wanted
        warnings.simplefilter("ignore")
        coords: np.ndarray = reducer.fit_transform(rows).astype(np.float32)
    return coords
