"""The window's tab bar (titles that always fit), each tab in a scroll area, and the
window-wide keys a focused field would otherwise take."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer
from PySide6.QtGui import QKeyEvent, QKeySequence
from PySide6.QtWidgets import QFrame, QHBoxLayout, QMenu, QScrollArea, QTabBar, QTabWidget, QToolButton, QWidget

from embviz.ui import style


# The tab bar's titles, tried in turn until they fit: (short titles, point size, bold). The
# short titles (large text, a narrow screen, the lessons open) keep every tab in sight, with
# no scroll arrows to find the last ones; past the last step the tabs that do not fit give
# way to the "All tabs" list, and no title is ever cut.
TAB_TITLE_STEPS = (
    (False, style.BASE_POINT_SIZE + 1, True), (True, style.BASE_POINT_SIZE + 1, True),
    (True, style.BASE_POINT_SIZE, False), (True, style.BASE_POINT_SIZE - 2, False),
)
# Window-wide keys that a focused line edit or spin box would otherwise take for itself
# (on X11 a QLineEdit reads Ctrl+E as "end of line").
WINDOW_KEYS = ("Ctrl+E",)


class TitleBar(QTabBar):
    """A tab bar whose least title is two letters and "…", where Qt reserves room for two
    letters and "...": eleven tabs at 150 % text beside the lessons still fit a 1024-pixel screen."""

    def minimumTabSizeHint(self, index: int) -> QSize:
        hint = super().minimumTabSizeHint(index)
        text = self.tabText(index)
        if len(text) > 3:  # Qt's least is its first two letters and "..."
            metrics = self.fontMetrics()
            spared = metrics.horizontalAdvance(text[:2] + "...") - metrics.horizontalAdvance(text[:2] + "…")
            hint.setWidth(hint.width() - max(spared, 0))
        return hint


class PanelTabs(QTabWidget):
    """The tabs, each panel in a scroll area: on a short screen with large text a tab
    scrolls instead of raising the window's minimum size past the screen. The titles
    shorten when the full ones do not fit, so no tab hides behind scroll arrows; when even
    the short ones do not, the last tabs (never the current one) are taken out of the bar and
    the "All tabs ▾" button in its corner lists every tab.

    Callers deal in panels: `currentWidget`, `widget`, `indexOf` and `setCurrentWidget`
    see through the scroll areas."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTabBar(TitleBar())
        self._names: list[tuple[str, str]] = []  # (full title, short title) per tab
        self.setUsesScrollButtons(False)
        # Eliding keeps the bar's minimum width small (the window may shrink); the titles are fitted
        # whole at every resize, so none stays cut.
        self.setElideMode(Qt.TextElideMode.ElideRight)
        self.tabBar().setExpanding(False)
        self.tab_list = QToolButton()
        self.tab_list.setText("All tabs ▾")
        self.tab_list.setToolTip("Every tab, including those the tab bar has no room for")
        self.tab_list.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.tab_list.setMenu(QMenu(self.tab_list))
        self.tab_list.hide()
        self._corner = QWidget()
        self._corner_row = QHBoxLayout(self._corner)
        self._corner_row.setContentsMargins(0, 0, 0, 0)
        self._corner_row.addWidget(self.tab_list)
        self.tab_list.installEventFilter(self)
        self.setCornerWidget(self._corner, Qt.Corner.TopRightCorner)
        self._fitting = False
        self.currentChanged.connect(self.fit_titles)  # a tab picked from the list comes into the bar
        style.follow_scale(self)

    def add_panel(self, panel: QWidget | None, name: str, short: str) -> PanelPage:
        """A tab for `panel`; with None, a page its panel is put in later (PanelPage.set_panel)."""
        self._names.append((name, short))
        page = PanelPage(panel)
        index = self.addTab(page, name)
        action = self.tab_list.menu().addAction(name)
        action.triggered.connect(lambda _checked=False: self.setCurrentIndex(index))
        return page

    def add_corner(self, widget: QWidget) -> None:
        """A widget beside the tab list in the bar's corner; the titles fit the room it leaves."""
        self._corner_row.insertWidget(self._corner_row.count() - 1, widget)
        widget.installEventFilter(self)
        self.fit_titles()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # A corner widget's new font (a text size reaches it after the tab bar's) changes the
        # room: the titles are fitted again once it has its new size.
        if event.type() == QEvent.Type.FontChange:
            QTimer.singleShot(0, self, self.fit_titles)
        return super().eventFilter(watched, event)

    def corner_width(self) -> int:
        """The pixels the corner's widgets shown take from the tab bar."""
        items = (self._corner_row.itemAt(i) for i in range(self._corner_row.count()))
        shown = [item.widget() for item in items if item is not None]
        widths = [w.sizeHint().width() for w in shown if w is not None and not w.isHidden()]
        margins = self._corner_row.contentsMargins()
        return sum(widths) + self._corner_row.spacing() * max(0, len(widths) - 1) + margins.left() + margins.right() if widths else 0

    def _panel(self, page: QWidget | None) -> Any:
        return page.widget() if isinstance(page, QScrollArea) else page

    # A tab's panel (tab_list's kind of widget), or None for a tab not built yet.
    def currentWidget(self) -> Any:
        return self._panel(super().currentWidget())

    def widget(self, index: int) -> Any:
        return self._panel(super().widget(index))

    def indexOf(self, panel: QWidget) -> int:
        return next((i for i in range(self.count()) if self.widget(i) is panel), super().indexOf(panel))

    def setCurrentWidget(self, panel: QWidget) -> None:
        self.setCurrentIndex(self.indexOf(panel))

    def set_text_scale(self, scale: float) -> None:
        self.fit_titles()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.fit_titles()

    def fit_titles(self, *_args) -> None:
        """The first of TAB_TITLE_STEPS whose titles fit the width the corner leaves; past
        the last, as many tabs as fit (the current one always) and the tab list."""
        if self._fitting:  # showing the list or a tab resizes the bar, which asks again
            return
        self._fitting = True
        try:
            self._fit_titles_now()
        finally:
            self._fitting = False
        QTimer.singleShot(0, self, self._unscroll)  # not after the bar is gone

    def _unscroll(self) -> None:
        """A bar that overflowed for a moment (new fonts, then new titles) keeps its scroll
        offset, the first title cut at the left, though every title fits now: laid out again."""
        bar = self.tabBar()
        shown = self.shown_tabs()
        if shown and bar.tabRect(shown[0]).left() < 0 and self._titles_width() <= bar.width():
            bar.setTabText(shown[0], bar.tabText(shown[0]))

    def _fit_titles_now(self) -> None:
        bar = self.tabBar()
        for i in range(bar.count()):
            bar.setTabVisible(i, True)
        self.tab_list.hide()
        for short, size, bold in TAB_TITLE_STEPS:
            font = style.font(size, bold)
            if bar.font() != font:
                bar.setFont(font)
            for i, names in enumerate(self._names):
                if bar.tabText(i) != names[short]:
                    bar.setTabText(i, names[short])
            if self._titles_width() <= self.width() - self.corner_width():
                return
        self.tab_list.show()
        room = self.width() - self.corner_width()
        for i in reversed(range(bar.count())):
            if self._titles_width() <= room:
                break
            if i != self.currentIndex():
                bar.setTabVisible(i, False)

    def _titles_width(self) -> int:
        bar = self.tabBar()
        return sum(bar.tabSizeHint(i).width() for i in range(bar.count()) if bar.isTabVisible(i))

    def shown_tabs(self) -> list[int]:
        """The tabs the bar shows (the others are in the tab list only)."""
        return [i for i in range(self.count()) if self.tabBar().isTabVisible(i)]


