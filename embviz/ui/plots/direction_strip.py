"""Words placed on a direction: a pyqtgraph strip, each word a dot at its cosine with the unit
direction and its label above it, on the lowest row where it overlaps no other label (a class
must read each one, and occupation words crowd near 0)."""

from __future__ import annotations

from collections.abc import Sequence

import pyqtgraph as pg
from PySide6.QtGui import QColor, QFontMetricsF

from embviz.ui import style

DOT_COLOR = QColor(0, 114, 178)  # Okabe–Ito blue
ZERO_COLOR = QColor(120, 120, 120)
GAP_PX = 10.0  # between two labels on one row
MAX_ROWS = 5  # label rows at most, above and below together; beyond, labels share the emptiest


class DirectionStrip(pg.PlotWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent, background=style.BACKGROUND, enableMenu=False)
        self.words: list[str] = []
        self.cosines: list[float] = []
        self.rows: list[int] = []  # each label's row: 1, 2… above the axis, −1, −2… below
        self.labels: list[pg.TextItem] = []
        self._widths: list[float] = []  # each label's width in pixels
        self._drawing = False
        self._again = False
        item = self.getPlotItem()
        item.setMenuEnabled(False)
        item.hideButtons()
        item.setMouseEnabled(x=False, y=False)
        item.hideAxis("left")
        for name in ("bottom",):
            item.getAxis(name).setTextPen("k")
            item.getAxis(name).setPen("k")
        self.axis_name = "cosine with the direction"
        item.getAxis("bottom").enableAutoSIPrefix(False)  # cosines as they are, not "×0.001"
        item.vb.sigResized.connect(self._draw)  # label rows are worked out in the view's pixels
        style.follow_scale(self)

    def set_text_scale(self, scale: float) -> None:
        axis = self.getPlotItem().getAxis("bottom")
        axis.setStyle(tickFont=style.font(style.BASE_POINT_SIZE))
        axis.setLabel(self.axis_name, **{"font-size": f"{style.pt(style.BASE_POINT_SIZE)}pt", "color": "#000"})
        self._draw()

    def set_words(self, words: Sequence[str], cosines: Sequence[float], start: str, end: str) -> None:
        self.words, self.cosines = list(words), [float(c) for c in cosines]
        self.axis_name = f"cosine   ← {start} · {end} →"
        self.set_text_scale(style.text_scale())

    def clear_words(self) -> None:
        self.words, self.cosines = [], []
        self._draw()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if hasattr(self, "words"):  # pyqtgraph resizes the view inside its own __init__, before ours ran
            self._draw()

    def _span(self) -> tuple[float, float]:
        """The x range: 0 and every dot, with room at each end for the outermost labels' halves."""
        if not self.cosines:
            return -1.0, 1.0
        lo, hi = min(self.cosines + [0.0]), max(self.cosines + [0.0])
        lo, hi = lo - 0.02, hi + 0.02
        width_px = max(1.0, float(self.getPlotItem().vb.width()))
        half = max(self._widths) / 2 + GAP_PX
        if width_px <= 2 * half + 20:
            return lo, hi
        per_px = (hi - lo) / (width_px - 2 * half)
        return lo - half * per_px, hi + half * per_px

    def _rows(self, lo: float, hi: float) -> list[int]:
        """Each label's row: greedily the nearest to the axis whose last label ends left of this
        one; rows alternate above (1, 2, …) and below (−1, −2, …) the dots."""
        width_px = max(1.0, float(self.getPlotItem().vb.width()))
        per_px = (hi - lo) / width_px
        ends: list[float] = []
        rows = [1] * len(self.words)
        for i in sorted(range(len(self.words)), key=lambda n: self.cosines[n]):
            half = (self._widths[i] / 2 + GAP_PX / 2) * per_px
            left, right = self.cosines[i] - half, self.cosines[i] + half
            row = next((r for r, end in enumerate(ends) if end <= left), len(ends))
            if row >= MAX_ROWS:
                row = min(range(len(ends)), key=lambda r: ends[r])
            if row == len(ends):
                ends.append(right)
            else:
                ends[row] = right
            rows[i] = row // 2 + 1 if row % 2 == 0 else -(row // 2 + 1)
        return rows

    def _draw(self) -> None:
        if self._drawing:  # a new least height resizes the view, which asks for a drawing again
            self._again = True
            return
        self._drawing = True
        try:
            for _ in range(3):  # the view's new size, once it settles (rows depend on its width)
                self._again = False
                self._draw_now()
                if not self._again:
                    break
        finally:
            self._drawing = False

    def _draw_now(self) -> None:
        item = self.getPlotItem()
        item.clear()
        # The labels first: their own width (text and margins, in pixels) decides their rows.
        self.labels = []
        for word in self.words:
            label = pg.TextItem(word, color="k", anchor=(0.5, 0.5))
            label.setFont(style.font(style.BASE_POINT_SIZE))
            self.labels.append(label)
        self._widths = [label.boundingRect().width() for label in self.labels]
        lo, hi = self._span()
        item.setXRange(lo, hi, padding=0)
        self.rows = self._rows(lo, hi)
        # y in pixels (one unit a pixel, 0 the axis): each row of labels a line of text high.
        line = QFontMetricsF(style.font(style.BASE_POINT_SIZE)).height()
        above, below = max([1] + self.rows), max([1] + [-r for r in self.rows])
        height_px = max(1.0, float(item.vb.height()))
        middle = (above - below) * line * 1.1 / 2  # the axis nearer the side with fewer rows
        item.setYRange(middle - height_px / 2, middle + height_px / 2, padding=0)
        least = round((above + below + 0.6) * line * 1.1 + 1.8 * line)
        if least != self.minimumHeight():
            self.setMinimumHeight(least)
        item.addItem(pg.InfiniteLine(0.0, angle=90, pen=pg.mkPen(ZERO_COLOR, width=1)))
        item.addItem(pg.InfiniteLine(0.0, angle=0, pen=pg.mkPen(ZERO_COLOR, width=1)))
        if not self.words:
            return
        size = max(8, round(9 * style.text_scale()))
        for label, x, row in zip(self.labels, self.cosines, self.rows):
            centre = (abs(row) - 0.5) * line * 1.1 + line * 0.45
            y = centre if row > 0 else -centre
            # a thin stalk from the dot to its label, above or below the axis
            item.plot([x, x], [0.0, y - (line / 2 if row > 0 else -line / 2)], pen=pg.mkPen(ZERO_COLOR, width=1))
            label.setPos(x, y)
            item.addItem(label)
        item.addItem(pg.ScatterPlotItem(self.cosines, [0.0] * len(self.cosines), size=size,
                                        brush=pg.mkBrush(DOT_COLOR), pen=pg.mkPen("w")))
