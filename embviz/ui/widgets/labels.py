"""Labels and text boxes that fit their text: wrapped to as many lines as it takes, cut with "…"
to one line, or a set number of lines high."""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSizePolicy, QWidget

from embviz.ui import style
from embviz.ui.widgets.layouts import lay_out_again

MESSAGE_LINES = 3  # the status message's most lines, wrapped


class WrappedLabel(QLabel):
    """Wrapped text as many lines tall as its width wraps it to: beside another column, or in
    a splitter, a layout gives a wrapped label fewer lines than it needs and cuts the rest."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)  # a token's "<|im_end|>" as it is
        self.setWordWrap(True)

    def setText(self, text: str) -> None:
        super().setText(text)
        self._fit_height()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_height()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # another text size: each line taller or shorter
            self._fit_height()

    def sizeHint(self) -> QSize:
        # As tall as its lines at its width: QLabel's own hint wraps at a width of its choosing,
        # and a box with room to spare gave each sentence an empty line under it.
        hint = super().sizeHint()
        return QSize(hint.width(), self.minimumHeight()) if self.text() and self.textFormat() == Qt.TextFormat.PlainText else hint

    def heightForWidth(self, width: int) -> int:
        """Plain text: the lines the painter draws it in at `width`. (Under X at 200 %, QLabel's
        own answer stopped shrinking past 600 pixels: six lines for four, and empty lines
        stood between the sentences.)"""
        if self.textFormat() != Qt.TextFormat.PlainText:  # a key of coloured entries
            return super().heightForWidth(width)
        margins, margin = self.contentsMargins(), self.margin()
        inner = max(width - margins.left() - margins.right() - 2 * margin, 1)
        lines = self.fontMetrics().boundingRect(QRect(0, 0, inner, 1 << 20), int(Qt.TextFlag.TextWordWrap), self.text())
        return lines.height() + margins.top() + margins.bottom() + 2 * margin

    def _fit_height(self) -> None:
        need = self.heightForWidth(max(self.width(), 1)) if self.text() else 0
        if need != self.minimumHeight():
            self.setMinimumHeight(need)
            lay_out_again(self)


class ElidedLabel(QLabel):
    """One line of text cut with "…" to the room it has; the whole text in its tooltip."""

    def __init__(self, text: str = "", parent=None) -> None:
        super().__init__(parent)
        self.full_text = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        # An explicit minimum: otherwise the last elided text's width becomes the minimum
        # and the label never shrinks again.
        self.setMinimumWidth(1)
        style.use_font(self, style.BASE_POINT_SIZE)
        self.set_full_text(text)

    def set_full_text(self, text: str) -> None:
        self.full_text = text
        self.setToolTip(text)
        self._fit()

    def text_width(self) -> int:
        """Pixels the whole text needs."""
        return self.fontMetrics().horizontalAdvance(self.full_text) + 8

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        self.setText(self.fontMetrics().elidedText(self.full_text, Qt.TextElideMode.ElideRight, max(self.width() - 4, 0)))


class MessageLabel(ElidedLabel):
    """The status message, cleared after a while or when the model changes. It wraps onto
    up to MESSAGE_LINES lines instead of being cut ("the largest: Mughal Ka…"): the status
    bar grows to hold them."""

    changed = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__("", parent)
        self.setWordWrap(True)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.clear_message)

    def show_message(self, text: str, timeout_ms: int = 15000) -> None:
        self.set_full_text(text)
        self._timer.start(timeout_ms)
        self.changed.emit()

    def clear_message(self) -> None:
        self._timer.stop()
        self.set_full_text("")
        self.changed.emit()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # another text size: another height
            self._fit()

    def _fit(self) -> None:
        """The whole text, as many lines high as it wraps onto at this width; past MESSAGE_LINES
        lines, cut with "…" at the end of the last (the whole text in the tooltip)."""
        metrics, width = self.fontMetrics(), max(self.width(), 1)

        def height(text: str) -> int:
            room = QRect(0, 0, width, 100 * metrics.lineSpacing() * MESSAGE_LINES)
            return metrics.boundingRect(room, Qt.TextFlag.TextWordWrap, text).height()

        most = height("\n".join("x" * MESSAGE_LINES))

        text = self.full_text
        if height(text) > most:  # the longest start of it that fits, and "…"
            low, high = 0, len(text)
            while low < high:
                middle = (low + high + 1) // 2
                low, high = (middle, high) if height(text[:middle].rstrip() + "…") <= most else (low, middle - 1)
            text = text[:low].rstrip() + "…"
        if self.text() != text:
            self.setText(text)
        fixed = max(height(text), metrics.lineSpacing()) + 2
        if self.minimumHeight() != fixed or self.maximumHeight() != fixed:
            self.setFixedHeight(fixed)


class LinesBox(QPlainTextEdit):
    """A text box `lines` lines of its own font high, at every text size: a height in pixels
    held one line at 200 % and cut the second through the middle. (2.5 lines: two whole ones
    and a hint of more.)"""

    def __init__(self, lines: float) -> None:
        super().__init__()
        self.lines = lines
        self._fit()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._fit()

    def _fit(self) -> None:
        margins = self.contentsMargins()
        document = 2 * round(self.document().documentMargin())
        line = math.ceil(QFontMetricsF(self.font()).lineSpacing()) + 1  # a block's height, at least
        self.setFixedHeight(round(self.lines * line) + document + margins.top() + margins.bottom())
