"""Layouts that hold their contents whole: a row that wraps, a column that scrolls or keeps its
height, a splitter of two views, and a layout done again a turn or a frame later."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSize, Qt, QTimer
from PySide6.QtWidgets import QApplication, QLayout, QLayoutItem, QScrollArea, QSplitter, QVBoxLayout, QWidget

from embviz.ui import style

FRAME_MS = 16  # one frame at 60 Hz
QWIDGETSIZE_MAX = (1 << 24) - 1  # Qt's "no limit"


def next_frame(receiver: QObject, step: Callable[[], object]) -> None:
    """`step` a frame from now, once this frame's paint is done: a big change to the screen
    made a piece a frame. (A zero timer can run in the same turn of the event loop as the
    step before it and its paint.)"""
    QTimer.singleShot(FRAME_MS, receiver, step)


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
