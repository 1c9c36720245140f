"""Widgets bound both ways to fields of a tab's Qt-free, evented state object (glue's
`connect_*` helpers, napari's evented models).

The state is the one source of truth. Binding writes the state's value into the widget
(defaults live in the state), a change in the widget writes the field at once, and a
change of the field (a lesson step, a restored session, a test) writes the widget with
its signals blocked: the control follows without firing its own request, so whoever
changed the state sends the one request it needs.
"""

from __future__ import annotations

from typing import Any, Callable

import shiboken6
from PySide6.QtWidgets import QAbstractButton, QComboBox, QDoubleSpinBox, QLineEdit, QPlainTextEdit, QSpinBox, QWidget


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
    if isinstance(widget, (QSpinBox, QDoubleSpinBox)):
        return widget.valueChanged, widget.value, widget.setValue
    if isinstance(widget, QLineEdit):
        def set_line(value: Any) -> None:
            if widget.text() != str(value):  # keeps the cursor where the user is typing
                widget.setText(str(value))
        return widget.textChanged, widget.text, set_line
    if isinstance(widget, QPlainTextEdit):
        def set_plain(value: Any) -> None:
            if widget.toPlainText() != str(value):
                widget.setPlainText(str(value))
        return widget.textChanged, widget.toPlainText, set_plain
    raise TypeError(f"cannot bind a {type(widget).__name__}")


def silently(widgets: list[QWidget], write: Callable[[], None]) -> None:
    if not all(shiboken6.isValid(w) for w in widgets):  # a closed tab's state changed after its widgets went
        return
    blocked = [w.blockSignals(True) for w in widgets]
    try:
        write()
    finally:
        for w, was in zip(widgets, blocked):
            w.blockSignals(was)


class Bindings:
    """The bound (widget, field) pairs of one `@evented` state object."""

    def __init__(self, state: Any) -> None:  # an @evented dataclass
        self.state = state

    def _follow(self, attr: str, widgets: list[QWidget], write: Callable[[], None]) -> None:
        """Write the widgets whenever the state's `attr` changes, and once now."""
        getattr(self.state.events, attr).connect(lambda *_: silently(widgets, write))
        silently(widgets, write)

    def bind(self, widget: QWidget, attr: str) -> None:
        changed, read, write = _accessors(widget)
        self._follow(attr, [widget], lambda: write(getattr(self.state, attr)))
        if read() != getattr(self.state, attr):  # out of the widget's range: the widget's clamp holds
            setattr(self.state, attr, read())
        changed.connect(lambda *_: setattr(self.state, attr, read()))

    def bind_choice(self, buttons: dict[Any, QAbstractButton], attr: str) -> None:
        """Exclusive buttons (radio buttons) that together choose one value."""
        def write() -> None:
            if (button := buttons.get(getattr(self.state, attr))) is not None:
                button.setChecked(True)

        self._follow(attr, list(buttons.values()), write)
        for value, button in buttons.items():
            button.toggled.connect(lambda on, v=value: self._choose(on, attr, v))

    def release(self) -> None:
        """Disconnect everything connected to the state's signals, for a window that is done.
        psygnal holds those callbacks strongly, and each signal holds itself in an attribute the
        cycle collector does not see: the callbacks' cycle through the widgets, and with it the
        whole window, would otherwise never be freed."""
        events = self.state.events
        for name in events:
            events[name].disconnect()
        events.all.disconnect()

    def _choose(self, on: bool, attr: str, value: Any) -> None:
        if on:
            setattr(self.state, attr, value)
