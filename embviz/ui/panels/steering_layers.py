"""The Steering tab's second page: how far the residual stream at one position already points
along unit(from → to), layer by layer, the cosine drawn over the layers' names; the layer the
first page steers after is marked, so the two pages read as one story."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QVBoxLayout, QWidget

from embviz.core.lm.results import DirectionLayersResult
from embviz.ui import style
from embviz.ui.plots.still_plot import StillPlot
from embviz.ui.widgets import WrappedLabel

CURVE_COLOR = style.SET_COLORS[6]
MARK_COLOR = style.BAR_PROB
CURVE_MIN_HEIGHT = 130  # pixels at 100 % text: at 1024 × 700 and 200 % the axis names stay above the fold
TICK_ROOM = 9  # characters a layer's name takes under the axis ("embedding")


def layer_ticks(names: list[str], width: int, char_width: float) -> list[tuple[int, str]]:
    """The layers' names under the axis, every n-th so that they never overlap; the first and
    last always named (the embedding and the last block are what a class looks for)."""
    if not names:
        return []
    room = max(int(width // max(char_width * (TICK_ROOM + 2), 1.0)), 2)
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 1_000_000) if len(names) / s <= room)
    shown = set(range(0, len(names), step)) | {0, len(names) - 1}
    last, before_last = len(names) - 1, (len(names) - 1) // step * step
    if step > 1 and before_last != last and last - before_last < step / 2:
        shown.discard(before_last)  # the last name needs its room
    return [(i, "emb" if names[i] == "embedding" and width < 500 else names[i]) for i in sorted(shown)]


class DirectionLayersView(QWidget):
    """The cosine of the residual at one position with the direction, per layer, and what it means."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.result: DirectionLayersResult | None = None
        self.marked: int | None = None  # the layer steered after, marked with a vertical line
        self.heading = WrappedLabel("")
        style.use_font(self.heading, style.LABEL_POINT_SIZE, bold=True)
        self.plot = StillPlot(min_height=CURVE_MIN_HEIGHT, grid=True)
        self.plot.item.setLabel("left", "cosine")
        self.plot.item.getAxis("left").enableAutoSIPrefix(False)  # cosines as they are, not "× 0.01"
        self.caption = WrappedLabel(
            "Each point: the residual stream after that layer, at the text's last token, against unit(from → to). "
            "Above 0 it leans toward “to”, below toward “from”. The orange line is the layer the first page steers after.")
        self.caption.setToolTip(
            "The projection r · g is the cosine times |r|; the stream grows longer layer by layer (its norm is in "
            "File ▸ Export table), so the cosine is what compares across layers. A few per cent is already a lean: "
            "two random directions in 576 dimensions have a cosine of about ±0.04.")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addWidget(self.heading)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.caption)

    def set_text_scale(self, scale: float) -> None:
        self.plot.set_text_scale(scale)
        self.draw()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._ticks()

    def show_result(self, result: DirectionLayersResult, marked: int | None) -> None:
        self.result, self.marked = result, marked
        self.draw()

    def mark(self, layer: int) -> None:
        self.marked = layer
        self.draw()

    def clear(self) -> None:
        self.result = None
        self.plot.getPlotItem().clear()
        self.heading.setText("")

    def points(self) -> list[tuple[int, float]]:
        """The curve as drawn: (layer, cosine), one a layer."""
        curve = self.curve
        if self.result is None or curve is None:
            return []
        xs, ys = curve.getData()
        return [(int(x), float(y)) for x, y in zip(xs, ys)]

    curve: pg.PlotDataItem | None = None

    def draw(self) -> None:
        result = self.result
        item = self.plot.getPlotItem()
        item.clear()
        self.curve = None
        if result is None:
            return
        cosines = result.cosines
        layers = list(range(len(cosines)))
        width = max(2, round(3 * style.text_scale()))
        item.addLine(y=0, pen=pg.mkPen("#888888", width=1))
        if self.marked is not None and 0 <= self.marked < len(layers):
            item.addLine(x=self.marked, pen=pg.mkPen(MARK_COLOR, width=width, style=Qt.PenStyle.DashLine))
        self.curve = item.plot(layers, cosines, pen=pg.mkPen(CURVE_COLOR, width=width), symbol="o",
                               symbolSize=max(6, round(7 * style.text_scale())), symbolBrush=CURVE_COLOR)
        low, high = min(cosines + [0.0]), max(cosines + [0.0])
        span = (high - low) or 0.1
        item.setYRange(low - 0.08 * span, high + 0.08 * span, padding=0)
        token = result.tokens[result.position][1] if result.tokens else ""
        # One line at 200 % on 1024 pixels: the plot needs the height.
        self.heading.setText(f"{result.direction} at “{token}”, layer by layer")
        self._ticks()

    def _ticks(self) -> None:
        if self.result is None:
            return
        item = self.plot.getPlotItem()
        char = QFontMetricsF(style.font(style.BASE_POINT_SIZE)).averageCharWidth()
        ticks = layer_ticks(self.result.layer_names, self.plot.width(), char)
        item.getAxis("bottom").setTicks([ticks])
        # Room left of layer 0 for half its name: pyqtgraph drops a tick label that would cross the axis's end.
        last = len(self.result.layer_names) - 1
        per_layer = max(item.vb.width() or self.plot.width() * 0.9, 1) / (last + 3)
        def room(name: str) -> float:
            return min(len(name) * char * 0.6 / per_layer + 0.3, 5.0)

        left, right = (room(ticks[0][1]), room(ticks[-1][1])) if ticks else (0.5, 0.5)
        item.setXRange(-left, last + right, padding=0)