class PanelPage(QScrollArea):
    """A tab's page: the panel fills it, and scrolls only when the page is smaller than
    the panel's minimum. (A resizable QScrollArea gives a panel whose layout has a height
    for its width, such as a flow row's, its preferred height: the map would scroll where
    it could shrink.)"""

    def __init__(self, panel: QWidget | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(False)
        if panel is not None:
            self.setWidget(panel)

    def set_panel(self, panel: QWidget) -> None:
        self.setWidget(panel)
        self._fit_panel()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_panel()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self._fit_panel()  # its minimum may have changed (new text, another text size)
        return super().eventFilter(watched, event)

    def _needs(self, panel: QWidget, width: int) -> QSize:
        """The least size at which `panel` shows all it holds, `width` pixels wide or more."""
        least = panel.minimumSizeHint().expandedTo(panel.minimumSize())
        layout = panel.layout()
        width = max(width, least.width())
        height = least.height()
        if layout is not None and layout.hasHeightForWidth():
            height = max(height, layout.minimumHeightForWidth(width))
        return QSize(width, height)

    def _fit_panel(self) -> None:
        panel = self.widget()
        if panel is None:
            return
        room = self.maximumViewportSize()
        need = self._needs(panel, room.width())
        if need.height() > room.height():  # a vertical scroll bar takes some of the width
            need = self._needs(panel, room.width() - self.verticalScrollBar().sizeHint().width())
        if need.width() > room.width():  # a horizontal scroll bar takes some of the height
            room.setHeight(room.height() - self.horizontalScrollBar().sizeHint().height())
        panel.resize(need.width(), max(need.height(), room.height()))


class WindowKeys(QObject):
    """An event filter for text fields and spin boxes: it keeps the keys `keys` from them
    (they claim some, such as Ctrl+E, before shortcuts are looked up), so that the
    window's shortcut for that key runs."""

    def __init__(self, keys: tuple[str, ...], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._keys = {QKeySequence(k).toString() for k in keys}

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ShortcutOverride and isinstance(event, QKeyEvent):
            if QKeySequence(event.keyCombination()).toString() in self._keys:
                event.ignore()  # unclaimed: the shortcut map runs the window's action
                return True
        return False
