"""The panels' results table: read-only rows in a large font, filled a few at a time, copied as text."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QApplication, QHeaderView, QTableWidget, QTableWidgetItem

from embviz.ui import style
from embviz.ui.tables import rows_to_text

ROW_HEIGHT = 26  # a results table's row at 100 % text (its font is LABEL_POINT_SIZE)


class ResultsTable(QTableWidget):
    """Read-only rows of (token, id, score, …) in a large font."""

    tokenClicked = Signal(int)  # the token id of the clicked row

    def __init__(self, headers: list[str], parent=None) -> None:
        super().__init__(0, len(headers), parent)
        self.setHorizontalHeaderLabels(headers)
        style.flat_scroll_bars(self)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.verticalHeader().setVisible(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        style.use_font(self, style.LABEL_POINT_SIZE)
        style.use_font(self.horizontalHeader(), style.BASE_POINT_SIZE, bold=True)
        style.follow_scale(self)
        self.headers = list(headers)
        self.ids: list[int] = []
        self.rows: list[tuple] = []  # the values shown, unformatted (export, copy)
        self._cells_to = 0  # rows[:_cells_to] have their cells
        self.cellClicked.connect(lambda row, _col: self.tokenClicked.emit(self.ids[row]))

    def set_text_scale(self, scale: float) -> None:
        # A line of its font and a little air: eight rows in sight at 1024 × 700 and 150 %.
        self.verticalHeader().setDefaultSectionSize(round(ROW_HEIGHT * scale))

    def fill(self, rows: list[tuple], ids: list[int], now: int | None = None) -> None:
        """Show `rows`; with `now`, only the first `now` rows get their cells here, the
        others through `fill_more` (hundreds of rows at once held the window for frames)."""
        self.setRowCount(len(rows))
        self.ids = list(ids)
        self.rows = [tuple(r) for r in rows]
        self._cells_to = 0
        self.fill_more(len(self.rows) if now is None else now)

    def fill_more(self, count: int) -> bool:
        """Cells for the next `count` rows of the last `fill`; whether rows are left without."""
        end = min(len(self.rows), self._cells_to + count)
        for r in range(self._cells_to, end):
            for c, value in enumerate(self.rows[r]):
                text = f"{value:.3f}" if isinstance(value, float) else str(value)
                item = QTableWidgetItem(text)
                if not isinstance(value, str):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.setItem(r, c, item)
        self._cells_to = end
        return end < len(self.rows)

    def selected_text(self) -> str:
        """The selected rows (all rows when none is) as tab-separated text with a header."""
        picked = sorted({index.row() for index in self.selectedIndexes()}) or range(len(self.rows))
        return rows_to_text(self.headers, [self.rows[r] for r in picked], delimiter="\t")

    def keyPressEvent(self, event) -> None:
        if event.matches(QKeySequence.StandardKey.Copy):
            QApplication.clipboard().setText(self.selected_text())
            event.accept()
            return
        super().keyPressEvent(event)
