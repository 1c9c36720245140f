"""Grouped vertical bars (pyqtgraph): one group per block, a few bars side by side in each,
up or down from zero, with a key in the title naming each series."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFontMetrics

from embviz.ui import style
from embviz.ui.plots.still_plot import StillPlot
from embviz.ui.plots.titles import shrinkable_title

MIN_HEIGHT = 160  # pixels at 100 % text: the window on a 1024 × 700 screen at 150 % has room for little more
GROUP_WIDTH = 0.84  # of a group's slot: a gap between blocks keeps them apart


@dataclass(frozen=True)
class Series:
    name: str
    color: QColor
    values: Sequence[float | None]  # one per group; None: no bar in that group


class PartsChart(StillPlot):
    MIN_HEIGHT = MIN_HEIGHT

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        shrinkable_title(self.item)
        self.item.showGrid(y=True, alpha=0.25)
        self.bars: list[pg.BarGraphItem] = []
        self.series: list[Series] = []
        self.groups: list[str] = []
        self.title = ""
        self.item.addItem(pg.InfiniteLine(0, angle=0, pen=pg.mkPen("k", width=1)))
        style.follow_scale(self)

    def set_text_scale(self, scale: float) -> None:
        super().set_text_scale(scale)
        self.set_title(self.title)

    def set_title(self, title: str) -> None:
        """`title`, then the key: each series' name in its colour. In the title, not a legend
        box: a legend in the plot hid the bars under it at large text. Keep it short: a title
        wider than the chart widens the plot past its box, and the last bars are cut off."""
        self.title = title
        key = "   ".join(f'<span style="color:{s.color.name()}">■</span> {s.name}' for s in self.series)
        self.item.setTitle(f"{title}   {key}" if title else key, size=f"{style.pt(style.LABEL_POINT_SIZE)}pt",
                           color="k")

    def set_series(self, groups: list[str], series: list[Series]) -> None:
        """Bars of each series side by side within each group, in the series' order."""
        for bar in self.bars:
            self.item.removeItem(bar)
        self.bars, self.series, self.groups = [], list(series), list(groups)
        width = GROUP_WIDTH / max(1, len(series))
        for k, s in enumerate(series):
            shown = [(g, v) for g, v in enumerate(s.values) if v is not None]
            offset = -GROUP_WIDTH / 2 + width * (k + 0.5)
            bar = pg.BarGraphItem(x=[g + offset for g, _ in shown], height=[v for _, v in shown], width=width,
                                  brush=s.color, pen=None)
            self.item.addItem(bar)
            self.bars.append(bar)
        self._place_ticks()
        self.item.setXRange(-0.6, len(groups) - 0.4, padding=0)
        self.item.enableAutoRange(axis="y")
        self.set_title(self.title)

    def _place_ticks(self) -> None:
        """A block number every 1, 2, 5 or 10 blocks: the fewest steps whose labels do not touch."""
        metrics = QFontMetrics(style.font(style.BASE_POINT_SIZE))
        room = (self.item.vb.width() or 0.8 * self.width()) / (metrics.horizontalAdvance("30") * 2)
        step = next((s for s in (1, 2, 5, 10) if len(self.groups) / s <= room), 20)
        self.item.getAxis("bottom").setTicks([[(g, name) for g, name in enumerate(self.groups) if g % step == 0]])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if getattr(self, "groups", None):  # pyqtgraph resizes it before __init__ is done
            self._place_ticks()

    def values_shown(self, index: int) -> list[float]:
        """The heights of series `index`'s bars, as drawn (for tests)."""
        return [float(v) for v in self.bars[index].opts["height"]]
