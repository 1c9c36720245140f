"""The analogy benchmark's window: progress and Cancel while it runs, then accuracy per
section as a table and a chart (inputs excluded, with their variants too, and allowed)
and the questions it got wrong with what it answered instead."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog, QHBoxLayout, QHeaderView, QLabel, QProgressBar, QPushButton, QSplitter, QVBoxLayout,
)

from embviz.ui import style
from embviz.ui.widgets import ResultsTable

CHART_MIN_WIDTH = 300  # bars still comparable beside the section names
# The misses' cells, this many rows a turn of the event loop, then their columns sized one a turn:
# all 500 rows at once, with the columns sized to their contents at every layout, held the window
# for 110 ms; sized to their contents while cells arrive, seconds.
MISS_ROWS_A_TURN = 100
SERIES = (("inputs excluded", "accuracy_excluded", style.BAR_LOGIT), ("inputs allowed", "accuracy_included", style.BAR_PROB))


class BenchmarkWindow(QDialog):
    def __init__(self, cancel, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("The Google analogy benchmark")
        self._fit_to_screen()
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        style.use_font(self.summary, style.LABEL_POINT_SIZE, bold=True)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(cancel)
        self.sections = ResultsTable(["section", "kept", "excluded", "+ variants", "allowed"])
        self.misses = ResultsTable(["section", "a", "is to b", "as c", "is to d", "answered instead"])
        self.misses_settled = False
        self.shown = None  # the result on show, while its chart and misses are still to come
        # Every column as wide as its longest text ("capital-common-countries", "380 of 506"): the
        # sections' at every layout, the misses' once their cells are in (_fill_misses).
        self.sections.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.misses.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for table in (self.sections, self.misses):
            style.use_font(table, style.BASE_POINT_SIZE)  # five and six columns beside a chart: a size smaller
        self.misses.horizontalHeader().setStretchLastSection(True)
        self.chart = pg.PlotWidget(background=style.BACKGROUND, enableMenu=False)
        item = self.chart.getPlotItem()
        item.setMenuEnabled(False)
        item.hideButtons()
        item.setMouseEnabled(x=False, y=False)
        item.getViewBox().invertY(True)
        item.setLabel("bottom", "% correct")
        for name in ("left", "bottom"):
            item.getAxis(name).setTextPen("k")
            item.getAxis(name).setPen("k")
        # Under the axis, in a row of the plot's own: inside the plot it covered the longest bars.
        self.legend = pg.LegendItem(labelTextColor="k")
        item.legend = self.legend  # named bars add themselves to it
        item.layout.addItem(self.legend, 4, 0, 1, 3)  # under the axis's names too: the chart may be narrow
        self.chart.hide()  # no empty axes before the first result
        running = QHBoxLayout()
        running.addWidget(self.progress, 1)
        running.addWidget(self.cancel_button)
        self.top = QSplitter(Qt.Orientation.Horizontal)  # the table as wide as its columns, the chart the rest
        self.top.addWidget(self.sections)
        self.top.addWidget(self.chart)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.top)
        split.addWidget(self.misses)
        # The sections and their bars first: fourteen rows of names need the height more than the misses.
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addLayout(running)
        layout.addWidget(split, 1)
        style.follow_scale(self)

    def _fit_to_screen(self) -> None:
        """1100 × 760, or the screen's room if that is less (a 1024 × 700 projector)."""
        screen = QGuiApplication.primaryScreen()
        room = screen.availableGeometry() if screen is not None else None
        self.resize(1100 if room is None else min(1100, int(room.width() * 0.96)),
                    760 if room is None else min(760, int(room.height() * 0.92)))

    def set_text_scale(self, scale: float) -> None:
        # The section names beside the bars grow with the text: the chart's least width grows with them.
        self.chart.setMinimumWidth(round(CHART_MIN_WIDTH * scale))
        for name in ("left", "bottom"):  # a size smaller, as the tables beside it
            self.chart.getPlotItem().getAxis(name).setTickFont(style.font(style.BASE_POINT_SIZE - 1))
        if self.chart.isVisible():
            self._fit_table()
        self.misses.resizeColumnsToContents()

    def started(self) -> None:
        self.shown = None
        self.summary.setText("Answering 19,544 questions…")
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.show()
        self.sections.fill([], [])
        self.misses.fill([], [])
        self.chart.getPlotItem().clear()
        self.legend.clear()
        self.chart.hide()

    def on_progress(self, fraction: float, stage: str) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.summary.setText(f"{stage}: {fraction:.0%}")

    def stopped(self, text: str) -> None:
        self.progress.hide()
        self.cancel_button.hide()
        self.summary.setText(text)

    def show_result(self, result, summary: str) -> None:
        """The summary and the sections' table now; the chart, the table's width and the
        misses each in a turn of the event loop of their own: together they held the
        window for 27 ms on a busy machine."""
        self.stopped(summary)
        self.shown = result
        sections = [s for s in result.sections if s.kept]
        self.sections.fill([(s.name, f"{s.kept:,} of {s.total:,}", _pct(s.accuracy_excluded), _pct(s.accuracy_variants),
                             _pct(s.accuracy_included)) for s in sections], [])
        self.misses.fill([(m.section, *m.words, m.predicted) for m in result.misses], [], 0)
        self.misses_settled = False  # until every miss has its cells and its columns their widths
        QTimer.singleShot(0, self, lambda: self._draw_chart(result, sections))

    def _draw_chart(self, result, sections: list) -> None:
        if self.shown is not result:
            return
        item = self.chart.getPlotItem()
        item.clear()
        self.legend.clear()
        for offset, (name, attr, color) in zip((-0.2, 0.2), SERIES):
            values = [100 * (getattr(s, attr) or 0.0) for s in sections]
            bars = pg.BarGraphItem(x0=[0] * len(values), y=[i + offset for i in range(len(values))], height=0.38,
                                   width=values, brush=color, pen=None, name=name)
            item.addItem(bars)  # named: the legend lists it
        item.getAxis("left").setTicks([[(i, s.name) for i, s in enumerate(sections)]])
        # Few labels: a narrow chart (1024 × 700) ran 20, 40, 60, 80 into one another (pyqtgraph
        # leaves out 0 and 100 where they would reach past the axis's ends).
        item.getAxis("bottom").setTicks([[(0, "0"), (50, "50"), (100, "100")], [(25, ""), (75, "")]])
        item.setXRange(0, 100, padding=0.02)
        item.setYRange(-0.6, len(sections) - 0.4, padding=0)
        self.chart.show()
        QTimer.singleShot(0, self, lambda: self._fit_table() if self.shown is result else None)
        QTimer.singleShot(0, self, self._fill_misses)

    def _fill_misses(self, column: int = 0) -> None:
        """The misses' next rows of cells, or once all are in, their next column sized: one step
        a turn of the event loop. A newer result's fill takes over the steps left."""
        if self.misses.fill_more(MISS_ROWS_A_TURN):
            QTimer.singleShot(0, self._fill_misses)
        elif column < self.misses.columnCount() - 1:  # the last one stretches
            self.misses.resizeColumnToContents(column)
            QTimer.singleShot(0, lambda: self._fill_misses(column + 1))
        else:
            self.misses_settled = True

    def _fit_table(self) -> None:
        """The table as wide as its columns (section names and counts whole), the chart the rest."""
        table = self.sections
        table.resizeColumnsToContents()
        frame = 2 * table.frameWidth() + table.verticalScrollBar().sizeHint().width()
        wanted = table.horizontalHeader().length() + frame
        total = self.top.width() - self.top.handleWidth()
        wanted = min(wanted, total - self.chart.minimumWidth())
        self.top.setSizes([wanted, total - wanted])


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"
