"""A small, still chart: white, black axes, no menu, no mouse pan or zoom, a least height
that grows with the text, its tick labels at the window's text size."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QSize

from embviz.ui import style


class StillPlot(pg.PlotWidget):
    MIN_HEIGHT = 120  # pixels at 100 % text; subclasses set their own

    def __init__(self, parent=None, *, min_height: int | None = None, grid: bool = False) -> None:
        super().__init__(parent, background=style.BACKGROUND, enableMenu=False)  # built without the menu it would drop
        if min_height is not None:
            self.MIN_HEIGHT = min_height
        self.item = self.getPlotItem()
        self.item.setMenuEnabled(False)
        self.item.setMouseEnabled(x=False, y=False)
        self.item.hideButtons()
        if grid:
            self.item.showGrid(x=True, y=True, alpha=0.25)
        for name in ("left", "bottom"):
            self.item.getAxis(name).setTextPen("k")
            self.item.getAxis(name).setPen("k")

    def sizeHint(self) -> QSize:
        return QSize(320, self.minimumHeight())

    def set_text_scale(self, scale: float) -> None:
        self.setMinimumHeight(round(self.MIN_HEIGHT * scale))
        for name in ("left", "bottom"):
            self.item.getAxis(name).setTickFont(style.font(style.BASE_POINT_SIZE))
            self.item.getAxis(name).label.setFont(style.font(style.BASE_POINT_SIZE))
        self.item.getAxis("bottom").setHeight(None)
        self.item.getAxis("left").setWidth(None)
