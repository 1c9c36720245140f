"""Rectangle and lasso selection on the map: a view box that, in a select mode, turns a
left-button drag into a polygon (drawn as it grows) instead of a pan, and the test of
which points lie inside it."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal

from embviz.ui import style

MODES = ("pan", "rect", "lasso")
LASSO_STEP_PX = 3  # a lasso vertex every few pixels of drag: fine enough, and few edges to test


def points_in_polygon(points: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Which of `points` (n, 2) lie inside `polygon` (m, 2; closed implicitly), by the
    even-odd rule: a ray to the right crosses its edges an odd number of times."""
    points = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    poly = np.asarray(polygon, dtype=np.float64).reshape(-1, 2)
    out = np.zeros(len(points), dtype=bool)
    if len(poly) < 3 or not len(points):
        return out
    lo, hi = poly.min(0), poly.max(0)
    x, y = points[:, 0], points[:, 1]
    near = np.flatnonzero((x >= lo[0]) & (x <= hi[0]) & (y >= lo[1]) & (y <= hi[1]))  # only these can be inside
    px, py = x[near], y[near]
    inside = np.zeros(len(near), dtype=bool)
    xj, yj = poly[-1]
    for xi, yi in poly:
        crosses = (yi > py) != (yj > py)
        with np.errstate(divide="ignore", invalid="ignore"):
            at = (xj - xi) * (py - yi) / (yj - yi) + xi
        inside ^= crosses & (px < at)
        xj, yj = xi, yi
    out[near] = inside
    return out


def rectangle(x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    return np.array([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], dtype=np.float64)


class SelectViewBox(pg.ViewBox):
    """In "rect" or "lasso" mode a left drag draws the shape and emits it when released;
    in "pan" mode (and with any other button) the view pans as usual."""

    polygonDrawn = Signal(object)  # (m, 2) numpy polygon in data coordinates

    def __init__(self) -> None:
        super().__init__(enableMenu=False)  # the map has none: not built only to be dropped
        self.mode = "pan"
        self._trail: list[tuple[float, float]] = []
        self._outline = pg.PlotCurveItem(pen=pg.mkPen(style.SELECT_COLOR, width=2, style=Qt.PenStyle.DashLine))
        self._outline.setZValue(50)
        self._outline.hide()
        self.addItem(self._outline, ignoreBounds=True)

    def set_mode(self, mode: str) -> None:
        self.mode = mode if mode in MODES else "pan"

    def mouseDragEvent(self, ev, axis=None) -> None:
        if self.mode == "pan" or ev.button() != Qt.MouseButton.LeftButton:
            super().mouseDragEvent(ev, axis)
            return
        ev.accept()
        here = self.mapSceneToView(ev.scenePos())
        if ev.isStart():
            start = self.mapSceneToView(ev.buttonDownScenePos())
            self._trail = [(start.x(), start.y())]
        if self.mode == "rect":
            polygon = rectangle(*self._trail[0], here.x(), here.y())
        else:
            last = self.mapViewToScene(pg.Point(*self._trail[-1]))
            if (ev.scenePos() - last).manhattanLength() >= LASSO_STEP_PX:
                self._trail.append((here.x(), here.y()))
            polygon = np.array(self._trail, dtype=np.float64)
        closed = np.vstack([polygon, polygon[:1]])
        self._outline.setData(closed[:, 0], closed[:, 1])
        self._outline.show()
        if ev.isFinish():
            self._outline.hide()
            self.polygonDrawn.emit(polygon)
