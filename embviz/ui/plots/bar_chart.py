"""A horizontal bar chart with a label per row, one bar per row (or a group of named
bars and their legend), drawn with one QPainter; clicking a bar reports its row.

Drawn by hand, not by pyqtgraph: the logits and lens charts are redrawn many times a
second while a text is typed, and pyqtgraph's axis and text items measured every label
again on each repaint (5–12 ms a paint, twice a frame). Here a layout is worked out
once per change of bars, size or font, and a paint is a few fills and texts."""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QHelpEvent, QPainter
from PySide6.QtWidgets import QToolTip, QWidget

from embviz.ui import style
from embviz.ui.formatting import visible_token

MIN_HEIGHT = 240  # pixels at 100 % text
BAR_HEIGHT = 0.7  # of a row's height
GROUP_HEIGHT = 0.8  # a row's group of bars, of its height
TICK = 5  # pixels
LABEL_SHARE = 0.4  # the labels take at most this much of the width; longer ones are elided
SWATCH = 14  # a legend entry's colour square, pixels at 100 % text
TEXT_GAP = 4  # pixels between a bar's end and its value's text
ROW_GAP = 0.15  # of a label's line height, between two rows' labels: they never touch
SMALLEST_POINTS = 6.0  # a label or value shrinks to fit its row or bar, not below this


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


def full_height(font: QFont) -> float:
    """A line of `font` from its highest ascender to its lowest descender (␣ and g hang below)."""
    metrics = QFontMetricsF(font)
    return metrics.ascent() + metrics.descent()


def shrunk_to(font: QFont, height: float) -> QFont:
    """`font`, made smaller where its lines (descenders included) would be taller than `height`,
    so that rows and a group's bars keep their texts apart; never below SMALLEST_POINTS."""
    full = full_height(font)
    if full <= height or height <= 0:
        return font
    smaller = QFont(font)
    smaller.setPointSizeF(max(font.pointSizeF() * height / full, SMALLEST_POINTS))
    return smaller


def inside_ink(color: QColor) -> QColor:
    """A text inside a bar of `color`: whichever of black and white contrasts more with it."""
    return QColor("black") if luminance(color) > 0.18 else QColor("white")


def tick_text(value: float, suffix: str) -> str:
    return f"{value:g}{suffix}" if value else f"0{suffix}"


