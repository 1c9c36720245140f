"""Colour by: what the worker's values (token kinds, ids, row lengths, clusters) become on
the map: a colour code per point, the colours, the legend's entries and the clusters'
names at their centres."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from embviz.ui import style

COLOUR_BY = {"none": "None", "kind": "Token kind", "id": "Id (merge order)", "norm": "Row length", "cluster": "Cluster"}
CLUSTER_METHODS = {"graph": "Neighbour graph", "kmeans": "k-means (directions)", "hdbscan": "HDBSCAN (the map)"}
CLUSTER_METHOD_NAMES = {"graph": "neighbour-graph", "kmeans": "k-means", "hdbscan": "HDBSCAN"}
KEY_CLUSTERS = 6  # clusters the key names, largest first; the names on the map do the rest
Colours = tuple[np.ndarray, list[QColor], list[tuple[QColor, str]]]  # codes, colour table, legend


def kind_colours(codes: np.ndarray, names: list[str]) -> Colours:
    counts = np.bincount(codes.astype(np.int64), minlength=len(names))
    legend = [(style.KIND_COLORS[k], f"{name} ({counts[k]:,})") for k, name in enumerate(names) if counts[k]]
    return codes.astype(np.int64), list(style.KIND_COLORS), legend


def gradient_colours(values: np.ndarray, what: str) -> Colours:
    """Values in GRADIENT_STEPS steps of the colour map; the key shows its low, middle and high end."""
    values = np.asarray(values, dtype=np.float64)
    lo, hi = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
    span = hi - lo if hi > lo else 1.0
    steps = style.GRADIENT_STEPS
    codes = np.clip(np.round((values - lo) / span * (steps - 1)), 0, steps - 1).astype(np.int64)
    table = [QColor(*rgb) for rgb in pg.colormap.get(style.GRADIENT_MAP).getLookupTable(0.0, 1.0, steps, alpha=False)]
    fmt = (lambda v: f"{v:,.0f}") if what == "id" else (lambda v: f"{v:.3g}")
    name = "id" if what == "id" else "row length"
    legend = [(table[-1], f"{name} {fmt(hi)} (high)"), (table[steps // 2], f"{name} {fmt(lo + span / 2)}"),
              (table[0], f"{name} {fmt(lo)} (low)")]
    return codes, table, legend


def cluster_colours(codes: np.ndarray, clusters: list, method: str, k: int | None) -> Colours:
    """A colour for each cluster, largest first; the key names the KEY_CLUSTERS largest, then
    says how many more there are."""
    table = [style.CLUSTER_COLORS[c % len(style.CLUSTER_COLORS)] for c in range(len(clusters))]
    legend = [(table[c], f"{cluster.label} ({cluster.size:,})") for c, cluster in enumerate(clusters[:KEY_CLUSTERS])]
    if len(clusters) > KEY_CLUSTERS:
        legend.append((style.POINT_COLOR, f"… {len(clusters) - KEY_CLUSTERS} more {CLUSTER_METHOD_NAMES[method]} clusters"))
    noise = int(np.count_nonzero(codes < 0))
    if noise:
        legend.append((style.POINT_COLOR, f"in no cluster ({noise:,})"))
    return codes.astype(np.int64), table, legend


def cluster_centres(codes: np.ndarray, coords: np.ndarray, clusters: list, table: list[QColor]) -> list[tuple[str, float, float, QColor]]:
    """Each cluster's name at the median of its points on this map, the most important
    first: those named by words, largest first, then those named by what their pieces share,
    which take room from a word's name only where there is room to spare."""
    out = []
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(clusters) + 1))
    ranked = sorted(range(len(clusters)), key=lambda c: not getattr(clusters[c], "readable", True))
    for c in ranked:
        rows = order[bounds[c]:bounds[c + 1]]
        if len(rows):
            x, y = np.median(coords[rows], axis=0).tolist()
            out.append((clusters[c].label, x, y, table[c]))
    return out


def coarse_centres(codes: np.ndarray, coords: np.ndarray, coarse: list, coarse_of: np.ndarray,
                   ) -> list[tuple[str, float, float, QColor]]:
    """Each coarse group's name at the median of its points on this map, largest first (a
    map seen whole names these, not its many clusters)."""
    if not len(coarse):
        return []
    groups = np.where(codes >= 0, np.asarray(coarse_of)[np.maximum(codes, 0)], -1)
    return cluster_centres(groups, coords, coarse, [style.SELECT_COLOR] * len(coarse))
