"""Small shared widgets: a results table and a word field with completion."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import shiboken6
from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSize, QStringListModel, Qt, QTimer, Signal
from PySide6.QtGui import QFontMetricsF, QKeyEvent, QKeySequence, QMouseEvent
from PySide6.QtWidgets import (
    QAbstractItemView, QApplication, QCheckBox, QComboBox, QCompleter, QFileDialog, QHeaderView, QLabel, QLayout,
    QLayoutItem, QLineEdit, QPlainTextEdit, QProgressBar, QPushButton, QScrollArea, QSizePolicy, QSplitter, QTableWidget,
    QTableWidgetItem, QVBoxLayout,
    QWidget,
)

from embviz.state.settings import Settings
from embviz.ui.tables import rows_to_text
from embviz.ui import style

FRAME_MS = 16  # one frame at 60 Hz
MESSAGE_LINES = 3  # the status message's most lines, wrapped
ROW_HEIGHT = 26  # a results table's row at 100 % text (its font is LABEL_POINT_SIZE)
QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's "no limit"


def next_frame(receiver: QObject, step: Callable[[], object]) -> None:
    """`step` a frame from now, once this frame's paint is done: a big change to the screen
    made a piece a frame. (A zero timer can run in the same turn of the event loop as the
    step before it and its paint.)"""
    QTimer.singleShot(FRAME_MS, receiver, step)


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


def lay_out_again(widget: QWidget) -> None:
    """`widget`'s parent lays it out again once this turn is done: a least height set while
    the parent's layout was placing it is forgotten when that pass ends (a wrapped label kept
    the height of a narrower width, and stood out of its sentences with empty lines)."""
    if (parent := widget.parentWidget()) is None:
        return
    if (layout := parent.layout()) is not None:
        layout.invalidate()
    QApplication.postEvent(parent, QEvent(QEvent.Type.LayoutRequest))


class ScrollColumn(QScrollArea):
    """A column of widgets that scrolls up and down where it is shorter than they are, and is
    never narrower than they are (a splitter squeezed a plain scroll area's column and cut it)."""

    def __init__(self, column: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.column = column
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(column)
        style.flat_scroll_bars(self)

    def _with_bar(self, size: QSize) -> QSize:
        return QSize(size.width() + self.verticalScrollBar().sizeHint().width() + 2 * self.frameWidth(), size.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self._with_bar(self.column.minimumSizeHint()).width(), super().minimumSizeHint().height())

    def sizeHint(self) -> QSize:
        return QSize(self._with_bar(self.column.sizeHint()).width(), super().sizeHint().height())


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


class FlowLayout(QLayout):
    """A row of controls that wraps onto the next line when the window is narrow (large
    text on a small projector screen), as Qt's flow-layout example does."""

    def __init__(self, parent: QWidget | None = None, spacing: int = 8) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setSpacing(spacing)
        self.setContentsMargins(0, 0, 0, 0)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, move=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        margins = self.contentsMargins()
        return size + QSize(margins.left() + margins.right(), margins.top() + margins.bottom())

    def _arrange(self, rect: QRect, move: bool) -> int:
        """Lay the items out in lines (placing them when `move`); the height they take. The
        room a line leaves goes to its items that expand sideways (a search field)."""
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        lines: list[list[QLayoutItem]] = [[]]
        x = area.x()
        for item in self._items:
            if (widget := item.widget()) is not None and widget.isHidden():
                continue
            width = item.sizeHint().width()
            if x + width > area.right() + 1 and lines[-1]:
                lines.append([])
                x = area.x()
            lines[-1].append(item)
            x += width + self.spacing()
        y = area.y()
        for line in lines:
            if not line:
                continue
            height = max(item.sizeHint().height() for item in line)
            if move:
                used = sum(item.sizeHint().width() for item in line) + self.spacing() * (len(line) - 1)
                growing = [item for item in line if item.expandingDirections() & Qt.Orientation.Horizontal]
                extra = max(0, area.width() - used) // len(growing) if growing else 0
                x = area.x()
                for item in line:
                    hint = item.sizeHint()
                    width = hint.width() + (extra if item in growing else 0)
                    item.setGeometry(QRect(QPoint(x, y + (height - hint.height()) // 2), QSize(width, hint.height())))  # centred on its line
                    x += width + self.spacing()
            y += height + self.spacing()
        return y - self.spacing() - rect.y() + margins.bottom() if any(lines) else margins.top() + margins.bottom()


class HeldColumn(QWidget):
    """A column whose least height is always its contents' at its width (set whenever they
    change), so that a layout sharing height by its other items' wrapped text cannot squeeze
    it: wrapped sentences were drawn over each other."""

    def hasHeightForWidth(self) -> bool:
        return False  # its least height says it: the box around kept a stale height for its width

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.minimumHeight())  # no more: spare room went to empty lines

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.LayoutRequest and (layout := self.layout()) is not None:
            need = layout.minimumSize().height()
            if layout.hasHeightForWidth():  # a row that wraps (the controls at 200 %)
                need = max(need, layout.totalHeightForWidth(self.width()))
            if need != self.minimumHeight():
                self.setMinimumHeight(need)
                lay_out_again(self)
        return handled

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        QApplication.postEvent(self, QEvent(QEvent.Type.LayoutRequest))  # a row that wraps wraps anew


class RoomWatch(QObject):
    """Calls `fit` (a turn later, once the layouts have placed things) whenever `panel` is
    shown or resized, or the page it sits in is: a lesson's caption band coming up shrinks
    the tab's page, not a panel taller than the page. A panel that gives way where the page
    is short (a chart that leaves the list its rows) decides in `fit`."""

    def __init__(self, panel: QWidget, fit: Callable[[], object]) -> None:
        super().__init__(panel)
        self.panel, self.fit = panel, fit
        panel.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.Show and watched is self.panel and (page := self.panel.parentWidget()) is not None:
            page.removeEventFilter(self)
            page.installEventFilter(self)
        if kind in (QEvent.Type.Show, QEvent.Type.Resize):
            QTimer.singleShot(0, self.panel, self.fit)
        return False


def folding(*layouts: QLayout) -> QWidget:
    """`layouts` stacked in a widget of their own: a part that projector mode folds away as one
    (in a panel's `controls` or `inputs`), each widget keeping the visibility its panel gives it."""
    box = QWidget()
    column = QVBoxLayout(box)
    column.setContentsMargins(0, 0, 0, 0)
    for layout in layouts:
        column.addLayout(layout)
    return box


def flow_row(*widgets: QWidget) -> FlowLayout:
    row = FlowLayout()
    for widget in widgets:
        row.addWidget(widget)
    return row


def side_by_side(left: QWidget, right: QWidget, left_share: int, right_share: int) -> QSplitter:
    """Two views in a horizontal splitter, sharing its width `left_share` : `right_share`."""
    splitter = QSplitter(Qt.Orientation.Horizontal)
    splitter.addWidget(left)
    splitter.addWidget(right)
    splitter.setStretchFactor(0, left_share)
    splitter.setStretchFactor(1, right_share)
    return splitter


def ask_save_path(parent: QWidget, settings: Settings, title: str, name: str, filters: str) -> str:
    """A path the user picks to save `name` in, starting in the folder they last saved to
    (which is remembered); "" when they cancel."""
    path, _ = QFileDialog.getSaveFileName(parent, title, str(settings.export_folder / name), filters)
    if path:
        settings.set_export_folder(Path(path).parent)
    return path
