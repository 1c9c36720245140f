"""Analogies tab: A − B + C with word2vec's exclude-inputs rule as a toggle."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLayout,
    QPushButton,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.views import AnalogyView, ModelSummary
from embviz.core.table.results import BenchmarkResult
from embviz.state.tabs import AnalogyState
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.panels.benchmark import BenchmarkWindow
from embviz.ui.plots.map_view import MapView
from embviz.ui.widgets import (
    BusyBar,
    ResultsTable,
    TableChoice,
    WordField,
    flow_row,
    folding,
    hide_special_switch,
    side_by_side,
)

HEADING_HINT = "A − B + C = ?"
TWO_TABLES = ("Which rows the arithmetic and the benchmark read: the embedding each token enters the model as, "
              "or the output head's rows that score it at the end (this model keeps the two apart).")
BUSY_HEADING = "Solving the analogy…"
EXPLAIN = (
    "word2vec's search never lets the answer be one of the three input words. Switch it off to see "
    "why: the nearest vector to A − B + C is usually an input itself."
)
RANKS_NOTE = "the nearest vector to A − B + C is usually an input itself"
# Rows the answers' table always has room for: on a short screen the tab scrolls rather
# than squeeze the table to its header.
TABLE_MIN_ROWS = 3
# Pixels at 100 % text. The table and the plane share a row: both fit beside the lessons
# at 1024 px and 150 %; the plane is never a thin strip.
TABLE_MIN_WIDTH = 200
PLANE_MIN_WIDTH = 180
PLANE_MIN_HEIGHT = 100
SPLIT_EVEN = 10_000  # equal sizes for the table and the plane, larger than any screen


class AnalogyPanel(QWidget):
    showArrows = Signal(list)  # [(from id, to id)] pairs: A→B and C→answer
    highlight = Signal(list)

    def __init__(self, submit, cancel=None, parent=None) -> None:
        super().__init__(parent)
        self.submit = submit
        self.cancel = cancel or (lambda channel: None)
        self.bench_window: BenchmarkWindow | None = None  # made on the first run
        self._bench_table = "input"
        self.asking = Latest(submit, self.on_result, self.on_failed)
        self.benchmarking = Latest(submit, self.on_benchmark, self._benchmark_failed, self._benchmark_cancelled,
                                   self._benchmark_progress)
        self.state = AnalogyState()
        fields, options = self._inputs()
        self._results()
        split = self._table_and_plane()
        self._lay_out(fields, options, split)
        style.follow_scale(self)

    def _inputs(self) -> tuple[QHBoxLayout, QLayout]:
        """A − B + C with Solve and the plane's switch; the rule's options below."""
        self.a, self.b, self.c = WordField("A: king"), WordField("B: man"), WordField("C: woman")
        for f in (self.a, self.b, self.c):
            f.returnPressed.connect(self.run)
        self.exclude = QCheckBox("Exclude the inputs (word2vec)")
        # Short labels, details in tooltips: the options fit two rows at 1024 px and 150 % text.
        self.exclude.setToolTip(EXPLAIN)
        self.variants = QCheckBox("…and variants (␣Paris, paris…)")
        self.variants.setToolTip("Their case and space variants too: word2vec's rule removes only the three input "
                                 "tokens; a vocabulary of pieces also holds their other spellings, which are then "
                                 "often the answer.")
        self.method = QComboBox()
        self.method.addItem("3CosAdd (A − B + C)", "add")
        self.method.addItem("3CosMul", "mul")
        self.hide_special = hide_special_switch()
        self.k = QSpinBox()
        self.k.setRange(1, 100)
        self.k.setPrefix("k = ")
        self.table_choice = TableChoice(TWO_TABLES)
        # Bound before the slots that read the state.
        self.bindings = Bindings(self.state)
        for widget, attr in ((self.a, "a"), (self.b, "b"), (self.c, "c"), (self.exclude, "exclude_inputs"),
                             (self.variants, "exclude_variants"), (self.method, "method"),
                             (self.hide_special, "hide_special"), (self.k, "k"), (self.table_choice, "table")):
            self.bindings.bind(widget, attr)
        self.exclude.toggled.connect(self.run_if_filled)
        self.state.events.exclude_inputs.connect(lambda on: self.variants.setEnabled(on))  # however the rule changed
        self.variants.setEnabled(self.state.exclude_inputs)
        self.variants.toggled.connect(self.run_if_filled)
        self.method.currentIndexChanged.connect(self.run_if_filled)
        self.hide_special.toggled.connect(self.run_if_filled)
        self.table_choice.currentIndexChanged.connect(self.run_if_filled)
        go = QPushButton("Solve")
        go.clicked.connect(self.run)
        # The plane folds away, leaving the table the whole width (a short or narrow screen).
        self.show_plane = QCheckBox("Plane")
        self.show_plane.setToolTip("Show the analogy's own plane beside the answers")
        self.show_plane.setChecked(True)
        fields = QHBoxLayout()
        for label, field in (("", self.a), ("−", self.b), ("+", self.c)):
            if label:
                sign = QLabel(label)
                style.use_font(sign, 20, bold=True)
                fields.addWidget(sign)
            fields.addWidget(field, 1)
        fields.addWidget(go)
        fields.addWidget(self.show_plane)
        return fields, flow_row(self.exclude, self.variants, self.method, self.k, self.table_choice,
                                self.hide_special)

    def _results(self) -> None:
        """The heading, the rule's line, the message, the answers' table and the benchmark's row."""
        self.heading = QLabel(HEADING_HINT)
        self.heading.setWordWrap(True)
        style.use_font(self.heading, style.LABEL_POINT_SIZE + 2, bold=True)
        self.ranks = QLabel(EXPLAIN)  # the rule, then the inputs' ranks that show it
        self.ranks.setWordWrap(True)
        style.use_font(self.ranks, style.LABEL_POINT_SIZE)
        self.busy = BusyBar()
        self.message = QLabel("")
        self.message.setStyleSheet(style.ERROR_STYLE)
        style.use_font(self.message)  # with a style sheet it would not follow the text size
        self.message.setWordWrap(True)
        self.message.hide()  # until there is one
        self.table = ResultsTable(["token", "id", "score"])
        self.table.tokenClicked.connect(lambda token_id: self.highlight.emit([token_id]))
        # The tokens take the width the numbers leave: in half a 1024-px row they were cut.
        for column, mode in enumerate((QHeaderView.ResizeMode.Stretch, QHeaderView.ResizeMode.ResizeToContents,
                                       QHeaderView.ResizeMode.ResizeToContents)):
            self.table.horizontalHeader().setSectionResizeMode(column, mode)
        self.bench_button = QPushButton("Google benchmark (19,544 questions)")
        self.bench_button.setToolTip("Run the Google analogy benchmark on this model, in a window of its own")
        self.bench_button.clicked.connect(self.run_benchmark)
        self.bench = QLabel("")
        self.bench.setWordWrap(True)
        self.bench.hide()  # until the benchmark runs

    def _table_and_plane(self) -> QSplitter:
        """The answers beside the analogy's own plane."""
        # The analogy's own plane: axes from its word pairs, where the global map's two
        # PCA axes (8 % of the variance) cannot show the parallelogram.
        self.plane = MapView()
        self.plane.wheel_scrolls_page = True
        self.plane.setToolTip("Ctrl + wheel zooms the plane (or click it, then wheel); the wheel alone scrolls the page")
        plane_title = QLabel("The analogy's plane")  # short: it sets the plane's least width
        style.use_font(plane_title, style.LABEL_POINT_SIZE, bold=True)
        self.plane_caption = QLabel("")
        self.plane_caption.setWordWrap(True)
        self.plane_box = plane_box = QWidget()
        right = QVBoxLayout(plane_box)
        right.setContentsMargins(0, 0, 0, 0)
        right.addWidget(plane_title)
        right.addWidget(self.plane, 1)
        split = side_by_side(self.table, plane_box, 1, 1)
        split.setSizes([SPLIT_EVEN, SPLIT_EVEN])  # half each, not what the plot's size hint asks
        split.setChildrenCollapsible(False)  # folded by its switch, not lost to a stray drag
        for widget in (plane_box, self.plane_caption):
            self.show_plane.toggled.connect(widget.setVisible)
        return split

    def _lay_out(self, fields: QHBoxLayout, options: QLayout, split: QSplitter) -> None:
        layout = QVBoxLayout(self)
        fields_box = folding(fields)
        layout.addWidget(fields_box)
        options_box = folding(options)
        layout.addWidget(options_box)
        # The wrapped lines span the tab, above and below the table and plane: beside the
        # plane, in half the width, they took the table's rows on a short screen.
        layout.addWidget(self.heading)
        layout.addWidget(self.busy)
        layout.addWidget(self.message)
        layout.addWidget(split, 1)
        layout.addWidget(self.plane_caption)
        layout.addWidget(self.ranks)
        bench_row = QHBoxLayout()
        bench_row.addWidget(self.bench_button, 0, Qt.AlignmentFlag.AlignTop)
        bench_row.addWidget(self.bench, 1)
        bench_box = folding(bench_row)
        layout.addWidget(bench_box)
        self.controls = (options_box, bench_box)  # what projector mode folds
        self.inputs = (fields_box,)  # and with a lesson's band up: the heading says the analogy

    def set_text_scale(self, scale: float) -> None:
        self.plane.setMinimumSize(round(PLANE_MIN_WIDTH * scale), round(PLANE_MIN_HEIGHT * scale))
        self.table.setMinimumWidth(round(TABLE_MIN_WIDTH * scale))
        self.table.set_text_scale(scale)  # first: its rows' height, which the minimum counts
        rows = self.table.verticalHeader().defaultSectionSize() * TABLE_MIN_ROWS
        header = self.table.horizontalHeader().sizeHint().height()
        self.table.setMinimumHeight(rows + header + 2 * self.table.frameWidth())

    def picture(self) -> tuple[QWidget, str]:
        return self.table, f"{self.heading.text()}\n{self.ranks.text()}".strip()

    def table_rows(self) -> tuple[list[str], list[tuple]] | None:
        return (self.table.headers, self.table.rows) if self.table.rows else None

    def on_model(self, summary: ModelSummary, restore: AnalogyState | None = None) -> None:
        """A new model: the old answer, headings and benchmark go; filled words (a
        session's, with `restore`) are asked again."""
        self.asking.forget()
        self.busy.hide()
        self.benchmarking.forget()
        if self.bench_window is not None:
            self.bench_window.hide()  # its numbers were another model's
        if restore is not None:
            for f in fields(AnalogyState):
                setattr(self.state, f.name, getattr(restore, f.name))
        self.variants.setEnabled(self.state.exclude_inputs)
        self.table_choice.follow_model(summary, self.state)
        for word in (self.a, self.b, self.c):
            word.set_vocabulary(summary.labels)
        self.plane.clear_map()
        self.plane.set_labels(summary.labels)
        self.plane_caption.setText("")
        self.table.fill([], [])
        self.ranks.setText(EXPLAIN)
        self._bench_says("")
        self._say("")
        self.heading.setText(HEADING_HINT)
        self.bench_button.setEnabled(True)
        self.run_if_filled()

    def set_words(self, a: str, b: str, c: str) -> None:
        self.a.setText(a)
        self.b.setText(b)
        self.c.setText(c)
        self.run()

    def run_if_filled(self) -> None:
        if all(w.strip() for w in (self.state.a, self.state.b, self.state.c)):
            self.run()

    def run(self) -> None:
        # At once: the old table would read as this question's answer while it is on its way.
        self.busy.show()
        self._say("")
        self.heading.setText(BUSY_HEADING)  # the words themselves only once their answer is shown
        self.table.fill([], [])
        self.asking.ask(rq.from_state(rq.Analogy, self.state))

    def run_benchmark(self) -> None:
        self._bench_table = self.state.table  # what its answer will have read, whatever is chosen meanwhile
        self.benchmarking.ask(rq.Benchmark(table=self._bench_table))
        if self.bench_window is None:
            self.bench_window = BenchmarkWindow(lambda: self.cancel(rq.Benchmark.channel), self.window())
        self.bench_window.started()
        self.bench_window.show()
        self.bench_window.raise_()

    def on_result(self, view: AnalogyView) -> None:
        self.busy.hide()
        self._say("")
        result = view.result
        a, b, c = view.input_labels
        rule = ("inputs and their variants excluded" if result.exclude_variants
                else "inputs excluded" if result.exclude_inputs else "inputs allowed")
        if self.state.table == "output":  # a newer choice would have a newer answer on its way
            rule += ", among the output head's rows"
        self.heading.setText(f"{a} − {b} + {c} = ?   ({rule})")
        inputs = set(view.input_ids)
        rows = [(h.token + ("   ← an input" if h.id in inputs else ""), h.id, h.score) for h in result.results]
        self.table.fill(rows, [h.id for h in result.results])
        where = ", ".join(f"{r.token} ranks {r.rank:,}" for r in result.input_ranks if r.rank is not None)
        self.ranks.setText(f"Without the exclusion rule: {where} ({RANKS_NOTE}).")
        if result.results:
            answer = result.results[0].id
            self.showArrows.emit([(view.input_ids[1], view.input_ids[0]), (view.input_ids[2], answer)])
            self.highlight.emit(list(view.input_ids) + [answer])
        self._show_plane(view.plane, view.no_plane)

    def _say(self, message: str) -> None:
        """An error under the heading; with none, the line takes no room from the table."""
        self.message.setText(message)
        self.message.setVisible(bool(message))

    def _bench_says(self, text: str) -> None:
        self.bench.setText(text)
        self.bench.setVisible(bool(text))

    def _show_plane(self, plane, why_none: str = "") -> None:
        self.plane.clear_map()
        if plane is None:
            self.plane_caption.setText(why_none)
            return
        self.plane.set_points(np.asarray(plane.ids, dtype=np.int64), plane.coords)
        self.plane.set_selected([i for pair in plane.arrows for i in pair])
        self.plane.set_arrows([(a, b, style.ARROW_COLORS[i % 2]) for i, (a, b) in enumerate(plane.arrows)])
        (b, a), (c, d) = plane.arrows
        label = self.plane.labels
        self.plane_caption.setText(
            f"x: {plane.axes[0]}; y: {plane.axes[1]} (made square to x). The arrows {label[b]} → {label[a]} and "
            f"{label[c]} → {label[d]} have cosine {plane.parallel:.2f} in all of the table's dimensions "
            "(1 would be exactly parallel). Grey: each word's nearest neighbours.")

    def on_failed(self, message: str) -> None:
        self.busy.hide()
        self._say(message)
        self.table.fill([], [])
        self.ranks.setText(EXPLAIN)
        self.heading.setText(HEADING_HINT)
        self.showArrows.emit([])
        self._show_plane(None)

    def _benchmark_failed(self, message: str) -> None:
        self._bench_says(message)
        if self.bench_window is not None:
            self.bench_window.stopped(message)

    def _benchmark_cancelled(self) -> None:
        self._benchmark_failed("The benchmark was cancelled.")

    def _benchmark_progress(self, fraction: float, stage: str, _preview: object) -> None:
        self._bench_says(f"{stage}: {fraction:.0%}")
        if self.bench_window is not None:
            self.bench_window.on_progress(fraction, stage)

    def on_benchmark(self, result: BenchmarkResult) -> None:
        def pct(x):
            return "n/a" if x is None else f"{x:.1%}"
        summary = (
            f"{result.kept:,} of {result.total:,} questions have four single-token words. "
            f"Accuracy with inputs excluded: {pct(result.accuracy_excluded)}; "
            f"with their case and space variants excluded too: {pct(result.accuracy_variants)}; "
            f"with inputs allowed: {pct(result.accuracy_included)}."
            + (" This vocabulary has no capitals, so the questions were lower-cased." if result.lowercased else "")
            + (" Read on the output head's rows." if self._bench_table == "output" else "")
        )
        self._bench_says(summary)
        if self.bench_window is not None:
            self.bench_window.show_result(result, summary + f" Below: the first {len(result.misses)} questions it got "
                                          "wrong with inputs excluded, and what it answered instead.")
