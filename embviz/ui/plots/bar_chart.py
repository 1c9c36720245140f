"""A horizontal bar chart with token labels, drawn with one QPainter; clicking a bar
reports its row.

Drawn by hand, not by pyqtgraph: the logits and lens charts are redrawn many times a
second while a text is typed, and pyqtgraph's axis and text items measured every label
again on each repaint (5–12 ms a paint, twice a frame). Here a layout is worked out
once per change of bars, size or font, and a paint is a few fills and texts."""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import QWidget

from embviz.ui import style
from embviz.ui.formatting import visible_token

MIN_HEIGHT = 240  # pixels at 100 % text
BAR_HEIGHT = 0.7  # of a row's height
TICK = 5  # pixels
LABEL_SHARE = 0.4  # the token labels take at most this much of the width; longer ones are elided
TEXT_GAP = 4  # pixels between a bar's end and its value's text


def nice_ticks(lo: float, hi: float, most: int) -> list[float]:
    """Round values (1, 2 or 5 times a power of ten apart) from lo to hi: at most `most`,
    and at least two where a finer step gives them (0 and 50 rather than 0 alone)."""
    span = hi - lo
    if span <= 0 or most < 1:
        return []
    ticks: list[float] = []
    for asked in range(most, most + 3):
        raw = span / asked
        power = 10.0 ** math.floor(math.log10(raw))
        step = next((m * power for m in (1, 2, 5, 10) if m * power >= raw), 10 * power)
        first = math.ceil(lo / step - 1e-9)
        ticks = [round((first + i) * step, 12) for i in range(int(span / step + 1e-9) + 2)]
        ticks = [t for t in ticks if lo - 1e-9 * span <= t <= hi + 1e-9 * span]
        if len(ticks) >= 2:
            break
    return ticks


def luminance(color: QColor) -> float:
    """WCAG's relative luminance: 0 for black, 1 for white (black text reads better above 0.18)."""
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    return 0.2126 * linear(color.redF()) + 0.7152 * linear(color.greenF()) + 0.0722 * linear(color.blueF())


def tick_text(value: float, suffix: str) -> str:
    return f"{value:g}{suffix}" if value else f"0{suffix}"


