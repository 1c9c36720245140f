"""Fields and switches the panels share: a word field that completes from the vocabulary, a combo
box as wide as its choice, a busy bar, a button shown only while it can be pressed, the choice of
table."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import QEvent, QObject, QSize, QStringListModel, Qt
from PySide6.QtGui import QKeyEvent, QMouseEvent
from PySide6.QtWidgets import QApplication, QCheckBox, QComboBox, QCompleter, QLineEdit, QProgressBar, QPushButton, QWidget

from embviz.ui import style

if TYPE_CHECKING:
    from embviz.bridge.views import ModelSummary


def hide_special_switch() -> QCheckBox:
    """The neighbours' and analogies' switch, on by default as in the window's answers."""
    box = QCheckBox("Hide special and partial tokens")
    box.setToolTip("Leave out special tokens (<|endoftext|>, …) and byte pieces that are not whole characters. "
                   "The command line's --hide-special does the same.")
    box.setChecked(True)
    return box


class BusyBar(QProgressBar):
    """A thin bar that moves while an answer is on its way, shown the moment a question is
    asked: the first lookup of a word the vocabulary lacks waits seconds for the tokenizer."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setRange(0, 0)  # no known end: Qt animates it
        self.setTextVisible(False)
        self.setFixedHeight(6)
        self.hide()


class WordField(QLineEdit):
    """A line edit that completes from the vocabulary's labels ("␣king" for " king")."""

    def __init__(self, placeholder: str = "", parent=None) -> None:
        super().__init__(parent)
        self.setPlaceholderText(placeholder)
        style.use_font(self, style.LABEL_POINT_SIZE)
        self._model = QStringListModel(self)
        completer = QCompleter(self._model, self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setModelSorting(QCompleter.ModelSorting.UnsortedModel)
        completer.setMaxVisibleItems(12)
        self.setCompleter(completer)
        # Installed after QCompleter's own filter, so it sees the popup's events first.
        popup = completer.popup()
        if popup is not None:
            popup.installEventFilter(self)

    def set_vocabulary(self, labels: list[str]) -> None:
        self._model.setStringList(labels)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """QCompleter eats the click that closes its popup (the next word typed lands in
        this field, not the one clicked) and completes on Tab without moving on. Here a
        click outside the popup closes it and goes on to what was clicked, and Tab and
        Backtab close it and move the focus, leaving the text as typed or highlighted."""
        if not shiboken6.isValid(self):  # the popup's last events arrive while this field is being deleted
            return False
        popup = self.completer().popup()
        if watched is popup and popup.isVisible():
            if isinstance(event, QMouseEvent) and event.type() == QEvent.Type.MouseButtonPress \
                    and not popup.rect().contains(event.position().toPoint()):
                popup.hide()
                self._replay_press(event)
                return True
            if isinstance(event, QKeyEvent) and event.type() == QEvent.Type.KeyPress \
                    and event.key() in (Qt.Key.Key_Tab, Qt.Key.Key_Backtab):
                popup.hide()
                self.focusNextPrevChild(event.key() == Qt.Key.Key_Tab)
                return True
        return super().eventFilter(watched, event)

    def _replay_press(self, event: QMouseEvent) -> None:
        """The press that closed the popup, sent to the widget under the mouse."""
        target = QApplication.widgetAt(event.globalPosition().toPoint())
        if target is None or target is self.completer().popup():
            return
        focus: QWidget | None = target
        while focus is not None and not focus.focusPolicy() & Qt.FocusPolicy.ClickFocus:
            focus = focus.parentWidget()  # as Qt gives a click's focus: the first that takes it
        if focus is not None:
            focus.setFocus(Qt.FocusReason.MouseFocusReason)
        local = target.mapFromGlobal(event.globalPosition())
        QApplication.sendEvent(target, QMouseEvent(event.type(), local, event.globalPosition(), event.button(),
                                                   event.buttons(), event.modifiers()))


class ShownWhenEnabled(QPushButton):
    """A button on screen only while it can be pressed (a Cancel beside a progress bar): an
    idle one takes no room in a crowded row."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.setEnabled(False)
        self.hide()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.EnabledChange:
            self.setVisible(self.isEnabled())


class FittedCombo(QComboBox):
    """A combo box as wide as the choice shown, not its longest: the map's controls fit two rows,
    and the neighbours' options one, at 1024 × 700 and 150 %. (Its list still shows every choice whole.)"""

    def __init__(self) -> None:
        super().__init__()
        self.currentIndexChanged.connect(self.updateGeometry)

    def _fitted(self, size: QSize) -> QSize:
        metrics = self.fontMetrics()
        widest = max((metrics.horizontalAdvance(self.itemText(i)) for i in range(self.count())), default=0)
        return QSize(size.width() - widest + metrics.horizontalAdvance(self.currentText()), size.height())

    def sizeHint(self) -> QSize:
        return self._fitted(super().sizeHint())

    def minimumSizeHint(self) -> QSize:
        return self._fitted(super().minimumSizeHint())


TABLE_NAMES = {"input": "Table: embedding", "output": "Table: output head"}  # short: the options keep their rows


class TableChoice(FittedCombo):
    """The input embedding or an untied model's output head, for a state's `table`. A tied model
    has one table: the choice stays out of sight whoever shows it (projector mode's drawer too)."""

    def __init__(self, tip: str) -> None:
        super().__init__()
        for key, name in TABLE_NAMES.items():
            self.addItem(name, key)
        self.setToolTip(tip)
        self.two_tables = False
        self._wanted = True  # shown, as far as the panel's layout and folding are concerned
        super().setVisible(False)

    def setVisible(self, visible: bool) -> None:
        self._wanted = visible
        super().setVisible(visible and self.two_tables)

    def follow_model(self, summary: ModelSummary, state: Any) -> None:
        """A model opened: the choice is there only if it has two tables; a tied one reads its
        input table (a session of an untied model's head, or the last model's choice)."""
        self.two_tables = not summary.info.get("tied", True)
        if not self.two_tables:
            state.table = "input"
        super().setVisible(self._wanted and self.two_tables)
