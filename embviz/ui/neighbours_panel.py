"""Neighbours tab: the cosine nearest neighbours of a typed word or a clicked point."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QPushButton, QSpinBox, QVBoxLayout, QWidget

from embviz import requests as rq
from embviz.ui import style
from embviz.ui.widgets import ResultsTable, WordField, flow_row, hide_special_switch

HEADING_HINT = "Type a word or click a point on the map."


class NeighboursPanel(QWidget):
    highlight = Signal(list)  # token ids to ring and label on the map
    statusMessage = Signal(str)

    def __init__(self, submit, parent=None) -> None:
        super().__init__(parent)
        self.submit = submit
        self.request_id = 0
        self.word = WordField("A word, e.g. king (or ␣king for the exact token)")
        self.word.returnPressed.connect(self.run)
        self.k = QSpinBox()
        self.k.setRange(1, 500)
        self.k.setValue(10)
        self.k.setPrefix("k = ")
        self.k.valueChanged.connect(self.run_if_ready)
        self.centered = QCheckBox("Mean-centred")
        self.centered.setToolTip("Subtract the average row from every row first: this changes the scores.")
        self.centered.toggled.connect(self.run_if_ready)
        self.hide_special = hide_special_switch(self.run_if_ready)
        go = QPushButton("Find neighbours")
        go.clicked.connect(self.run)
        self.heading = QLabel(HEADING_HINT)
        style.use_font(self.heading, style.LABEL_POINT_SIZE + 2, bold=True)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setStyleSheet(style.ERROR_STYLE)
        key = QLabel("␣ marks a leading space: ␣king is the token for \"king\" in the middle of a sentence. "
                     "Cosine: 1 = same direction, 0 = unrelated.")
        key.setWordWrap(True)
        self.table = ResultsTable(["token", "id", "cosine"])
        self.table.tokenClicked.connect(lambda token_id: self.highlight.emit([token_id]))
        row = QHBoxLayout()
        row.addWidget(self.word, 1)
        row.addWidget(self.k)
        row.addWidget(go)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addLayout(flow_row(self.centered, self.hide_special))
        layout.addWidget(key)
        layout.addWidget(self.heading)
        layout.addWidget(self.message)
        layout.addWidget(self.table, 1)
        self._last_query: int | str | None = None

    def picture(self) -> tuple[QWidget, str]:
        return self.table, self.heading.text()

    def table_rows(self) -> tuple[list[str], list[tuple]] | None:
        return (self.table.headers, self.table.rows) if self.table.rows else None

    def on_model(self, summary) -> None:
        """A new model: the old answer goes; a typed word is asked again, a clicked id
        (which names another token here) is forgotten."""
        self.request_id = 0
        self.word.set_vocabulary(summary.labels)
        self.table.fill([], [])
        self.heading.setText(HEADING_HINT)
        self.message.setText("")
        if isinstance(self._last_query, str) and self._last_query.strip():
            self.query(self._last_query)
        else:
            self._last_query = None

    def run_if_ready(self) -> None:
        if self._last_query is not None:
            self.query(self._last_query)

    def run(self) -> None:
        self.query(self.word.text())

    def query(self, query: int | str) -> None:
        self._last_query = query
        self.request_id = self.submit(rq.Neighbours(
            query=query, k=self.k.value(), centered=self.centered.isChecked(), hide_special=self.hide_special.isChecked(),
        ))

    def show_token(self, token_id: int) -> None:
        """A point clicked on the map."""
        self.query(int(token_id))

    def on_result(self, rid: int, view) -> None:
        if rid != self.request_id:
            return
        self.message.setText("")
        kind = "mean-centred cosine" if view.centered else "cosine"
        self.heading.setText(f"Nearest to {view.query_label} (id {view.query_id}) by {kind}")
        self.table.fill([(h.token, h.id, h.score) for h in view.hits], [h.id for h in view.hits])
        self.highlight.emit([view.query_id] + [h.id for h in view.hits[:5]])

    def on_failed(self, rid: int, message: str) -> None:
        if rid == self.request_id:
            self.message.setText(message)