class BarChart(QWidget):
    barClicked = Signal(int)

    def __init__(self, title: str, color: QColor, parent=None, suffix: str = "", axis_name: str = "",
                 point_size: float = style.LABEL_POINT_SIZE, label_share: float = LABEL_SHARE,
                 min_height: int = MIN_HEIGHT, axis_max: float | None = None) -> None:
        super().__init__(parent)
        self.color = QColor(color)
        self.title = title
        self.suffix = suffix  # after each tick's number ("%" on a probability axis)
        self.axis_name = axis_name  # under the ticks
        self.axis_max = axis_max  # the most a value can be (100 for a probability): the axis ends there or before
        self.point_size, self.label_share, self.min_height = point_size, label_share, min_height
        self.count = 0
        self.scale = 1.0  # the text size, for the least height
        self.labels: list[str] = []  # each row's label, as shown
        self.texts: list[str] = []  # each bar's value, as shown (one bar a row)
        self.print_values = False  # a group's bars carry their values too (one bar a row always does)
        self.series: list[tuple[str, QColor, list[float]]] = []  # (name, colour, a value per row)
        self._held: tuple[float, float] | None = None
        self.tick_font = QFont()
        self.value_font = QFont()
        self.title_font = QFont()
        self._layout: dict | None = None  # worked out when first needed after a change
        self._pressed: int | None = None
        self.swatch = SWATCH
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)  # every pixel is painted: Qt need not clear first
        style.follow_scale(self)

    def sizeHint(self) -> QSize:
        # The minimum: the logits tab's scroll area sizes its content from hints, and asks to
        # scroll only when the minimum does not fit.
        return QSize(320, self.minimumHeight())

    def set_title(self, title: str) -> None:
        self.title = title
        self._changed()

    def set_print_values(self, on: bool) -> None:
        """Print every bar's value beside it: a group's bars too, for a class that cannot hover."""
        self.print_values = on
        self._changed()

    def value_text(self, value: float) -> str:
        return f"{value:.1f}{self.suffix}"

    def hover_text(self, row: int) -> str:
        """Row `row`'s label and its value, or each of its group's named values, one a line."""
        if len(self.series) == 1 and row < len(self.texts):
            return f"{self.labels[row]}: {self.texts[row]}"
        return "\n".join([self.labels[row]] + [f"{name}: {self.value_text(values[row])}"
                                               for name, _, values in self.series])

    def set_text_scale(self, scale: float) -> None:
        self.scale = scale
        self.tick_font = style.font(self.point_size)
        self.value_font = style.font(self.point_size - 1)
        self.title_font = style.font(self.point_size)
        self.swatch = round(SWATCH * scale)
        self._changed()

    def _ask_height(self) -> None:
        """Ten bars stay readable, and every row holds its label whole, descenders and all (a
        short window scrolls the tab, or the pane, instead)."""
        _, title_h, axis_h, legend_h = self._chrome()
        rows = self.count * full_height(self.tick_font) * (1 + ROW_GAP)
        self.setMinimumHeight(math.ceil(max(self.min_height * self.scale, title_h + axis_h + legend_h + rows)))

    def _chrome(self) -> tuple[float, float, float, float]:
        """The padding, and the heights of the title, the axis with its name and the legend."""
        ticks_fm, title_fm = QFontMetricsF(self.tick_font), QFontMetricsF(self.title_font)
        pad = ticks_fm.height() / 3
        title_h = title_fm.height() + pad if self.title else pad
        axis_h = TICK + ticks_fm.height() + pad / 2 + (ticks_fm.height() if self.axis_name else 0.0)
        lines = len(self._legend_lines(ticks_fm, pad, float(self.width())))
        legend_h = lines * (max(ticks_fm.height(), self.swatch) + pad) if lines else 0.0
        return pad, title_h, axis_h, legend_h

    def _legend_lines(self, ticks_fm: QFontMetricsF, pad: float, width: float) -> list[list[tuple[str, QColor, float]]]:
        """The named series' (name, colour, entry width), in lines that fit the width: a narrow
        chart at a large text size wraps its legend rather than cutting the last name off."""
        lines: list[list[tuple[str, QColor, float]]] = []
        used = 0.0
        for name, color, _ in self.series:
            if not name:
                continue
            room = max(width - self.swatch - pad / 2, 1.0)
            name = ticks_fm.elidedText(name, Qt.TextElideMode.ElideRight, room)
            w = self.swatch + pad / 2 + ticks_fm.horizontalAdvance(name)
            if lines and used + 2 * pad + w <= width:
                lines[-1].append((name, color, w))
                used += 2 * pad + w
            else:
                lines.append([(name, color, w)])
                used = w
        return lines

    def set_bars(self, labels: list[str], values: list[float], texts: list[str],
                 x_range: tuple[float, float] | None = None) -> None:
        """A bar a row from zero (logits can be negative), each with its value's text (tokens
        as labels: invisible ones by code point); `x_range` holds the axis (probabilities at
        0–100 to compare temperatures)."""
        self._set([visible_token(label) for label in labels], [("", self.color, [float(v) for v in values])],
                  list(texts), x_range)

    def set_groups(self, labels: list[str], series: list[tuple[str, QColor, list[float]]],
                   x_range: tuple[float, float] | None = None, texts: list[list[str]] | None = None) -> None:
        """A group of bars a row, one of each named series (a legend names their colours);
        `texts`, a list a series, printed beside the bars instead of their values."""
        self._set(list(labels), [(name, QColor(color), [float(v) for v in values]) for name, color, values in series],
                  [t for ts in texts for t in ts] if texts else [], x_range)

    def _set(self, labels: list[str], series: list, texts: list[str], x_range) -> None:
        self.count = len(labels)
        self.labels, self.series, self.texts, self._held = labels, series, texts, x_range
        self._changed()

    def clear_bars(self) -> None:
        """No bars (a new model, before its first answer)."""
        self.set_bars([], [], [])

    def _changed(self) -> None:
        self._layout = None
        self._ask_height()
        self.update()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._layout = None
        if event.size().width() != event.oldSize().width():
            self._ask_height()  # the legend may wrap onto another line

    # --- layout -------------------------------------------------------------------------------
    def layout_now(self) -> dict:
        """Where everything goes at the present size: the plot's rectangle, the x range, the
        ticks, each bar's and value text's rectangle and the legend's entries (widget pixels)."""
        if self._layout is None:
            self._layout = self._work_out()
        return self._layout

    def _work_out(self) -> dict:
        ticks_fm, title_fm = QFontMetricsF(self.tick_font), QFontMetricsF(self.title_font)
        width, height = float(self.width()), float(self.height())
        pad, title_h, axis_h, legend_h = self._chrome()
        plot_h = max(height - title_h - axis_h - legend_h, 1.0)
        pitch = plot_h / max(self.count, 1)
        # Each label whole in its row with a gap to the next: smaller where the rows are too short.
        label_font = shrunk_to(self.tick_font, pitch / (1 + ROW_GAP))
        labels_fm = QFontMetricsF(label_font)
        label_w = min(max((labels_fm.horizontalAdvance(s) for s in self.labels), default=0.0) + 2 * pad,
                      self.label_share * width)
        plot = QRectF(label_w + TICK, title_h, max(width - label_w - TICK - 2 * pad, 1.0), plot_h)
        group = (BAR_HEIGHT if len(self.series) == 1 else GROUP_HEIGHT) * pitch
        each = group / max(len(self.series), 1)
        printed = self._printed()  # (series, row, text) of every value drawn
        value_font = shrunk_to(self.value_font, each if len(self.series) > 1 else pitch)
        values_fm = QFontMetricsF(value_font)
        text_w = [values_fm.horizontalAdvance(text) for _, _, text in printed]
        x_range = self._held or self._fit_range(max(text_w, default=0.0), plot.width())
        capped = self._held is not None or (self.axis_max is not None and x_range[1] >= self.axis_max)
        if capped and self.axis_max is not None:
            x_range = (x_range[0], min(x_range[1], self.axis_max))
        lo, hi = x_range
        per_unit = plot.width() / ((hi - lo) or 1.0)

        def x_of(v: float) -> float:
            return plot.left() + (v - lo) * per_unit

        drawn = []  # (rect, colour) of every bar
        for s, (_, color, values) in enumerate(self.series):
            for i, v in enumerate(values):
                x0, x1 = sorted((x_of(0.0), x_of(v)))
                top = plot.top() + (i + 0.5) * pitch - group / 2 + s * each
                drawn.append((QRectF(x0, top, x1 - x0, each), color))
        bars = [rect for rect, _ in drawn[:self.count]]  # the first series': what a click is beside
        texts = []  # (rect, text, its ink, row) of every printed value
        line_h = values_fm.ascent() + values_fm.descent()  # the whole glyphs, descenders too
        for (s, i, text), w in zip(printed, text_w):
            v, (bar, color) = self.series[s][2][i], drawn[s * self.count + i]
            room = plot.right() - bar.right() if v >= 0 else bar.left() - plot.left()
            # On a held or capped axis a text that would run past its end goes inside its bar (the axis stops at 100 %).
            inner = capped and room < w + TEXT_GAP
            if (v >= 0) != inner:
                left = bar.right() + TEXT_GAP if v >= 0 else bar.left() + TEXT_GAP
            else:
                left = (bar.left() if v < 0 else bar.right()) - TEXT_GAP - w
            texts.append((QRectF(left, bar.center().y() - line_h / 2, w, line_h), text, inside_ink(color) if inner
                          else QColor("black"), i))
        widest = max(ticks_fm.horizontalAdvance(tick_text(round(v, 1), self.suffix)) for v in (lo, hi))
        most = max(2, int(plot.width() // (2 * widest)))  # a label's width of room between two
        ticks = []  # (x, its label's rectangle, the label), the label kept inside the widget
        for value in nice_ticks(lo, hi, most):
            x, text = x_of(value), tick_text(value, self.suffix)
            w = ticks_fm.horizontalAdvance(text)
            ticks.append((x, QRectF(min(max(x - w / 2, 0.0), width - w), plot.bottom() + TICK, w + 1,
                                    ticks_fm.height()), text))
        legend = []  # (swatch, text rect, name, colour), each line centred under the axis
        row_h = max(ticks_fm.height(), self.swatch) + pad
        y = height - legend_h + pad / 2
        for line in self._legend_lines(ticks_fm, pad, width):
            x = max((width - sum(w for _, _, w in line) - 2 * pad * (len(line) - 1)) / 2, 0.0)
            for name, color, w in line:
                swatch = QRectF(x, y + (ticks_fm.height() - self.swatch) / 2, self.swatch, self.swatch)
                legend.append((swatch, QRectF(x + self.swatch + pad / 2, y, w - self.swatch - pad / 2 + 1,
                                              ticks_fm.height()), name, color))
                x += w + 2 * pad
            y += row_h
        # Elided here, once per change, not at every paint.
        labels = [labels_fm.elidedText(label, Qt.TextElideMode.ElideRight, max(label_w - pad, 0.0)) for label in self.labels]
        label_h = full_height(label_font)
        label_rects = [QRectF(0.0, plot.top() + (i + 0.5) * pitch - label_h / 2, label_w, label_h)
                       for i in range(self.count)]
        title = title_fm.elidedText(self.title, Qt.TextElideMode.ElideRight, width)
        return {"plot": plot, "x_range": x_range, "pitch": pitch, "bars": bars, "drawn": drawn, "texts": texts,
                "value_font": value_font, "ticks": ticks, "label_w": label_w, "labels": labels,
                "label_font": label_font, "label_rects": label_rects, "title": title,
                "title_h": title_h, "tick_h": ticks_fm.height(), "legend": legend}

    def _printed(self) -> list[tuple[int, int, str]]:
        if len(self.series) == 1:
            return [(0, i, text) for i, text in enumerate(self.texts)]
        if self.texts:  # a group's own texts (a dropped token's "dropped")
            return [(s, i, self.texts[s * self.count + i]) for s in range(len(self.series)) for i in range(self.count)]
        if not self.print_values:
            return []
        return [(s, i, self.value_text(v)) for s, (_, _, values) in enumerate(self.series) for i, v in enumerate(values)]

    def _fit_range(self, widest_text: float, plot_width: float) -> tuple[float, float]:
        """The bars, with room beyond the longest for its value's text (measured in pixels:
        at a large text size the texts take more of the plot)."""
        values = [v for _, _, series in self.series for v in series]
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
        """Where row `row`'s (first) value text is drawn."""
        return QRectF(next(rect for rect, _, _, r in self.layout_now()["texts"] if r == row))

    def label_rect(self, row: int) -> QRectF:
        """Where row `row`'s label is drawn: a line of its font, descenders included."""
        return QRectF(self.layout_now()["label_rects"][row])

    def printed_texts(self) -> list[tuple[QRectF, str]]:
        """Every value drawn on the chart, with its rectangle."""
        return [(QRectF(rect), text) for rect, text, _, _ in self.layout_now()["texts"]]

    def point_at(self, value: float, row: float) -> QPointF:
        """The widget point of `value` on the x axis, at row `row`'s middle."""
        layout = self.layout_now()
        plot, (lo, hi) = layout["plot"], layout["x_range"]
        return QPointF(plot.left() + (value - lo) * plot.width() / ((hi - lo) or 1.0),
                       plot.top() + (row + 0.5) * layout["pitch"])

    def row_at(self, pos: QPointF) -> int | None:
        """The row whose bar, value text or label is at `pos`; None for the empty plot beside
        a short bar, where a click should not append a token."""
        if not self.count:
            return None
        layout = self.layout_now()
        plot = layout["plot"]
        if not plot.top() <= pos.y() < plot.bottom():
            return None
        row = min(int((pos.y() - plot.top()) / layout["pitch"]), self.count - 1)
        if pos.x() < plot.left():
            return row  # its label
        on_text = any(r == row and rect.contains(pos) for rect, _, _, r in layout["texts"])
        on_bar = any(rect.contains(pos) for rect, _ in layout["drawn"][row::self.count])
        return row if on_bar or on_text else None

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            # Every bar's value on hover, a group's too: a thin bar's printed value may not be there.
            row = self.row_at(QPointF(event.pos()))
            if row is None:
                QToolTip.hideText()
                event.ignore()
            else:
                QToolTip.showText(event.globalPos(), self.hover_text(row), self)
            return True
        return super().event(event)

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
                             layout["title"])
        if not self.count:  # no empty axes before the first bars
            painter.end()
            return
        # The axes: the left one at the plot's edge, the bottom one with its ticks and name.
        painter.drawLine(QPointF(plot.left(), plot.top()), QPointF(plot.left(), plot.bottom()))
        painter.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))
        painter.setFont(self.tick_font)
        for x, rect, text in layout["ticks"]:
            painter.drawLine(QPointF(x, plot.bottom()), QPointF(x, plot.bottom() + TICK))
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
        if self.axis_name:
            line = layout["tick_h"]
            painter.drawText(QRectF(plot.left(), plot.bottom() + TICK + line, plot.width(), line),
                             Qt.AlignmentFlag.AlignCenter, self.axis_name)
        painter.setFont(layout["label_font"])
        for rect, label in zip(layout["label_rects"], layout["labels"]):
            painter.drawText(rect, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, label)
        painter.setFont(self.tick_font)
        for rect, color in layout["drawn"]:
            painter.fillRect(rect, color)
        for swatch, text_rect, name, color in layout["legend"]:
            painter.fillRect(swatch, color)
            painter.drawText(text_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, name)
        painter.setFont(layout["value_font"])
        for rect, text, text_ink, _ in layout["texts"]:
            painter.setPen(text_ink)
            painter.drawText(rect.adjusted(0, 0, 1, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
        painter.end()
