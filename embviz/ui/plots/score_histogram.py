"""A histogram of scores from 0 to 1 with a brush (a LinearRegionItem) that picks a range."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal

from embviz.ui import style
from embviz.ui.plots.still_plot import StillPlot

BINS = 25
MIN_HEIGHT = 120  # pixels at 100 % text: with the list beside it, not above, on a 700-pixel screen;
# no axis title (the sentence beside it says what a score is), so the bars keep that height
X_TICKS = [[(x, f"{x:g}") for x in (0.0, 0.5, 1.0)]]  # few: the plot may be narrow
BAR_COLOR = style.BAR_LOGIT


def log_ticks(largest: int) -> list[tuple[float, str]]:
    """Counts 0, 10, 1,000 … at their place on a log10(count + 1) axis: every other power,
    so that the labels stay apart on a short plot with large text."""
    ticks = [(0.0, "0")]
    for power in range(1, int(math.log10(max(largest, 1))) + 1, 2):
        ticks.append((math.log10(10 ** power + 1), f"{10 ** power:,}"))
    return ticks


class ScoreHistogram(StillPlot):
    """Counts on a log axis (most tokens score near 0, and a few near 1 must still show);
    dragging the shaded region, or its edges, reports the range it covers."""

    rangeChosen = Signal(float, float)
    MIN_HEIGHT = MIN_HEIGHT

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.bars = pg.BarGraphItem(x0=[], width=[], height=[], brush=BAR_COLOR, pen=None)
        self.addItem(self.bars)
        self.brush = pg.LinearRegionItem(values=(0.0, 1.0), bounds=(0.0, 1.0), brush=(230, 159, 0, 60))
        self.addItem(self.brush)
        self.brush.sigRegionChangeFinished.connect(lambda: self.rangeChosen.emit(*self.region()))
        self.item.setXRange(0.0, 1.0, padding=0.06)  # room for the end ticks' labels
        self.item.getAxis("bottom").setTicks(X_TICKS)
        self.counts = np.zeros(BINS, dtype=np.int64)
        style.follow_scale(self)

    def set_scores(self, scores: np.ndarray) -> None:
        self.counts, edges = np.histogram(scores, bins=BINS, range=(0.0, 1.0))
        heights = np.log10(self.counts + 1.0)
        self.bars.setOpts(x0=edges[:-1], width=np.diff(edges) * 0.9, height=heights, y0=0)
        self.item.getAxis("left").setTicks([log_ticks(int(self.counts.max(initial=0)))])
        self.item.setYRange(0.0, max(float(heights.max(initial=0)), 1.0), padding=0.05)

    def region(self) -> tuple[float, float]:
        low, high = self.brush.getRegion()
        return round(float(low), 3), round(float(high), 3)

    def set_region(self, low: float, high: float) -> None:
        """From the state: the brush follows without reporting back."""
        self.brush.blockSignals(True)
        try:
            self.brush.setRegion((low, high))
        finally:
            self.brush.blockSignals(False)
