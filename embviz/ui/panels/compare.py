"""Compare tab: how alike two models' neighbourhoods are, token by token (MIT's Embedding
Comparator, exact and for every shared token). The second model is opened from
File ▸ Compare with…; the histogram's brush filters the list; a chosen token shows its
neighbours in both, only in A and only in B; a double-click makes it the focus everywhere."""

from __future__ import annotations

import os
from dataclasses import fields, replace

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.views import CompareView, ComparisonSummary, ModelSummary
from embviz.state.tab_state import field_range
from embviz.state.tabs import OWN_OUTPUT, CompareState
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.panels.compare_parts import LIST_LIMIT, Dominoes, listed_positions, neighbour_lists
from embviz.ui.plots.score_histogram import ScoreHistogram
from embviz.ui.widgets import ElidedLabel, HeldColumn, ResultsTable, RoomWatch, TableChoice, WrappedLabel, flow_row

# Short: on a projector at 150 % each line of it is a row of the list.
MEANING = "Score: the share of a word's k nearest neighbours the two models agree on (in both ÷ in either: 1 = all, 0 = none)."
ROWS_KEPT = 3  # of the list and the dominoes, in sight before the histogram is
NO_SECOND = "No second model yet: File ▸ Compare with… opens one beside this model."
TWO_TABLES = ("Which rows of the two models to compare: their input embeddings, or their output heads (the rows "
              "that score each next token; both models must keep theirs apart from the embedding).")


