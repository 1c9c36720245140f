"""Directions tab: meaning lives in directions. A concept direction from two words, word pairs
or two word sets; the whole vocabulary ranked along it, both ends listed; chosen words placed on
a strip by their cosine with it, and their DirectBias; an optional second direction for a
scatter; and, on a page of its own, WEAT and the random baseline (directions_weat.py)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox, QHBoxLayout, QLabel, QLayout, QPushButton, QRadioButton, QSizePolicy, QTabWidget, QVBoxLayout,
    QWidget,
)

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.views import ModelSummary
from embviz.core.table.bias_results import DirectionResult
from embviz.ui.formatting import visible_token as visible
from embviz.state.tabs import DirectionsState, word_list
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.panels.directions_weat import WeatSection
from embviz.ui.plots.direction_strip import DirectionStrip
from embviz.ui.plots.scatter_plot import ScatterPlot
from embviz.ui.widgets import ResultsTable, WordField, WrappedLabel, flow_row, side_by_side

TOP = 20  # rows listed at each end
KINDS = {"words": "two words", "pairs": "mean of the pairs' differences",
         "pca": "first principal component", "sets": "mean of B − mean of A"}


def direction_headline(found: DirectionResult) -> str:
    explained = f", {found.explained:.1%} of the variance" if found.explained is not None else ""
    what = "whole words" if found.words_only else "rows"
    # Pairs by their count: their words are in the field above, and in braces they took three lines.
    name = f"{len(found.sets[0].kept)} pairs" if found.kind in ("pairs", "pca") else found.described
    return f"{name} ({KINDS[found.kind]}{explained}): {found.ranked:,} {what} ranked."


def bias_line(found: DirectionResult) -> str:
    if found.direct_bias is None:
        return "Give words to place: their DirectBias is then shown."
    return f"DirectBias of the {len(found.placed)} placed words: {found.direct_bias:.3f} (mean |cosine|; 0 = neutral)."


def dropped_line(found: DirectionResult) -> str:
    """The words left out, short: why each one is in the line's tooltip."""
    dropped = [visible(s.word) for group in found.sets for s in group.dropped]
    return f"Left out (not one token with a direction): {', '.join(dropped)}." if dropped else ""


def dropped_why(found: DirectionResult) -> str:
    return "\n".join(f"'{visible(s.word)}' {s.reason}" for group in found.sets for s in group.dropped)


class _Pages(QTabWidget):
    """The two pages, whose least height is their minimum's: a QTabWidget answers a height for
    its width from its pages' preferred sizes, and that made the tab scroll at 1024 × 700."""

    def hasHeightForWidth(self) -> bool:
        return False


def _column(*parts: QWidget | QLayout) -> QWidget:
    """Rows and widgets stacked; the widget among them that grows (a plot, a table) takes the height."""
    box = QWidget()
    column = QVBoxLayout(box)
    column.setContentsMargins(0, 0, 0, 0)
    for part in parts:
        if isinstance(part, QLayout):
            column.addLayout(part)
        else:
            column.addWidget(part, 1 if isinstance(part, (DirectionStrip, ResultsTable, ScatterPlot)) else 0)
    return box


def _box(*widgets: QWidget) -> QWidget:
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        row.addWidget(widget)
    box.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)  # the fields' width, no gap
    return box


