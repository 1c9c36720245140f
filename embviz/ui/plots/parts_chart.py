"""Grouped vertical bars (pyqtgraph): one group per block, a few bars side by side in each,
up or down from zero, with a key in the title naming each series. Hovering a bar names its
value; with values printed, each bar's value is written at its end (the largest first where
thin bars leave no room for all)."""

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
        style.follow_scale(self)

    def set_text_scale(self, scale: float) -> None:
        super().set_text_scale(scale)
        self.set_title(self.title)
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
        """Each bar's value at its end, turned upright when the bars are narrower than the text;
        where neighbouring texts would overlap, the larger value keeps its place."""
        for item in self.printed:
            self.item.removeItem(item)
        self.printed = []
        if not (self.print_values and self.series):
            self.item.enableAutoRange(axis="y")
            return
        font = style.font(style.BASE_POINT_SIZE - 1)
        bars = [(g + -GROUP_WIDTH / 2 + GROUP_WIDTH / len(self.series) * (k + 0.5), float(v), self.value_text(float(v)))
                for k, s in enumerate(self.series) for g, v in enumerate(s.values)
                if v is not None and round(abs(v), 2) > 0]  # no "-0.00" over a bar too short to see
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
        slot = plot_w / max(len(self.groups), 1) * GROUP_WIDTH / len(self.series)  # a bar's width, pixels
        upright = slot < widest
        across, along = (line, widest) if upright else (widest, line)  # a text's pixels across and along the bars
        lo = min(0.0, *(v for _, v, _ in bars))
        hi = max(0.0, *(v for _, v, _ in bars))
        plot_h = max(self.item.vb.height() or 0.6 * self.height(), 3 * along)
        # Room above the highest bar and below the lowest for their texts.
        pad = (hi - lo or 1.0) * along / (plot_h - 2 * along)
        bottom, top = lo - (pad if lo < 0 else 0.0), hi + (pad if hi > 0 else 0.0)
        self.item.setYRange(bottom, top, padding=0)
        per_x = plot_w / (len(self.groups) + 0.2)  # pixels per group: the x range is -0.6 … n − 0.4
        per_y = plot_h / ((top - bottom) or 1.0)
        taken: list[QRectF] = []  # the texts placed, in pixels (y up)
        for (x, v, _), item in sorted(zip(bars, items), key=lambda pair: -abs(pair[0][1])):
            # Kept inside the plot's sides: the last block's text would be cut at the right.
            px = min(max((x + 0.6) * per_x, across / 2 + 1), plot_w - across / 2 - 1)
            py = (v - bottom) * per_y
            box = QRectF(px - across / 2, py if v >= 0 else py - along, across, along)
            if any(box.intersects(other) for other in taken):
                continue  # a larger value's text is there
            taken.append(box)
            if upright:
                item.setAngle(90)
                item.setAnchor(pg.Point(0.0 if v >= 0 else 1.0, 0.5))
            else:
                item.setAnchor(pg.Point(0.5, 1.0 if v >= 0 else 0.0))
            item.setPos(px / per_x - 0.6, v)
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
