"""The Compare tab's parts: the scored token list's rows and the neighbourhood dominoes
(a chosen token's neighbours in both models, only in A, only in B)."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from embviz.ui import style
from embviz.ui.widgets import ResultsTable, RoomWatch, WrappedLabel

LIST_LIMIT = 2000  # rows listed at once: a table of 23,000 rows takes seconds to fill
TITLES = ("both", "A only", "B only")


def listed_positions(scores: np.ndarray, ids: np.ndarray, low: float, high: float, descending: bool,
                     only: np.ndarray | None = None) -> np.ndarray:
    """Positions of the scores in [low, high] (and where `only` is true, when given), sorted
    by score; ties by token id, the lower (a more frequent token in a BPE vocabulary) first
    either way."""
    inside = (scores >= low - 1e-9) & (scores <= high + 1e-9)
    keep = np.flatnonzero(inside if only is None else inside & only)
    key = -scores[keep] if descending else scores[keep]
    return keep[np.lexsort((ids[keep], key))]


def neighbour_lists(view, position: int, labels: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(in both, only in A, only in B) of one shared token, from the comparison's own lists."""
    near_a, near_b = view.neighbours_a[position].tolist(), view.neighbours_b[position].tolist()
    in_a, in_b = set(near_a), set(near_b)
    name = lambda p: labels[int(view.ids_a[p])]  # noqa: E731 — A's label names a shared token in both
    return ([name(p) for p in near_a if p in in_b], [name(p) for p in near_a if p not in in_b],
            [name(p) for p in near_b if p not in in_a])


class Dominoes(QWidget):
    """Three columns side by side: the neighbours both models give a token, A's own, B's own."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.heading = WrappedLabel("Click a token in the list to see its neighbours in both models.")
        style.use_font(self.heading, style.LABEL_POINT_SIZE, bold=True)
        self.columns = [ResultsTable([title]) for title in TITLES]
        row = self.row = QHBoxLayout()
        for table in self.columns:
            table.setMinimumWidth(90)
            row.addWidget(table)
        layout = self.column = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.heading)
        layout.addLayout(row, 1)
        RoomWatch(self, self._hold_titles)

    def _hold_titles(self) -> None:
        """Its least width: every column's title whole ("A only (50)" was cut at 200 %); the
        list beside it gives way instead."""
        # The title's own hint leaves its centred text no air against the scroll bar: a letter more.
        need = sum(table.horizontalHeader().sectionSizeHint(0) + table.horizontalHeader().fontMetrics().averageCharWidth()
                   + table.verticalScrollBar().sizeHint().width() + 2 * table.frameWidth() for table in self.columns)
        need += self.row.spacing() * (len(self.columns) - 1)
        if need != self.minimumWidth():
            self.setMinimumWidth(need)

    def hasHeightForWidth(self) -> bool:
        # Its heading's least height says it. As a height for its width, the box around took
        # its lists' preferred height for their least, and squeezed the sentences above.
        return False

    def clear(self, text: str) -> None:
        """Empty, headers included: the counts of another model's token never stay."""
        self.heading.setText(text)
        for table, title in zip(self.columns, TITLES):
            table.headers = [title]
            table.setHorizontalHeaderLabels(table.headers)
            table.fill([], [])
        self._hold_titles()

    def show_view(self, found, k: int) -> None:
        """A DominoesView: the token's score and its three lists, nearest first."""
        lists = (found.common, found.only_a, found.only_b)
        self.heading.setText(f"{found.label}: score {found.jaccard:.2f} at k = {k}")
        self.heading.setToolTip("Its k nearest neighbours in each model, nearest first")
        for table, title, words in zip(self.columns, TITLES, lists):
            table.headers = [f"{title} ({len(words)})"]
            table.setHorizontalHeaderLabels(table.headers)
            table.fill([(label,) for _, label in words], [-1] * len(words))  # no ids: a click rings nothing
        self._hold_titles()
