"""The map in three dimensions: pyqtgraph's OpenGL view of a 3-D projection's points.

Drag turns the cloud (Ctrl+drag or the middle button pans), the wheel zooms, a double-click
centres the turn on the point under the mouse, hover and click name the token, T starts and
stops a slow turn for a projector. It draws what the 2-D map holds (the
points' colours, word sets, search hits, rings, analogy arrows): the panel keeps the 2-D
map as the one record of what is highlighted, and this view follows its `contentChanged`.

Software OpenGL (Mesa's llvmpipe) spends about a microsecond a point per frame: while the
camera moves, a fixed sample of MOVING_POINTS points is drawn (the highlights always), and
the whole cloud once it rests for REST_MS (bench figure map3d_orbit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
import pyqtgraph as pg
import pyqtgraph.opengl as gl
from PySide6.QtCore import QPointF, QRectF, QSizeF, Qt, QTimer, Signal
from PySide6.QtOpenGL import QOpenGLPaintDevice
from PySide6.QtGui import QColor, QFontMetricsF, QGuiApplication, QMatrix4x4, QOffscreenSurface, QOpenGLContext, QPainter, QPen

from embviz.ui import style
from embviz.ui.plots.map_markers import highlight_size, marker_size
from embviz.ui.plots.map_view import MapView

MOVING_POINTS = 20_000
REST_MS = 180
TURN_DEGREES = 0.4  # a step of the slow turn, every TURN_MS: a full turn in 30 s
TURN_MS = 33
HOVER_RADIUS_PX = 8
MAX_LABELS = 80
LABEL_ALL_BELOW = 200  # a map of this many points or fewer labels every point
FIT_MARGIN = 1.15
SAMPLE_SEED = 0
HINT = "Drag to turn · wheel to zoom · double-click a point to turn around it · T turns it slowly"
OPAQUE_POINT = QColor(140, 155, 180)  # style.POINT_COLOR without its transparency, on white


def gl_available() -> bool:
    """Whether this display gives an OpenGL context (the offscreen platform and some remote
    desktops do not); False before the application (and so the display) exists."""
    return QGuiApplication.instance() is not None and _context_works()


@cache
def _context_works() -> bool:
    """Asked once, with a context of its own."""
    context = QOpenGLContext()
    if not context.create():
        return False
    surface = QOffscreenSurface()
    surface.create()
    made = context.makeCurrent(surface)
    context.doneCurrent()
    return bool(made)


NO_GL = "This display offers no OpenGL, so the map stays in two dimensions."


@dataclass
class Camera:
    distance: float
    elevation: float
    azimuth: float
    centre: list[float]


def _rgba(colour: QColor, alpha: float = 1.0) -> tuple[float, float, float, float]:
    return colour.redF(), colour.greenF(), colour.blueF(), alpha


def label_box(at: QPointF, size: QSizeF, offset: float, taken: list[QRectF], view: QRectF,
              hovered: bool = False) -> QRectF | None:
    """Where a label of `size` goes beside its marker at `at`: right of it, else left, above or
    below, wholly inside `view` and clear of `taken`; else none (it shows as the cloud turns),
    but the hovered token's is always shown, moved inside the view. A label right of a point
    near the edge was cut there ("␣Saturda" at 200 %)."""
    x, y, w, h = at.x(), at.y(), size.width(), size.height()
    places = [QRectF(x + offset, y - h / 2, w, h), QRectF(x - offset - w, y - h / 2, w, h),
              QRectF(x - w / 2, y - offset - h, w, h), QRectF(x - w / 2, y + offset, w, h)]
    box = next((p for p in places if view.contains(p) and not any(p.intersects(t) for t in taken)), None)
    if box is None and hovered:
        box = QRectF(places[0])
        box.moveLeft(max(view.left(), min(box.left(), view.right() - w)))
        box.moveTop(max(view.top(), min(box.top(), view.bottom() - h)))
    return box


class MapView3D(gl.GLViewWidget):
    pointHovered = Signal(int)  # row id, or -1
    pointClicked = Signal(int)
    cameraRested = Signal()
    turningChanged = Signal(bool)

    def __init__(self, flat: MapView, parent=None) -> None:
        super().__init__(parent)
        self.flat = flat
        self.setBackgroundColor(QColor("white"))
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setMouseTracking(True)
        self.ids = np.zeros(0, dtype=np.int64)
        self.coords = np.zeros((0, 3), dtype=np.float32)
        self._sample = np.zeros(0, dtype=np.int64)
        self._scale = 1.0
        self.cloud = gl.GLScatterPlotItem(pos=np.zeros((0, 3), np.float32), size=4, pxMode=True, glOptions="opaque")
        self.moving = gl.GLScatterPlotItem(pos=np.zeros((0, 3), np.float32), size=4, pxMode=True, glOptions="opaque")
        self.moving.hide()
        # Highlights over the cloud whatever its depth: a dark ring (a bigger dot) under each marker.
        over = {"glDisable": ("GL_DEPTH_TEST",), "glEnable": ("GL_BLEND",),
                "glBlendFunc": ("GL_SRC_ALPHA", "GL_ONE_MINUS_SRC_ALPHA")}
        self.rings = gl.GLScatterPlotItem(pos=np.zeros((0, 3), np.float32), pxMode=True, glOptions=_gl_options(over))
        self.marks = gl.GLScatterPlotItem(pos=np.zeros((0, 3), np.float32), pxMode=True, glOptions=_gl_options(over))
        self.arrows = gl.GLLinePlotItem(pos=np.zeros((0, 3), np.float32), mode="lines", width=3, antialias=True,
                                        glOptions=_gl_options(over))
        for depth, item in enumerate((self.cloud, self.moving, self.arrows, self.rings, self.marks)):
            item.setDepthValue(depth)
            self.addItem(item)
        self._labelled: list[tuple[int, str, QColor]] = []  # (row, text, colour), most important first
        self.placed_label_boxes: list[tuple[str, QRectF]] = []  # (text, box) drawn last frame, for tests
        self._key: list[tuple[QColor, str, bool]] = []  # (colour, name, a set's marker), the key's lines
        self._arrow_rows: list[tuple[int, int, QColor]] = []  # (start row, end row, colour): heads drawn on screen
        self._hover_row = -1
        self._screen_key: tuple | None = None
        self._screen: np.ndarray | None = None  # each point's (x, y, depth) on screen at _screen_key
        self._rest_key: tuple | None = None
        self._pressed_at: QPointF | None = None
        self._rest_timer = QTimer(self)
        self._rest_timer.setSingleShot(True)
        self._rest_timer.setInterval(REST_MS)
        self._rest_timer.timeout.connect(self._rest)
        self.turn_timer = QTimer(self)
        self.turn_timer.setInterval(TURN_MS)
        self.turn_timer.timeout.connect(lambda: self.orbit(TURN_DEGREES, 0))
        self._sync_timer = QTimer(self)
        self._sync_timer.setSingleShot(True)
        self._sync_timer.setInterval(0)
        self._sync_timer.timeout.connect(self.sync)
        flat.contentChanged.connect(self._sync_timer.start)
        style.follow_scale(self)

    # --- points and what the 2-D map highlights -------------------------------------------------
    def set_points(self, ids: np.ndarray, coords: np.ndarray, autorange: bool = True) -> None:
        """Show the 3-D `coords` of the row `ids`, in the 2-D map's colours."""
        self.ids = np.asarray(ids, dtype=np.int64)
        self.coords = np.asarray(coords, dtype=np.float32).reshape(-1, 3)
        n = len(self.ids)
        rng = np.random.default_rng(SAMPLE_SEED)
        self._sample = np.sort(rng.choice(n, MOVING_POINTS, replace=False)) if n > MOVING_POINTS else np.arange(n)
        self._screen_key = None
        self._hover_row = -1
        if autorange:
            self.fit()
        self.sync()

    def fit(self) -> None:
        """The whole cloud in view, turning about its middle; the camera's angles stay."""
        if len(self.coords):
            self._look_at(self.coords)

    def frame_ids(self, token_ids: list[int]) -> None:
        """Turn about the middle of these tokens' points, near enough that they fill most of the view."""
        rows = self.flat.rows_of(token_ids) if len(self.ids) == len(self.flat.ids) else np.zeros(0, np.int64)
        rows = rows[rows >= 0]
        if rows.size:
            self._look_at(self.coords[rows])

    def _look_at(self, points: np.ndarray) -> None:
        """The camera on the middle of `points`, at the distance that shows their bounding sphere."""
        lo, hi = points.min(0), points.max(0)
        radius = max(float(np.linalg.norm(hi - lo)) / 2, 1e-6)
        distance = FIT_MARGIN * radius / math.sin(math.radians(self.opts["fov"]) / 2)
        self.setCameraPosition(pos=pg.Vector(*((lo + hi) / 2).tolist()), distance=distance)

    def sync(self) -> None:
        """Draw what the 2-D map holds now: colours, sets, rings, arrows and their labels."""
        flat = self.flat
        n = len(self.ids)
        same = n == len(flat.ids) and np.array_equal(flat.ids, self.ids)
        dot = marker_size(n) * self._scale
        colours = self._point_colours(flat.point_rgba() if same else None)
        self.cloud.setData(pos=self.coords, color=colours, size=dot)
        self.moving.setData(pos=self.coords[self._sample], color=colours[self._sample], size=dot)
        rows, fills, labelled = [], [], []
        for _, ids, colour in flat.highlights() if same else []:
            found = flat.rows_of(ids)
            found = found[found >= 0]
            rows.append(found)
            fills += [_rgba(colour)] * len(found)
            labelled += [(int(r), colour) for r in found]
        selected = flat.rows_of(flat.selected_ids()) if same else np.zeros(0, np.int64)
        selected = selected[selected >= 0]
        rows.append(selected)
        fills += [_rgba(style.SELECTION_COLOR)] * len(selected)
        labelled = [(int(r), QColor(30, 30, 30)) for r in selected] + labelled
        segments, segment_colours = [], []
        self._arrow_rows = []
        for start, end, colour in flat.arrow_ids() if same else []:
            ends = flat.rows_of([start, end])
            if (ends >= 0).all():
                segments += [self.coords[ends[0]], self.coords[ends[1]]]
                segment_colours += [_rgba(colour)] * 2
                labelled += [(int(ends[0]), colour), (int(ends[1]), colour)]
                self._arrow_rows.append((int(ends[0]), int(ends[1]), colour))
        self._key = [(colour, f"{name} ({len(found)})", True) for (name, _, colour), found in zip(
            flat.highlights() if same else [], rows) if len(found)]
        self._key += [(colour, name, False) for colour, name in (flat.colour_key() if same else [])]
        marked = np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, np.int64)
        size = highlight_size(n) * self._scale
        self.marks.setData(pos=self.coords[marked], color=np.array(fills, np.float32).reshape(-1, 4), size=size)
        self.rings.setData(pos=self.coords[marked], color=(0.1, 0.1, 0.1, 1.0), size=size + 3 * self._scale)
        self.arrows.setData(pos=np.array(segments, np.float32).reshape(-1, 3),
                            color=np.array(segment_colours, np.float32).reshape(-1, 4))
        if n <= LABEL_ALL_BELOW:
            labelled += [(r, QColor(30, 30, 30)) for r in range(n)]
        seen: set[int] = set()
        self._labelled = []
        for row, colour in labelled:
            if row not in seen and len(self._labelled) < MAX_LABELS:
                seen.add(row)
                self._labelled.append((row, self._label(row), colour.darker(160)))
        self.update()

    def _point_colours(self, rgba: np.ndarray | None) -> np.ndarray:
        if rgba is None:
            return np.tile(np.array(_rgba(OPAQUE_POINT), np.float32), (len(self.ids), 1))
        colours = rgba.astype(np.float32) / 255.0
        colours[:, 3] = 1.0  # opaque points: depth, not blending, decides which shows
        return colours

    def _label(self, row: int) -> str:
        token_id = int(self.ids[row])
        labels = self.flat.labels
        return labels[token_id] if token_id < len(labels) else str(token_id)

    def set_text_scale(self, scale: float) -> None:
        self._scale = scale
        self.sync()

    # --- the camera --------------------------------------------------------------------------
    def camera(self) -> Camera:
        centre = self.opts["center"]
        azimuth = (float(self.opts["azimuth"]) + 180.0) % 360.0 - 180.0
        return Camera(float(self.opts["distance"]), float(self.opts["elevation"]), azimuth,
                      [float(centre.x()), float(centre.y()), float(centre.z())])

    def set_camera(self, camera: Camera) -> None:
        self.setCameraPosition(pos=pg.Vector(*camera.centre), distance=camera.distance,
                               elevation=camera.elevation, azimuth=camera.azimuth)

    def orbit(self, azim: float, elev: float) -> None:
        super().orbit(azim, elev)
        # pyqtgraph clamps the elevation; the azimuth grows without end on a long turn
        self.opts["azimuth"] = (self.opts["azimuth"] + 180.0) % 360.0 - 180.0

    def set_turning(self, on: bool) -> None:
        if on == self.turn_timer.isActive():
            return
        if on:
            self.turn_timer.start()
        else:
            self.turn_timer.stop()
        self.turningChanged.emit(on)

    def _camera_key(self) -> tuple:
        c = self.opts["center"]
        return (self.opts["distance"], self.opts["elevation"], self.opts["azimuth"], self.opts["fov"],
                c.x(), c.y(), c.z(), self.width(), self.height())

    # --- drawing ------------------------------------------------------------------------------
    def paintGL(self) -> None:
        """The sample while the camera moves, the whole cloud at rest; then the labels."""
        key = self._camera_key()
        moving = len(self.ids) > MOVING_POINTS and key != self._rest_key
        if moving:
            self._rest_timer.start()
        if self.moving.visible() != moving:  # (setVisible asks for one more frame: only when it flips)
            self.cloud.setVisible(not moving)
            self.moving.setVisible(moving)
        super().paintGL()
        self._paint_labels()

    def _rest(self) -> None:
        self._rest_key = self._camera_key()
        self.update()
        self.cameraRested.emit()

    def screen_positions(self) -> np.ndarray:
        """Each point's (x, y) in the widget's pixels and its depth (clip w), for this camera."""
        key = self._camera_key()
        if self._screen is None or self._screen_key != key:
            w, h = self.width(), self.height()
            matrix: QMatrix4x4 = self.projectionMatrix((0, 0, w, h), (0, 0, w, h)) * self.viewMatrix()
            m = np.array(matrix.data(), dtype=np.float64).reshape(4, 4).T
            clip = self.coords.astype(np.float64) @ m[:3, :3].T + m[:3, 3]
            depth = self.coords.astype(np.float64) @ m[3, :3] + m[3, 3]
            safe = np.where(depth > 1e-9, depth, np.nan)
            x = (clip[:, 0] / safe + 1) * w / 2
            y = (1 - clip[:, 1] / safe) * h / 2
            self._screen, self._screen_key = np.column_stack([x, y, depth]), key
        return self._screen

    def _paint_labels(self) -> None:
        """Labels beside their markers, the arrows' heads and the key, over the OpenGL frame."""
        if not self._labelled and self._hover_row < 0 and not self._key:
            return
        screen = self.screen_positions()
        # Onto the framebuffer bound now, not QPainter(self): a grab() of the window redirects the
        # widget's own painting to a pixmap that the OpenGL frame then covers.
        device = QOpenGLPaintDevice(self.deviceWidth(), self.deviceHeight())
        device.setDevicePixelRatio(self.devicePixelRatioF())
        painter = QPainter(device)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        font = style.font(style.LABEL_POINT_SIZE * 0.9, bold=True)
        painter.setFont(font)
        metrics = QFontMetricsF(font)
        offset = highlight_size(len(self.ids)) * self._scale / 2 + 3
        items = list(self._labelled)
        if self._hover_row >= 0:
            items.insert(0, (self._hover_row, self._label(self._hover_row), QColor(0, 0, 0)))
        shown = [(row, text, colour) for row, text, colour in items
                 if screen[row, 2] > 0 and np.isfinite(screen[row, :2]).all()]
        # A label never covers a labelled marker: each marker's square is taken first.
        half = offset - 2  # the marker's half-width and its ring
        taken = [QRectF(screen[row, 0] - half, screen[row, 1] - half, 2 * half, 2 * half) for row, _, _ in shown]
        key = self._key_rect(metrics)
        if key is not None:
            taken.append(key)  # no label under the key
        self.placed_label_boxes = []
        for row, text, colour in shown:
            size = metrics.boundingRect(text).adjusted(-3, -1, 3, 1).size()
            box = label_box(QPointF(screen[row, 0], screen[row, 1]), size, offset, taken,
                            QRectF(0, 0, self.width(), self.height()), row == self._hover_row)
            if box is None:
                continue
            taken.append(box)
            self.placed_label_boxes.append((text, box))
            painter.fillRect(box, QColor(255, 255, 255, 215))
            painter.setPen(QPen(colour))
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
        self._paint_arrow_heads(painter, screen)
        if key is not None:
            self._paint_key(painter, metrics, key)
        painter.end()

    def _paint_arrow_heads(self, painter: QPainter, screen: np.ndarray) -> None:
        """A head at each arrow's end, drawn on screen so that it faces the camera."""
        length = 12 * self._scale
        for start, end, colour in self._arrow_rows:
            (x0, y0, d0), (x1, y1, d1) = screen[start], screen[end]
            span = math.hypot(x1 - x0, y1 - y0)
            if d0 <= 0 or d1 <= 0 or span < 1:
                continue
            ux, uy = (x1 - x0) / span, (y1 - y0) / span
            tip = QPointF(x1, y1)
            back = QPointF(x1 - length * ux, y1 - length * uy)
            side = QPointF(-uy * length / 2, ux * length / 2)
            painter.setPen(QPen(colour.darker(130), 1))
            painter.setBrush(colour)
            painter.drawPolygon([tip, back + side, back - side])

    def _key_rect(self, metrics: QFontMetricsF) -> QRectF | None:
        """Where the key goes: bottom right, as on the flat map; None without one."""
        if not self._key:
            return None
        line = metrics.height() + 2
        width = max(metrics.horizontalAdvance(name) for _, name, _ in self._key) + metrics.height() * 0.7 + 16
        return QRectF(self.width() - width - 10, self.height() - line * len(self._key) - 14, width,
                      line * len(self._key) + 8)

    def _paint_key(self, painter: QPainter, metrics: QFontMetricsF, box: QRectF) -> None:
        """The word sets (round) and the colour-by key (square)."""
        line = metrics.height() + 2
        swatch = metrics.height() * 0.7
        width = box.width()
        painter.fillRect(box, QColor(255, 255, 255, 225))
        for n, (colour, name, is_set) in enumerate(self._key):
            y = box.top() + 4 + n * line
            mark = QRectF(box.left() + 5, y + (line - swatch) / 2, swatch, swatch)
            painter.setPen(QPen(QColor(60, 60, 60), 1))
            painter.setBrush(colour)
            if is_set:
                painter.drawEllipse(mark)
            else:
                painter.drawRect(mark)
            painter.setPen(QPen(colour.darker(160) if is_set else QColor(30, 30, 30)))
            painter.drawText(QRectF(mark.right() + 6, y, width, line), Qt.AlignmentFlag.AlignVCenter, name)

    # --- the mouse and keys -------------------------------------------------------------------
    def nearest_at(self, x: float, y: float) -> int:
        """The row nearest the pixel (x, y) within HOVER_RADIUS_PX, the nearest to the camera
        among equals; -1 for none."""
        if not len(self.ids):
            return -1
        screen = self.screen_positions()
        d2 = (screen[:, 0] - x) ** 2 + (screen[:, 1] - y) ** 2
        near = np.flatnonzero(d2 <= (HOVER_RADIUS_PX * self._scale) ** 2)
        if not near.size:
            return -1
        return int(near[np.lexsort((screen[near, 2], np.round(d2[near])))[0]])

    def mousePressEvent(self, ev) -> None:
        self._pressed_at = ev.position()
        super().mousePressEvent(ev)

    def mouseMoveEvent(self, ev) -> None:
        if ev.buttons() == Qt.MouseButton.NoButton:
            row = self.nearest_at(ev.position().x(), ev.position().y())
            if row != self._hover_row:
                self._hover_row = row
                self.pointHovered.emit(int(self.ids[row]) if row >= 0 else -1)
                self.update()
            return
        super().mouseMoveEvent(ev)

    def mouseReleaseEvent(self, ev) -> None:
        pressed, self._pressed_at = self._pressed_at, None
        if pressed is not None and (ev.position() - pressed).manhattanLength() < 4:
            row = self.nearest_at(ev.position().x(), ev.position().y())
            if row >= 0:
                self.pointClicked.emit(int(self.ids[row]))

    def mouseDoubleClickEvent(self, ev) -> None:
        row = self.nearest_at(ev.position().x(), ev.position().y())
        if row >= 0:
            self.centre_on(row)

    def centre_on(self, row: int) -> None:
        """Turn about the point at `row` (a row of this map), the distance kept."""
        self.setCameraPosition(pos=pg.Vector(*self.coords[row].tolist()))

    def leaveEvent(self, event) -> None:
        super().leaveEvent(event)
        if self._hover_row >= 0:
            self._hover_row = -1
            self.pointHovered.emit(-1)
            self.update()

    def keyPressEvent(self, ev) -> None:
        if ev.key() == Qt.Key.Key_T:
            self.set_turning(not self.turn_timer.isActive())
        else:
            super().keyPressEvent(ev)


def _gl_options(named: dict) -> dict:
    """pyqtgraph's glOptions with the OpenGL constants looked up by name."""
    from OpenGL import GL

    out: dict = {}
    for key, values in named.items():
        args = tuple(getattr(GL, v) if isinstance(v, str) and v.startswith("GL_") else v for v in values)
        if key in ("glEnable", "glDisable"):
            for constant in args:
                out[constant] = key == "glEnable"
        else:
            out[key] = args
    return out
