"""scikit-learn's clustering fits, run in a child process (embviz.core.child): their Python
loops hold the interpreter for seconds, which in the window's process would stall its event
loop. numpy and scikit-learn only, so the child starts without importing torch."""

from __future__ import annotations

import numpy as np

from embviz.core.maps.file_rows import FileRows, rows_in_child


def kmeans_fit(units: np.ndarray | FileRows, k: int, seed: int, threads: int) -> np.ndarray:
    """MiniBatchKMeans (of the rows, or of those made from the cache file: file_rows) with scikit-learn's
    defaults (k-means++, n_init=3, batches of 1024,
    its own stopping rule): a hand-made loop of bigger batches split the weekdays 3 + 3.
    Its OpenMP threads are capped like torch's: on 2 busy cores, 2 of them took 18 s
    where 1 took 2 s."""
    from sklearn.cluster import MiniBatchKMeans
    from threadpoolctl import threadpool_limits

    rows = rows_in_child(units)
    with threadpool_limits(threads, user_api="openmp"):
        labels: np.ndarray = MiniBatchKMeans(k, random_state=seed).fit_predict(rows).astype(np.int32)
    return labels


def hdbscan_fit(coords: np.ndarray, min_cluster_size: int) -> np.ndarray:
    """HDBSCAN's labels of 2-D points (-1 for noise)."""
    from sklearn.cluster import HDBSCAN

    labels: np.ndarray = HDBSCAN(min_cluster_size=min_cluster_size, min_samples=10, copy=True).fit(coords).labels_
    return labels.astype(np.int32)
