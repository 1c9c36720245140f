"""Grouped vertical bars (pyqtgraph): one group per block, a few bars side by side in each,
up or down from zero, with a key in the title naming each series. Hovering a bar names its
value; with values printed, every bar's value is written: at its end, or where thin bars leave
no room for all, in a band over the bars, each over its own bar."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QCursor, QFontMetrics
from PySide6.QtWidgets import QToolTip

from embviz.ui import style
from embviz.ui.plots.bar_chart import nice_ticks
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
        self.print_values = False
        self.printed: list[pg.TextItem] = []  # the values written on the chart
        self.item.addItem(pg.InfiniteLine(0, angle=0, pen=pg.mkPen("k", width=1)))
        self.scene().sigMouseMoved.connect(self._hovered)
        # The values placed again when the plot's box changes without the widget's size: a new y
        # range gives the left axis wider numbers, and the texts were placed for the old width.
        self.item.vb.sigResized.connect(self._plot_resized)
        style.follow_scale(self)

    def set_text_scale(self, scale: float) -> None:
        super().set_text_scale(scale)
        self.set_title(self.title)
        self._print()

    def _plot_resized(self, _view: pg.ViewBox) -> None:
        if self.print_values:
            self._print()

    def set_print_values(self, on: bool) -> None:
        """Write each bar's value at its end, for a class that cannot hover."""
        self.print_values = on
        self._print()

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
        self._print()

    # --- a bar's value ------------------------------------------------------------------------
    @staticmethod
    def value_text(value: float) -> str:
        return f"{value:+.2f}"

    def bar_at(self, x: float, y: float) -> tuple[int, int] | None:
        """(group, series) of the bar under the view point (x, y), or None."""
        if not self.series:
            return None
        group = round(x)
        width = GROUP_WIDTH / len(self.series)
        k = int((x - group + GROUP_WIDTH / 2) // width)
        if not (0 <= group < len(self.groups) and 0 <= k < len(self.series)):
            return None
        value = self.series[k].values[group]
        if value is None or not min(0.0, value) <= y <= max(0.0, value):
            return None
        return group, k

    def hover_text(self, group: int, k: int) -> str:
        s = self.series[k]
        name = "the embedding" if self.groups[group] == "emb" else f"block {self.groups[group]}"
        return f"{name}, {s.name}: {self.value_text(float(s.values[group] or 0.0))}"

    def _hovered(self, scene_pos: QPointF) -> None:
        point = self.item.vb.mapSceneToView(scene_pos)
        found = self.bar_at(point.x(), point.y())
        if found is None:
            QToolTip.hideText()
        else:
            QToolTip.showText(QCursor.pos(), self.hover_text(*found), self)

    def _print(self) -> None:
        """Every bar's value at its end, turned upright when the bars are narrower than the text.
        Where thin bars (31 blocks at 150 %) leave no room for every text at its bar's end, every
        value goes in a band over the bars (under them for negative ones), right over its own
        bar, staggered onto as many lines as keep neighbours apart; the chart asks for the height."""
        for item in self.printed:
            self.item.removeItem(item)
        self.printed = []
        least = round(self.MIN_HEIGHT * style.text_scale())
        if not (self.print_values and self.series):
            self.setMinimumHeight(least)
            self.item.getAxis("left").setTicks(None)
            self.item.enableAutoRange(axis="y")
            return
        font = style.font(style.BASE_POINT_SIZE - 1)
        bars = [(g + -GROUP_WIDTH / 2 + GROUP_WIDTH / len(self.series) * (k + 0.5), float(v), self.value_text(float(v)))
                for k, s in enumerate(self.series) for g, v in enumerate(s.values)
                if v is not None and round(abs(v), 2) > 0]  # no "-0.00" over a bar too short to see
        if not bars:
            self.setMinimumHeight(least)
            self.item.getAxis("left").setTicks(None)
            self.item.enableAutoRange(axis="y")
            return
        items = [pg.TextItem(text, color="k") for _, _, text in bars]
        for item in items:
            item.setFont(font)
            item.textItem.document().setDocumentMargin(1)  # its default 4 pixels a side kept apart texts that fit
        # Measured as drawn (the text's document adds its margin around the glyphs).
        widest = max(item.textItem.boundingRect().width() for item in items)
        line = max(item.textItem.boundingRect().height() for item in items)
        plot_w = self.item.vb.width() or 0.8 * self.width()
        plot_h = self.item.vb.height() or 0.6 * self.height()
        slot = plot_w / max(len(self.groups), 1) * GROUP_WIDTH / len(self.series)  # a bar's width, pixels
        per_x = plot_w / (len(self.groups) + 0.2)  # pixels per group: the x range is -0.6 … n − 0.4
        lo = min(0.0, *(v for _, v, _ in bars))
        hi = max(0.0, *(v for _, v, _ in bars))
        # Upright where the bars are narrower than a text (each text then stands over its own bar).
        upright = slot < widest
        placed = self._at_ends(bars, per_x, plot_w, plot_h, lo, hi, line, widest, upright)
        if placed is None:
            placed = self._in_bands(bars, per_x, plot_w, plot_h, lo, hi, line, widest, upright)
        at, bottom, top, beyond = placed
        self.item.setYRange(bottom, top, padding=0)
        # Numbers on the axis only where bars can reach, not beside the bands of texts.
        self.item.getAxis("left").setTicks([[(t, f"{t:g}") for t in nice_ticks(lo, hi, 5)]] if beyond else None)
        across = line if upright else widest
        for (x, v, _), y, item in zip(bars, at, items):
            if upright:
                item.setAngle(90)
                item.setAnchor(pg.Point(0.0 if v >= 0 else 1.0, 0.5))
            else:
                item.setAnchor(pg.Point(0.5, 1.0 if v >= 0 else 0.0))
            item.setPos(_inside((x + 0.6) * per_x, across, plot_w) / per_x - 0.6, y)
            self.item.addItem(item)
            self.printed.append(item)
        # The bands' height on top of the chart's own least: the chart asks for it (its tab scrolls).
        # Set last: the resize it causes prints them all again.
        self.setMinimumHeight(least + round(beyond))

    @staticmethod
    def _at_ends(bars: list[tuple[float, float, str]], per_x: float, plot_w: float, plot_h: float, lo: float,
                 hi: float, line: float, widest: float, upright: bool) -> tuple[list[float], float, float, float] | None:
        """Each text at its bar's end with room past the longest bars for theirs: (each text's
        start, bottom, top, 0), or None where two texts would overlap."""
        across, along = (line, widest) if upright else (widest, line)
        pad = (hi - lo or 1.0) * along / max(plot_h - 2 * along, along)
        bottom, top = lo - (pad if lo < 0 else 0.0), hi + (pad if hi > 0 else 0.0)
        per_y = plot_h / ((top - bottom) or 1.0)
        taken: list[QRectF] = []
        for x, v, _ in bars:
            px, py = _inside((x + 0.6) * per_x, across, plot_w), (v - bottom) * per_y
            box = QRectF(px - across / 2, py if v >= 0 else py - along, across, along)
            if any(box.intersects(other) for other in taken):
                return None
            taken.append(box)
        return [v for _, v, _ in bars], bottom, top, 0.0

    @staticmethod
    def _in_bands(bars: list[tuple[float, float, str]], per_x: float, plot_w: float, plot_h: float, lo: float,
                  hi: float, line: float, widest: float, upright: bool) -> tuple[list[float], float, float, float]:
        """Every text in a band past the bars (over them, under them for negative values), over
        its own bar, on the band's first line where it clears the texts left of it: (each text's
        start, bottom, top, the bands' pixels)."""
        across, along = (line, widest + 2) if upright else (widest, line + 2)  # lines two pixels apart
        lines: dict[bool, list[float]] = {True: [], False: []}  # per band, each line's rightmost pixel
        level = [0] * len(bars)
        for n in sorted(range(len(bars)), key=lambda n: bars[n][0]):
            ends = lines[bars[n][1] >= 0]
            left = _inside((bars[n][0] + 0.6) * per_x, across, plot_w) - across / 2
            k = next((k for k, end in enumerate(ends) if end + 2 < left), len(ends))  # two pixels apart
            if k == len(ends):
                ends.append(0.0)
            ends[k] = left + across
            level[n] = k
        gap = line / 4  # between the bars' ends and a band
        up = len(lines[True]) * along + (gap if lines[True] else 0.0)
        down = len(lines[False]) * along + (gap if lines[False] else 0.0)
        per_y = max(plot_h - up - down, line) / ((hi - lo) or 1.0)
        at = [hi + (gap + k * along) / per_y if v >= 0 else lo - (gap + k * along) / per_y
              for (_, v, _), k in zip(bars, level)]
        bottom = lo - down / per_y
        return at, bottom, bottom + plot_h / per_y, up + down

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
            self._print()

    def values_shown(self, index: int) -> list[float]:
        """The heights of series `index`'s bars, as drawn (for tests)."""
        return [float(v) for v in self.bars[index].opts["height"]]

    def printed_values(self) -> list[tuple[float, float, str]]:
        """(x, y, text) of every value written on the chart (for tests)."""
        return [(item.pos().x(), item.pos().y(), item.toPlainText()) for item in self.printed]


def _inside(px: float, across: float, width: float) -> float:
    """A text's middle `px`, moved to keep the text inside the plot's sides (the last block's
    text was cut at the right)."""
    return min(max(px, across / 2 + 1), width - across / 2 - 1)
