"""A big cloud as pictures: the density image drawn instead of too many points, and density
contours under the points, both binned on a grid over the view (not over the whole map),
so each costs the same at any zoom."""

from __future__ import annotations

import functools

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from embviz.ui import style

DENSITY_BIN_PX = 2
CONTOUR_BIN_PX = 8  # a coarser grid than the image's: contours outline, they need no detail
CONTOUR_SIGMA = 2.0  # the smoothing, in grid cells (16 px)
CONTOUR_LEVELS = (0.08, 0.25, 0.55)  # of the smoothed peak: the cloud's outline, body and cores
CONTOURS_FROM = 4_000  # under big clouds only: fewer points are seen one by one, and their contours are noise
CONTOUR_COLOR = QColor(40, 40, 40, 150)
# A cell's colour is opaque from a few points on: on a map of millions, whose cells hold
# hundreds, the cores would be one flat blob. There, past SHADE_FROM points, a cell darkens
# by SHADE_STEP a doubling, to at most SHADE_MOST (by count, not by the image's densest cell,
# so that a pan does not reshade). Smaller maps keep their look.
SHADE_MAPS_ABOVE = 500_000
SHADE_FROM = 8
SHADE_STEP = 0.1
SHADE_MOST = 0.6
SHADE_CAP = 1_024  # past SHADE_FROM × 2^6 (shaded its most) and past opaque at any weight


def view_cells(xs: np.ndarray, ys: np.ndarray, view: tuple[float, float, float, float],
               shape: tuple[int, int]) -> np.ndarray:
    """The flat index of the grid cell (of `shape` rows × columns over `view`) of each point
    (xs, ys), all in `view`: those on (or, by rounding, a hair past) its edge go to the edge cells."""
    x0, x1, y0, y1 = view
    bh, bw = shape
    ix = np.minimum(((xs - x0) * (bw / max(x1 - x0, 1e-30))).astype(np.int64), bw - 1)
    iy = np.minimum(((ys - y0) * (bh / max(y1 - y0, 1e-30))).astype(np.int64), bh - 1)
    iy *= bw
    iy += ix
    return iy


def density_image(xs: np.ndarray, ys: np.ndarray, rgba32: np.ndarray | None, region: tuple[float, float, float, float],
                  shape: tuple[int, int], weight: int = 1, shade: bool = False) -> np.ndarray:
    """An RGBA image (`shape` rows × columns over `region`, row 0 at its bottom) of the points
    (xs, ys), all in `region`, each with its packed colour, or None for the plain grey; each
    point counts as `weight` (a sample of every k-th point stands for all); `shade`: crowded
    cells darken."""
    bh, bw = shape
    cell = view_cells(xs, ys, region, shape)
    # Counts past SHADE_CAP look as SHADE_CAP does: opaque, and shaded their most.
    capped = np.minimum(np.bincount(cell, minlength=bw * bh), SHADE_CAP)
    if rgba32 is None:
        return _grey(weight, shade)[capped].view(np.uint8).reshape(bh, bw, 4)
    # Each cell takes the colour of one of its points: one scatter of packed pixels (a
    # mean colour per cell took three weighted counts, 45 ms a 400k-point pan step).
    packed = np.zeros(bw * bh, dtype=np.uint32)
    packed[cell] = rgba32
    rgba = packed.view(np.uint8).reshape(bh, bw, 4)
    capped = capped.reshape(bh, bw)
    rgba[..., 3] = _alpha(weight)[capped]
    if shade:
        rgb = rgba[..., :3].astype(np.uint16)
        rgb *= _shade(weight)[capped][..., None]
        rgb >>= 8
        rgba[..., :3] = rgb
    return rgba


@functools.lru_cache(maxsize=64)
def _grey(weight: int, shade: bool) -> np.ndarray:
    """The plain grey map's packed RGBA pixel by a cell's count."""
    color = style.POINT_COLOR
    rgba = np.empty((SHADE_CAP + 1, 4), dtype=np.uint16)
    rgba[:, :3] = color.red(), color.green(), color.blue()
    if shade:
        rgba[:, :3] = (rgba[:, :3] * _shade(weight)[:, None]) >> 8
    rgba[:, 3] = _alpha(weight)
    return rgba.astype(np.uint8).view(np.uint32).ravel()


