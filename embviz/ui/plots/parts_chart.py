"""Grouped vertical bars (pyqtgraph): one group per block, a few bars side by side in each,
up or down from zero, with a key in the title naming each series. Hovering a bar names its
value; with values printed, each bar's value is written at its end, or where thin bars' texts
are in each other's way, further out over its own bar (the largest first, while there is room)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QCursor, QFontMetrics
from PySide6.QtWidgets import QToolTip

from embviz.ui import style
from embviz.ui.plots.still_plot import StillPlot
from embviz.ui.plots.titles import shrinkable_title

MIN_HEIGHT = 160  # pixels at 100 % text: the window on a 1024 × 700 screen at 150 % has room for little more
GROUP_WIDTH = 0.84  # of a group's slot: a gap between blocks keeps them apart
TEXT_GAP = 2.0  # pixels between a printed value and the bar or text it stands on


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
        """Each bar's value at its end, turned upright when the bars are narrower than the text.
        Where thin bars (31 blocks at 150 %) put texts in each other's way, a text stands further
        out, over the shorter bars beside a long one, as long as the plot has room: the largest
        values first (every one on hover)."""
        for item in self.printed:
            self.item.removeItem(item)
        self.printed = []
        font = style.font(style.BASE_POINT_SIZE - 1)
        bars = [(g + -GROUP_WIDTH / 2 + GROUP_WIDTH / len(self.series) * (k + 0.5), float(v), self.value_text(float(v)))
                for k, s in enumerate(self.series) for g, v in enumerate(s.values)
                if v is not None and round(abs(v), 2) > 0] if self.print_values else []  # no "-0.00" on no bar
        if not bars:
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
        across, along = (line, widest) if upright else (widest, line)  # a text's pixels across and along the bars
        # Room past the longest bars for their texts, the bars the rest but never under a third of
        # the plot; where a short plot has room past one end only, the longer bar's end has it.
        text_px = along + TEXT_GAP
        bars_px = max(plot_h - ((hi > 0) + (lo < 0)) * text_px, plot_h / 3)
        room = plot_h - bars_px
        down_px = 0.0 if lo >= 0 else min(text_px, room) if -lo > hi else min(text_px, room - min(text_px, room))
        per_y = bars_px / ((hi - lo) or 1.0)
        bottom = lo - down_px / per_y  # the top has the rest
        top = bottom + plot_h / per_y
        self.item.setYRange(bottom, top, padding=0)
        at = _stacked(bars, [_inside((x + 0.6) * per_x, across, plot_w) for x, _, _ in bars],
                      [(x + 0.6) * per_x for x, _, _ in bars], slot, across, along, plot_h, per_y, bottom)
        for (x, v, _), y, item in zip(bars, at, items):
            if y is None:
                continue  # no room left: larger values' texts fill the plot over it (its value is on hover)
            if upright:
                item.setAngle(90)
                item.setAnchor(pg.Point(0.0 if v >= 0 else 1.0, 0.5))
            else:
                item.setAnchor(pg.Point(0.5, 1.0 if v >= 0 else 0.0))
            item.setPos(_inside((x + 0.6) * per_x, across, plot_w) / per_x - 0.6, y)
            self.item.addItem(item)
            self.printed.append(item)

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


def _stacked(bars: list[tuple[float, float, str]], middles: list[float], bar_middles: list[float], slot: float,
             across: float, along: float, plot_h: float, per_y: float, bottom: float) -> list[float | None]:
    """Where each value's text starts (plot y), or None where it has no room: the largest value
    first, each at its bar's end, or where a text placed before it or another bar is in its way,
    just past that, further from zero, as long as it stays inside the plot (pixels, y up)."""
    zero = -bottom * per_y
    ends = [(v - bottom) * per_y for _, v, _ in bars]
    bar_boxes = [QRectF(m - slot / 2, min(zero, end), slot, abs(end - zero)) for m, end in zip(bar_middles, ends)]
    taken: list[QRectF] = []
    at: list[float | None] = [None] * len(bars)
    for n in sorted(range(len(bars)), key=lambda n: -abs(bars[n][1])):
        up = bars[n][1] >= 0
        box = QRectF(middles[n] - across / 2, ends[n] + TEXT_GAP if up else ends[n] - TEXT_GAP - along, across, along)
        while -0.5 <= box.top() and box.bottom() <= plot_h + 0.5:
            hits = [o for o in taken if o.intersects(box)] + [b for m, b in enumerate(bar_boxes)
                                                               if m != n and b.intersects(box)]
            if not hits:
                taken.append(box)
                at[n] = bottom + (box.top() if up else box.bottom()) / per_y
                break
            # Past the farthest thing in the way (QRectF's top is its lower edge here: y runs up).
            box.moveTop(max(h.bottom() for h in hits) + TEXT_GAP if up else min(h.top() for h in hits) - TEXT_GAP - along)
    return at
