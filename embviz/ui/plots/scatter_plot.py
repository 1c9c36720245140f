"""A scatter of people's ratings against the model's cosines, with the least-squares line and
the points furthest from it named; clicking a point reports it. One QPainter, like the bar
chart: a thousand points and a dozen labels are a few fills and texts a paint."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QWidget

from embviz.ui import style
from embviz.ui.plots.bar_chart import TICK, nice_ticks

MIN_SIZE = (200, 160)  # pixels at 100 % text
DOT = 3.5  # a point's radius, pixels at 100 % text
RING = 9.0  # the chosen point's ring, pixels at 100 % text
PICK = 8.0  # how near a click must be to a point, pixels
POINT_COLOR = QColor(0, 114, 178, 150)  # Okabe–Ito blue, see-through so that piles show
NAMED_COLOR = QColor(213, 94, 0)  # Okabe–Ito vermillion: the pairs furthest from the line
LINE_COLOR = QColor(80, 80, 80)


class ScatterPlot(QWidget):
    pointClicked = Signal(int)

    def __init__(self, x_name: str, y_name: str, parent=None) -> None:
        super().__init__(parent)
        self.x_name, self.y_name = x_name, y_name
        self.title = ""
        self.xs = np.zeros(0)
        self.ys = np.zeros(0)
        self.named: dict[int, str] = {}  # point → its label
        self.line: tuple[float, float] | None = None  # y = line[0] + line[1] × x
        self.chosen: int | None = None
        self.font_ = QFont()
        self.title_font = QFont()
        self.scale = 1.0
        self._layout: dict | None = None
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        style.follow_scale(self)

    def sizeHint(self) -> QSize:
        return QSize(480, 360)

    def set_text_scale(self, scale: float) -> None:
        self.scale = scale
        self.setMinimumSize(round(MIN_SIZE[0] * scale), round(MIN_SIZE[1] * scale))
        self.font_ = style.font(style.BASE_POINT_SIZE)
        self.title_font = style.font(style.BASE_POINT_SIZE, bold=True)
        self._changed()

    def set_points(self, xs: Sequence[float], ys: Sequence[float], named: dict[int, str], line: tuple[float, float] | None,
                   title: str) -> None:
        self.xs, self.ys = np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64)
        self.named, self.line, self.title, self.chosen = dict(named), line, title, None
        self._changed()

    def clear_points(self, title: str = "") -> None:
        self.set_points([], [], {}, None, title)

    def choose(self, index: int | None) -> None:
        """Ring one point (a pair picked in the table)."""
        self.chosen = index
        self.update()

    def _changed(self) -> None:
        self._layout = None
        self.update()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._layout = None

    # --- layout -------------------------------------------------------------------------------
    def layout_now(self) -> dict:
        if self._layout is None:
            self._layout = self._work_out()
        return self._layout

    def _work_out(self) -> dict:
        fm, title_fm = QFontMetricsF(self.font_), QFontMetricsF(self.title_font)
        line_h, pad = fm.height(), fm.height() / 3
        x_ticks_lo, x_ticks_hi = self._range(self.xs)
        y_lo, y_hi = self._range(self.ys)
        y_ticks = nice_ticks(y_lo, y_hi, 5)
        tick_w = max((fm.horizontalAdvance(f"{t:g}") for t in y_ticks), default=0.0)
        left = line_h + pad + tick_w + TICK + pad  # the y axis's name (turned), its ticks
        top = title_fm.height() + pad
        plot = QRectF(left, top, max(self.width() - left - 2 * pad, 1.0),
                      max(self.height() - top - TICK - 2 * line_h - pad, 1.0))
        x_ticks = nice_ticks(x_ticks_lo, x_ticks_hi, max(2, int(plot.width() // (4 * fm.horizontalAdvance("10")))))

        def at(x: float, y: float) -> QPointF:
            return QPointF(plot.left() + (x - x_ticks_lo) / ((x_ticks_hi - x_ticks_lo) or 1.0) * plot.width(),
                           plot.bottom() - (y - y_lo) / ((y_hi - y_lo) or 1.0) * plot.height())

        points = [at(x, y) for x, y in zip(self.xs, self.ys)]
        labels = self._place_labels(points, plot, fm)
        line = None
        if self.line is not None and self.xs.size:
            a, b = self.line
            line = (at(x_ticks_lo, a + b * x_ticks_lo), at(x_ticks_hi, a + b * x_ticks_hi))
        return {"plot": plot, "points": points, "labels": labels, "line": line, "line_h": line_h,
                "x_ticks": [(at(t, y_lo).x(), f"{t:g}") for t in x_ticks],
                "y_ticks": [(at(x_ticks_lo, t).y(), f"{t:g}") for t in y_ticks],
                "title": title_fm.elidedText(self.title, Qt.TextElideMode.ElideRight, self.width())}

    @staticmethod
    def _range(values: np.ndarray) -> tuple[float, float]:
        if not values.size:
            return 0.0, 1.0
        lo, hi = float(values.min()), float(values.max())
        room = 0.05 * ((hi - lo) or 1.0)
        return lo - room, hi + room

    def _place_labels(self, points: list[QPointF], plot: QRectF, fm: QFontMetricsF) -> list[tuple[QRectF, str, int]]:
        """Each named point's label beside it (right, left, above or below), inside the plot and
        over no label placed before it; one with no such place is left out."""
        placed: list[tuple[QRectF, str, int]] = []
        gap = DOT * self.scale + 2
        for index, text in self.named.items():
            p = points[index]
            w, h = fm.horizontalAdvance(text) + 2, fm.height()
            for rect in (QRectF(p.x() + gap, p.y() - h / 2, w, h), QRectF(p.x() - gap - w, p.y() - h / 2, w, h),
                         QRectF(p.x() - w / 2, p.y() - gap - h, w, h), QRectF(p.x() - w / 2, p.y() + gap, w, h)):
                if plot.contains(rect) and not any(rect.intersects(r) for r, _, _ in placed):
                    placed.append((rect, text, index))
                    break
        return placed

    # --- what tests and clicks read ----------------------------------------------------------
    def point_position(self, index: int) -> QPointF:
        return QPointF(self.layout_now()["points"][index])

    def labelled(self) -> list[str]:
        """The labels drawn, in the order they were placed."""
        return [text for _, text, _ in self.layout_now()["labels"]]

    def point_at(self, pos: QPointF) -> int | None:
        points = self.layout_now()["points"]
        if not points:
            return None
        xy = np.array([[p.x(), p.y()] for p in points])
        distance = np.hypot(xy[:, 0] - pos.x(), xy[:, 1] - pos.y())
        best = int(np.argmin(distance))
        return best if distance[best] <= PICK * self.scale else None

    def mouseReleaseEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton and (index := self.point_at(event.position())) is not None:
            self.pointClicked.emit(index)
        super().mouseReleaseEvent(event)

    # --- painting ----------------------------------------------------------------------------
    def paintEvent(self, _event) -> None:
        layout = self.layout_now()
        plot: QRectF = layout["plot"]
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), QColor("white"))
        ink = QColor("black")
        painter.setPen(ink)
        painter.setFont(self.title_font)
        painter.drawText(QRectF(0, 0, self.width(), plot.top()), Qt.AlignmentFlag.AlignCenter, layout["title"])
        if not layout["points"]:
            painter.end()
            return
        painter.setFont(self.font_)
        line_h = layout["line_h"]
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        painter.drawLine(plot.bottomLeft(), plot.topLeft())
        for x, text in layout["x_ticks"]:
            painter.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + TICK))
            painter.drawText(QRectF(x - 40, plot.bottom() + TICK, 80, line_h), Qt.AlignmentFlag.AlignCenter, text)
        for y, text in layout["y_ticks"]:
            painter.drawLine(QPointF(plot.left() - TICK, y), QPointF(plot.left(), y))
            painter.drawText(QRectF(0, y - line_h / 2, plot.left() - TICK - 2, line_h),
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, text)
        painter.drawText(QRectF(plot.left(), plot.bottom() + TICK + line_h, plot.width(), line_h),
                         Qt.AlignmentFlag.AlignCenter, self.x_name)
        painter.save()
        painter.translate(0, plot.center().y())
        painter.rotate(-90)
        painter.drawText(QRectF(-plot.height() / 2, 0, plot.height(), line_h), Qt.AlignmentFlag.AlignCenter, self.y_name)
        painter.restore()
        if layout["line"] is not None:
            painter.setPen(QPen(LINE_COLOR, 1.5 * self.scale, Qt.PenStyle.DashLine))
            painter.drawLine(*layout["line"])
        radius = DOT * self.scale
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(POINT_COLOR)
        for p in layout["points"]:
            painter.drawEllipse(p, radius, radius)
        painter.setBrush(NAMED_COLOR)
        for index in self.named:
            painter.drawEllipse(layout["points"][index], radius * 1.3, radius * 1.3)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(NAMED_COLOR)
        for rect, text, _ in layout["labels"]:
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        if self.chosen is not None and self.chosen < len(layout["points"]):
            painter.setPen(QPen(ink, 2 * self.scale))
            ring = RING * self.scale
            painter.drawEllipse(layout["points"][self.chosen], ring, ring)
        painter.end()
