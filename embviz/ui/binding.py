"""Widgets bound to fields of a tab's Qt-free state object, as glue binds its viewers:
a change in the widget writes the field at once, and `push` writes every field back
into its widget (a restored session) with the widget's signals blocked, so a restore
sets the controls without running anything twice."""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox, QLineEdit, QPlainTextEdit, QWidget


def _accessors(widget: QWidget) -> tuple[Any, Callable[[], Any], Callable[[Any], None]]:
    """(change signal, read, write) for the kinds of control the tabs use."""
    if isinstance(widget, QAbstractButton):
        return widget.toggled, widget.isChecked, lambda v: widget.setChecked(bool(v))
    if isinstance(widget, QComboBox):
        def choose(value: Any) -> None:
            index = widget.findData(value)
            if index >= 0:
                widget.setCurrentIndex(index)
        return widget.currentIndexChanged, widget.currentData, choose
    if isinstance(widget, QAbstractSpinBox):
        return widget.valueChanged, widget.value, widget.setValue
    if isinstance(widget, QLineEdit):
        return widget.textChanged, widget.text, lambda v: widget.setText(str(v))
    if isinstance(widget, QPlainTextEdit):
        return widget.textChanged, widget.toPlainText, lambda v: widget.setPlainText(str(v))
    raise TypeError(f"cannot bind a {type(widget).__name__}")


class Bindings:
    """The bound (widget, field) pairs of one state object."""

    def __init__(self, state: object) -> None:
        self.state = state
        self._pushers: list[tuple[QWidget, Callable[[], None]]] = []

    def bind(self, widget: QWidget, attr: str) -> None:
        changed, read, write = _accessors(widget)
        setattr(self.state, attr, read())  # the widget's starting value is the state's
        changed.connect(lambda *_: setattr(self.state, attr, read()))
        self._pushers.append((widget, lambda: write(getattr(self.state, attr))))

    def bind_choice(self, buttons: dict[Any, QAbstractButton], attr: str) -> None:
        """Exclusive buttons (radio buttons) that together choose one value."""
        for value, button in buttons.items():
            button.toggled.connect(lambda on, v=value: on and setattr(self.state, attr, v))
            if button.isChecked():
                setattr(self.state, attr, value)

        def write() -> None:
            if (button := buttons.get(getattr(self.state, attr))) is not None:
                button.setChecked(True)
        for button in buttons.values():
            self._pushers.append((button, write))

    def push(self) -> None:
        """The state into the widgets, silently."""
        for widget, write in self._pushers:
            blocked = widget.blockSignals(True)
            try:
                write()
            finally:
                widget.blockSignals(blocked)
