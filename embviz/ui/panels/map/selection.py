"""The Map tab's selection box: the tokens inside a drawn rectangle or lasso, and what
can be done with them (a word set, their neighbours, a CSV)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QPushButton, QVBoxLayout, QWidget

from embviz.ui.widgets import ResultsTable, WrappedLabel, flow_row


class SelectionBox(QWidget):
    """Shown only while something is selected: on a 1024 × 700 screen the word sets need the room."""

    tokenClicked = Signal(int)
    saveAsSet = Signal()
    neighbours = Signal()
    export = Signal()

    def __init__(self) -> None:
        super().__init__()
        self.label = WrappedLabel("")
        self.table = ResultsTable(["token", "id"])
        self.table.tokenClicked.connect(self.tokenClicked)
        self.save_button = self._button("Word set…", "Save the selected tokens as a word set of your own", self.saveAsSet)
        self.neighbours_button = self._button("Neighbours", "List the nearest tokens to the mean direction of the "
                                              "selected ones", self.neighbours)
        self.export_button = self._button("CSV…", "Export the selected tokens with their ids", self.export)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.table, 1)
        layout.addLayout(flow_row(self.save_button, self.neighbours_button, self.export_button))
        self.setVisible(False)

    @staticmethod
    def _button(text: str, tip: str, signal) -> QPushButton:
        button = QPushButton(text)
        button.setToolTip(tip)
        button.clicked.connect(lambda: signal.emit())
        return button

    def show_tokens(self, rows: list[tuple[str, int]]) -> None:
        """(label, id) of each selected token on the map; none hides the box."""
        self.table.fill(rows, [i for _, i in rows])
        self.label.setText(f"Selection: {len(rows):,} tokens")
        self.setVisible(bool(rows))

    @property
    def rows(self) -> list[tuple[str, int]]:
        return list(self.table.rows)
