"""The analogy benchmark's window: progress and Cancel while it runs, then accuracy per
section as a table and a chart (inputs excluded, with their variants too, and allowed)
and the questions it got wrong with what it answered instead."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QBoxLayout,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QProgressBar,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from embviz.core.table.results import BenchmarkResult
from embviz.ui import style
from embviz.ui.plots.bar_chart import BarChart
from embviz.ui.widgets import QWIDGETSIZE_MAX, ResultsTable, ScrollColumn, WrappedLabel, next_frame

CHART_MIN_WIDTH = 300  # bars still comparable beside the section names
# The misses' cells come this many rows a frame, then their columns are sized one a frame: the
# 500 rows at once, their columns fitted at every layout, hold the window for about 110 ms, and
# fitting the columns while the cells arrive takes seconds.
MISS_ROWS_A_FRAME = 100
SERIES = (("inputs excluded", "accuracy_excluded", style.BAR_LOGIT), ("inputs allowed", "accuracy_included", style.BAR_PROB))


class BenchmarkWindow(QDialog):
    def __init__(self, cancel, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("The Google analogy benchmark")
        self._fit_to_screen()
        self.summary = WrappedLabel("")  # as many lines as it wraps to: at 200 % a layout cut its last ones
        style.use_font(self.summary, style.LABEL_POINT_SIZE, bold=True)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.cancel_button = QPushButton("Cancel")
        # Only a click cancels: a dialog's buttons take Enter by default, and Enter stopped a run.
        self.cancel_button.setAutoDefault(False)
        self.cancel_button.setDefault(False)
        self.cancel_button.clicked.connect(cancel)
        self.sections = ResultsTable(["section", "kept", "excluded", "+ variants", "allowed"])
        self.misses = ResultsTable(["section", "a", "is to b", "as c", "is to d", "answered instead"])
        self.misses_settled = False
        # Every column as wide as its longest text ("capital-common-countries", "380 of 506"): the
        # sections' at every layout, the misses' once their cells are in (_fill_misses).
        self.sections.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.misses.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for table in (self.sections, self.misses):
            style.use_font(table, style.BASE_POINT_SIZE)  # five and six columns beside a chart: a size smaller
        self.misses.horizontalHeader().setStretchLastSection(True)
        # The section names at the body's size, as the tables beside it (a size smaller read as shrunk
        # at 150 %); they may take most of its width. A row per section at the names' full height (the
        # chart asks for it, the pane scrolls): a chart squeezed into a splitter drew them at 60 %.
        self.chart = BarChart("", style.BAR_LOGIT, axis_name="% correct", point_size=style.BASE_POINT_SIZE,
                              label_share=0.6)
        self.showing: BenchmarkResult | None = None  # being put on screen, a piece a frame
        running = QHBoxLayout()
        running.addWidget(self.progress, 1)
        running.addWidget(self.cancel_button)
        # The summary, then the table as tall as its rows and as wide as its columns with the chart the
        # rest of the width, or over the table where both do not fit side by side (1024 px at 150 %):
        # one pane that scrolls (at 200 % the summary alone is seven lines).
        self.sections.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        pane = QWidget()
        column = QVBoxLayout(pane)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.summary)
        self.arrangement = QBoxLayout(QBoxLayout.Direction.LeftToRight)
        self.arrangement.addWidget(self.sections, 0, Qt.AlignmentFlag.AlignTop)
        self.arrangement.addWidget(self.chart, 1)
        column.addLayout(self.arrangement, 1)
        self.top = ScrollColumn(pane)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.top)
        split.addWidget(self.misses)
        # The sections and their bars first: fourteen rows of names need the height more than the misses.
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
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
        self._fit_table()
        self.misses.resizeColumnsToContents()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_table()

    def started(self) -> None:
        self.showing = None
        self.summary.setText("Answering 19,544 questions…")
        self.progress.setFormat("%p%")
        self.progress.setValue(0)
        self.progress.show()
        self.cancel_button.show()
        self.sections.fill([], [])
        self.misses.fill([], [])
        self.chart.clear_bars()

    def on_progress(self, fraction: float, stage: str) -> None:
        # The stage and its percentage on the bar itself, from the bar's own value: they cannot disagree.
        self.progress.setFormat(f"{stage}: %p%")
        self.progress.setValue(round(fraction * 1000))

    def stopped(self, text: str) -> None:
        self.progress.hide()
        self.cancel_button.hide()
        self.summary.setText(text)

    def show_result(self, result: BenchmarkResult, summary: str) -> None:
        """The summary now; the sections' table, their chart, the table's width and the misses
        each a frame later: all at once, the window's repaint took 24 ms on a busy machine."""
        self.stopped(summary)
        self.showing = result
        self.misses_settled = False  # until every miss has its cells and its columns their widths
        sections = [s for s in result.sections if s.kept]

        def tables() -> None:
            self.sections.fill([(s.name, f"{s.kept:,} of {s.total:,}", _pct(s.accuracy_excluded),
                                 _pct(s.accuracy_variants), _pct(s.accuracy_included)) for s in sections], [])
            self.misses.fill([(m.section, *m.words, m.predicted) for m in result.misses], [], 0)  # cells to come

        steps = [
            tables,
            lambda: self.chart.set_groups([s.name for s in sections],
                                          [(name, color, [100 * (getattr(s, attr) or 0.0) for s in sections])
                                           for name, attr, color in SERIES], (0.0, 100.0)),
            self._fit_table,
            self._fill_misses,
        ]
        self._steps(result, steps)

    def _steps(self, result, steps: list) -> None:
        """The first of `steps` now and the rest a frame apart, while `result` is the one shown."""
        if steps and self.showing is result:
            steps[0]()
            if steps[1:]:
                next_frame(self, lambda: self._steps(result, steps[1:]))

    def _fill_misses(self, column: int = 0) -> None:
        """The misses' next rows of cells, or once all are in, their next column sized: one step
        a frame. A newer result's fill takes over the steps left."""
        if self.misses.fill_more(MISS_ROWS_A_FRAME):
            next_frame(self, self._fill_misses)
        elif column < self.misses.columnCount() - 1:  # the last one stretches
            self.misses.resizeColumnToContents(column)
            next_frame(self, lambda: self._fill_misses(column + 1))
        else:
            self.misses_settled = True

    def _fit_table(self) -> None:
        """The table as wide as its columns (section names and counts whole) and as tall as its
        rows; beside the chart where both fit in the pane's width, under it where not."""
        table = self.sections
        table.resizeColumnsToContents()
        wide = table.horizontalHeader().length() + 2 * table.frameWidth()
        room = self.top.width() - self.top.verticalScrollBar().sizeHint().width()  # the pane's, scrolling
        side = wide + self.arrangement.spacing() + self.chart.minimumWidth() <= room
        # Stacked, the chart comes first: it is the picture, the table its numbers.
        self.arrangement.setDirection(QBoxLayout.Direction.LeftToRight if side else QBoxLayout.Direction.BottomToTop)
        if side:
            table.setFixedWidth(wide)
        else:
            table.setMinimumWidth(0)
            table.setMaximumWidth(QWIDGETSIZE_MAX)
        cut = not side and wide > room  # the columns scroll sideways under the rows
        table.setFixedHeight(table.horizontalHeader().height() + table.verticalHeader().length()
                             + 2 * table.frameWidth() + (table.horizontalScrollBar().sizeHint().height() if cut else 0))


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"
