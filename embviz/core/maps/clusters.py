"""Clusters of token rows with scikit-learn: MiniBatchKMeans on the mean-centred unit rows
(directions, as the Neighbours tab's mean-centred cosine sees them), or HDBSCAN on a drawn map's 2-D coordinates. Each cluster is named
by its most central readable tokens: those closest to its mean direction."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.model import EmbeddingModel
from embviz.core.table.similarity import unit_table
from embviz.core.table.token_kinds import PUNCTUATION, UNREADABLE, token_kinds

METHODS = ("kmeans", "hdbscan")
DEFAULT_K = 50
MAX_K = 1000
KMEANS_PASSES = 5  # passes of mini-batches over the table: measured to settle at 49,152 rows
KMEANS_BATCH = 4096
NAME_TOKENS = 3
NAME_CHARS = 12  # a token longer than this is cut in a name ("~~~~~~~~~~~…"); its examples keep it whole
EXAMPLES = 8
NOISE = -1  # HDBSCAN's points that belong to no cluster


@dataclass
class Cluster:
    size: int
    label: str  # its most central readable tokens, as labels ("␣Monday ␣Friday ␣Tuesday")
    examples: list[int]  # token ids, most central first


@dataclass
class Clustering:
    method: str
    k: int | None  # asked of k-means; None for HDBSCAN
    ids: np.ndarray  # (n,) the rows clustered
    assignment: np.ndarray  # (n,) int32 cluster of each row, numbered by size (0 the largest), NOISE for none
    clusters: list[Cluster]

    def cluster_of(self, token_id: int) -> int | None:
        """The cluster of one row, or None when that row was not clustered."""
        where = np.flatnonzero(self.ids == int(token_id))
        return int(self.assignment[where[0]]) if len(where) else None

    def codes_for(self, ids: np.ndarray, size: int) -> np.ndarray:
        """The cluster of each of `ids` (NOISE for rows not clustered); `size` is the vocabulary's."""
        full = np.full(size, NOISE, dtype=np.int32)
        full[self.ids] = self.assignment
        return full[np.asarray(ids, dtype=np.int64)]


def check_k(k: int, rows: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise EmbvizError(f"The number of clusters must be a whole number, not {k!r}.")
    if not 2 <= k <= min(MAX_K, rows):
        raise EmbvizError(f"The number of clusters must be from 2 to {min(MAX_K, rows):,} (got {k}).")
    return int(k)


def kmeans_clusters(model: EmbeddingModel, k: int = DEFAULT_K, progress: ProgressFn = no_progress,
                    seed: int = 0) -> Clustering:
    """k-means of every row's direction, cached per model and k. Cancellable between mini-batches."""
    k = check_k(k, model.vocab_size)
    return model.derived(f"clusters:kmeans:{k}:{seed}", lambda: _kmeans(model, k, progress, seed))


def _kmeans(model: EmbeddingModel, k: int, progress: ProgressFn, seed: int) -> Clustering:
    from sklearn.cluster import MiniBatchKMeans

    # Centred first: every SmolLM2 row shares one common direction, and without centring
    # k-means on 49,152 rows kept five or more clusters of a single outlier row.
    units = unit_table(model, centered=True).cpu().numpy()
    n = len(units)
    batch = min(KMEANS_BATCH, n)
    km = MiniBatchKMeans(k, random_state=seed, n_init=1, batch_size=batch, compute_labels=False)
    rng = np.random.default_rng(seed)
    steps = KMEANS_PASSES * -(-n // batch)
    done = 0
    for p in range(KMEANS_PASSES):
        order = rng.permutation(n)
        for start in range(0, n, batch):
            # A short last batch is topped up: every batch (the first seeds the centres) holds `batch` rows.
            chunk = order[start:start + batch] if start + batch <= n else order[n - batch:]
            km.partial_fit(units[chunk])
            done += 1
            progress(0.95 * done / steps, f"k-means, pass {p + 1} of {KMEANS_PASSES}", None)
    assignment = km.predict(units).astype(np.int32)
    progress(0.97, "naming the clusters", None)
    ids = np.arange(n, dtype=np.int64)
    return _named(model, "kmeans", k, ids, assignment, units)


def hdbscan_clusters(model: EmbeddingModel, ids: np.ndarray, coords: np.ndarray, progress: ProgressFn = no_progress,
                     min_cluster_size: int | None = None) -> Clustering:
    """HDBSCAN of a drawn map's points (its own number of clusters; sparse points are noise),
    cached per model and map. Not cancellable inside scikit-learn's call."""
    ids = np.asarray(ids, dtype=np.int64)
    coords = np.asarray(coords, dtype=np.float64)
    if coords.shape != (len(ids), 2):
        raise EmbvizError("HDBSCAN needs the map's row ids and their 2-D coordinates.")
    if len(ids) < 10:
        raise EmbvizError(f"HDBSCAN needs at least 10 points on the map (it has {len(ids)}).")
    size = min_cluster_size or max(5, len(ids) // 500)
    key = hashlib.blake2b(ids.tobytes() + coords.tobytes() + str(size).encode(), digest_size=12).hexdigest()

    def compute() -> Clustering:
        from sklearn.cluster import HDBSCAN

        progress(0.0, "HDBSCAN of the map's points", None)
        found = HDBSCAN(min_cluster_size=size, min_samples=10, copy=True).fit(coords).labels_
        progress(0.95, "naming the clusters", None)
        return _named(model, "hdbscan", None, ids, found.astype(np.int32), unit_table(model, centered=True).cpu().numpy())

    return model.derived(f"clusters:hdbscan:{key}", compute)


def _named(model: EmbeddingModel, method: str, k: int | None, ids: np.ndarray, found: np.ndarray,
           units: np.ndarray) -> Clustering:
    """Clusters numbered by size, largest first (empty ones dropped), each named by the
    members closest to its mean direction, skipping special tokens, byte pieces and spaces."""
    kinds = token_kinds(model.vocab)
    texts = model.vocab.texts
    sizes = np.bincount(found[found >= 0], minlength=0)
    order = [c for c in np.argsort(-sizes, kind="stable") if sizes[c] > 0]
    renumber = np.full(max(len(sizes), 1), NOISE, dtype=np.int32)
    renumber[order] = np.arange(len(order), dtype=np.int32)
    assignment = np.where(found >= 0, renumber[np.maximum(found, 0)], NOISE).astype(np.int32)
    clusters = []
    for c in range(len(order)):
        members = ids[assignment == c]
        rows = units[members]
        centre = rows.mean(0)
        centre /= max(float(np.linalg.norm(centre)), 1e-30)
        ranked = members[np.argsort(-(rows @ centre), kind="stable")]
        readable = [int(i) for i in ranked
                    if kinds[i] not in UNREADABLE and not (kinds[i] == PUNCTUATION and texts[i].strip() == "")]
        central = (readable or ranked.tolist())[:EXAMPLES]
        clusters.append(Cluster(int(len(members)), " ".join(_short(model.vocab.label(i)) for i in central[:NAME_TOKENS]),
                                central))
    return Clustering(method, k, ids, assignment, clusters)


def _short(label: str) -> str:
    return label if len(label) <= NAME_CHARS else label[: NAME_CHARS - 1] + "…"