class DirectionsPanel(QWidget):
    focusToken = Signal(int)
    highlight = Signal(list)
    statusMessage = Signal(str)

    def __init__(self, submit, parent=None) -> None:
        super().__init__(parent)
        self.state = DirectionsState()
        self.shown: DirectionResult | None = None
        self.second_shown: DirectionResult | None = None
        self.asking = Latest(submit, self.on_result, self.on_failed)
        self.asking_second = Latest(submit, self.on_second, self.on_failed)
        self.bindings = Bindings(self.state)
        self.pages = _Pages()
        self.pages.addTab(self._direction_page(), "Direction")
        self.weat = WeatSection(submit, self.state, self.bindings)
        self.pages.addTab(self.weat, "WEAT and the baseline")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.pages)
        # What projector mode folds: the inputs; the answer, its table and its strip keep the screen.
        self.controls = (self.source_rows, self.options, self.placing, *self.weat.controls)
        style.follow_scale(self)

    def _direction_page(self) -> QWidget:
        self.choice = {key: QRadioButton(text) for key, text in
                       (("words", "two words"), ("pairs", "pairs"), ("sets", "two sets"))}
        self.start, self.end = WordField("from, e.g. he"), WordField("to, e.g. she")
        self.pairs = WordField("from:to pairs, e.g. man:woman, king:queen")
        self.pca = QCheckBox("first principal component")
        self.a_set, self.b_set = WordField("set A (from)"), WordField("set B (to)")
        self.words = WordField("words to place, e.g. doctor nurse engineer")
        self.words_only = QCheckBox("whole words only")
        self.second = QCheckBox("y axis:")
        self.second_start, self.second_end = WordField("from, e.g. small"), WordField("to, e.g. big")
        go = QPushButton("Rank")
        go.clicked.connect(self.run)
        self.bindings.bind_choice(self.choice, "source")  # type: ignore[arg-type]
        for widget, name in ((self.start, "start"), (self.end, "end"), (self.pairs, "pairs"), (self.pca, "pca"),
                             (self.a_set, "a_set"), (self.b_set, "b_set"), (self.words, "words"),
                             (self.words_only, "words_only"), (self.second, "second"),
                             (self.second_start, "second_start"), (self.second_end, "second_end")):
            self.bindings.bind(widget, name)
        for field in (self.start, self.end, self.pairs, self.a_set, self.b_set, self.words, self.second_start,
                      self.second_end):
            field.returnPressed.connect(self.run)
        for name in ("source", "pca", "words_only", "second"):
            getattr(self.state.events, name).connect(lambda *_: self.run())
        self.state.events.source.connect(lambda *_: self._show_inputs())
        self.state.events.second.connect(lambda *_: self._show_inputs())
        # Each kind's fields in a box of their own, so that "he → she" wraps as one piece.
        self.boxes = {"words": _box(self.start, QLabel("→"), self.end), "pairs": _box(self.pairs, self.pca),
                      "sets": _box(self.a_set, QLabel("→"), self.b_set)}
        self.source_rows = QWidget()
        column = QVBoxLayout(self.source_rows)
        column.setContentsMargins(0, 0, 0, 0)
        column.addLayout(flow_row(*self.choice.values(), *self.boxes.values(), go))
        self.headline = WrappedLabel("")
        style.use_font(self.headline, style.LABEL_POINT_SIZE + 2, bold=True)
        self.bias = WrappedLabel("")
        style.use_font(self.bias, style.LABEL_POINT_SIZE)
        self.message = WrappedLabel("")
        self.message.setStyleSheet(style.ERROR_STYLE)
        style.use_font(self.message, style.LABEL_POINT_SIZE)
        self.message.hide()
        # Both ends in one table, row by row: two tables of two columns each cut their numbers at 1024 × 700.
        self.ends = ResultsTable(["← from", "cos", "to →", "cos"])
        self.ends.cellDoubleClicked.connect(self._focus)
        self.strip = DirectionStrip()
        self.scatter = ScatterPlot("first direction", "second direction")
        # The words placed above the strip they make, the options above the table: at 1024 × 700
        # and 150 % three rows of inputs over the whole tab left the strip no room.
        self.options = _column(flow_row(self.words_only, self.second,
                                        _box(self.second_start, QLabel("→"), self.second_end)))
        self.placing = _column(flow_row(self.words))
        # The scatter takes the table's place while there is a second direction: under the strip
        # it made the tab scroll at 1024 × 700.
        left = _column(self.options, self.ends, self.scatter)
        right = _column(self.placing, self.strip)
        self.split = side_by_side(left, right, 1, 1)
        self.split.setSizes([1000, 1000])  # half each: the plot's own hint took all but a sliver
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(4, 4, 4, 0)  # thin margins: at 1024 × 700 and 150 % the page fits whole
        for part in (self.source_rows, self.headline, self.bias, self.message):
            layout.addWidget(part)
        layout.addWidget(self.split, 1)
        self._show_inputs()
        return page

    def set_text_scale(self, _scale: float) -> None:
        # The two-word fields as wide as a long word, not the row: "he → she" and Rank on one line.
        for field in (self.start, self.end, self.second_start, self.second_end):
            field.setMaximumWidth(field.fontMetrics().horizontalAdvance("engineer__") + 24)
        self.pairs.setMinimumWidth(self.pairs.fontMetrics().horizontalAdvance("man:woman, king:queen, he:she__"))

    def _show_inputs(self) -> None:
        source = self.state.source
        for key, box in self.boxes.items():
            box.setVisible(source == key)
        for widget in (self.second_start, self.second_end):
            widget.setEnabled(self.state.second)
        self.scatter.setVisible(self.state.second)
        self.ends.setVisible(not self.state.second)

    def on_model(self, summary: ModelSummary, restore: DirectionsState | None = None) -> None:
        self.asking.forget()
        self.asking_second.forget()
        for field in (self.start, self.end, self.pairs, self.a_set, self.b_set, self.words, self.second_start,
                      self.second_end):
            field.set_vocabulary(summary.labels)
        if restore is not None:
            for name in DirectionsState.__dataclass_fields__:
                setattr(self.state, name, getattr(restore, name))
        self.weat.on_model(summary)
        self.run()
        self.weat.run()

    def show_lesson(self, setup: dict) -> None:
        """A lesson step's part: a direction from two words and the words placed on it, a WEAT
        test run, or the random baseline, each on its page."""
        if "direction" in setup:
            start, end, words = setup["direction"]
            self.state.second = False
            self.state.words_only = True
            self.state.start, self.state.end, self.state.words = start, end, words
            self.state.source = "words"
            self.words.setCursorPosition(0)  # the first words in sight, not the last
            self.pages.setCurrentIndex(0)
            self.run()
        if "weat" in setup:
            self.state.weat_test = setup["weat"]
            self.pages.setCurrentWidget(self.weat)
            self.weat.run()
        if setup.get("baseline"):
            self.pages.setCurrentWidget(self.weat)

    def request(self) -> rq.Direction:
        state = self.state
        words = word_list(state.words)
        if state.source == "words":
            return rq.Direction(start=state.start, end=state.end, top=TOP, words=words, words_only=state.words_only)
        if state.source == "pairs":
            return rq.Direction(pairs=state.pair_list(), pca=state.pca, top=TOP, words=words,
                                words_only=state.words_only)
        return rq.Direction(a_set=word_list(state.a_set), b_set=word_list(state.b_set), top=TOP, words=words,
                            words_only=state.words_only)

    def run(self) -> None:
        self.second_shown = None
        self.asking_second.forget()
        self.asking.ask(self.request())

    def on_result(self, found: DirectionResult) -> None:
        self.shown = found
        self.message.hide()
        self.headline.setText(direction_headline(found))
        self.bias.setText(" ".join(part for part in (bias_line(found), dropped_line(found)) if part))
        self.bias.setToolTip(dropped_why(found))
        start, end = self._ends(found)
        self.ends.headers = [f"← {start}", "cos", f"{end} →", "cos"]
        self.ends.setHorizontalHeaderLabels(self.ends.headers)
        self.ends.fill([(a.token, round(a.score, 3), t.token, round(t.score, 3)) for a, t in zip(found.away, found.toward)],
                       [h.id for h in found.away])
        self.strip.set_words([p.word for p in found.placed], [p.cosine for p in found.placed], start, end)
        if self.state.second and found.placed:
            # After the first answer: both are on one channel, and a second ask would cancel the first.
            self.asking_second.ask(rq.Direction(start=self.state.second_start, end=self.state.second_end, top=1,
                                                words=[p.word for p in found.placed], words_only=self.state.words_only))
        else:
            self.scatter.clear_points()
        if self.isVisible():
            self.highlight.emit([p.id for p in found.placed])
            self.statusMessage.emit(f"Direction {found.described}.")

    def _ends(self, found: DirectionResult) -> tuple[str, str]:
        if found.kind == "words":
            return visible(self.state.start), visible(self.state.end)
        return ("A", "B") if found.kind == "sets" else ("from", "to")

    def on_second(self, found: DirectionResult) -> None:
        first = self.shown
        if first is None:
            return
        self.second_shown = found
        along = {p.id: p.cosine for p in found.placed}
        both = [p for p in first.placed if p.id in along]
        start, end = self._ends(first)
        self.scatter.x_name, self.scatter.y_name = f"{start} → {end}", found.described  # short: the plot is small
        self.scatter.set_points([p.cosine for p in both], [along[p.id] for p in both],
                                {i: p.word for i, p in enumerate(both)}, None, "")

    def on_failed(self, message: str) -> None:
        self.shown = None
        self.headline.setText("")
        self.bias.setText("")
        self.ends.fill([], [])
        self.strip.clear_words()
        self.scatter.clear_points()
        self.message.setText(message)
        self.message.show()

    def _focus(self, row: int, column: int) -> None:
        found = self.shown
        hits = [] if found is None else (found.toward if column >= 2 else found.away)
        if 0 <= row < len(hits):
            self.focusToken.emit(hits[row].id)

    def picture(self) -> tuple[QWidget, str]:
        return self, self.headline.text()

    def table_rows(self) -> tuple[list[str], list[tuple]] | None:
        found = self.shown
        if found is None:
            return None
        return (["end", "token", "id", "cosine"],
                [("to", h.token, h.id, h.score) for h in found.toward] + [("from", h.token, h.id, h.score) for h in found.away])
