"""View ▸ Projector mode (F5): the picture takes the screen. The window goes full screen
without its menu bar, each tab's controls fold away (F6 or the Controls button opens them
as a drawer), the lesson's text becomes a caption band under the picture, every bar chart
prints its numbers, and the keys a lesson needs work without a mouse.

A part of `MainWindow` (see main_window.py), kept in a room of its own. The mode is the
window's, not a panel's: a panel only names what folds, its `controls` (a tuple of widgets),
and its `inputs`, which fold too while a lesson's band is up: the lesson typed them, and the
panel's heading or token line says what they hold."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractSpinBox, QLineEdit, QMenu, QPlainTextEdit, QToolButton, QWidget

from embviz.ui import style
from embviz.ui.window_host import WindowHost

# A lesson opens in projector mode on a screen smaller than this, or at this text size or more.
PROJECTOR_SCREEN = (1280, 800)
PROJECTOR_TEXT_SCALE = 1.5
# The keys that work only in projector mode (Esc, which leaves it, is the window's own key).
NEXT_KEYS = ("Right", "Space", "PgDown")
BACK_KEYS = ("Left", "PgUp")
FIND_KEYS = ("/",)
LARGER_KEYS = ("+", "=")
SMALLER_KEYS = ("-",)
# The lesson band's words a line on or back: only while the band is up and the drawer shut,
# so that a spin box or a table in the open drawer keeps its arrows.
SCROLL_KEYS = (("Down", 1), ("Up", -1))
PROJECTOR_HINT = "F6: controls · Esc: leave · F1: keys"  # one line at 200 %: the picture keeps the rest


class ProjectorMixin(WindowHost):
    projector = False  # until the View menu is built: the status bar asks it first

    def _build_projector(self, view_menu: QMenu) -> None:
        """The View menu's checkable action (F5), the Controls drawer's (F6) and its button in
        the tab bar's corner, and the mode's own keys (off until the mode is on)."""
        self._projector_for_lesson = False  # turned on by a lesson, so off when it closes
        self._was_full_screen = False
        self.projector_action = QAction("Projector mode", self, checkable=True)
        self.projector_action.setShortcut(QKeySequence("F5"))
        self.projector_action.toggled.connect(self.set_projector)
        view_menu.addAction(self.projector_action)
        self.controls_action = QAction("Controls", self, checkable=True)
        self.controls_action.setShortcut(QKeySequence("F6"))
        self.controls_action.setToolTip("Show or fold the tab's controls (F6)")
        self.controls_action.toggled.connect(self._fold_controls)
        view_menu.addAction(self.controls_action)
        self.controls_button = QToolButton()
        self.controls_button.setDefaultAction(self.controls_action)
        self.controls_button.hide()
        self.tabs.add_corner(self.controls_button)
        self._projector_keys: list[QShortcut] = []
        for keys, slot in ((NEXT_KEYS, self.next_step), (BACK_KEYS, self.step_back), (FIND_KEYS, self.focus_input),
                           (LARGER_KEYS, lambda: self.set_text_size(style.step_scale(style.text_scale(), 1))),
                           (SMALLER_KEYS, lambda: self.set_text_size(style.step_scale(style.text_scale(), -1)))):
            for key in keys:
                shortcut = QShortcut(QKeySequence(key), self)
                shortcut.activated.connect(slot)
                shortcut.setEnabled(False)
                self._projector_keys.append(shortcut)
        self._band_keys: list[QShortcut] = []
        for key, lines in SCROLL_KEYS:
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.activated.connect(lambda lines=lines: self.lessons.scroll_words(lines))
            shortcut.setEnabled(False)
            self._band_keys.append(shortcut)
        # The menus' keys keep working while the menu bar is hidden: the window holds them too.
        self.addActions([a for menu in self.menuBar().findChildren(QMenu) for a in menu.actions()
                         if a.menu() is None and not a.isSeparator()])

    def set_projector(self, on: bool) -> None:
        """Projector mode on or off: the window, the tabs' controls, the lessons and the charts."""
        if on == self.projector:
            return
        self.projector = on
        self.projector_action.setChecked(on)
        if on:
            self._was_full_screen = self.isFullScreen()
            self.showFullScreen()
        elif not self._was_full_screen:
            self.showNormal()
        self.menuBar().setVisible(not on)
        self.model_label.setVisible(not on)  # the window's title names the model
        self.controls_button.setVisible(on)
        self.tabs.fit_titles()  # the corner's width changed
        for shortcut in self._projector_keys:
            shortcut.setEnabled(on)
        self.controls_action.setChecked(False)
        self.fit_status_bar()
        self._place_lessons()
        self._fold_controls(False)
        for chart in self.findChildren(QWidget):
            if hasattr(chart, "set_print_values"):  # the bar charts: their numbers printed on them
                chart.set_print_values(on)
        if not on:
            self._projector_for_lesson = False
        self.show_message(PROJECTOR_HINT if on else "Projector mode is off (F5 turns it on).", 8000)

    def fit_status_bar(self) -> None:
        """In projector mode the status bar is there only while it says something (a message, a
        model loading): its empty line at 200 % was a row of bars."""
        needed = bool(self.message.full_text) or not self.load_progress.isHidden()
        self.statusBar().setVisible(not self.projector or needed)

    def _fold_controls(self, shown: bool) -> None:
        """Every tab's `controls` folded (projector mode, the drawer closed) or shown, and its
        `inputs` folded with them while a lesson's band is up."""
        folded = self.projector and not shown
        band = folded and not self.lessons_dock.isHidden()
        for panel in self.panels().values():
            for widget in getattr(panel, "controls", ()):
                widget.setVisible(not folded)
            for widget in getattr(panel, "inputs", ()):
                widget.setVisible(not band)
        for shortcut in self._band_keys:
            shortcut.setEnabled(band)

    def refold(self) -> None:
        """The lessons' band came or went: the tabs' inputs fold or come back."""
        self._fold_controls(self.controls_action.isChecked())

    def escape(self) -> None:
        """Esc: leave projector mode, else stop the running job."""
        if self.projector:
            self.set_projector(False)
        else:
            self.cancel_running()

    def _place_lessons(self) -> None:
        """The lessons: a caption band under the picture in projector mode, a side column otherwise."""
        area = Qt.DockWidgetArea.BottomDockWidgetArea if self.projector else Qt.DockWidgetArea.RightDockWidgetArea
        if self.dockWidgetArea(self.lessons_dock) != area:
            self.addDockWidget(area, self.lessons_dock)
        self.lessons.set_band(self.projector)
        # The band has its own Close: no title bar over it.
        if self.projector:
            self.lessons_dock.setTitleBarWidget(QWidget())
        else:  # the dock's own title bar back (Qt takes None; its stubs do not say so)
            self.lessons_dock.setTitleBarWidget(None)  # type: ignore[arg-type]
        self._size_lessons()

    def lesson_wants_projector(self) -> bool:
        """A small screen or large text: a lesson is shown in projector mode."""
        screen = self.screen().geometry()
        small = screen.width() < PROJECTOR_SCREEN[0] or screen.height() < PROJECTOR_SCREEN[1]
        return small or style.text_scale() >= PROJECTOR_TEXT_SCALE - 1e-9

    def projector_for_lesson(self) -> None:
        if not self.projector and self.lesson_wants_projector():
            self.set_projector(True)
            self._projector_for_lesson = True

    def projector_after_lesson(self) -> None:
        """The lesson closed: the mode goes if the lesson turned it on."""
        if self._projector_for_lesson:
            self.set_projector(False)

    def next_step(self) -> None:
        if self.lessons.next.isEnabled():
            self.lessons.next.click()

    def step_back(self) -> None:
        if self.lessons.back.isEnabled():
            self.lessons.back.click()

    def focus_input(self) -> None:
        """The tab's first text field (the map's search, the neighbours' word, the logits' text…),
        its folded controls opened if it is among them."""
        panel = self.tabs.currentWidget()
        controls = (*getattr(panel, "controls", ()), *getattr(panel, "inputs", ()))

        def shown_unless_folded(field: QWidget) -> bool:
            widget: QWidget | None = field
            while widget is not None and widget is not panel:
                if widget.isHidden() and widget not in controls:
                    return False
                widget = widget.parentWidget()
            return True

        fields = [f for f in panel.findChildren(QWidget) if isinstance(f, (QLineEdit, QPlainTextEdit))
                  and not isinstance(f.parentWidget(), QAbstractSpinBox) and shown_unless_folded(f)]
        field = next((f for f in fields if f.isVisibleTo(panel)), fields[0] if fields else None)
        if field is None:
            return
        if not field.isVisibleTo(panel):
            self.controls_action.setChecked(True)  # in the folded controls: the drawer opens
        field.setFocus(Qt.FocusReason.ShortcutFocusReason)
        field.selectAll()
