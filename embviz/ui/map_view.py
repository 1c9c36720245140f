"""The scatter of token rows: hover labels through a k-d tree, click to select,
coloured word sets with a legend, text labels on selected tokens, arrows."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from scipy.spatial import cKDTree

from embviz.ui import style

HOVER_RADIUS_PX = 8
# Above this many points in view, the map draws a density image (a ScatterPlotItem of
# 262,144 points takes ~140 ms a frame, and setData alone ~2.5 µs a point); zoomed in,
# the points themselves.
DENSITY_ABOVE = 4_000
DENSITY_BIN_PX = 2


class MapView(pg.PlotWidget):
    pointHovered = Signal(int)  # row id, or -1 when nothing is under the mouse
    pointClicked = Signal(int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent, background=style.BACKGROUND)
        self.ids = np.zeros(0, dtype=np.int64)
        self.coords = np.zeros((0, 2), dtype=np.float32)
        self.labels: list[str] = []
        self._row_of: dict[int, int] = {}
        self._tree: cKDTree | None = None
        self._sets: dict[str, tuple[pg.ScatterPlotItem, list[int], QColor]] = {}
        self._selected: list[int] = []
        self._overlays: list[pg.GraphicsObject] = []
        self._arrows: list[tuple[int, int, QColor]] = []
        item = self.getPlotItem()
        item.hideAxis("left")
        item.hideAxis("bottom")
        item.setMenuEnabled(False)
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
        self.legend = pg.LegendItem(
            offset=(10, 10), labelTextSize=f"{style.LABEL_POINT_SIZE}pt", labelTextColor="k",
            brush=pg.mkBrush(255, 255, 255, 220), pen=pg.mkPen(160, 160, 160),
        )
        self.legend.setParentItem(item.getViewBox())
        self.legend.hide()  # until a set is shown
        self.hover_text = pg.TextItem("", color=(0, 0, 0), fill=pg.mkBrush(255, 255, 230, 230), border=pg.mkPen(120, 120, 120))
        self.hover_text.setFont(style.font(style.LABEL_POINT_SIZE, bold=True))
        self.hover_text.setZValue(100)
        self.hover_text.hide()
        self.addItem(self.hover_text, ignoreBounds=True)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.scene().sigMouseClicked.connect(self._on_mouse_clicked)

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
        self.hover_text.hide()
        self.set_points(np.zeros(0, np.int64), np.zeros((0, 2), np.float32))

    def set_points(self, ids: np.ndarray, coords: np.ndarray, autorange: bool = True) -> None:
        """Show `coords` for the true row `ids`; a same-ids update (t-SNE previews) keeps overlays."""
        same_rows = ids.shape == self.ids.shape and np.array_equal(ids, self.ids)
        self.ids = np.asarray(ids, dtype=np.int64)
        self.coords = np.asarray(coords, dtype=np.float32)
        if not same_rows:
            self._row_of = {int(i): r for r, i in enumerate(self.ids)}
            self.hover_text.hide()  # it pointed at a row of the previous map
        self._tree = None  # built on the first hover: t-SNE previews arrive faster than they are hovered
        self._subset_rect = None
        self._redraw_overlays()
        if autorange and len(self.coords):
            # Python floats: pyqtgraph compares spans with float64 limits (float32 overflows).
            lo, hi = self.coords.min(0).tolist(), self.coords.max(0).tolist()
            self.vb.setRange(xRange=(lo[0], hi[0]), yRange=(lo[1], hi[1]), padding=0.02)
        self._update_detail()

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
        self.points.setData(pos=self.coords[near])
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
        counts = np.bincount(iy * bw + ix, minlength=bw * bh).reshape(bh, bw)
        color = style.POINT_COLOR
        rgba = np.empty((bh, bw, 4), dtype=np.uint8)
        rgba[..., 0], rgba[..., 1], rgba[..., 2] = color.red(), color.green(), color.blue()
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

    # --- overlays -------------------------------------------------------------
    def set_word_set(self, name: str, ids: list[int], color: QColor) -> None:
        self.remove_word_set(name)
        scatter = pg.ScatterPlotItem(size=11, pen=pg.mkPen("w", width=1), brush=pg.mkBrush(color), pxMode=True)
        scatter.setZValue(10)
        self.addItem(scatter)
        self._sets[name] = (scatter, list(ids), color)
        self._refresh_set(name)
        self._rebuild_legend()

    def remove_word_set(self, name: str) -> None:
        if name in self._sets:
            self.removeItem(self._sets.pop(name)[0])
            self._rebuild_legend()

    def word_set_names(self) -> list[str]:
        return list(self._sets)

    def _refresh_set(self, name: str) -> None:
        scatter, ids, _ = self._sets[name]
        pos = [p for p in (self.position_of(i) for i in ids) if p is not None]
        scatter.setData(pos=np.array(pos, dtype=np.float32).reshape(-1, 2))

    def _rebuild_legend(self) -> None:
        self.legend.clear()
        for name, (scatter, ids, _) in self._sets.items():
            shown = sum(self.position_of(i) is not None for i in ids)
            self.legend.addItem(scatter, f"{name} ({shown})")
        self.legend.setVisible(bool(self._sets))  # an empty legend still draws its frame

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
            ring = pg.ScatterPlotItem(pos=np.array(rings), size=16, pen=pg.mkPen(style.SELECT_COLOR, width=2), brush=None, pxMode=True)
            ring.setZValue(30)
            self.addItem(ring, ignoreBounds=True)
            self._overlays.append(ring)
        for token_id in self._selected:
            pos = self.position_of(token_id)
            if pos is None or token_id >= len(self.labels):
                continue
            text = pg.TextItem(self.labels[token_id], color=(0, 0, 0), anchor=(0, 1), fill=pg.mkBrush(255, 255, 255, 200))
            text.setFont(style.font(style.LABEL_POINT_SIZE, bold=True))
            text.setPos(float(pos[0]), float(pos[1]))
            text.setZValue(40)
            self.addItem(text, ignoreBounds=True)
            self._overlays.append(text)

    def zoom_to(self, ids: list[int]) -> None:
        pts = np.array([p for p in (self.position_of(i) for i in ids) if p is not None], dtype=np.float32).reshape(-1, 2)
        if not len(pts):
            return
        lo, hi = pts.min(0), pts.max(0)
        span = np.maximum(hi - lo, 0.02 * np.ptp(self.coords, axis=0).max() if len(self.coords) else 1.0)
        pad = 0.25 * span
        (x0, y0), (x1, y1) = (lo - pad).tolist(), (hi + pad).tolist()
        self.vb.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)

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

    def _on_mouse_clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        token_id = self.nearest_at(event.scenePos())
        if token_id >= 0:
            self.pointClicked.emit(token_id)
