"""A horizontal bar chart (pyqtgraph) with token labels; clicking a bar reports its row."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QSize, Qt, Signal

from embviz.ui.formatting import visible_token
from embviz.ui import style

MIN_HEIGHT = 240  # pixels at 100 % text


class BarChart(pg.PlotWidget):
    barClicked = Signal(int)

    def __init__(self, title: str, color, parent=None) -> None:
        super().__init__(parent, background="w", enableMenu=False)  # built without the menu it would drop
        self.color = color
        self.title = title
        self.item = self.getPlotItem()
        self.item.setMenuEnabled(False)
        self.item.setMouseEnabled(x=False, y=False)
        self.item.hideButtons()
        self.item.invertY(True)
        for name in ("left", "bottom"):
            axis = self.item.getAxis(name)
            axis.setTextPen("k")
            axis.setPen("k")
        self.bars: pg.BarGraphItem | None = None
        self.texts: list[pg.TextItem] = []
        self.count = 0
        self._range: tuple[float, float] = (0.0, 1.0)
        self._values: list[float] = []
        self._held: tuple[float, float] | None = None
        self.scene().sigMouseClicked.connect(self._clicked)
        style.follow_scale(self)

    def sizeHint(self) -> QSize:
        # The minimum, not pyqtgraph's 640×480: the logits tab's scroll area sizes its
        # content from hints, and asks to scroll only when the minimum does not fit.
        return QSize(320, self.minimumHeight())

    def set_title(self, title: str) -> None:
        self.title = title
        self.item.setTitle(title, size=f"{style.pt(style.LABEL_POINT_SIZE)}pt", color="k")

    def set_text_scale(self, scale: float) -> None:
        # Ten bars and their labels stay readable; a short window scrolls the tab instead.
        self.setMinimumHeight(round(MIN_HEIGHT * scale))
        self.set_title(self.title)
        for name in ("left", "bottom"):
            self.item.getAxis(name).setTickFont(style.font(style.LABEL_POINT_SIZE))
        self.item.getAxis("bottom").setHeight(None)
        self.item.getAxis("left").setWidth(None)

    def set_bars(self, labels: list[str], values: list[float], texts: list[str],
                 x_range: tuple[float, float] | None = None) -> None:
        """Bars from zero (logits can be negative), each with its value's text; `x_range`
        holds the axis (probabilities at 0–1 to compare temperatures)."""
        self.count = len(values)
        ys = list(range(len(values)))
        x0 = [min(0.0, v) for v in values]
        widths = [abs(v) for v in values]
        if self.bars is None:
            self.bars = pg.BarGraphItem(x0=x0, y=ys, height=0.7, width=widths, brush=self.color, pen=None)
            self.addItem(self.bars)
        else:
            self.bars.setOpts(x0=x0, y=ys, height=0.7, width=widths)
        # Value labels are reused, not recreated: typing updates these bars many times a second.
        while len(self.texts) < len(values):
            text = pg.TextItem("", color="k")
            style.use_font(text, style.LABEL_POINT_SIZE - 1)
            self.addItem(text)
            self.texts.append(text)
        for i, text in enumerate(self.texts):
            if i < len(values):
                text.setText(texts[i])
                text.show()
            else:
                text.hide()
        self.item.getAxis("left").setTicks([[(y, visible_token(label)) for y, label in zip(ys, labels)]])
        self._values, self._held = list(values), x_range
        self._fit_range()
        self.item.setYRange(-0.6, max(len(values), 1) - 0.4, padding=0)

    def _fit_range(self) -> None:
        """The held range, or the bars with room on the right for the widest value text
        (measured in pixels: at a large text size the texts take more of the plot)."""
        x_range = self._held
        if x_range is None:
            values = self._values
            lo, hi = min([0.0] + values), max([0.0] + values)
            span = (hi - lo) or 1.0
            widths = [t.boundingRect().width() for t in self.texts if t.isVisible()]
            plot = self.item.vb.width() or 0.7 * self.width()
            share = min((max(widths, default=0.0) + 12) / plot, 0.6) if plot > 0 else 0.3
            x_range = (lo - 0.02 * span, hi + span * max(share / (1 - share), 0.05))
        self._range = x_range
        self.item.setXRange(*x_range, padding=0)
        self._place_texts()

    def _place_texts(self) -> None:
        """Each value's text past its bar's end; on a held axis, a text that would run
        past the axis's end goes inside its bar instead (the axis stops at 100 %)."""
        lo, hi = self._range
        plot = self.item.vb.width() or 0.7 * self.width()
        per_unit = plot / ((hi - lo) or 1.0)
        for i, (v, text) in enumerate(zip(self._values, self.texts)):
            room = (hi - v if v >= 0 else v - lo) * per_unit
            outside = self._held is None or room >= text.boundingRect().width() + 4
            if v >= 0:
                text.setAnchor((0, 0.5) if outside else (1, 0.5))
            else:
                text.setAnchor((1, 0.5) if outside else (0, 0.5))
            text.setPos(v, i)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if getattr(self, "count", 0):  # pyqtgraph resizes it before __init__ has set count
            self._fit_range()

    def clear_bars(self) -> None:
        """No bars (a new model, before its first answer)."""
        self.count = 0
        if self.bars is not None:
            self.removeItem(self.bars)
            self.bars = None
        for text in self.texts:
            text.hide()
        self.item.getAxis("left").setTicks([[]])

    def _clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton or not self.count:
            return
        row = self.row_at(event.scenePos())
        if row is not None:
            self.barClicked.emit(row)

    def row_at(self, scene_pos: QPointF) -> int | None:
        """The row whose bar, value text or token label is at `scene_pos`; None for the
        empty plot beside a short bar, where a click should not append a token."""
        pos = self.item.vb.mapSceneToView(scene_pos)
        row = int(round(pos.y()))
        if not 0 <= row < self.count:
            return None
        if self.item.getAxis("left").sceneBoundingRect().contains(scene_pos):
            return row
        if not self.item.vb.sceneBoundingRect().contains(scene_pos):
            return None
        v = self._values[row]
        on_bar = min(0.0, v) <= pos.x() <= max(0.0, v) and abs(pos.y() - row) <= 0.35  # the bars are 0.7 high
        return row if on_bar or self.texts[row].sceneBoundingRect().contains(scene_pos) else None
