"""The scatter of token rows: hover labels and clicks through a grid index, points or a
density image by how many are in view, and colour by. Its keys, markers, labels, density
pictures and index live in the modules beside it (map_keys, map_markers, map_labels,
map_density, map_index), each a part of MapView."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor

from embviz.ui import style
from embviz.ui.plots.map_density import DENSITY_BIN_PX, SHADE_MAPS_ABOVE, Contours, density_image
from embviz.ui.plots.map_index import GridIndex
from embviz.ui.plots.map_keys import KeysMixin
from embviz.ui.plots.map_labels import LabelsMixin
from embviz.ui.plots.map_markers import HALO_COLOR, MarkersMixin, grown_size, marker_size
from embviz.ui.plots.map_select import SelectViewBox, points_in_polygon

HOVER_RADIUS_PX = 8
# Above this many points in view, the map draws a density image (a ScatterPlotItem of
# 262,144 points takes ~140 ms a frame, and setData alone ~2.5 µs a point); zoomed in,
# the points themselves.
DENSITY_ABOVE = 4_000
# The density image reaches this share of the view past each edge, so that a small pan shows
# the image already made; zoomed by up to ZOOM_SLACK, the image made before is shown
# (sharpened when the view settles): a step over 2,000,000 points bins none of them.
DENSITY_MARGIN = 0.25
ZOOM_SLACK = 2.0
# A new image made while the view moves bins at most about this many points (every k-th, each
# counting k): binning all of 2,000,000 takes ~60 ms. The view's settling bins every one.
STEP_POINTS = 400_000
FIT_PADDING = 0.06
_SORTED_LOOKUP = 256  # keys from which rows_of sorts them first


class MapView(KeysMixin, MarkersMixin, LabelsMixin, pg.PlotWidget):
    pointHovered = Signal(int)  # row id, or -1 when nothing is under the mouse
    pointClicked = Signal(int)
    selectionMade = Signal(list)  # row ids inside a drawn rectangle or lasso
    contentChanged = Signal()  # points, colours, sets, rings or arrows: what the 3-D view draws too

    def __init__(self, parent=None) -> None:
        super().__init__(parent, background=style.BACKGROUND, viewBox=SelectViewBox(), enableMenu=False)
        self.ids = np.zeros(0, dtype=np.int64)
        self.coords = np.zeros((0, 2), dtype=np.float32)
        self.labels: list[str] = []
        self._id_order: np.ndarray | None = None  # sorts `ids`, when they are not sorted already
        self._index_: GridIndex | None = None
        self._density_key: tuple | None = None  # (region, bin width, bin height) of the image shown
        self._density_stale = False  # an image of another zoom is shown until the view settles
        self._sorted_rgba: np.ndarray | None = None  # the points' colours in the index's order
        self._sets: dict[str, tuple[pg.ScatterPlotItem, list[int], QColor]] = {}
        self._selected: list[int] = []
        self._overlays: list[pg.GraphicsObject] = []
        self._arrows: list[tuple[int, int, QColor]] = []
        self._scale = 1.0
        self._dot_px = 4.0  # the points' size now, before the text size: they grow as the map is zoomed in
        # Colour by (kind, id, length, cluster): a colour code per point, set once per map.
        self._codes: np.ndarray | None = None
        self._brushes: np.ndarray | None = None  # a QBrush per point (object array), for the points drawn
        self._rgba32: np.ndarray | None = None  # each point's colour as packed RGBA bytes, for the density image
        self._make_plot()
        self._make_labels()
        self._make_keys()
        self._make_timer()
        self.vb.polygonDrawn.connect(self.select_polygon)
        self.hover_text = pg.TextItem("", color=(0, 0, 0), fill=pg.mkBrush(255, 255, 230, 230), border=pg.mkPen(120, 120, 120))
        style.use_font(self.hover_text, style.LABEL_POINT_SIZE, bold=True)
        self.hover_text.setZValue(100)
        self.hover_text.hide()
        self.addItem(self.hover_text, ignoreBounds=True)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        style.follow_scale(self)

    def _make_plot(self) -> None:
        """No axes or menu; the points, the density image and contours under them, and the
        white halo the word sets' markers get on a coloured map."""
        item = self.getPlotItem()
        item.hideAxis("left")
        item.hideAxis("bottom")
        item.setMenuEnabled(False)
        item.hideButtons()  # its auto-range ignores the overlays' room: the panel's Fit does it
        self.vb = item.getViewBox()
        self.vb.setAspectLocked(True)
        self.points = pg.ScatterPlotItem(size=4, pen=None, brush=pg.mkBrush(style.POINT_COLOR), pxMode=True)
        self.addItem(self.points)
        self.density = pg.ImageItem(axisOrder="row-major")
        self.density.setZValue(-1)
        self.addItem(self.density, ignoreBounds=True)
        self.contours = Contours(self)
        self._halo = pg.ScatterPlotItem(pen=None, brush=pg.mkBrush(HALO_COLOR), pxMode=True)
        self._halo.setZValue(9)  # under the sets' markers (10), over the points
        self._halo.hide()
        self.addItem(self._halo, ignoreBounds=True)
        self.mode = "points"  # or "density"
        self._subset_rect: tuple[float, float, float, float] | None = None
        self.vb.sigRangeChanged.connect(self._update_detail)
        self.vb.sigResized.connect(self._update_detail)

    def _make_timer(self) -> None:
        """One settling (sizes, contours, labels) per burst of pan and zoom steps."""
        self._label_timer = QTimer(self)
        self._label_timer.setSingleShot(True)
        self._label_timer.setInterval(30)
        self._label_timer.timeout.connect(self._settle)
        self.vb.sigRangeChanged.connect(self._label_timer.start)
        self.vb.sigResized.connect(self._label_timer.start)

    def close(self) -> bool:
        """Closed, the plot drops its view box: a placement still on the timer has nowhere to go."""
        self._label_timer.stop()
        return super().close()

    def set_text_scale(self, scale: float) -> None:
        """Markers, the legend and the labels grow with the text size."""
        self._scale = scale
        self.points.setSize(self._dot_px * scale)
        self._scale_keys()
        self._style_sets()
        self._redraw_overlays()
        self._fit_keys()

    def set_contours_on(self, on: bool) -> None:
        self.contours.on = bool(on)
        self._settle()

    def _settle(self) -> None:
        """After the view changed: a sharp density image, the dots' size and the contours for
        what is in view, then the labels."""
        if self._density_stale:
            self._update_detail(sharpen=True)
        self._grow_points(self.count_in_view())
        view = self._view_rect()
        inside = self._index().points_in(view) if self.contours.on and len(self.coords) else np.zeros((0, 2))
        self.contours.draw(inside, view, (self.vb.width(), self.vb.height()))
        self._place_labels()

    def _view_rect(self) -> tuple[float, float, float, float]:
        (x0, x1), (y0, y1) = self.vb.viewRange()
        return float(x0), float(x1), float(y0), float(y1)

    def _index(self) -> GridIndex:
        """The points by grid cell, built on first use after the points changed."""
        if self._index_ is None:
            self._index_ = GridIndex(self.coords)
            self._sorted_rgba = None
        return self._index_

    def rows_in_view(self) -> np.ndarray:
        """The rows of the points in view, ascending."""
        if not len(self.coords):
            return np.zeros(0, dtype=np.int64)
        return self._index().rows_in(self._view_rect())

    def count_in_view(self) -> int:
        """How many points are in view, without looking at those far from its edges."""
        if not len(self.coords):
            return 0
        return self._index().count(self._view_rect())

    def _grow_points(self, in_view: int) -> None:
        size = grown_size(len(self.coords), in_view)
        if size != self._dot_px:
            self._dot_px = size
            self.points.setSize(size * self._scale)
            self._style_sets()

    def dot_size(self) -> float:
        """The points' size on screen now, in pixels."""
        return self._dot_px * self._scale

    # --- data -----------------------------------------------------------------
    def set_labels(self, labels: list[str]) -> None:
        self.labels = labels

    def clear_map(self, keep_points: bool = False) -> None:
        """Empty the map: points (unless `keep_points`), word sets, legend, rings, arrows and
        the hover box. (Not `clear`: PlotWidget binds that name to PlotItem.clear, which drops
        every item.)"""
        for name in list(self._sets):
            self.removeItem(self._sets.pop(name)[0])
        self._rebuild_legend()
        self._selected = []
        self._arrows = []
        self.set_colours(None)
        self.hover_text.hide()
        if keep_points:
            self._redraw_overlays()
        else:
            self.set_points(np.zeros(0, np.int64), np.zeros((0, 2), np.float32))
        self._settle()  # now, not after the timer: nothing of the old map may show

    def set_points(self, ids: np.ndarray, coords: np.ndarray, autorange: bool = True) -> None:
        """Show `coords` for the true row `ids`; a same-ids update (t-SNE previews) keeps overlays."""
        same_rows = ids.shape == self.ids.shape and np.array_equal(ids, self.ids)
        self.ids = np.asarray(ids, dtype=np.int64)
        self.coords = np.asarray(coords, dtype=np.float32)
        if not same_rows:
            ordered = len(self.ids) < 2 or bool(np.all(self.ids[1:] > self.ids[:-1]))
            self._id_order = None if ordered else np.argsort(self.ids, kind="stable")
            self.hover_text.hide()  # it pointed at a row of the previous map
            self._dot_px = marker_size(len(self.ids))
            self.points.setSize(self._dot_px * self._scale)
            # A few big markers read best solid; a cloud of dots needs them faint to show density.
            few = len(self.ids) <= 50
            self.points.setBrush(pg.mkBrush(style.FEW_POINTS_COLOR if few else style.POINT_COLOR))
            self._drop_colours()  # they were of the previous map's rows
        self._index_ = None
        self._density_key = None
        self._subset_rect = None
        self._redraw_overlays()
        if autorange:
            self.fit()
        self._update_detail()
        self._label_timer.start()

    def fit(self) -> None:
        """Every point in view, with a margin for markers and labels."""
        if not len(self.coords):
            return
        # Python floats: pyqtgraph compares spans with float64 limits (float32 overflows).
        lo, hi = self.coords.min(0).astype(np.float64), self.coords.max(0).astype(np.float64)
        span = np.maximum(hi - lo, 1e-6 * max(float(np.abs(hi).max()), 1.0))
        pad = FIT_PADDING * span + (0.5 * span if len(self.coords) <= 50 else 0)  # room for the lessons' labels
        (x0, y0), (x1, y1) = (lo - pad).tolist(), (hi + pad).tolist()
        self._set_range_beside_keys(x0, x1, y0, y1)

    def reveal(self, token_id: int) -> None:
        """Pan (keeping the zoom) so that `token_id` is in view, if it is not."""
        pos = self.position_of(token_id)
        if pos is None:
            return
        (x0, x1), (y0, y1) = self.vb.viewRange()
        x, y = float(pos[0]), float(pos[1])
        mx, my = 0.1 * (x1 - x0), 0.1 * (y1 - y0)
        if not (x0 + mx <= x <= x1 - mx and y0 + my <= y <= y1 - my):
            self.vb.translateBy(x=x - (x0 + x1) / 2, y=y - (y0 + y1) / 2)

    def _update_detail(self, *_args, sharpen: bool = False) -> None:
        """Points when few are in view, a density image when many: each frame stays cheap."""
        if not len(self.coords):
            self.points.setData(pos=np.zeros((0, 2), np.float32))
            self.density.clear()
            self._density_key = None
            self._density_stale = False
            return
        view = x0, x1, y0, y1 = self._view_rect()
        if self.mode == "points" and self._subset_rect is not None:
            sx0, sx1, sy0, sy1 = self._subset_rect
            if sx0 <= x0 and x1 <= sx1 and sy0 <= y0 and y1 <= sy1:
                return  # the points already drawn cover this view
        index = self._index()
        if index.count(view) > DENSITY_ABOVE:
            self._show_density(view, sharpen)
            return
        # Draw the points of a margin around the view, so small pans need no redraw.
        mx, my = (x1 - x0) * 0.5, (y1 - y0) * 0.5
        rect = (x0 - mx, x1 + mx, y0 - my, y1 + my)
        near = index.rows_in(rect)
        if len(near) > 2 * DENSITY_ABOVE:
            near, rect = index.rows_in(view), view
        if self._brushes is None:
            self.points.setData(pos=self.coords[near])
        else:
            self.points.setData(pos=self.coords[near], brush=self._brushes[near])
        self._subset_rect = rect
        self.density.hide()
        self._density_key = None
        self._density_stale = False
        self.points.show()
        self.mode = "points"

    def _show_density(self, view: tuple[float, float, float, float], sharpen: bool) -> None:
        """The density image of the view, binned a cell per DENSITY_BIN_PX pixels, unless the
        one shown covers the view at this zoom (or, until the view settles, near it)."""
        x0, x1, y0, y1 = view
        bw = max(1, int(self.vb.width() / DENSITY_BIN_PX))
        bh = max(1, int(self.vb.height() / DENSITY_BIN_PX))
        dx, dy = (x1 - x0) / bw, (y1 - y0) / bh
        index = self._index()
        if self.mode == "density" and self._density_key is not None:
            (rx0, rx1, ry0, ry1), kdx, kdy = self._density_key
            # Only the part of the view that holds points need be covered.
            covered = (rx0 <= max(x0, index.lo[0]) and min(x1, index.hi[0]) <= rx1
                       and ry0 <= max(y0, index.lo[1]) and min(y1, index.hi[1]) <= ry1)
            zoom = max(dx / kdx, kdx / dx, dy / kdy, kdy / dy)
            if covered and zoom < 1.001 and not (sharpen and self._density_stale):
                return
            if covered and not sharpen and zoom <= ZOOM_SLACK:
                self._density_stale = True
                return
        mx, my = DENSITY_MARGIN * (x1 - x0), DENSITY_MARGIN * (y1 - y0)
        want = (x0 - mx, x1 + mx, y0 - my, y1 + my)
        cells = index.cells_rect(want)
        if cells is None:  # the view has left the points: the image there stays, out of sight
            return
        block = index.block(want)
        size = block.stop - block.start if isinstance(block, slice) else len(block)
        every = 1 if sharpen else max(1, math.ceil(size / STEP_POINTS))
        block = slice(block.start, block.stop, every) if isinstance(block, slice) else block[::every]
        xs, ys = index.xs[block], index.ys[block]
        colours = None if self._rgba32 is None else self._index_colours()[block]
        # The gathered points are those of whole grid cells: binned over those cells, none
        # need be looked at one by one, unless the cells reach far past the view.
        if not (x0 - (x1 - x0) <= cells[0] and cells[1] <= x1 + (x1 - x0)
                and y0 - (y1 - y0) <= cells[2] and cells[3] <= y1 + (y1 - y0)):
            cells = (max(cells[0], want[0]), min(cells[1], want[1]), max(cells[2], want[2]), min(cells[3], want[3]))
            keep = (xs >= cells[0]) & (xs <= cells[1]) & (ys >= cells[2]) & (ys <= cells[3])
            xs, ys = xs[keep], ys[keep]
            colours = None if colours is None else colours[keep]
        # On the view's own grid of cells, so that the image matches one made of the view alone.
        i0, i1 = math.floor((cells[0] - x0) / dx), math.ceil((cells[1] - x0) / dx)
        j0, j1 = math.floor((cells[2] - y0) / dy), math.ceil((cells[3] - y0) / dy)
        i1, j1 = max(i1, i0 + 1), max(j1, j0 + 1)
        region = (x0 + i0 * dx, x0 + i1 * dx, y0 + j0 * dy, y0 + j1 * dy)
        rgba = density_image(xs, ys, colours, region, (j1 - j0, i1 - i0), weight=every,
                             shade=len(self.coords) > SHADE_MAPS_ABOVE)
        self.density.setImage(rgba, autoLevels=False)
        self.density.setRect(region[0], region[2], region[1] - region[0], region[3] - region[2])
        self._density_key = (region, dx, dy)
        self._density_stale = every > 1
        self.density.show()
        self.points.hide()
        self.mode = "density"
        self._subset_rect = None

    def _index_colours(self) -> np.ndarray:
        """The points' colours in the index's order (asked only of a coloured map)."""
        if self._sorted_rgba is None and self._rgba32 is not None:
            self._sorted_rgba = self._rgba32[self._index().rows]
        assert self._sorted_rgba is not None, "the map is not coloured"
        return self._sorted_rgba

    def _row(self, token_id: int) -> int | None:
        """The row of `token_id` on this map, or None."""
        return int(r) if (r := self.rows_of(np.array([token_id]))[0]) >= 0 else None

    def rows_of(self, token_ids: np.ndarray | list[int]) -> np.ndarray:
        """The row of each of `token_ids` on this map, -1 for those not on it."""
        token_ids = np.asarray(token_ids, dtype=np.int64).ravel()
        ordered = self.ids if self._id_order is None else self.ids[self._id_order]
        if len(token_ids) > _SORTED_LOOKUP:  # numpy's binary search runs several times faster on keys in order
            order = np.argsort(token_ids)
            at = np.empty_like(order)
            at[order] = np.searchsorted(ordered, token_ids[order])
        else:
            at = np.searchsorted(ordered, token_ids)
        at = np.minimum(at, max(len(ordered) - 1, 0))
        if not len(ordered):
            return np.full(len(token_ids), -1, dtype=np.int64)
        found = ordered[at] == token_ids
        rows = at if self._id_order is None else self._id_order[at]
        return np.where(found, rows, -1)

    def on_map(self, token_ids) -> np.ndarray:
        """Those of `token_ids` that are points of this map, in their order (one sorted lookup
        for them all: a lasso or a search may hold a hundred thousand)."""
        token_ids = np.asarray(token_ids, dtype=np.int64).ravel()
        return token_ids[self.rows_of(token_ids) >= 0]

    def position_of(self, token_id: int) -> np.ndarray | None:
        row = self._row(token_id)
        return None if row is None else self.coords[row]

    # --- colour by ---------------------------------------------------------------
    def set_colours(self, codes: np.ndarray | None, table: list[QColor] | None = None,
                    legend: list[tuple[QColor, str]] | None = None) -> None:
        """Colour each point by `table[codes[row]]` (a code of -1: the plain grey), with
        `legend` as the key; None for the plain grey map. Brushes are made once here, so
        a pan only picks among them."""
        if codes is None or table is None or len(codes) != len(self.ids):
            self._drop_colours()
        else:
            colours = [QColor(c) for c in table] + [style.POINT_COLOR]  # index -1: no colour
            for c in colours[:-1]:
                c.setAlpha(style.COLOUR_BY_ALPHA)
            brushes = np.empty(len(colours), dtype=object)
            brushes[:] = [pg.mkBrush(c) for c in colours]
            rgba = np.array([(c.red(), c.green(), c.blue(), 255) for c in colours], dtype=np.uint8)
            index = np.where(np.asarray(codes) < 0, len(colours) - 1, np.asarray(codes)).astype(np.int64)
            self._codes = np.asarray(codes)
            self._brushes = brushes[index]
            self._rgba32 = rgba.view(np.uint32).ravel()[index]
            self._colour_entries = list(legend or [])
        self._sorted_rgba = None
        self._density_key = None
        self._subset_rect = None
        self._style_sets()
        self._rebuild_colour_legend()
        self._update_detail()
        self._label_timer.start()

    def _drop_colours(self) -> None:
        self._codes = self._brushes = self._rgba32 = self._sorted_rgba = None
        self._density_key = None
        self._colour_entries = []
        self._cluster_labels = []
        self._coarse_labels = []
        self._style_sets()
        self._rebuild_colour_legend()

    def colour_codes(self) -> np.ndarray | None:
        return self._codes

    def point_rgba(self) -> np.ndarray | None:
        """Each point's colour as (n, 4) bytes, None for the plain map."""
        return None if self._rgba32 is None else self._rgba32.view(np.uint8).reshape(-1, 4)

    # --- selection ----------------------------------------------------------------
    def set_select_mode(self, mode: str) -> None:
        """"pan" (a drag pans), "rect" or "lasso" (a drag selects)."""
        self.vb.set_mode(mode)

    def select_polygon(self, polygon: np.ndarray) -> list[int]:
        """The rows inside `polygon` (data coordinates), announced as the selection."""
        ids = self.ids[points_in_polygon(self.coords, polygon)].tolist() if len(self.coords) else []
        self.selectionMade.emit(ids)
        return ids

    def zoom_to(self, ids: list[int]) -> None:
        rows = self.rows_of(ids)
        pts = self.coords[rows[rows >= 0]].astype(np.float32).reshape(-1, 2)
        if not len(pts):
            return
        lo, hi = pts.min(0), pts.max(0)
        span = np.maximum(hi - lo, 0.02 * np.ptp(self.coords, axis=0).max() if len(self.coords) else 1.0)
        pad = 0.25 * span
        (x0, y0), (x1, y1) = (lo - pad).tolist(), (hi + pad).tolist()
        self._set_range_beside_keys(x0, x1, y0, y1)

    # --- picking ----------------------------------------------------------------
    def nearest_at(self, scene_pos) -> int:
        """Row id under a scene position (within a few pixels), or -1."""
        if not len(self.coords) or not self.sceneBoundingRect().contains(scene_pos):
            return -1
        p = self.vb.mapSceneToView(scene_pos)
        px = self.vb.viewPixelSize()
        row = self._index().nearest(p.x(), p.y(), HOVER_RADIUS_PX * max(px[0], px[1]))
        return -1 if row < 0 else int(self.ids[row])

    def _on_mouse_moved(self, scene_pos) -> None:
        token_id = self.nearest_at(scene_pos)
        pos = self.position_of(token_id) if token_id >= 0 else None
        if pos is None:
            self.hover_text.hide()
        else:
            self.hover_text.setText(f"{self.labels[token_id]}  #{token_id}" if token_id < len(self.labels) else f"#{token_id}")
            self.hover_text.setPos(float(pos[0]), float(pos[1]))
            self.hover_text.show()
        self.pointHovered.emit(token_id)

    def leaveEvent(self, event) -> None:
        """The mouse left the map: no box may stay over the labels naming a point it left."""
        self.hover_text.hide()
        self.pointHovered.emit(-1)
        super().leaveEvent(event)

    def _on_mouse_clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        token_id = self.nearest_at(event.scenePos())
        if token_id >= 0:
            self.pointClicked.emit(token_id)
