"""The scatter of token rows: hover labels through a k-d tree, click to select,
coloured word sets with a legend, arrows, and text labels placed so that none overlaps
another or the edge: the highlighted tokens first, every point once few are in view."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFontMetricsF
from scipy.spatial import cKDTree

from embviz.ui import style
from embviz.ui.plots.map_select import SelectViewBox, points_in_polygon

HOVER_RADIUS_PX = 8
# Above this many points in view, the map draws a density image (a ScatterPlotItem of
# 262,144 points takes ~140 ms a frame, and setData alone ~2.5 µs a point); zoomed in,
# the points themselves.
DENSITY_ABOVE = 4_000
DENSITY_BIN_PX = 2
LABEL_ALL_BELOW = 200  # with at most this many points in view, every one is labelled
MAX_LABELS = 300
LABEL_GAP_PX = 6
FIT_PADDING = 0.06
# The keys (the word sets' legend, the colours' key) shrink with the map: each covers at
# most this share of the view's area, width and height, so two cover under a quarter of
# it. Shrunk past KEY_MIN_SCALE a key would be unreadable: it hides (the word-set list
# beside the map names the sets in their colours) until the map is larger again.
KEY_MAX_AREA_SHARE = 0.12
KEY_MAX_WIDTH_SHARE = 0.45
KEY_MAX_HEIGHT_SHARE = 0.45
KEY_MIN_SCALE = 0.5
KEY_ROOM_MAX_SHARE = 0.4  # of the view that Fit and zoom leave free beside a key


def marker_size(n_points: int) -> float:
    """Big markers for the lessons' 4-5 tokens, dots for a whole vocabulary."""
    return 16.0 if n_points <= 50 else 8.0 if n_points <= 1_000 else 4.0


def highlight_size(n_points: int) -> float:
    """Word-set and search markers: a little bigger than the points they sit on."""
    return max(11.0, marker_size(n_points) + 4)


def place_labels(candidates: list[tuple[float, float, float, float]], width: float, height: float,
                 taken: list[tuple[float, float, float, float]] | None = None,
                 gap: float = LABEL_GAP_PX) -> list[tuple[float, float] | None]:
    """Greedy label placement in pixels: `candidates` are (x, y, w, h) of a point and its
    label's size, most important first. Each label goes right, left, above or below its
    point, inside the view and clear of every label placed before it (and of `taken`);
    a label with no such place is dropped (None). Returns the top-left corners."""
    placed = list(taken or [])
    out: list[tuple[float, float] | None] = []
    for x, y, w, h in candidates:
        spot = None
        for left, top in ((x + gap, y - h / 2), (x - gap - w, y - h / 2), (x - w / 2, y - gap - h), (x - w / 2, y + gap)):
            if left < 0 or top < 0 or left + w > width or top + h > height:
                continue  # never clipped by the edge
            if any(left < r[0] + r[2] and r[0] < left + w and top < r[1] + r[3] and r[1] < top + h for r in placed):
                continue
            spot = (left, top)
            placed.append((left, top, w, h))
            break
        out.append(spot)
    return out


