"""Neighbours tab: the nearest neighbours of a typed word or a clicked point, by cosine
or by dot product, with both columns and each row's length."""

from __future__ import annotations

from dataclasses import fields

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QLabel, QPushButton, QSpinBox, QVBoxLayout, QWidget

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.views import ModelSummary, NeighboursView
from embviz.state.tabs import NeighboursState
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.widgets import BusyBar, FittedCombo, ResultsTable, TableChoice, WordField, flow_row, hide_special_switch

HEADING_HINT = "Type a word or click a point on the map."
TWO_TABLES = ("Which rows to search: the embedding each token enters the model as, or the output head's row "
              "that scores it at the end (this model keeps the two apart).")
BUSY_HEADING = "Finding the nearest tokens…"


def selection_text(ids: list[int]) -> str:
    """What the word field reads while a map selection's neighbours are shown."""
    return f"selection ({len(ids):,} tokens)"


class NeighboursPanel(QWidget):
    highlight = Signal(list)  # token ids to ring and label on the map
    statusMessage = Signal(str)

    def __init__(self, submit, parent=None) -> None:
        super().__init__(parent)
        self.asking = Latest(submit, self.on_result, self.on_failed)
        self.state = NeighboursState()
        self.labels: list[str] = []  # the model's, for the field to name a clicked token
        self.word = WordField("A word, e.g. king (or ␣king for the exact token)")
        self.word.returnPressed.connect(self.run)
        self.k = QSpinBox()
        self.k.setRange(1, 500)
        self.k.setPrefix("k = ")
        self.centered = QCheckBox("Mean-centred")
        self.centered.setToolTip("Subtract the average row from every row first: this changes the scores.")
        self.hide_special = hide_special_switch()
        self.by = FittedCombo()
        self.by.setToolTip("Rank the neighbours by cosine (direction only) or by dot product (direction × both lengths)")
        self.by.addItem("By cosine (direction)", "cosine")
        self.by.addItem("By dot product (direction × lengths)", "dot")
        self.table_choice = TableChoice(TWO_TABLES)
        # Bound before the slots that read the state.
        self.bindings = Bindings(self.state)
        for widget, attr in ((self.word, "word"), (self.k, "k"), (self.centered, "centered"),
                             (self.hide_special, "hide_special"), (self.by, "by"), (self.table_choice, "table")):
            self.bindings.bind(widget, attr)
        self.by.currentIndexChanged.connect(self.run_if_ready)
        self.table_choice.currentIndexChanged.connect(self.run_if_ready)
        self.k.valueChanged.connect(self.run_if_ready)
        self.centered.toggled.connect(self.run_if_ready)
        self.hide_special.toggled.connect(self.run_if_ready)
        go = QPushButton("Find")  # short: the word, k, Find and the ranking share a line at 1024 × 700 and 150 %
        go.setToolTip("List the nearest tokens to the word (Enter)")
        go.clicked.connect(self.run)
        self.heading = QLabel(HEADING_HINT)
        style.use_font(self.heading, style.LABEL_POINT_SIZE + 2, bold=True)
        self.heading.setWordWrap(True)  # a selection's heading is long: it must not widen the window
        self.busy = BusyBar()
        self.message = QLabel("")
        self.message.hide()  # shown with a message: an empty line was a table row lost
        self.message.setWordWrap(True)
        self.message.setStyleSheet(style.ERROR_STYLE)
        style.use_font(self.message)  # with a style sheet it would not follow the text size
        # One line, so that a 1024 × 700 screen at 150 % keeps eight rows of the table; the rest in its tooltip.
        key = QLabel("␣ = a leading space; dot = cosine × both rows' lengths")
        key.setToolTip("␣ marks a leading space: ␣king is the token for \"king\" in the middle of a sentence. "
                       "Cosine: 1 = same direction, 0 = unrelated. The dot product is the cosine times both rows' "
                       "lengths, so ranked by dot, long rows rise even when they point elsewhere.")
        key.setWordWrap(True)
        self.table = ResultsTable(["token", "id", "cosine", "dot", "length"])
        self.table.tokenClicked.connect(lambda token_id: self.highlight.emit([token_id]))
        layout = QVBoxLayout(self)
        # One wrapping row, the word field taking what its line leaves: two lines at 1024 × 700
        # and 150 %, and at 200 % the word keeps its room while the switches wrap.
        layout.addLayout(flow_row(self.word, self.k, go, self.by, self.table_choice, self.centered, self.hide_special))
        layout.addWidget(key)
        self.controls = (self.by, self.table_choice, self.centered, self.hide_special, key)  # what projector mode folds
        self.inputs = (self.word, self.k, go)  # and with a lesson's band up: the heading names the word
        layout.addWidget(self.heading)
        layout.addWidget(self.busy)
        layout.addWidget(self.message)
        layout.addWidget(self.table, 1)

    def _say(self, message: str) -> None:
        self.message.setText(message)
        self.message.setVisible(bool(message))

    def picture(self) -> tuple[QWidget, str]:
        return self.table, self.heading.text()

    def table_rows(self) -> tuple[list[str], list[tuple]] | None:
        return (self.table.headers, self.table.rows) if self.table.rows else None

    def on_model(self, summary: ModelSummary, restore: NeighboursState | None = None) -> None:
        """A new model: the old answer goes; a typed word is asked again, a clicked id
        (which names another token here) is forgotten. A session of this model
        (`restore`) brings back its controls and asks its last query, ids included."""
        self.asking.forget()
        self.busy.hide()
        self.labels = summary.labels
        self.word.set_vocabulary(summary.labels)
        self.table.fill([], [])
        self.heading.setText(HEADING_HINT)
        self._say("")
        if restore is not None:
            for f in fields(NeighboursState):
                setattr(self.state, f.name, getattr(restore, f.name))
        elif not isinstance(self.state.query, str) or not self.state.query.strip():
            self.state.query = None
            self._show_word("")  # it named a token or a selection of the old vocabulary
        self.table_choice.follow_model(summary, self.state)
        self.run_if_ready()

    def run_if_ready(self) -> None:
        if self.state.query is not None:
            self.query(self.state.query)

    def run(self) -> None:
        """The field's word; while it still names the selection shown, that selection."""
        query = self.state.query
        selection = isinstance(query, list) and self.state.word == selection_text(query)
        self.query(query if selection and query is not None else self.state.word)

    def query(self, query: int | str | list[int]) -> None:
        """A typed word, a clicked token id, or the ids of a map selection (their mean).
        The field says which: what is listed is never another word's neighbours."""
        self.state.query = query
        self._show_word(self._describe(query))
        # At once: the old table would read as this query's answer while it is on its way.
        self.busy.show()
        self._say("")
        self.heading.setText(BUSY_HEADING)  # the word itself only once its answer is shown
        self.table.fill([], [])
        self.asking.ask(rq.from_state(rq.Neighbours, self.state, query=query))

    def _describe(self, query: int | str | list[int]) -> str:
        """The query as the field shows it: the word, the token's label, or the selection."""
        if isinstance(query, str):
            return query
        if isinstance(query, list):
            return selection_text(query)
        return self.labels[query] if 0 <= query < len(self.labels) else ""

    def _show_word(self, text: str) -> None:
        if text != self.state.word:
            self.state.word = text

    def show_token(self, token_id: int) -> None:
        """A point clicked on the map."""
        self.query(int(token_id))

    def on_result(self, view: NeighboursView) -> None:
        self.busy.hide()
        self._say("")
        kind = "cosine" if view.by == "cosine" else "dot product"
        kind = f"mean-centred {kind}" if view.centered else kind
        if self.state.table == "output":  # a newer choice would have a newer answer on its way
            kind += ", among the output head's rows"
        if view.query_id < 0:  # a selection's mean: no single token, and the tokens themselves are left out
            self.heading.setText(f"Nearest to {view.query_label} (its mean row's length {view.query_length:.3g}; "
                                 f"the selected tokens left out) by {kind}")
        else:
            self.heading.setText(f"Nearest to {view.query_label} (id {view.query_id}, length {view.query_length:.3g}) by {kind}")
        rows = [(h.token, h.id, cos, dot, length) for h, cos, dot, length in zip(view.hits, view.cosines, view.dots, view.lengths)]
        self.table.fill(rows, [h.id for h in view.hits])
        # Ringed on the map: where the picture puts the table's true nearest rows.
        self.highlight.emit([view.query_id] * (view.query_id >= 0) + [h.id for h in view.hits[:10]])

    def on_failed(self, message: str) -> None:
        self.busy.hide()
        self._say(message)  # the old answer would read as this query's
        self.heading.setText(HEADING_HINT)
        self.table.fill([], [])
        self.highlight.emit([])