class ComparePanel(QWidget):
    focusToken = Signal(int)  # a token id of the first model to make the focus everywhere
    highlight = Signal(list)
    statusMessage = Signal(str)
    reopen = Signal(str)  # the comparison's source, to pair again (the tables compared changed)

    def __init__(self, submit, cancel, parent=None) -> None:
        super().__init__(parent)
        self.submit, self.cancel = submit, cancel
        self.state = CompareState()
        self.view: CompareView | None = None  # None until one is computed
        self.labels: list[str] = []
        self.names = ("", "")  # A's and B's model names
        self.comparing = Latest(submit, self.on_result, self._ended,
                                lambda: self._ended("The comparison was cancelled."), self.progressed)
        self.asking_token = Latest(submit, self._token_result, self._token_failed)
        self._build_controls()
        self._build_body()
        self._lay_out()
        self._connect()
        self.reset(NO_SECOND)

    # --- building ------------------------------------------------------------------------------
    def _build_controls(self) -> None:
        self.k = QSpinBox()
        k_range = field_range(CompareState, "k")  # the state's field holds the one range
        assert k_range is not None
        self.k.setRange(int(k_range[0]), int(k_range[1]))
        self.k.setPrefix("k = ")
        self.k.setToolTip("How many nearest neighbours of each word the score compares (5–250)")
        self.go = QPushButton("Compare")
        self.go.clicked.connect(self.run)
        self.table_choice = TableChoice(TWO_TABLES)
        self._paired_table = self.state.table  # the tables of the comparison open now
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)  # never wider than its row
        self.stop = QPushButton("Cancel")
        self.stop.clicked.connect(self.cancel_running)
        self.source = WrappedLabel("")  # which models, and what they share
        self.meaning = WrappedLabel(MEANING)
        # The rule is a few long sentences: on a projector they are shown when asked for.
        self.rule = ""
        self.show_rule = QToolButton()
        self.show_rule.setText("Matching rule")  # short: it sets the histogram column's least width
        self.show_rule.setToolTip("How the two models' words are matched")
        self.show_rule.clicked.connect(self.explain_rule)
        self.message = QLabel("")
        self.message.setStyleSheet(style.ERROR_STYLE)
        style.use_font(self.message)  # with a style sheet it would not follow the text size
        self.message.setWordWrap(True)
        self.message.hide()  # no empty line: shown with a sentence (`_say`)

    def _build_body(self) -> None:
        self.histogram = ScoreHistogram()
        self.histogram.setToolTip("Drag the shaded band, or its edges, to list only the words scoring in it")
        self.order = QComboBox()
        self.order.addItem("Most alike", "descending")
        self.order.addItem("Least alike", "ascending")
        self.words_only = QCheckBox("Whole words")
        self.words_only.setToolTip("List only whole words (not pieces such as ␣amput or ing), as A's tokenizer has them")
        # One line, cut with "…" if it must be: wrapped, its second line was drawn over the
        # histogram's axis numbers when the column was given less than it asked.
        self.shown = ElidedLabel("")
        self.table = ResultsTable(["token", "score"])
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setToolTip("Click: its neighbours in both models. Double-click: the focus in every tab and on the map.")
        self.dominoes = Dominoes()

    def _lay_out(self) -> None:
        """The sentences and controls beside the histogram where the width holds both, under
        it where it does not; below them the list and the dominoes, side by side. Projector
        mode folds the sentences and controls (`controls`): the histogram, the list and the
        dominoes keep the screen."""
        self.explained = HeldColumn()
        text = QVBoxLayout(self.explained)
        text.setContentsMargins(0, 0, 0, 0)
        for label in (self.meaning, self.source):
            text.addWidget(label)
        # A row that wraps: at 200 % its four controls and the rule's button are wider than a
        # projector's screen beside the histogram.
        text.addLayout(flow_row(self.k, self.go, self.table_choice, self.order, self.words_only, self.show_rule))
        text.addStretch(1)
        # The histogram's column as one widget of a fixed least height: beside the wrapped
        # sentences, a column of plain layout items was given only the sentences' height, and
        # the count under the histogram was drawn over its axis numbers.
        self.plot_column = HeldColumn()
        plot = QVBoxLayout(self.plot_column)
        plot.setContentsMargins(0, 0, 0, 0)
        for shown in (self.histogram, self.shown):
            plot.addWidget(shown)
        top = QHBoxLayout()
        top.addWidget(self.explained, 2)
        top.addWidget(self.plot_column, 1)
        # The progress on a row of its own: beside the controls its stage's text pushed the
        # tab wider than a projector's screen while a comparison ran.
        running = QHBoxLayout()
        running.addWidget(self.progress, 1)
        running.addWidget(self.stop)
        body = QHBoxLayout()
        for part, stretch in ((self.table, 1), (self.dominoes, 2)):  # the words whole at 200 %
            part.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)  # shares by stretch alone
            body.addWidget(part, stretch)
        layout = self.column = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(running)
        layout.addWidget(self.message)
        layout.addLayout(body, 1)
        self.controls = (self.explained,)  # what projector mode folds: the histogram, list and dominoes stay
        RoomWatch(self, self._keep_rows)

    def _connect(self) -> None:
        self.bindings = Bindings(self.state)
        self.bindings.bind(self.k, "k")
        self.bindings.bind(self.order, "order")
        self.bindings.bind(self.words_only, "words_only")
        self.bindings.bind(self.table_choice, "table")
        self.table_choice.currentIndexChanged.connect(self._tables_changed)
        self.histogram.rangeChosen.connect(self.set_range)
        for event in (self.state.events.low, self.state.events.high):
            event.connect(lambda *_: self.histogram.set_region(self.state.low, self.state.high))
        for event in (self.state.events.low, self.state.events.high, self.state.events.order, self.state.events.words_only):
            event.connect(lambda *_: self.fill_list())
        self.table.tokenClicked.connect(self._token_clicked)
        self.table.cellDoubleClicked.connect(lambda row, _col: self.focusToken.emit(self.table.ids[row]))

    # --- the window's calls ------------------------------------------------------------------------
    def reset(self, text: str) -> None:
        """No comparison on screen (none yet, or the one shown was dropped): `text` says why."""
        self.view = None
        self.comparing.forget()
        self.asking_token.forget()
        self.source.setText(text)
        self.rule = ""
        self.show_rule.setVisible(False)
        self.histogram.set_scores(np.zeros(0))
        self._position: dict[int, int] = {}  # token id of A → its place among the shared words
        self.table.fill([], [])
        self.shown.set_full_text("")
        self.dominoes.clear("Click a token in the list to see its neighbours in both models.")
        self.go.setEnabled(False)
        self._busy(False)

    def snapshot(self) -> CompareState:
        """The state for a session: a file's path made absolute, to re-open from anywhere."""
        source = self.state.source
        if source and os.path.exists(source):
            source = os.path.abspath(source)
        return replace(self.state, source=source)

    def on_model(self, summary: ModelSummary, restore: CompareState | None = None) -> None:
        """A new first model: any comparison belonged to the old one (the worker dropped it)."""
        dropped = self.state.source is not None and restore is None
        self.labels = summary.labels
        self.names = (summary.info["name"], "")
        self._say("")
        # None first, so no control restored below pairs the old second model again: the
        # window opens a session's comparison itself.
        self.state.source = None
        if restore is not None:
            for f in fields(CompareState):
                if f.name != "source":
                    setattr(self.state, f.name, getattr(restore, f.name))
        self.table_choice.follow_model(summary, self.state)
        self.reset("The comparison was dropped: a new first model is open. File ▸ Compare with… compares again."
                   if dropped else NO_SECOND)

    def opening(self, name: str) -> None:
        self._say("")
        if self.view is None:  # a comparison on screen stays described until another replaces it
            self.source.setText(f"Opening {name} to compare with {self.names[0]}…")
        self.progress.setValue(0)
        self._busy(True)

    def open_failed(self, message: str) -> None:
        self._busy(False)
        self._say(message)
        self.state.table = self._paired_table  # the choice names the tables on screen
        if self.view is None:
            self.source.setText(NO_SECOND)

    def on_comparison(self, source: str, summary: ComparisonSummary) -> None:
        """A second model opened beside the first: its counts at once, then every score."""
        a, b = self.names = summary.names
        self.reset(f"A is {a}, B is {b}: they share {summary.shared:,} words; left out: "
                   f"{summary.only_a:,} tokens of A, {summary.only_b:,} of B.")
        self.state.source = source
        self._paired_table = self.state.table
        self.table_choice.setVisible(source != OWN_OUTPUT)  # that pairing names its two tables itself
        self.rule = " ".join([f"Matching: {summary.rule}", *summary.notes])
        self.show_rule.setVisible(True)
        self.go.setEnabled(True)
        self.run()

    def _tables_changed(self) -> None:
        source = self.state.source
        if source is not None and source != OWN_OUTPUT and self.state.table != self._paired_table:
            self.reopen.emit(source)

    def explain_rule(self) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, "How words are matched", self.rule,
                          QMessageBox.StandardButton.Close, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # not modal: the window stays usable

    def progressed(self, fraction: float, stage: str, _preview: object = None) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.progress.setFormat(stage or "%p%")

    # --- requests ----------------------------------------------------------------------------------
    def run(self) -> None:
        if self.state.source is None:
            return
        self._say("")
        self.progress.setValue(0)
        self._busy(True)
        self.comparing.ask(rq.Compare(k=self.state.k))

    def cancel_running(self) -> None:
        for channel in (rq.Compare.channel, rq.LoadComparison.channel):
            self.cancel(channel)

    def on_result(self, view: CompareView) -> None:
        self._busy(False)
        self.view = view
        self.histogram.set_scores(view.jaccard)
        self.histogram.set_region(self.state.low, self.state.high)
        self.fill_list()
        self.statusMessage.emit(f"Compared at k = {view.k}: mean score {view.mean_jaccard:.3f}, "
                                f"linear CKA {'undefined' if view.cka is None else f'{view.cka:.3f}'}.")
        if self.state.token in view.words:
            self.show_token(self.state.token)

    def show_token(self, word: str) -> None:
        """A shared word's dominoes (as matched: "march"); it becomes the tab's focused token."""
        self.state.token = word
        k = self.view.k if self.view is not None else self.state.k  # the k of the scores listed
        self.asking_token.ask(rq.CompareToken(token=word, k=k))

    def _token_clicked(self, token_id: int) -> None:
        if self.view is None:
            return
        self.show_token(self.view.words[self._position[token_id]])
        self.highlight.emit([token_id])

    def _token_result(self, found) -> None:
        self.dominoes.show_view(found, self.view.k if self.view is not None else self.state.k)

    def _token_failed(self, message: str) -> None:
        self.dominoes.clear(message)

    def _ended(self, message: str) -> None:
        self._busy(False)
        self._say(message)

    # --- the list ---------------------------------------------------------------------------------
    def set_range(self, low: float, high: float) -> None:
        self.state.low, self.state.high = min(low, high), max(low, high)

    def fill_list(self) -> None:
        if self.view is None:
            return
        view, state = self.view, self.state
        positions = self._listed()
        self._position = {int(view.ids_a[p]): int(p) for p in positions}
        shown = positions[:LIST_LIMIT]
        self.table.fill([(self.labels[int(view.ids_a[p])], float(view.jaccard[p])) for p in shown],
                        [int(view.ids_a[p]) for p in shown])
        more = f", {LIST_LIMIT:,} listed" if len(positions) > LIST_LIMIT else ""
        what = "whole words" if state.words_only else "words"
        self.shown.set_full_text(f"{len(positions):,} {what} in {state.low:.2f}–{state.high:.2f}{more}")

    def _listed(self) -> np.ndarray:
        """The positions listed: the brushed range, whole words only when asked, in the chosen order."""
        view, state = self.view, self.state
        assert view is not None
        return listed_positions(view.jaccard, view.ids_a, state.low, state.high, state.order == "descending",
                                view.whole_a if state.words_only else None)

    def table_rows(self) -> tuple[list[str], list[tuple]] | None:
        """Every listed word (the whole brushed range, past the list's limit) with its score
        and its neighbour lists, nearest first, separated by spaces."""
        if self.view is None:
            return None
        view = self.view
        positions = self._listed()
        rows = [(self.labels[int(view.ids_a[p])], float(view.jaccard[p]),
                 *(" ".join(words) for words in neighbour_lists(view, int(p), self.labels))) for p in positions]
        return ["token", f"score (k = {view.k})", "in both", "only in A", "only in B"], rows

    def picture(self) -> tuple[QWidget, str]:
        return self, f"{self.names[0]} compared with {self.names[1]}"

    # --- helpers ----------------------------------------------------------------------------------
    def _keep_rows(self) -> None:
        """The histogram (and its count) only where the list and the dominoes keep ROWS_KEPT
        rows in sight under it: a lesson's caption band at 200 % leaves room for the one or
        the other, and the list is what a class reads. (Unless leaving it out gains nothing.)"""
        page = self.parentWidget()  # the tab's page: the room on screen, not the panel's own height
        if page is None:
            return
        layout, table = self.column, self.table
        spacing, margins = layout.spacing(), layout.contentsMargins()
        rows = (table.horizontalHeader().sizeHint().height() + ROWS_KEPT * table.verticalHeader().defaultSectionSize()
                + 2 * table.frameWidth())
        body = self.dominoes.heading.minimumHeight() + self.dominoes.column.spacing() + rows
        others = sum(w.sizeHint().height() + spacing for w in (self.message, self.progress) if w.isVisibleTo(self))
        text = self.explained.minimumHeight() if self.explained.isVisibleTo(self) else 0
        need = margins.top() + margins.bottom() + others + spacing + body
        with_plot = need + max(text, self.plot_column.minimumHeight())
        without = need + text
        self.plot_column.setVisible(with_plot <= page.height() or without >= with_plot)

    def _say(self, text: str) -> None:
        """A sentence of trouble; no empty line when there is none."""
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def _busy(self, on: bool) -> None:
        self.progress.setVisible(on)
        self.stop.setVisible(on)
