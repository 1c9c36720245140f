"""The question asked before a long t-SNE or UMAP on a CPU: how long each way of drawing
the map takes, in words a class can follow, with the quickest honest map picked."""

from __future__ import annotations

from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import (
    QAbstractButton,
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from embviz.state.map_estimate import MapChoice, duration
from embviz.ui.panels.map.names import METHOD_SHORT

WIDTH = (460, 600)  # narrowest and widest: readable lines, inside a 1024 × 700 projector at 150 % text


class MapChoiceDialog(QDialog):
    def __init__(self, method: str, choices: list[MapChoice], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.choices = choices
        name = METHOD_SHORT.get(method, method)
        every = choices[0]
        self.setWindowTitle(f"A long {name} map")
        self.setMinimumWidth(WIDTH[0])
        self.setMaximumWidth(WIDTH[1])
        heading = QLabel(f"A {name} map of all {every.rows:,} rows takes about {duration(every.seconds)} on this "
                         f"computer's processor. Which map would you like?")
        heading.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        self.group = QButtonGroup(self)
        for n, choice in enumerate(choices):
            button = QRadioButton(choice.label(method))
            button.setChecked(choice.key == "placed")
            self.group.addButton(button, n)
            layout.addWidget(_wrapped(button))
        note = QLabel("Whichever you pick, the map's caption says how many of each word's 10 nearest words it keeps.")
        note.setWordWrap(True)
        layout.addWidget(note)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Draw map")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)

    def chosen(self) -> MapChoice:
        return self.choices[max(0, self.group.checkedId())]


class _ChecksButton(QLabel):
    """A label that checks its radio button when clicked."""

    def __init__(self, text: str, button: QAbstractButton) -> None:
        super().__init__(text)
        self._button = button

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._button.setChecked(True)


def _wrapped(button: QRadioButton) -> QWidget:
    """A radio button whose long text wraps: Qt's own does not, so its text moves to a
    label beside an empty button, and a click on the label checks it."""
    text = button.text()
    button.setText("")
    label = _ChecksButton(text, button)
    label.setWordWrap(True)
    box = QWidget()
    row = QHBoxLayout(box)
    row.setContentsMargins(0, 0, 0, 0)
    row.addWidget(button)
    row.addWidget(label, 1)
    button.setAccessibleName(text)
    return box


def ask_map_choice(parent: QWidget, method: str, choices: list[MapChoice]) -> MapChoice | None:
    """The choice made, or None when the question is closed or cancelled."""
    dialog = MapChoiceDialog(method, choices, parent)
    return dialog.chosen() if dialog.exec() == QDialog.DialogCode.Accepted else None