class BarChart(QWidget):
    barClicked = Signal(int)

    def __init__(self, title: str, color: QColor, parent=None, suffix: str = "") -> None:
        super().__init__(parent)
        self.color = QColor(color)
        # A value's text inside a bar in whichever of black and white contrasts more with it.
        self.inside_ink = QColor("black") if luminance(self.color) > 0.18 else QColor("white")
        self.title = title
        self.suffix = suffix  # after each tick's number ("%" on a probability axis)
        self.count = 0
        self.labels: list[str] = []  # each bar's token, as shown
        self.texts: list[str] = []  # each bar's value, as shown
        self._values: list[float] = []
        self._held: tuple[float, float] | None = None
        self.tick_font = QFont()
        self.value_font = QFont()
        self.title_font = QFont()
        self._layout: dict | None = None  # worked out when first needed after a change
        self._pressed: int | None = None
        self.setAutoFillBackground(False)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)  # every pixel is painted: Qt need not clear first
        style.follow_scale(self)

    def sizeHint(self) -> QSize:
        # The minimum: the logits tab's scroll area sizes its content from hints, and asks to
        # scroll only when the minimum does not fit.
        return QSize(320, self.minimumHeight())

    def set_title(self, title: str) -> None:
        self.title = title
        self.update()

    def set_text_scale(self, scale: float) -> None:
        # Ten bars and their labels stay readable; a short window scrolls the tab instead.
        self.setMinimumHeight(round(MIN_HEIGHT * scale))
        self.tick_font = style.font(style.LABEL_POINT_SIZE)
        self.value_font = style.font(style.LABEL_POINT_SIZE - 1)
        self.title_font = style.font(style.LABEL_POINT_SIZE)
        self._changed()

    def set_bars(self, labels: list[str], values: list[float], texts: list[str],
                 x_range: tuple[float, float] | None = None) -> None:
        """Bars from zero (logits can be negative), each with its value's text; `x_range`
        holds the axis (probabilities at 0–100 to compare temperatures)."""
        self.count = len(values)
        self.labels = [visible_token(label) for label in labels]
        self.texts = list(texts)
        self._values = [float(v) for v in values]
        self._held = x_range
        self._changed()

    def clear_bars(self) -> None:
        """No bars (a new model, before its first answer)."""
        self.set_bars([], [], [])

    def _changed(self) -> None:
        self._layout = None
        self.update()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._layout = None

    # --- layout -------------------------------------------------------------------------------
    def layout_now(self) -> dict:
        """Where everything goes at the present size: the plot's rectangle, the x range, the
        ticks and each bar's and value text's rectangle (widget pixels)."""
        if self._layout is None:
            self._layout = self._work_out()
        return self._layout

    def _work_out(self) -> dict:
        ticks_fm, values_fm, title_fm = (QFontMetricsF(f) for f in (self.tick_font, self.value_font, self.title_font))
        pad = ticks_fm.height() / 3
        width, height = float(self.width()), float(self.height())
        title_h = title_fm.height() + pad if self.title else pad
        axis_h = TICK + ticks_fm.height() + pad / 2
        label_w = min(max((ticks_fm.horizontalAdvance(s) for s in self.labels), default=0.0) + 2 * pad,
                      LABEL_SHARE * width)
        plot = QRectF(label_w + TICK, title_h, max(width - label_w - TICK - 2 * pad, 1.0),
                      max(height - title_h - axis_h, 1.0))
        text_w = [values_fm.horizontalAdvance(t) for t in self.texts]
        x_range = self._held or self._fit_range(max(text_w, default=0.0), plot.width())
        lo, hi = x_range
        per_unit = plot.width() / ((hi - lo) or 1.0)

        def x_of(v: float) -> float:
            return plot.left() + (v - lo) * per_unit

        pitch = plot.height() / max(self.count, 1)
        bars, texts, inside = [], [], []
        for i, (v, w) in enumerate(zip(self._values, text_w)):
            middle = plot.top() + (i + 0.5) * pitch
            x0, x1 = sorted((x_of(0.0), x_of(v)))
            bars.append(QRectF(x0, middle - BAR_HEIGHT * pitch / 2, x1 - x0, BAR_HEIGHT * pitch))
            room = plot.right() - x1 if v >= 0 else x0 - plot.left()
            # On a held axis a text that would run past its end goes inside its bar (the axis stops at 100 %).
            inner = self._held is not None and room < w + TEXT_GAP
            if (v >= 0) != inner:
                left = x1 + TEXT_GAP if v >= 0 else x0 + TEXT_GAP
            else:
                left = (x0 if v < 0 else x1) - TEXT_GAP - w
            texts.append(QRectF(left, middle - values_fm.height() / 2, w, values_fm.height()))
            inside.append(inner)
        widest = max(ticks_fm.horizontalAdvance(tick_text(round(v, 1), self.suffix)) for v in (lo, hi))
        most = max(2, int(plot.width() // (2 * widest)))  # a label's width of room between two
        ticks = [(x_of(t), tick_text(t, self.suffix)) for t in nice_ticks(lo, hi, most)]
        return {"plot": plot, "x_range": x_range, "pitch": pitch, "bars": bars, "texts": texts,
                "inside": inside, "ticks": ticks, "label_w": label_w, "title_h": title_h}

    def _fit_range(self, widest_text: float, plot_width: float) -> tuple[float, float]:
        """The bars, with room beyond the longest for its value's text (measured in pixels:
        at a large text size the texts take more of the plot)."""
        values = self._values
        lo, hi = min([0.0] + values), max([0.0] + values)
        span = (hi - lo) or 1.0
        share = min((widest_text + 3 * TEXT_GAP) / plot_width, 0.6) if plot_width > 0 else 0.3
        room = span * max(share / (1 - share), 0.05)
        return (lo - (room if lo < 0 else 0.02 * span), hi + (room if hi > 0 or lo == 0 else 0.02 * span))

    # --- what tests and clicks read ----------------------------------------------------------
    @property
    def shown_range(self) -> tuple[float, float]:
        """The x axis's ends as drawn."""
        return self.layout_now()["x_range"]

    def plot_rect(self) -> QRectF:
        return QRectF(self.layout_now()["plot"])

    def text_rect(self, row: int) -> QRectF:
        return QRectF(self.layout_now()["texts"][row])

    def point_at(self, value: float, row: float) -> QPointF:
        """The widget point of `value` on the x axis, at row `row`'s middle."""
        layout = self.layout_now()
        plot, (lo, hi) = layout["plot"], layout["x_range"]
        return QPointF(plot.left() + (value - lo) * plot.width() / ((hi - lo) or 1.0),
                       plot.top() + (row + 0.5) * layout["pitch"])

    def row_at(self, pos: QPointF) -> int | None:
        """The row whose bar, value text or token label is at `pos`; None for the empty plot
        beside a short bar, where a click should not append a token."""
        if not self.count:
            return None
        layout = self.layout_now()
        plot = layout["plot"]
        if not plot.top() <= pos.y() < plot.bottom():
            return None
        row = min(int((pos.y() - plot.top()) / layout["pitch"]), self.count - 1)
        if pos.x() < plot.left():
            return row  # its token's label
        if layout["bars"][row].contains(pos) or layout["texts"][row].contains(pos):
            return row
        return None

    def mousePressEvent(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._pressed = self.row_at(event.position())
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        pressed, self._pressed = self._pressed, None
        if event.button() == Qt.MouseButton.LeftButton and pressed is not None \
                and self.row_at(event.position()) == pressed:
            self.barClicked.emit(pressed)
        super().mouseReleaseEvent(event)

    # --- painting ----------------------------------------------------------------------------
    def paintEvent(self, _event) -> None:
        layout = self.layout_now()
        plot: QRectF = layout["plot"]
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor("white"))
        ink = QColor("black")
        painter.setPen(ink)
        if self.title:
            painter.setFont(self.title_font)
            painter.drawText(QRectF(0, 0, self.width(), layout["title_h"]), Qt.AlignmentFlag.AlignCenter,
                             self._elided(self.title, self.width(), self.title_font))
        # The axes: the left one at the plot's edge, the bottom one with its ticks.
        painter.setPen(QPen(ink, 1))
        painter.drawLine(QPointF(plot.left(), plot.top()), QPointF(plot.left(), plot.bottom()))
        painter.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))
        painter.setFont(self.tick_font)
        metrics = QFontMetricsF(self.tick_font)
        for x, text in layout["ticks"]:
            painter.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + TICK))
            w = metrics.horizontalAdvance(text)
            left = min(max(x - w / 2, 0.0), self.width() - w)
            painter.drawText(QRectF(left, plot.bottom() + TICK, w + 1, metrics.height()),
                             Qt.AlignmentFlag.AlignCenter, text)
        pitch = layout["pitch"]
        label_w = layout["label_w"]
        for i, label in enumerate(self.labels):
            row = QRectF(0, plot.top() + i * pitch, label_w, pitch)
            painter.drawText(row, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             self._elided(label, label_w - metrics.height() / 3, self.tick_font))
        painter.setPen(Qt.PenStyle.NoPen)
        for bar in layout["bars"]:
            painter.fillRect(bar, self.color)
        painter.setFont(self.value_font)
        for text, rect, inner in zip(self.texts, layout["texts"], layout["inside"]):
            painter.setPen(self.inside_ink if inner else ink)
            painter.drawText(rect.adjusted(0, 0, 1, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
        painter.end()

    @staticmethod
    def _elided(text: str, width: float, font: QFont) -> str:
        return QFontMetricsF(font).elidedText(text, Qt.TextElideMode.ElideRight, max(width, 0.0))
