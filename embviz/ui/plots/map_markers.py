"""What the map draws over its points: marker sizes (growing as the map is zoomed in), the
word sets' markers (haloed on a coloured map, always at their points' own places), rings and arrows."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor

from embviz.ui import style
from embviz.ui.plots.map_view_host import MapViewHost

# A zoomed-in map's dots grow from their size on the whole map toward GROWN_PX, as
# fewer points are in view: by sqrt(GROW_FROM / points in view), so 200 in view are 3x.
GROW_FROM = 1_800
GROWN_PX = 12.0
HALO_PX = 8  # a word-set marker's white halo, beyond its dark outline, on a coloured map
HALO_COLOR = QColor("#FFFFFF")  # never a colour of the kinds', clusters' or gradient's tables
OUTLINE_COLOR = QColor("#1A1A1A")


def marker_size(n_points: int) -> float:
    """Big markers for the lessons' 4-5 tokens, dots for a whole vocabulary."""
    return 16.0 if n_points <= 50 else 8.0 if n_points <= 1_000 else 4.0


def grown_size(n_points: int, in_view: int) -> float:
    """The dots' size with `in_view` of the map's `n_points` in view: never smaller than
    on the whole map, never past GROWN_PX (unless they start bigger)."""
    base = marker_size(n_points)
    factor = math.sqrt(GROW_FROM / max(in_view, 1))
    return max(base, min(GROWN_PX, base * factor))


def highlight_size(n_points: int, dot: float | None = None) -> float:
    """Word-set and search markers: a little bigger than the points they sit on."""
    return max(11.0, (marker_size(n_points) if dot is None else dot) + 4)


class MarkersMixin(MapViewHost):
    """MapView's word sets (`_sets`: name → scatter, ids, colour), rings and arrows."""

    def set_word_set(self, name: str, ids: list[int], color: QColor) -> None:
        self.remove_word_set(name)
        scatter = pg.ScatterPlotItem(pxMode=True)
        scatter.setZValue(10)
        self.addItem(scatter)
        self._sets[name] = (scatter, list(ids), color)
        self._style_sets()
        self._refresh_set(name)
        self._rebuild_legend()
        self._label_timer.start()

    def remove_word_set(self, name: str) -> None:
        if name in self._sets:
            self.removeItem(self._sets.pop(name)[0])
            self._style_sets()
            self._rebuild_legend()
            self._label_timer.start()

    def word_set_names(self) -> list[str]:
        return list(self._sets)

    def set_marker(self, name: str) -> tuple[QColor, QColor, float, QColor | None]:
        """(fill, outline, outline width, halo or None) of a word set's markers as drawn."""
        _, _, colour = self._sets[name]
        if self._codes is None:
            return colour, QColor(60, 60, 60), 1.0, None
        return colour, OUTLINE_COLOR, 2.5, HALO_COLOR

    def _style_sets(self) -> None:
        """On a coloured map a set's colour may be the colouring's (months blue on the blue
        word starts): a dark outline in a white halo keeps its markers apart from any point."""
        size = highlight_size(len(self.coords), self._dot_px) * self._scale
        for name, (scatter, _, _) in self._sets.items():
            fill, outline, width, halo = self.set_marker(name)
            scatter.setSize(size)
            scatter.setBrush(pg.mkBrush(fill))
            scatter.setPen(pg.mkPen(outline, width=width))
        self._halo.setVisible(self._codes is not None and bool(self._sets))
        self._halo.setSize(size + HALO_PX * self._scale)
        self._refresh_halo()
        self.contentChanged.emit()

    def _refresh_set(self, name: str) -> None:
        scatter, ids, _ = self._sets[name]
        rows = self.rows_of(np.asarray(ids, dtype=np.int64))
        scatter.setData(pos=self.coords[rows[rows >= 0]].astype(np.float32).reshape(-1, 2))

    def _refresh_halo(self) -> None:
        scatters = [scatter for scatter, _, _ in self._sets.values()]
        if self._halo.isVisible() and scatters:
            self._halo.setData(x=np.concatenate([s.data["x"] for s in scatters]),
                               y=np.concatenate([s.data["y"] for s in scatters]))

    def set_selected(self, ids: list[int]) -> None:
        """Tokens that get a ring and a text label."""
        self._selected = [int(i) for i in ids]
        self._redraw_overlays()

    def highlights(self) -> list[tuple[str, list[int], QColor]]:
        """The word sets (and search hits) drawn: name, token ids, colour."""
        return [(name, ids, colour) for name, (_, ids, colour) in self._sets.items()]

    def selected_ids(self) -> list[int]:
        return list(self._selected)

    def arrow_ids(self) -> list[tuple[int, int, QColor]]:
        return list(self._arrows)

    def set_arrows(self, arrows: list[tuple[int, int, QColor]]) -> None:
        self._arrows = list(arrows)
        self._redraw_overlays()

    def _redraw_overlays(self) -> None:
        for name in self._sets:
            self._refresh_set(name)
        self._refresh_halo()
        if self._sets:
            self._rebuild_legend()
        for item in self._overlays:
            self.removeItem(item)
        self._overlays = [item for start, end, color in self._arrows for item in self._arrow(start, end, color)]
        rows = self.rows_of(self._selected)
        rings = self.coords[rows[rows >= 0]].astype(np.float32).reshape(-1, 2)
        if len(rings):
            size = (marker_size(len(self.coords)) + 12) * self._scale
            ring = pg.ScatterPlotItem(pos=np.array(rings), size=size, pen=pg.mkPen(style.SELECT_COLOR, width=2.5),
                                      brush=None, pxMode=True)
            self._overlays.append(ring)
        for item in self._overlays:
            item.setZValue(30 if isinstance(item, pg.ScatterPlotItem) else 20)
            self.addItem(item, ignoreBounds=True)
        self._label_timer.start()
        self.contentChanged.emit()

    def _arrow(self, start: int, end: int, color: QColor) -> list[pg.GraphicsObject]:
        a, b = self.position_of(start), self.position_of(end)
        if a is None or b is None:
            return []
        line = pg.PlotCurveItem([a[0], b[0]], [a[1], b[1]], pen=pg.mkPen(color, width=3))
        angle = np.degrees(np.arctan2(b[1] - a[1], b[0] - a[0]))
        head = pg.ArrowItem(pos=(float(b[0]), float(b[1])), angle=180 - angle, headLen=22, tipAngle=30, brush=color,
                            pen=pg.mkPen(color))
        return [line, head]