class MapView(pg.PlotWidget):
    pointHovered = Signal(int)  # row id, or -1 when nothing is under the mouse
    pointClicked = Signal(int)
    selectionMade = Signal(list)  # row ids inside a drawn rectangle or lasso

    def __init__(self, parent=None) -> None:
        super().__init__(parent, background=style.BACKGROUND, viewBox=SelectViewBox())
        self.ids = np.zeros(0, dtype=np.int64)
        self.coords = np.zeros((0, 2), dtype=np.float32)
        self.labels: list[str] = []
        self._row_of: dict[int, int] = {}
        self._tree: cKDTree | None = None
        self._sets: dict[str, tuple[pg.ScatterPlotItem, list[int], QColor]] = {}
        self._selected: list[int] = []
        self._overlays: list[pg.GraphicsObject] = []
        self._arrows: list[tuple[int, int, QColor]] = []
        self.labels_on = True
        self._label_items: list[pg.TextItem] = []
        self.placed_labels: list[int] = []  # ids labelled on screen now, for tests and export
        self._scale = 1.0
        # Colour by (kind, id, length, cluster): a colour code per point, set once per map.
        self._codes: np.ndarray | None = None
        self._brushes: np.ndarray | None = None  # a QBrush per point (object array), for the points drawn
        self._rgba32: np.ndarray | None = None  # each point's colour as packed RGBA bytes, for the density image
        self._cluster_labels: list[tuple[str, float, float, QColor]] = []
        self._cluster_items: list[pg.TextItem] = []
        self.placed_cluster_labels: list[str] = []
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
        self.mode = "points"  # or "density"
        self._subset_rect: tuple[float, float, float, float] | None = None
        self.vb.sigRangeChanged.connect(self._update_detail)
        self.vb.sigResized.connect(self._update_detail)
        self._label_timer = QTimer(self)
        self._label_timer.setSingleShot(True)
        self._label_timer.setInterval(30)  # one placement per burst of pan and zoom steps
        self._label_timer.timeout.connect(self._place_labels)
        self.vb.sigRangeChanged.connect(self._label_timer.start)
        self.vb.sigResized.connect(self._label_timer.start)
        self.legend = pg.LegendItem(
            offset=(10, 10), labelTextSize=f"{style.LABEL_POINT_SIZE}pt", labelTextColor="k",
            brush=pg.mkBrush(255, 255, 255, 220), pen=pg.mkPen(160, 160, 160),
        )
        self.legend.setParentItem(item.getViewBox())
        self.legend.hide()  # until a set is shown
        # The colours' key, bottom right: the word sets' legend keeps the top left.
        self.colour_legend = pg.LegendItem(
            offset=(-10, -10), labelTextSize=f"{style.LABEL_POINT_SIZE}pt", labelTextColor="k",
            brush=pg.mkBrush(255, 255, 255, 220), pen=pg.mkPen(160, 160, 160),
        )
        self.colour_legend.setParentItem(item.getViewBox())
        self.colour_legend.hide()
        self._keys_wanted = {self.legend: False, self.colour_legend: False}  # whether each key has entries
        self.vb.sigResized.connect(self._fit_keys)
        self._colour_entries: list[tuple[QColor, str]] = []
        self.vb.polygonDrawn.connect(self.select_polygon)
        self.hover_text = pg.TextItem("", color=(0, 0, 0), fill=pg.mkBrush(255, 255, 230, 230), border=pg.mkPen(120, 120, 120))
        style.use_font(self.hover_text, style.LABEL_POINT_SIZE, bold=True)
        self.hover_text.setZValue(100)
        self.hover_text.hide()
        self.addItem(self.hover_text, ignoreBounds=True)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        style.follow_scale(self)

    def set_text_scale(self, scale: float) -> None:
        """Markers, the legend and the labels grow with the text size."""
        self._scale = scale
        self.points.setSize(marker_size(len(self.coords)) * scale)
        self.legend.setLabelTextSize(f"{style.pt(style.LABEL_POINT_SIZE)}pt")
        self.colour_legend.setLabelTextSize(f"{style.pt(style.LABEL_POINT_SIZE)}pt")
        self._rebuild_colour_legend()
        for name in self._sets:
            self._sets[name][0].setSize(highlight_size(len(self.coords)) * scale)
        self._redraw_overlays()
        self._fit_keys()

    def set_labels_on(self, on: bool) -> None:
        self.labels_on = bool(on)
        self._place_labels()

    # --- data -----------------------------------------------------------------
    def set_labels(self, labels: list[str]) -> None:
        self.labels = labels

    def clear_map(self) -> None:
        """Empty the map: points, word sets, legend, rings, arrows and the hover box.
        (Not `clear`: PlotWidget binds that name to PlotItem.clear, which drops every item.)"""
        for name in list(self._sets):
            self.removeItem(self._sets.pop(name)[0])
        self._rebuild_legend()
        self._selected = []
        self._arrows = []
        self.set_colours(None)
        self.hover_text.hide()
        self.set_points(np.zeros(0, np.int64), np.zeros((0, 2), np.float32))
        self._place_labels()  # now, not after the timer: nothing of the old map may show

    def set_points(self, ids: np.ndarray, coords: np.ndarray, autorange: bool = True) -> None:
        """Show `coords` for the true row `ids`; a same-ids update (t-SNE previews) keeps overlays."""
        same_rows = ids.shape == self.ids.shape and np.array_equal(ids, self.ids)
        self.ids = np.asarray(ids, dtype=np.int64)
        self.coords = np.asarray(coords, dtype=np.float32)
        if not same_rows:
            self._row_of = {int(i): r for r, i in enumerate(self.ids)}
            self.hover_text.hide()  # it pointed at a row of the previous map
            self.points.setSize(marker_size(len(self.ids)) * self._scale)
            # A few big markers read best solid; a cloud of dots needs them faint to show density.
            few = len(self.ids) <= 50
            self.points.setBrush(pg.mkBrush(style.FEW_POINTS_COLOR if few else style.POINT_COLOR))
            self._drop_colours()  # they were of the previous map's rows
        self._tree = None  # built on the first hover: t-SNE previews arrive faster than they are hovered
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

    def _set_range_beside_keys(self, x0: float, x1: float, y0: float, y1: float) -> None:
        """Show x0…x1 × y0…y1 with room above for the word sets' legend and on the right
        for the colours' key, so that neither covers a point (a search's marker, say)."""
        width, height = self.vb.width(), self.vb.height()
        if self.colour_legend.isVisible() and width > 0:
            share = min((self.key_rect(self.colour_legend).width() + 2 * LABEL_GAP_PX) / width, KEY_ROOM_MAX_SHARE)
            x1 = x0 + (x1 - x0) / (1 - share)
        if self.legend.isVisible() and height > 0:
            share = min((self.key_rect(self.legend).height() + 2 * LABEL_GAP_PX) / height, KEY_ROOM_MAX_SHARE)
            y1 = y0 + (y1 - y0) / (1 - share)
        self.vb.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)

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

    def _update_detail(self, *_args) -> None:
        """Points when few are in view, a density image when many: each frame stays cheap."""
        if not len(self.coords):
            self.points.setData(pos=np.zeros((0, 2), np.float32))
            self.density.clear()
            return
        (x0, x1), (y0, y1) = self.vb.viewRange()
        x, y = self.coords[:, 0], self.coords[:, 1]
        if self.mode == "points" and self._subset_rect is not None:
            sx0, sx1, sy0, sy1 = self._subset_rect
            if sx0 <= x0 and x1 <= sx1 and sy0 <= y0 and y1 <= sy1:
                return  # the points already drawn cover this view
        inside = (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
        if int(np.count_nonzero(inside)) > DENSITY_ABOVE:
            self._draw_density(inside, x0, x1, y0, y1)
            return
        # Draw the points of a margin around the view, so small pans need no redraw.
        mx, my = (x1 - x0) * 0.5, (y1 - y0) * 0.5
        rect = (x0 - mx, x1 + mx, y0 - my, y1 + my)
        near = (x >= rect[0]) & (x <= rect[1]) & (y >= rect[2]) & (y <= rect[3])
        if int(np.count_nonzero(near)) > 2 * DENSITY_ABOVE:
            near, rect = inside, (x0, x1, y0, y1)
        if self._brushes is None:
            self.points.setData(pos=self.coords[near])
        else:
            self.points.setData(pos=self.coords[near], brush=self._brushes[near])
        self._subset_rect = rect
        self.density.hide()
        self.points.show()
        self.mode = "points"

    def _draw_density(self, inside: np.ndarray, x0: float, x1: float, y0: float, y1: float) -> None:
        width_px, height_px = self.vb.width(), self.vb.height()
        bw = max(1, int(width_px / DENSITY_BIN_PX))
        bh = max(1, int(height_px / DENSITY_BIN_PX))
        pts = self.coords[inside]
        ix = np.minimum(((pts[:, 0] - x0) * (bw / max(x1 - x0, 1e-30))).astype(np.int64), bw - 1)
        iy = np.minimum(((pts[:, 1] - y0) * (bh / max(y1 - y0, 1e-30))).astype(np.int64), bh - 1)
        cell = iy * bw + ix
        counts = np.bincount(cell, minlength=bw * bh).reshape(bh, bw)
        if self._rgba32 is None:
            rgba = np.empty((bh, bw, 4), dtype=np.uint8)
            color = style.POINT_COLOR
            rgba[..., 0], rgba[..., 1], rgba[..., 2] = color.red(), color.green(), color.blue()
        else:
            # Each 2-pixel cell takes the colour of one of its points: one scatter of packed
            # pixels (a mean colour per cell took three weighted counts, 45 ms a 400k-point pan step).
            packed = np.zeros(bw * bh, dtype=np.uint32)
            packed[cell] = self._rgba32[inside]
            rgba = packed.view(np.uint8).reshape(bh, bw, 4)
        # One point is as faint as a lone dot; overlapping points darken toward opaque.
        rgba[..., 3] = (255 * (1 - np.exp(-0.8 * counts))).astype(np.uint8)
        self.density.setImage(rgba, autoLevels=False)
        self.density.setRect(x0, y0, x1 - x0, y1 - y0)
        self.density.show()
        self.points.hide()
        self.mode = "density"
        self._subset_rect = None

    def position_of(self, token_id: int) -> np.ndarray | None:
        row = self._row_of.get(int(token_id))
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
        self._subset_rect = None
        self._rebuild_colour_legend()
        self._update_detail()
        self._label_timer.start()

    def _drop_colours(self) -> None:
        self._codes = self._brushes = self._rgba32 = None
        self._colour_entries = []
        self._cluster_labels = []
        self._rebuild_colour_legend()

    def colour_codes(self) -> np.ndarray | None:
        return self._codes

    def colour_legend_entries(self) -> list[str]:
        return [name for _, name in self._colour_entries]

    def _rebuild_colour_legend(self) -> None:
        self.colour_legend.clear()
        size = highlight_size(len(self.coords)) * self._scale
        for colour, name in self._colour_entries:
            sample = pg.ScatterPlotItem(size=size, pen=pg.mkPen(60, 60, 60, width=1), brush=pg.mkBrush(colour))
            self.colour_legend.addItem(sample, name)
        self._keys_wanted[self.colour_legend] = bool(self._colour_entries)
        self._fit_keys()

    def set_cluster_labels(self, labels: list[tuple[str, float, float, QColor]]) -> None:
        """Names drawn at the clusters' centres, (text, x, y, colour), most important first;
        like the token labels, those that would overlap are dropped at this zoom."""
        self._cluster_labels = list(labels)
        self._label_timer.start()

    # --- selection ----------------------------------------------------------------
    def set_select_mode(self, mode: str) -> None:
        """"pan" (a drag pans), "rect" or "lasso" (a drag selects)."""
        self.vb.set_mode(mode)

    def select_polygon(self, polygon: np.ndarray) -> list[int]:
        """The rows inside `polygon` (data coordinates), announced as the selection."""
        ids = self.ids[points_in_polygon(self.coords, polygon)].tolist() if len(self.coords) else []
        self.selectionMade.emit(ids)
        return ids

    # --- overlays -------------------------------------------------------------
    def set_word_set(self, name: str, ids: list[int], color: QColor) -> None:
        self.remove_word_set(name)
        size = highlight_size(len(self.coords)) * self._scale
        scatter = pg.ScatterPlotItem(size=size, pen=pg.mkPen(60, 60, 60, width=1), brush=pg.mkBrush(color), pxMode=True)
        scatter.setZValue(10)
        self.addItem(scatter)
        self._sets[name] = (scatter, list(ids), color)
        self._refresh_set(name)
        self._rebuild_legend()
        self._label_timer.start()

    def remove_word_set(self, name: str) -> None:
        if name in self._sets:
            self.removeItem(self._sets.pop(name)[0])
            self._rebuild_legend()
            self._label_timer.start()

    def word_set_names(self) -> list[str]:
        return list(self._sets)

    def _refresh_set(self, name: str) -> None:
        scatter, ids, _ = self._sets[name]
        pos = [p for p in (self.position_of(i) for i in ids) if p is not None]
        scatter.setData(pos=np.array(pos, dtype=np.float32).reshape(-1, 2))

    def _rebuild_legend(self) -> None:
        self.legend.clear()
        listed = 0
        for name, (scatter, ids, _) in self._sets.items():
            shown = sum(self.position_of(i) is not None for i in ids)
            if shown:  # a set with nothing on this map ("weekdays" on a lesson model) only hides points
                self.legend.addItem(scatter, f"{name} ({shown})")
                listed += 1
        self._keys_wanted[self.legend] = bool(listed)  # an empty legend still draws its frame
        self._fit_keys()

    def key_rect(self, key: pg.LegendItem) -> QRectF:
        """Where a key sits in the view, in pixels, as shrunk by `_fit_keys`."""
        return key.mapRectToParent(key.boundingRect())

    def _fit_keys(self) -> None:
        """Each key at its text size, shrunk to its share of the view, or hidden when it
        would have to shrink past reading."""
        width, height = self.vb.width(), self.vb.height()
        for key, wanted in self._keys_wanted.items():
            natural = key.boundingRect()
            if not wanted or natural.isEmpty() or width <= 0 or height <= 0:
                key.setVisible(wanted)
                continue
            area = (KEY_MAX_AREA_SHARE * width * height / (natural.width() * natural.height())) ** 0.5
            scale = min(1.0, area, KEY_MAX_WIDTH_SHARE * width / natural.width(),
                        KEY_MAX_HEIGHT_SHARE * height / natural.height())
            key.setScale(scale)
            key.setOffset(key.opts["offset"])  # anchored again at its new size
            key.setVisible(scale >= KEY_MIN_SCALE)

    def set_selected(self, ids: list[int]) -> None:
        """Tokens that get a ring and a text label."""
        self._selected = [int(i) for i in ids]
        self._redraw_overlays()

    def set_arrows(self, arrows: list[tuple[int, int, QColor]]) -> None:
        self._arrows = list(arrows)
        self._redraw_overlays()

    def _redraw_overlays(self) -> None:
        for name in self._sets:
            self._refresh_set(name)
        if self._sets:
            self._rebuild_legend()
        for item in self._overlays:
            self.removeItem(item)
        self._overlays = []
        for start, end, color in self._arrows:
            a, b = self.position_of(start), self.position_of(end)
            if a is None or b is None:
                continue
            line = pg.PlotCurveItem([a[0], b[0]], [a[1], b[1]], pen=pg.mkPen(color, width=3))
            angle = np.degrees(np.arctan2(b[1] - a[1], b[0] - a[0]))
            head = pg.ArrowItem(pos=(float(b[0]), float(b[1])), angle=180 - angle, headLen=22, tipAngle=30, brush=color, pen=pg.mkPen(color))
            for item in (line, head):
                item.setZValue(20)
                self.addItem(item, ignoreBounds=True)
                self._overlays.append(item)
        rings = [p for p in (self.position_of(i) for i in self._selected) if p is not None]
        if rings:
            size = (marker_size(len(self.coords)) + 12) * self._scale
            ring = pg.ScatterPlotItem(pos=np.array(rings), size=size, pen=pg.mkPen(style.SELECT_COLOR, width=2.5), brush=None, pxMode=True)
            ring.setZValue(30)
            self.addItem(ring, ignoreBounds=True)
            self._overlays.append(ring)
        self._label_timer.start()

    # --- labels -----------------------------------------------------------------
    def label_candidates(self) -> list[int]:
        """Ids to label, most important first: the ringed tokens, arrow ends, the word
        sets' and search's members, then every point in view when few are."""
        order: list[int] = list(self._selected)
        for start, end, _ in self._arrows:
            order += [start, end]
        for _, ids, _ in self._sets.values():
            order += ids
        if len(self.coords):
            (x0, x1), (y0, y1) = self.vb.viewRange()
            x, y = self.coords[:, 0], self.coords[:, 1]
            inside = np.flatnonzero((x >= x0) & (x <= x1) & (y >= y0) & (y <= y1))
            if len(inside) <= LABEL_ALL_BELOW:
                order += self.ids[inside].tolist()
        return list(dict.fromkeys(int(i) for i in order))

    def _place_labels(self) -> None:
        self._label_timer.stop()
        self.placed_labels = []
        self.placed_cluster_labels = []
        chosen: list[tuple[int, float, float]] = []
        clusters: list[tuple[int, float, float]] = []  # (index into _cluster_labels, x, y)
        width, height = self.vb.width(), self.vb.height()
        if self.labels_on and len(self.coords) and width > 0 and height > 0:
            (x0, x1), (y0, y1) = self.vb.viewRange()
            sx, sy = width / max(x1 - x0, 1e-30), height / max(y1 - y0, 1e-30)
            metrics = QFontMetricsF(style.font(style.LABEL_POINT_SIZE, bold=True))
            cands, ids = [], []
            for token_id in self.label_candidates()[: 4 * MAX_LABELS]:
                pos = self.position_of(token_id)
                if pos is None or token_id >= len(self.labels):
                    continue
                px, py = (float(pos[0]) - x0) * sx, (y1 - float(pos[1])) * sy
                if not (0 <= px <= width and 0 <= py <= height):
                    continue
                rect = metrics.boundingRect(self.labels[token_id])
                cands.append((px, py, rect.width() + 8, metrics.height() + 4))
                ids.append(token_id)
            taken = [(g.x(), g.y(), g.width(), g.height())
                     for g in (self.key_rect(lg) for lg in (self.legend, self.colour_legend) if lg.isVisible())]
            # Labels keep off the highlighted markers, their own included (not off every plain
            # point: among a crowd of neighbours the ringed word would find no room at all).
            radius = (highlight_size(len(self.coords)) * self._scale) / 2
            important = set(self._selected) | {i for a, b, _ in self._arrows for i in (a, b)}
            important |= {i for _, members, _ in self._sets.values() for i in members}
            taken += [(px - radius, py - radius, 2 * radius, 2 * radius)
                      for (px, py, _, _), token_id in zip(cands, ids) if token_id in important]
            # Cluster names after the highlighted tokens' labels, before those of plain points.
            first = [k for k, token_id in enumerate(ids) if token_id in important]
            rest = [k for k, token_id in enumerate(ids) if token_id not in important]
            named = []
            for c, (text, cx, cy, _) in enumerate(self._cluster_labels):
                px, py = (cx - x0) * sx, (y1 - cy) * sy
                if 0 <= px <= width and 0 <= py <= height:
                    rect = metrics.boundingRect(text)
                    named.append((c, (px, py, rect.width() + 12, metrics.height() + 8)))
            order = [("token", k) for k in first] + [("cluster", k) for k in range(len(named))] + [("token", k) for k in rest]
            boxes = [cands[k] if kind == "token" else named[k][1] for kind, k in order]
            for (kind, k), spot in zip(order, place_labels(boxes, width, height, taken, gap=radius + 3)):
                if spot is None:
                    continue
                if kind == "cluster":
                    clusters.append((named[k][0], x0 + spot[0] / sx, y1 - spot[1] / sy))
                elif len(chosen) < MAX_LABELS:
                    chosen.append((ids[k], x0 + spot[0] / sx, y1 - spot[1] / sy))
        label_font = style.font(style.LABEL_POINT_SIZE, bold=True)
        self._show_token_labels(chosen, label_font)
        self._show_cluster_labels(clusters, label_font)

    def _show_token_labels(self, chosen: list[tuple[int, float, float]], label_font) -> None:
        while len(self._label_items) < len(chosen):
            text = pg.TextItem("", color=(0, 0, 0), anchor=(0, 0), fill=pg.mkBrush(255, 255, 255, 210))
            text.setZValue(40)
            self.addItem(text, ignoreBounds=True)
            self._label_items.append(text)
        for i, text in enumerate(self._label_items):
            if i < len(chosen):
                token_id, lx, ly = chosen[i]
                text.setFont(label_font)
                text.setText(self.labels[token_id])
                text.setPos(lx, ly)
                text.show()
                self.placed_labels.append(token_id)
            else:
                text.hide()

    def _show_cluster_labels(self, chosen: list[tuple[int, float, float]], label_font) -> None:
        """A cluster's name in a box framed in its colour: told apart from a token's label."""
        for item in self._cluster_items[len(chosen):]:
            item.hide()
        for i, (c, lx, ly) in enumerate(chosen):
            text, _, _, colour = self._cluster_labels[c]
            if i == len(self._cluster_items):
                item = pg.TextItem("", color=(0, 0, 0), anchor=(0, 0))
                item.setZValue(45)
                self.addItem(item, ignoreBounds=True)
                self._cluster_items.append(item)
            item = self._cluster_items[i]
            item.fill = pg.mkBrush(255, 255, 255, 235)
            item.border = pg.mkPen(QColor(colour.red(), colour.green(), colour.blue()), width=3)
            item.setFont(label_font)
            item.setText(text)
            item.setPos(lx, ly)
            item.show()
            self.placed_cluster_labels.append(text)

    def zoom_to(self, ids: list[int]) -> None:
        pts = np.array([p for p in (self.position_of(i) for i in ids) if p is not None], dtype=np.float32).reshape(-1, 2)
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
        if self._tree is None:
            self._tree = cKDTree(self.coords)
        p = self.vb.mapSceneToView(scene_pos)
        px = self.vb.viewPixelSize()
        radius = HOVER_RADIUS_PX * max(px[0], px[1])
        dist, row = self._tree.query([p.x(), p.y()], k=1, distance_upper_bound=radius)
        if not np.isfinite(dist):
            return -1
        return int(self.ids[row])

    def _on_mouse_moved(self, scene_pos) -> None:
        token_id = self.nearest_at(scene_pos)
        if token_id < 0:
            self.hover_text.hide()
        else:
            pos = self.position_of(token_id)
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
