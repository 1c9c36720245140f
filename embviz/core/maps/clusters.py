"""Clusters of token rows, each named so a class can read it.

"graph" (the default) is Leiden community detection (igraph) on the exact cosine graph of
each row's 10 nearest rows, the graph t-SNE uses and embviz keeps per model: clusters
follow the table's own neighbourhoods. "kmeans" is scikit-learn's MiniBatchKMeans with its
defaults on the mean-centred unit rows (directions, as the Neighbours tab's mean-centred
cosine sees them). "hdbscan" clusters a drawn map's 2-D coordinates. Both scikit-learn fits
run in a child process (see cluster_fit). A cluster is named by its most central real words
(see `cluster_names`). The fine clusters are merged into a few coarse groups, named the same
way, for a map seen whole."""

from __future__ import annotations

from typing import Any

import hashlib
import random
import threading
from dataclasses import dataclass, field

import numpy as np

from embviz.core.child import run_in_child
from embviz.core.device import compute_threads
from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.model import EmbeddingModel
from embviz.core.table.similarity import unit_table
from embviz.core.maps.cluster_fit import hdbscan_fit, kmeans_fit
from embviz.core.maps.file_rows import file_rows
from embviz.core.maps.cluster_names import dictionary, name_of, readable, told_apart
from embviz.core.table.token_kinds import token_kinds

METHODS = ("graph", "kmeans", "hdbscan")
DEFAULT_K = 50
MAX_K = 1000
GRAPH_NEIGHBOURS = 10  # edges per row: measured on SmolLM2, 15 or 30 merge the word sets no better and run slower
GRAPH_KEEP = 90  # what t-SNE (perplexity 30) asks of the kept graph: asking the same lets the two share one graph
LEIDEN_RUNS = 8  # resolutions tried to come near k clusters (about 0.3 s each); SmolLM2 needs one at k = 50, seven at k = 20
LEIDEN_ITERATIONS = 2
COARSE_GROUPS = 8  # what a map zoomed out names: the fine clusters merged into this many
EXAMPLES = 8
STATUS_CLUSTERS = 5  # the largest readable clusters a status line names
NOISE = -1  # HDBSCAN's points that belong to no cluster
_IGRAPH_RNG = threading.Lock()  # igraph's random generator is global: one seeded run at a time


@dataclass
class Cluster:
    size: int
    label: str  # its most central whole words ("Monday Friday Tuesday"), what its pieces share ("single letters"), or "pieces: …"
    examples: list[int]  # token ids, most central first
    readable: bool  # named by whole words, not by fragments


@dataclass
class Clustering:
    method: str
    k: int | None  # asked of k-means and of the graph (which comes near it); None for HDBSCAN
    ids: np.ndarray  # (n,) the rows clustered
    assignment: np.ndarray  # (n,) int32 cluster of each row, numbered by size (0 the largest), NOISE for none
    clusters: list[Cluster]
    coarse: list[Cluster] = field(default_factory=list)  # the fine clusters merged, largest first
    coarse_of: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # (len(clusters),) coarse group of each

    def cluster_of(self, token_id: int) -> int | None:
        """The cluster of one row, or None when that row was not clustered."""
        where = np.flatnonzero(self.ids == int(token_id))
        return int(self.assignment[where[0]]) if len(where) else None

    def codes_for(self, ids: np.ndarray, size: int) -> np.ndarray:
        """The cluster of each of `ids` (NOISE for rows not clustered); `size` is the vocabulary's."""
        full = np.full(size, NOISE, dtype=np.int32)
        full[self.ids] = self.assignment
        return full[np.asarray(ids, dtype=np.int64)]

    def largest_readable(self, count: int = STATUS_CLUSTERS) -> list[int]:
        """The numbers of the `count` largest clusters named by whole words, largest first."""
        return [c for c, cluster in enumerate(self.clusters) if cluster.readable][:count]


