"""The Map tab's word-set list: every set offered, ticked or not, each in its colour."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QPushButton

from embviz.state.tabs import WordSetsState
from embviz.ui import style


class WordSetsList(QListWidget):
    """The ticks follow `state` (`fill`); a tick by the user is `toggled(name, on)`."""

    toggled = Signal(str, bool)

    def __init__(self, word_sets: WordSetsState) -> None:
        super().__init__()
        self.word_sets = word_sets  # not `state`: a list view has a state() of its own
        self.colour_of: dict[str, QColor] = {}
        self.add_button = QPushButton("Add word set…")
        self.itemChanged.connect(self._item_changed)

    def fill(self, names: list[str]) -> None:
        """Offer `names`; ticks of the sets kept survive (the state decides)."""
        self.word_sets.set_names(names)
        self.blockSignals(True)
        self.clear()
        for i, name in enumerate(names):
            colour = style.SET_COLORS[i % len(style.SET_COLORS)]
            item = QListWidgetItem(name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if self.word_sets.is_ticked(name) else Qt.CheckState.Unchecked)
            item.setForeground(colour)
            self.colour_of[name] = colour
            self.addItem(item)
        self.blockSignals(False)

    def tick(self, name: str, on: bool = True) -> None:
        """Tick or untick `name` as the user would (its lookup follows)."""
        items = self.findItems(name, Qt.MatchFlag.MatchExactly)
        if items:
            items[0].setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)

    def _item_changed(self, item: QListWidgetItem) -> None:
        on = item.checkState() == Qt.CheckState.Checked
        self.word_sets.tick(item.text(), on)
        self.toggled.emit(item.text(), on)
