"""What the in-process t-SNE and its child process share: the iteration schedule and
the neighbour graph handed to openTSNE."""

from __future__ import annotations

from typing import Any

import numpy as np

STEP = 25  # iterations between previews
FIRST_STEP = 10  # the first preview comes sooner: the map starts to move
PHASES = ((250, 12.0, 0.5), (500, 1.0, 0.8))  # early exaggeration, then the real objective


def precomputed_knn_index(positions: np.ndarray, cosines: np.ndarray) -> Any:
    """openTSNE's KNNIndex over a graph already computed: each row's neighbours as
    positions and cosines, handed over as euclidean distances between unit rows
    (√(2 − 2·cos)), the geometry of every other view."""
    from openTSNE.nearest_neighbors import KNNIndex

    class Precomputed(KNNIndex):  # type: ignore[misc]  # openTSNE ships no types
        VALID_METRICS = ["euclidean"]

        def build(self) -> tuple[np.ndarray, np.ndarray]:
            return positions, np.sqrt(np.clip(2.0 - 2.0 * cosines.astype(np.float64), 0.0, None))

    return Precomputed(np.empty((positions.shape[0], 1)), positions.shape[1])