def check_k(k: int, rows: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise EmbvizError(f"The number of clusters must be a whole number, not {k!r}.")
    if not 2 <= k <= min(MAX_K, rows):
        raise EmbvizError(f"The number of clusters must be from 2 to {min(MAX_K, rows):,} (got {k}).")
    return int(k)


def kmeans_clusters(model: EmbeddingModel, k: int = DEFAULT_K, progress: ProgressFn = no_progress,
                    seed: int = 0) -> Clustering:
    """MiniBatchKMeans of every row's direction, cached per model and k, fitted in a child
    process (about 2 s for 49k rows) that a cancel stops at once."""
    k = check_k(k, model.vocab_size)
    return model.derived(f"clusters:kmeans:{k}:{seed}", lambda: _kmeans(model, k, progress, seed))


def _kmeans(model: EmbeddingModel, k: int, progress: ProgressFn, seed: int) -> Clustering:
    # Centred first: every SmolLM2 row shares one common direction, and without centring
    # k-means on 49,152 rows kept five or more clusters of a single outlier row.
    units = unit_table(model, centered=True).cpu().numpy()
    stage = f"k-means of {len(units):,} directions"
    progress(0.0, stage, None)
    # The cache file's path when the table maps one: the child makes the rows from it, and no
    # copy of the table goes through a file.
    from_file = file_rows(model, None, centered=True)
    sent = units if from_file is None else from_file
    assignment = run_in_child(kmeans_fit, (sent, k, seed, compute_threads()), progress, stage)
    progress(0.95, "naming the clusters", None)
    return _named(model, "kmeans", k, np.arange(len(units), dtype=np.int64), assignment, units)


def graph_clusters(model: EmbeddingModel, k: int = DEFAULT_K, progress: ProgressFn = no_progress,
                   seed: int = 0) -> Clustering:
    """Leiden communities of the rows' exact cosine neighbour graph, at the resolution that
    comes nearest k clusters, cached per model and k. The graph is the one kept for the
    model (built in about 30 s the first time, then read back); cancellable between its
    chunks and between Leiden runs."""
    k = check_k(k, model.vocab_size)
    return model.derived(f"clusters:graph:{k}:{seed}", lambda: _graph(model, k, progress, seed))


def _graph(model: EmbeddingModel, k: int, progress: ProgressFn, seed: int) -> Clustering:
    ids = np.arange(model.vocab_size, dtype=np.int64)
    positions, cosines = neighbour_graph(model, ids, progress)
    graph = _igraph(positions, cosines)
    found: np.ndarray | None = None
    resolution, below, above = 1.0, 0.0, np.inf  # the resolutions known to give too few, too many
    for run in range(LEIDEN_RUNS):
        progress(0.6 + 0.3 * run / LEIDEN_RUNS, f"Leiden communities, resolution {resolution:.3g}", None)
        membership = _leiden(graph, resolution, seed)
        count = int(membership.max()) + 1
        if found is None or abs(count - k) < abs(int(found.max()) + 1 - k):
            found = membership
        if abs(count - k) <= max(1, k // 10):
            break
        below, above = (resolution, above) if count < k else (below, resolution)
        # Communities grow about in proportion to the resolution, but not at low resolutions
        # (a few loose ends stay apart): once k is bracketed, the bracket is halved instead.
        bracketed = below > 0 and np.isfinite(above)
        resolution = float(np.sqrt(below * above)) if bracketed else resolution * k / count
    progress(0.95, "naming the clusters", None)
    assert found is not None  # the loop ran at least once
    return _named(model, "graph", k, ids, found, unit_table(model, centered=True).cpu().numpy())


def neighbour_graph(model: EmbeddingModel, ids: np.ndarray, progress: ProgressFn = no_progress,
                    ) -> tuple[np.ndarray, np.ndarray]:
    """(positions, cosines) of each row's GRAPH_NEIGHBOURS nearest rows among `ids`: the kept
    graph when there is one, else the one t-SNE would build, kept for it."""
    from embviz.core.maps.knn import kept_knn, table_knn

    want = min(GRAPH_NEIGHBOURS, len(ids) - 1)
    kept = kept_knn(model, ids, want)
    if kept is None:
        positions, cosines = table_knn(model, ids, GRAPH_KEEP, progress, (0.0, 0.6))
        kept = positions[:, :want], cosines[:, :want]
    return kept


def _igraph(positions: np.ndarray, cosines: np.ndarray) -> Any:
    """The undirected weighted graph: an edge where either row is among the other's nearest."""
    import igraph

    n, k = positions.shape
    rows = np.repeat(np.arange(n, dtype=np.int64), k)
    low, high = np.minimum(rows, positions.ravel()), np.maximum(rows, positions.ravel())
    pair = low * n + high
    order = np.argsort(pair, kind="stable")
    starts = np.flatnonzero(np.diff(pair[order], prepend=-1))  # an edge found from both ends is one edge
    # Negative weights would break modularity; a 10th-nearest row below cosine 0 is rare.
    weights = np.maximum.reduceat(np.maximum(cosines.ravel()[order], 0.0), starts).astype(np.float64)
    edges = np.column_stack([low[order][starts], high[order][starts]])
    return igraph.Graph(n=n, edges=edges, edge_attrs={"weight": weights})


def _leiden(graph: Any, resolution: float, seed: int) -> np.ndarray:
    import igraph

    with _IGRAPH_RNG:
        igraph.set_random_number_generator(random.Random(seed))
        try:
            found = graph.community_leiden(objective_function="modularity", weights="weight",
                                           resolution=resolution, n_iterations=LEIDEN_ITERATIONS)
        finally:
            igraph.set_random_number_generator(random)
    return np.asarray(found.membership, dtype=np.int32)


def hdbscan_clusters(model: EmbeddingModel, ids: np.ndarray, coords: np.ndarray, progress: ProgressFn = no_progress,
                     min_cluster_size: int | None = None) -> Clustering:
    """HDBSCAN of a drawn map's points (its own number of clusters; sparse points are noise),
    cached per model and map, fitted in a child process that a cancel stops at once."""
    ids = np.asarray(ids, dtype=np.int64)
    coords = np.asarray(coords, dtype=np.float64)
    if coords.shape != (len(ids), 2):
        raise EmbvizError("HDBSCAN needs the map's row ids and their 2-D coordinates.")
    if len(ids) < 10:
        raise EmbvizError(f"HDBSCAN needs at least 10 points on the map (it has {len(ids)}).")
    size = min_cluster_size or max(5, len(ids) // 500)
    key = hashlib.blake2b(ids.tobytes() + coords.tobytes() + str(size).encode(), digest_size=12).hexdigest()

    def compute() -> Clustering:
        stage = "HDBSCAN of the map's points"
        progress(0.0, stage, None)
        found = run_in_child(hdbscan_fit, (coords, size), progress, stage)
        progress(0.95, "naming the clusters", None)
        return _named(model, "hdbscan", None, ids, found, unit_table(model, centered=True).cpu().numpy())

    return model.derived(f"clusters:hdbscan:{key}", compute)


def _named(model: EmbeddingModel, method: str, k: int | None, ids: np.ndarray, found: np.ndarray,
           units: np.ndarray) -> Clustering:
    """Clusters numbered by size, largest first (empty ones dropped), each named by its
    members closest to its mean direction; then their coarse groups."""
    sizes = np.bincount(found[found >= 0], minlength=0)
    order = [c for c in np.argsort(-sizes, kind="stable") if sizes[c] > 0]
    renumber = np.full(max(len(sizes), 1), NOISE, dtype=np.int32)
    renumber[order] = np.arange(len(order), dtype=np.int32)
    assignment = np.where(found >= 0, renumber[np.maximum(found, 0)], NOISE).astype(np.int32)
    members = _members(ids, assignment, len(order))
    namer = _Namer(model, units)
    clusters = namer.named_apart([namer.describe(rows) for rows in members])
    directions = np.stack([namer.direction(rows) for rows in members]) if members else np.zeros((0, 1))
    coarse_of = coarse_groups(directions, np.array([len(rows) for rows in members]))
    groups = [np.concatenate([members[c] for c in np.flatnonzero(coarse_of == g)])
              for g in range(int(coarse_of.max(initial=-1)) + 1)]
    coarse = namer.named_apart([_worded_as(namer.describe(rows), [clusters[c] for c in np.flatnonzero(coarse_of == g)])
                               for g, rows in enumerate(groups)])
    return Clustering(method, k, ids, assignment, clusters, coarse, coarse_of)


def _worded_as(group: Cluster, members: list[Cluster]) -> Cluster:
    """A coarse group named by the same words as one of its clusters (in any capitals) takes
    that cluster's name, so the map's name and the key's entry read alike."""
    for member in members:
        if member.label and sorted(member.label.casefold().split(" ")) == sorted(group.label.casefold().split(" ")):
            group.label = member.label
            break
    return group


def _members(ids: np.ndarray, assignment: np.ndarray, count: int) -> list[np.ndarray]:
    """The row ids of each cluster (noise, -1, sorts first and is left out)."""
    by_cluster = np.argsort(assignment, kind="stable")
    bounds = np.searchsorted(assignment[by_cluster], np.arange(count + 1))
    return [ids[by_cluster[bounds[c]:bounds[c + 1]]] for c in range(count)]


class _Namer:
    """Names a set of rows by its members nearest its mean direction."""

    def __init__(self, model: EmbeddingModel, units: np.ndarray) -> None:
        self.kinds = model.derived("token_kinds", lambda: token_kinds(model.vocab))
        self.texts, self.labels, self.units = model.vocab.texts, model.vocab.labels, units
        # A word-level table's entries are its words; the dictionary judges a tokenizer's pieces.
        self.words = None if model.vocab.word_level else dictionary()

    def direction(self, members: np.ndarray) -> np.ndarray:
        centre = self.units[members].mean(0)
        unit: np.ndarray = centre / max(float(np.linalg.norm(centre)), 1e-30)
        return unit

    def describe(self, members: np.ndarray) -> Cluster:
        ranked = members[np.argsort(-(self.units[members] @ self.direction(members)), kind="stable")]
        label, words = name_of(ranked, self.kinds, self.texts, self.labels, self.words)
        examples = readable(ranked, self.kinds, self.texts) or ranked.tolist()
        return Cluster(int(len(members)), label, examples[:EXAMPLES], words)

    def named_apart(self, clusters: list[Cluster]) -> list[Cluster]:
        """The clusters, those given the same name told apart by their own examples."""
        names = told_apart([c.label for c in clusters], [[self.texts[i] for i in c.examples] for c in clusters])
        for cluster, name in zip(clusters, names):
            cluster.label = name
        return clusters


def coarse_groups(directions: np.ndarray, sizes: np.ndarray, groups: int = COARSE_GROUPS) -> np.ndarray:
    """The coarse group of each fine cluster, numbered by size (0 the largest): Ward's
    agglomeration of the clusters' unit mean directions (on unit vectors Euclidean distance
    follows cosine), cut into at most `groups`."""
    n = len(directions)
    if n <= groups:
        return np.arange(n, dtype=np.int32)
    from scipy.cluster.hierarchy import fcluster, linkage

    found = fcluster(linkage(directions.astype(np.float64), method="ward"), groups, criterion="maxclust") - 1
    totals = np.bincount(found, weights=sizes)
    renumber = np.empty(len(totals), dtype=np.int32)
    renumber[np.argsort(-totals, kind="stable")] = np.arange(len(totals), dtype=np.int32)
    group_of_each: np.ndarray = renumber[found]
    return group_of_each
