"""The window's menus, keys and help.

A part of `MainWindow` (see main_window.py), kept in a room of its own."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QAbstractSpinBox, QLineEdit, QMessageBox, QWidget

from embviz.core.lessons import EXAMPLES, LESSONS
from embviz.ui import style
from embviz.ui.tab_list import TABS
from embviz.ui.window_tabs import WINDOW_KEYS, WindowKeys
from embviz.ui.window_host import WindowHost


HELP_KEYS = (
    ("Ctrl+1 … Ctrl+9", "the Map, Neighbours, Analogies, Next-token logits, Vectors, Logit lens, Drift, "
                        "Attribution and Compare tabs"),
    ("Ctrl+F", "find tokens on the map"),
    ("Esc", "cancel the running job (a map, the benchmark, opening a model); in projector mode, leave it"),
    ("Home", "fit the map to every point"),
    ("Ctrl+= / Ctrl+− / Ctrl+0", "larger / smaller / normal text (100–250 %)"),
    ("F11", "full screen"),
    ("F5", "projector mode: full screen, the picture first, lessons as a caption band; F6 shows the controls, "
           "→ / Space / PgDn next step, ← / PgUp back, ↓ / ↑ scroll the lesson's words, / find, + / − text size, "
           "Esc leaves"),
    ("Ctrl+E", "export the current tab as a picture (PNG at 2×, or SVG)"),
    ("Ctrl+C", "copy the selected table rows (all rows when none is selected)"),
    ("Ctrl+O", "open a model file (or a saved session)"),
    ("Ctrl+S / Ctrl+Shift+O", "save the session / open a saved one: the model, the map as drawn, every tab's inputs"),
    ("F2", "open or close the lessons: guided steps through the four lessons, each one set up for you"),
    ("F1", "this help"),
)


class MenusMixin(WindowHost):
    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        for text, shortcut, slot in (
            ("Open file…", QKeySequence.StandardKey.Open, self.open_file_dialog),
            ("Open folder…", None, self.open_folder_dialog),
            ("Open hub id…", None, self.open_hub_dialog),
        ):
            action = QAction(text, self)
            if shortcut is not None:
                action.setShortcut(shortcut)
            action.triggered.connect(slot)
            file_menu.addAction(action)
        self.recent_menu = file_menu.addMenu("Recent models")
        lessons = file_menu.addMenu("Lesson models")
        default = QAction("Default model (SmolLM2-135M)", self)
        default.triggered.connect(lambda: self.open_model(None))
        lessons.addAction(default)
        for name, (_, description) in LESSONS.items():
            action = QAction(f"{name}: {description}", self)
            action.triggered.connect(lambda _checked=False, n=name: self.open_model(n))
            lessons.addAction(action)
        examples = file_menu.addMenu("Example models")
        for name, (*_, title, _) in EXAMPLES.items():
            action = QAction(title, self)
            action.triggered.connect(lambda _checked=False, n=name: self.open_model(n))
            examples.addAction(action)
        self._build_compare_menu(file_menu)
        file_menu.addSeparator()
        self._action(file_menu, "Save session…", QKeySequence.StandardKey.Save, self.save_session_dialog)
        self._action(file_menu, "Open session…", "Ctrl+Shift+O", self.open_session_dialog)
        file_menu.addSeparator()
        export = self._action(file_menu, "Export picture… (PNG or SVG)", "Ctrl+E", self.export_picture_dialog)
        # From anywhere in the app: the lessons' dock may float as a window of its own.
        export.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        self._action(file_menu, "Export table… (CSV)", None, self.export_table_dialog)
        self._action(file_menu, "Export map coordinates… (CSV)", None, self.export_coordinates_dialog)
        self._action(file_menu, "Export interactive page… (HTML, opens offline)", None, self.export_page_dialog)
        file_menu.addSeparator()
        clear = QAction("Clear cache…", self)
        clear.triggered.connect(self.ask_to_clear_cache)
        file_menu.addAction(clear)
        file_menu.addSeparator()
        quit_action = QAction("Quit", self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)
        self._fill_recent()

    def _action(self, menu, text: str, keys, slot) -> QAction:
        action = QAction(text, self)
        if isinstance(keys, QKeySequence.StandardKey):
            action.setShortcut(keys)
        elif keys:
            action.setShortcuts([QKeySequence(k) for k in ([keys] if isinstance(keys, str) else keys)])
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _build_view_menu(self) -> None:
        view = self.menuBar().addMenu("&View")
        self._action(view, "Larger text", ["Ctrl+=", "Ctrl++"], lambda: self.set_text_size(style.step_scale(style.text_scale(), 1)))
        self._action(view, "Smaller text", ["Ctrl+-"], lambda: self.set_text_size(style.step_scale(style.text_scale(), -1)))
        self._action(view, "Normal text size", "Ctrl+0", lambda: self.set_text_size(1.0))
        view.addSeparator()
        self._action(view, "Full screen", "F11", self.toggle_full_screen)
        self._action(view, "Fit the map to every point", "Home", self.fit_map)
        view.addSeparator()
        for i, spec in enumerate(TABS):
            self._action(view, spec.title, f"Ctrl+{i + 1}", lambda _checked=False, i=i: self.tabs.setCurrentIndex(i))
        help_menu = self.menuBar().addMenu("&Help")
        lessons = self.lessons_dock.toggleViewAction()  # F2 opens the lessons and closes them
        lessons.setText("Lessons (guided steps)")
        lessons.setShortcut(QKeySequence("F2"))
        help_menu.addAction(lessons)
        self._action(help_menu, "Keys and help", "F1", self.show_help)
        view.addSeparator()
        self._build_projector(view)

    def _build_keys(self) -> None:
        for keys, slot in ((QKeySequence.StandardKey.Find, self.focus_find), ("Escape", self.escape)):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.activated.connect(slot)

    def _keep_window_keys(self, root: QWidget | None = None) -> None:
        """The window's keys (WINDOW_KEYS) work while a text field or spin box (of `root`, by
        default the whole window) has the focus."""
        if getattr(self, "_window_keys", None) is None:
            self._window_keys = WindowKeys(WINDOW_KEYS, self)
        root = root or self
        for field in root.findChildren(QLineEdit) + root.findChildren(QAbstractSpinBox):
            field.installEventFilter(self._window_keys)

    def show_help(self) -> None:
        rows = "".join(f"<tr><td><b>{k}</b></td><td>{what}</td></tr>" for k, what in HELP_KEYS)
        box = QMessageBox(QMessageBox.Icon.Information, "embviz: keys", f"<table cellpadding='4'>{rows}</table>"
                          "<p>␣ marks a leading space: ␣king is the token for “king” in the middle of a sentence.</p>",
                          QMessageBox.StandardButton.Close, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.help_box = box

