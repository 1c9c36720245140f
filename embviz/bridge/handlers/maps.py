"""The map: projections of the rows, how faithful they are, clusters and point colours."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from embviz.bridge import requests as rq
from embviz.bridge.registry import handles
from embviz.bridge.views import ClustersView, PointValuesView
from embviz.core import EmbvizError
from embviz.core.errors import ProgressFn
from embviz.core.model import EmbeddingModel

if TYPE_CHECKING:
    pass


def _ids(model: EmbeddingModel, ids: np.ndarray | None) -> np.ndarray:
    return np.arange(model.vocab_size) if ids is None else np.asarray(ids, dtype=np.int64)


def _coords(coords: np.ndarray | None) -> np.ndarray:
    if coords is None:
        raise EmbvizError("No map is drawn: there are no coordinates to measure or cluster.")
    return coords


@handles(rq.Project)
def project(model: EmbeddingModel, request: rq.Project, progress: ProgressFn) -> Any:
    from embviz.bridge.handlers.table import resolve_typed
    from embviz.core.maps.placement import sample_positions
    from embviz.core.maps.projection import project, select_rows, word_pair_axes_map

    keep = model.vocab.mask(words_only=True) if request.subset == "words" else None
    ids = select_rows(model, request.limit if request.subset == "first" else request.first, keep)
    sampled = ids[sample_positions(ids.size, request.sample)] if request.sample else ids

    def with_ids(fraction: float, stage: str = "", preview: object = None) -> None:
        # Previews travel with their row ids so the map can draw them as they come; a
        # sampled map's previews are of its sample until the others are placed.
        if isinstance(preview, np.ndarray):
            progress(fraction, stage, (ids if len(preview) == ids.size else sampled, preview))
        else:
            progress(fraction, stage, None)

    if request.method == "axes":
        if request.dims != 2:
            raise EmbvizError("Word-pair axes make a 2-D map: pick PCA, t-SNE or UMAP for three dimensions.")
        words = [resolve_typed(model.vocab, w) for w in request.axes]
        return word_pair_axes_map(model, ids, (words[0], words[1]), (words[2], words[3]))
    return project(model, request.method, ids, progress=with_ids, sample=request.sample, dims=request.dims)


@handles(rq.Faithfulness)
def faithfulness(model: EmbeddingModel, request: rq.Faithfulness, _progress: ProgressFn) -> Any:
    from embviz.core.maps.knn import neighbour_preservation

    return neighbour_preservation(model, _ids(model, request.ids), _coords(request.coords))


@handles(rq.Clusters)
def clusters(model: EmbeddingModel, request: rq.Clusters, progress: ProgressFn) -> ClustersView:
    from embviz.core.maps.clusters import METHODS, graph_clusters, hdbscan_clusters, kmeans_clusters

    if request.method not in METHODS:
        raise EmbvizError(f"Cluster with {', '.join(METHODS[:-1])} or {METHODS[-1]}, not {request.method!r}.")
    ids = _ids(model, request.ids)
    if request.method == "graph":
        clustering = graph_clusters(model, request.k, progress)
    elif request.method == "kmeans":
        clustering = kmeans_clusters(model, request.k, progress)
    else:
        clustering = hdbscan_clusters(model, ids, _coords(request.coords), progress)
    return ClustersView(clustering.method, clustering.k, ids, clustering.codes_for(ids, model.vocab_size),
                        clustering.clusters, clustering.largest_readable(), clustering.coarse, clustering.coarse_of)


@handles(rq.PointValues)
def point_values(model: EmbeddingModel, request: rq.PointValues, _progress: ProgressFn) -> PointValuesView:
    ids = _ids(model, request.ids)
    if request.by == "kind":
        from embviz.core.table.token_kinds import KIND_NAMES, token_kinds

        kinds = model.derived("token_kinds", lambda: token_kinds(model.vocab))
        return PointValuesView("kind", ids, kinds[ids], list(KIND_NAMES))
    if request.by == "id":
        return PointValuesView("id", ids, ids.astype(np.float32))
    if request.by == "norm":
        from embviz.core.table.similarity import row_norms

        norms = model.derived("row_norms_cpu", lambda: row_norms(model).cpu().numpy())
        return PointValuesView("norm", ids, np.nan_to_num(norms[ids], nan=0.0, posinf=0.0))
    raise EmbvizError(f"Colour by kind, id or norm, not {request.by!r}.")