@functools.lru_cache(maxsize=64)
def _alpha(weight: int) -> np.ndarray:
    """The opacity of a cell by its count: one point is as faint as a lone dot; overlapping
    points darken toward opaque."""
    return (255 * (1 - np.exp(-0.8 * weight * np.arange(SHADE_CAP + 1)))).astype(np.uint8)


@functools.lru_cache(maxsize=64)
def _shade(weight: int) -> np.ndarray:
    """What share (of 256: all of it up to SHADE_FROM) of its colour a cell keeps, by its count."""
    doublings = np.log2(np.maximum(np.arange(SHADE_CAP + 1) * (weight / SHADE_FROM), 1.0))
    return (256 * (1 - np.minimum(SHADE_MOST, SHADE_STEP * doublings))).astype(np.uint16)


def smoothed_density(coords: np.ndarray, view: tuple[float, float, float, float],
                     size_px: tuple[float, float]) -> np.ndarray:
    """Counts on a CONTOUR_BIN_PX grid over the view, smoothed by a Gaussian (a KDE of 49k
    points took seconds; this takes milliseconds), padded by a ring of zeros so that every
    contour closes."""
    from scipy.ndimage import gaussian_filter

    bw = max(2, int(size_px[0] / CONTOUR_BIN_PX))
    bh = max(2, int(size_px[1] / CONTOUR_BIN_PX))
    counts = np.bincount(view_cells(coords[:, 0], coords[:, 1], view, (bh, bw)), minlength=bw * bh).reshape(bh, bw)
    return np.pad(gaussian_filter(counts.astype(np.float32), CONTOUR_SIGMA), 1)


def contour_paths(grid: np.ndarray, view: tuple[float, float, float, float],
                  ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(x, y, connect) line pieces, in data coordinates, of each of CONTOUR_LEVELS of `grid`
    (as made by `smoothed_density` over `view`), by pyqtgraph's marching squares."""
    x0, x1, y0, y1 = view
    bh, bw = grid.shape[0] - 2, grid.shape[1] - 2
    peak = float(grid.max())
    out = []
    for level in CONTOUR_LEVELS:
        if peak <= 0:
            out.append((np.zeros(0), np.zeros(0), np.zeros(0, bool)))
            continue
        lines = pg.functions.isocurve(grid.T, level * peak, connected=True)  # grid.T: isocurve's (x, y) order
        pts = [np.asarray(line, dtype=np.float64) for line in lines if len(line) > 1]
        xy = np.concatenate(pts) if pts else np.zeros((0, 2))
        # Cell centres: the pad shifts them by one; a cell's middle is half a cell in.
        x = x0 + (xy[:, 0] - 0.5) * (x1 - x0) / bw
        y = y0 + (xy[:, 1] - 0.5) * (y1 - y0) / bh
        connect = np.concatenate([np.r_[np.ones(len(p) - 1, bool), False] for p in pts]) if pts else np.zeros(0, bool)
        out.append((x, y, connect))
    return out


class Contours:
    """The contour lines of the map's cloud, one curve per level, under the points."""

    def __init__(self, plot: pg.PlotWidget) -> None:
        self.curves = [pg.PlotCurveItem(pen=pg.mkPen(CONTOUR_COLOR, width=1.5 + i)) for i in range(len(CONTOUR_LEVELS))]
        for curve in self.curves:
            curve.setZValue(-0.5)  # over the density image, under the points
            plot.addItem(curve, ignoreBounds=True)
        self.on = False

    def draw(self, coords: np.ndarray, view: tuple[float, float, float, float], size_px: tuple[float, float]) -> None:
        """Contours of the points in view (`coords`), or none when off or when few are in view."""
        if not self.on or len(coords) < CONTOURS_FROM or min(size_px) <= 0:
            self.clear()
            return
        for curve, (x, y, connect) in zip(self.curves, contour_paths(smoothed_density(coords, view, size_px), view)):
            curve.setData(x=x, y=y, connect=connect)
            curve.show()

    def clear(self) -> None:
        for curve in self.curves:
            curve.setData(x=np.zeros(0), y=np.zeros(0))
            curve.hide()

    def shown(self) -> bool:
        return any(curve.isVisible() and curve.xData is not None and len(curve.xData) > 0 for curve in self.curves)
