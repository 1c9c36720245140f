"""Small shared widgets: a results table and a word field with completion."""

from __future__ import annotations

from PySide6.QtCore import QStringListModel, Qt, Signal
from PySide6.QtWidgets import QAbstractItemView, QCompleter, QHeaderView, QLineEdit, QTableWidget, QTableWidgetItem

from embviz.ui import style


class ResultsTable(QTableWidget):
    """Read-only rows of (token, id, score, …) in a large font."""

    tokenClicked = Signal(int)  # the token id of the clicked row

    def __init__(self, headers: list[str], parent=None) -> None:
        super().__init__(0, len(headers), parent)
        self.setHorizontalHeaderLabels(headers)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.verticalHeader().setVisible(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.setFont(style.font(style.LABEL_POINT_SIZE))
        self.verticalHeader().setDefaultSectionSize(34)
        self.ids: list[int] = []
        self.cellClicked.connect(lambda row, _col: self.tokenClicked.emit(self.ids[row]))

    def fill(self, rows: list[tuple], ids: list[int]) -> None:
        self.setRowCount(len(rows))
        self.ids = list(ids)
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                text = f"{value:.3f}" if isinstance(value, float) else str(value)
                item = QTableWidgetItem(text)
                if not isinstance(value, str):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(r, c, item)


class WordField(QLineEdit):
    """A line edit that completes from the vocabulary's labels ("␣king" for " king")."""

    def __init__(self, placeholder: str = "", parent=None) -> None:
        super().__init__(parent)
        self.setPlaceholderText(placeholder)
        self.setFont(style.font(style.LABEL_POINT_SIZE))
        self._model = QStringListModel(self)
        completer = QCompleter(self._model, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setModelSorting(QCompleter.ModelSorting.UnsortedModel)
        completer.setMaxVisibleItems(12)
        self.setCompleter(completer)

    def set_vocabulary(self, labels: list[str]) -> None:
        self._model.setStringList(labels)
