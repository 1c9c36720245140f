"""A horizontal bar chart (pyqtgraph) with token labels; clicking a bar reports its row."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal

from embviz.ui import style


class BarChart(pg.PlotWidget):
    barClicked = Signal(int)

    def __init__(self, title: str, color, parent=None) -> None:
        super().__init__(parent, background="w")
        self.color = color
        self.item = self.getPlotItem()
        self.item.setMenuEnabled(False)
        self.item.setMouseEnabled(x=False, y=False)
        self.item.hideButtons()
        self.item.setTitle(title, size=f"{style.LABEL_POINT_SIZE}pt", color="k")
        self.item.invertY(True)
        for name in ("left", "bottom"):
            axis = self.item.getAxis(name)
            axis.setTickFont(style.font(style.LABEL_POINT_SIZE))
            axis.setTextPen("k")
            axis.setPen("k")
        self.bars: pg.BarGraphItem | None = None
        self.texts: list[pg.TextItem] = []
        self.count = 0
        self.scene().sigMouseClicked.connect(self._clicked)

    def set_bars(self, labels: list[str], values: list[float], value_format: str = "{:.2f}") -> None:
        self.count = len(values)
        ys = list(range(len(values)))
        lo = min([0.0] + values)
        hi = max([0.0] + values)
        # Logits can be negative: bars grow from zero either way.
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
            text.setFont(style.font(style.LABEL_POINT_SIZE - 1))
            self.addItem(text)
            self.texts.append(text)
        for i, text in enumerate(self.texts):
            if i < len(values):
                v = values[i]
                text.setText(value_format.format(v))
                text.setAnchor((0, 0.5) if v >= 0 else (1, 0.5))
                text.setPos(v, i)
                text.show()
            else:
                text.hide()
        self.item.getAxis("left").setTicks([[(y, label) for y, label in zip(ys, labels)]])
        span = (hi - lo) or 1.0
        self.item.setXRange(lo - 0.02 * span, hi + 0.25 * span, padding=0)
        self.item.setYRange(-0.6, max(len(values), 1) - 0.4, padding=0)

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
        pos = self.item.vb.mapSceneToView(event.scenePos())
        row = int(round(pos.y()))
        if 0 <= row < self.count and self.item.vb.sceneBoundingRect().contains(event.scenePos()):
            self.barClicked.emit(row)
        elif 0 <= row < self.count and self.item.getAxis("left").sceneBoundingRect().contains(event.scenePos()):
            self.barClicked.emit(row)
