"""The main window: menus, the four tabs, the status bar, and the routing of worker
results to the panel that asked.

The window shows one model generation at a time. Every request it sends carries that
generation, and a result for any other generation is dropped here, so no panel ever
draws numbers of a model that is no longer on screen."""

from __future__ import annotations

import os
from dataclasses import fields
from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QSize, Qt
from PySide6.QtGui import QAction, QGuiApplication, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractSpinBox, QDockWidget, QFileDialog, QFrame, QInputDialog, QLineEdit, QMainWindow, QMessageBox, QProgressBar,
    QPushButton, QScrollArea, QSizePolicy, QTabWidget, QWidget,
)

from embviz.bridge import requests as rq
from embviz.core.lessons import EXAMPLES, LESSONS
from embviz.state.lesson_tour import LessonStep, TourState
from embviz.state.session import SUFFIX, ModelRef, Session, SessionError, load_session, save_session
from embviz.state.settings import Settings, atomic_write_text
from embviz.ui.tables import rows_to_text
from embviz.ui import style
from embviz.ui.panels.analogies import AnalogyPanel
from embviz.ui.panels.drift import DriftPanel
from embviz.ui.panels.lessons import LessonsPanel
from embviz.ui.export import export_picture
from embviz.ui.panels.logits import LogitsPanel
from embviz.ui.panels.language_model import LanguageModelLoader
from embviz.ui.panels.lens import LensPanel
from embviz.ui.panels.map import MapPanel
from embviz.ui.panels.neighbours import NeighboursPanel
from embviz.ui.panels.vectors import VectorsPanel
from embviz.ui.widgets import ElidedLabel, MessageLabel
from embviz.bridge.worker import ComputeWorker, Reply
from embviz.state.word_sets import preset_word_sets

STATUS_BAR_SLACK = 60  # pixels of the status bar that are not the two labels
TAB_NAMES = ("Map", "Neighbours", "Analogies", "Next-token logits", "Vectors", "Logit lens", "Drift")
# The titles used when the full ones do not fit the tab bar (large text, a narrow screen,
# the lessons open): every tab stays in sight, with no scroll arrows to find the last ones.
SHORT_TAB_NAMES = ("Map", "Neighbours", "Analogies", "Logits", "Vectors", "Lens", "Drift")
# The tab bar's titles, tried in turn until they fit: (short titles, point size, bold).
TAB_TITLE_STEPS = (
    (False, style.BASE_POINT_SIZE + 1, True), (True, style.BASE_POINT_SIZE + 1, True),
    (True, style.BASE_POINT_SIZE, False),
)
LESSONS_MAX_SHARE = 0.3  # of the window's width: the tabs keep the rest
LESSONS_SHARE = 0.28  # the width the lessons open at, under the cap
# Window-wide keys that a focused line edit or spin box would otherwise take for itself
# (on X11 a QLineEdit reads Ctrl+E as "end of line").
WINDOW_KEYS = ("Ctrl+E",)
HELP_KEYS = (
    ("Ctrl+1 … Ctrl+7", "the Map, Neighbours, Analogies, Next-token logits, Vectors, Logit lens and Drift tabs"),
    ("Ctrl+F", "find tokens on the map"),
    ("Esc", "cancel the running job (a map, the benchmark, opening a model)"),
    ("Home", "fit the map to every point"),
    ("Ctrl+= / Ctrl+− / Ctrl+0", "larger / smaller / normal text (100–250 %)"),
    ("F11", "full screen"),
    ("Ctrl+E", "export the current tab as a picture (PNG at 2×, or SVG)"),
    ("Ctrl+C", "copy the selected table rows (all rows when none is selected)"),
    ("Ctrl+O", "open a model file (or a saved session)"),
    ("Ctrl+S / Ctrl+Shift+O", "save the session / open a saved one: the model, the map as drawn, every tab's inputs"),
    ("F2", "open or close the lessons: guided steps through the four lessons, each one set up for you"),
    ("F1", "this help"),
)


class MainWindow(QMainWindow):
    def __init__(self, worker: ComputeWorker | None = None, settings: Settings | None = None, device: str = "auto") -> None:
        super().__init__()
        self.setWindowTitle("embviz")
        self._fit_to_screen()
        self.setAcceptDrops(True)
        self.device = device
        self.settings = settings or Settings()
        self.worker = worker or ComputeWorker(self)
        self.summary = None
        self.generation = 0  # the model generation on screen
        self.load_id = 0
        self.loading_source: str | None = None
        self.model_source: str | None = None  # how the model on screen was opened
        self._session: tuple[int, Session, str] | None = None  # (load id, session, file name) being opened
        self._lesson_step: tuple[int, LessonStep] | None = None  # (load id, step) waiting for its model
        self.last_error: str | None = None

        submit, cancel = self.submit, self.worker.cancel
        self.map_panel = MapPanel(submit, cancel, self.settings, preset_word_sets())
        self.neighbours = NeighboursPanel(submit)
        self.analogies = AnalogyPanel(submit, cancel)
        self.language_model = LanguageModelLoader(submit)
        self.logits = LogitsPanel(submit, cancel, self.language_model)
        self.vectors = VectorsPanel(submit)
        self.lens = LensPanel(submit, cancel, self.language_model)
        self.drift = DriftPanel(submit, cancel, self.language_model)
        self.tabs = PanelTabs()
        panels = (self.map_panel, self.neighbours, self.analogies, self.logits, self.vectors, self.lens, self.drift)
        for panel, name, short in zip(panels, TAB_NAMES, SHORT_TAB_NAMES):
            self.tabs.add_panel(panel, name, short)
        self.setCentralWidget(self.tabs)
        self.tour = TourState()
        self.lessons = LessonsPanel(self.tour)
        self.lessons.stepChosen.connect(self.go_to_step)
        self.lessons_dock = QDockWidget("Lessons", self)
        self.lessons_dock.setWidget(self.lessons)
        self.lessons_dock.setAllowedAreas(Qt.DockWidgetArea.LeftDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.lessons_dock)
        self.lessons_dock.hide()
        self.lessons_dock.visibilityChanged.connect(lambda visible: visible and self._size_lessons())

        self.map_panel.tokenClicked.connect(self._token_clicked)
        self.map_panel.statusMessage.connect(self.show_message)
        self.map_panel.neighboursOf.connect(self._neighbours_of_selection)
        self.neighbours.highlight.connect(self._highlight)
        self.neighbours.statusMessage.connect(self.show_message)
        self.analogies.highlight.connect(self._highlight)
        self.analogies.showArrows.connect(
            lambda pairs: self.map_panel.view.set_arrows([(a, b, style.ARROW_COLORS[i % 2]) for i, (a, b) in enumerate(pairs)])
        )

        # Messages on the left, elided to fit; the model on the right behind a rule, so
        # the two never run into each other.
        self.message = MessageLabel()
        self.model_label = ElidedLabel("No model")
        # Fixed: its width is set by _share_status_bar (an Ignored policy lets the layout squeeze it).
        self.model_label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Preferred)
        self.model_label.setStyleSheet("QLabel { border-left: 1px solid #888; padding-left: 8px; }")
        self.load_progress = QProgressBar()
        self.load_progress.setRange(0, 1000)
        self.load_progress.setMaximumWidth(320)
        self.load_cancel = QPushButton("Cancel")
        self.load_cancel.setToolTip("Stop opening this model (a download stops at once)")
        self.load_cancel.clicked.connect(lambda: self.worker.cancel(rq.LoadModel.channel))
        self._show_load_progress(False)
        self.statusBar().addWidget(self.message, 1)
        self.statusBar().addPermanentWidget(self.load_progress)
        self.statusBar().addPermanentWidget(self.load_cancel)
        self.statusBar().addPermanentWidget(self.model_label)
        self.message.changed.connect(self._share_status_bar)
        self._build_menus()
        self._build_view_menu()
        self._build_keys()
        style.set_text_scale(self.settings.text_scale)
        self._keep_window_keys()

        if self.settings.problem:
            self.show_message(self.settings.problem)

    # --- menus ------------------------------------------------------------------------------
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
        file_menu.addSeparator()
        self._action(file_menu, "Save session…", QKeySequence.StandardKey.Save, self.save_session_dialog)
        self._action(file_menu, "Open session…", "Ctrl+Shift+O", self.open_session_dialog)
        file_menu.addSeparator()
        export = self._action(file_menu, "Export picture… (PNG or SVG)", "Ctrl+E", self.export_picture_dialog)
        # From anywhere in the app: the lessons' dock may float as a window of its own.
        export.setShortcutContext(Qt.ShortcutContext.ApplicationShortcut)
        self._action(file_menu, "Export table… (CSV)", None, self.export_table_dialog)
        self._action(file_menu, "Export map coordinates… (CSV)", None, self.export_coordinates_dialog)
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
        for i, name in enumerate(TAB_NAMES):
            self._action(view, name, f"Ctrl+{i + 1}", lambda _checked=False, i=i: self.tabs.setCurrentIndex(i))
        help_menu = self.menuBar().addMenu("&Help")
        lessons = self.lessons_dock.toggleViewAction()  # F2 opens the lessons and closes them
        lessons.setText("Lessons (guided steps)")
        lessons.setShortcut(QKeySequence("F2"))
        help_menu.addAction(lessons)
        self._action(help_menu, "Keys and help", "F1", self.show_help)

    def _build_keys(self) -> None:
        for keys, slot in ((QKeySequence.StandardKey.Find, self.focus_find), ("Escape", self.cancel_running)):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.activated.connect(slot)

    def _keep_window_keys(self) -> None:
        """The window's keys (WINDOW_KEYS) work while a text field or spin box has the focus."""
        self._window_keys = WindowKeys(WINDOW_KEYS, self)
        for field in self.findChildren(QLineEdit) + self.findChildren(QAbstractSpinBox):
            field.installEventFilter(self._window_keys)

    # --- presentation -------------------------------------------------------------------------
    def _fit_to_screen(self) -> None:
        screen = QGuiApplication.primaryScreen()
        room = screen.availableGeometry() if screen is not None else None
        width, height = (1400, 900) if room is None else (min(1400, int(room.width() * 0.96)), min(900, int(room.height() * 0.92)))
        self.resize(width, height)

    def set_text_size(self, scale: float) -> None:
        """Every font, table row, bar label, axis, map marker and map label; remembered."""
        scale = style.set_text_scale(scale)
        self.settings.data["text_scale"] = scale
        try:
            self.settings.save()
        except OSError as exc:
            self.show_message(f"Could not save the text size: {exc}")
        self.show_message(f"Text size {scale:.0%} (Ctrl+= larger, Ctrl+− smaller, Ctrl+0 normal)", 4000)

    def toggle_full_screen(self) -> None:
        self.showNormal() if self.isFullScreen() else self.showFullScreen()

    def fit_map(self) -> None:
        self.map_panel.view.fit()

    def focus_find(self) -> None:
        self.tabs.setCurrentWidget(self.map_panel)
        self.map_panel.search.setFocus()
        self.map_panel.search.selectAll()

    def cancel_running(self) -> None:
        """Esc: stop the long job, whichever it is (a map, the benchmark, a model being opened or built)."""
        for channel in (rq.Project.channel, rq.Clusters.channel, rq.Benchmark.channel, rq.LoadLanguageModel.channel,
                        rq.LoadModel.channel):
            self.worker.cancel(channel)

    def show_help(self) -> None:
        rows = "".join(f"<tr><td><b>{k}</b></td><td>{what}</td></tr>" for k, what in HELP_KEYS)
        box = QMessageBox(QMessageBox.Icon.Information, "embviz: keys", f"<table cellpadding='4'>{rows}</table>"
                          "<p>␣ marks a leading space: ␣king is the token for “king” in the middle of a sentence.</p>",
                          QMessageBox.StandardButton.Close, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        self.help_box = box

    # --- lessons ------------------------------------------------------------------------------
    def show_lessons(self) -> None:
        self.lessons_dock.show()
        self.lessons_dock.raise_()

    def _size_lessons(self) -> None:
        """The lessons beside the tabs, never more than LESSONS_MAX_SHARE of the window."""
        self.lessons_dock.setMaximumWidth(int(self.width() * LESSONS_MAX_SHARE))
        if not self.lessons_dock.isFloating():
            width = min(self.lessons.sizeHint().width(), int(self.width() * LESSONS_SHARE))
            self.resizeDocks([self.lessons_dock], [width], Qt.Orientation.Horizontal)

    def go_to_step(self, index: int) -> None:
        """Set the app up for a lesson step: its model (opened if another is on screen),
        its tab and its inputs; the step's own numbers are asked of that model."""
        step = self.tour.go(index)
        self.show_lessons()
        self.lessons.show_step()
        if self.summary is None or self.model_source != step.model or self.load_progress.isVisible():
            self.open_model(step.model)
            self._lesson_step = (self.load_id, step)
        else:
            self._run_step(step)

    def _run_step(self, step: LessonStep) -> None:
        setup = step.setup
        self.tabs.setCurrentIndex(step.tab)
        if "logits" in setup:
            lg = self.logits
            lg.full.setChecked(True)
            lg.by_id.setChecked(setup.get("by_id", False))
            lg.hold_axis.setChecked(setup.get("hold_axis", False))
            lg.temperature.setValue(setup.get("temperature", 1.0))
            lg.set_text(setup["logits"])
        if "neighbours" in setup:
            nb = self.neighbours
            nb.by.setCurrentIndex(nb.by.findData(setup.get("by", "cosine")))
            nb.word.setText(setup["neighbours"])
            nb.run()
        if "analogy" in setup:
            self.analogies.variants.setChecked(False)
            self.analogies.exclude.setChecked(setup["exclude"])
            self.analogies.set_words(*setup["analogy"])
        ids = setup.get("rows")
        if ids:
            self.map_panel.view.set_selected(list(ids))
        text = setup["logits"] if setup.get("shapes") else None
        if ids is not None or text is not None:
            self.lessons.ask(self.submit(rq.LessonNumbers(ids=ids, text=text),
                                         Reply(self.lessons.on_numbers, self.lessons.on_failed)))

    # --- export -------------------------------------------------------------------------------
    def export_picture(self, path: str | Path) -> Path:
        """The current tab's plot or table with its caption: .svg, else PNG at 2×."""
        widget, caption = self.tabs.currentWidget().picture()
        return export_picture(widget, caption, path)

    def export_table(self, path: str | Path, coordinates: bool = False, table=None) -> Path | None:
        """The current tab's table (the map's coordinates on the map tab), or `table`, as CSV;
        None when there is none."""
        if table is None:
            table = (self.map_panel if coordinates else self.tabs.currentWidget()).table_rows()
        if table is None:
            return None
        path = Path(path)
        atomic_write_text(path, rows_to_text(*table))
        return path

    def _tab_slug(self) -> str:
        return TAB_NAMES[self.tabs.currentIndex()].lower().replace(" ", "-")

    def _save_as(self, what: str, name: str, filters: str, write, title: str | None = None) -> None:
        """Ask where, write there, say how it went."""
        path, _ = QFileDialog.getSaveFileName(self, title or f"Export {what}", str(Path.home() / name), filters)
        if not path:
            return
        try:
            self.show_message(f"Saved {write(path)}")
        except OSError as exc:
            self.show_message(f"Could not save the {what}: {exc}")

    def export_picture_dialog(self) -> None:
        self._save_as("picture", f"embviz-{self._tab_slug()}.png", "PNG picture, 2× (*.png);;SVG drawing (*.svg)",
                      self.export_picture)

    def export_table_dialog(self, coordinates: bool = False) -> None:
        panel = self.map_panel if coordinates else self.tabs.currentWidget()
        table = panel.table_rows()  # once: the map's is every row
        if table is None:
            self.show_message("Nothing to export yet: this tab shows no table.")
            return
        what = "map-coordinates" if panel is self.map_panel else self._tab_slug()
        self._save_as("table", f"embviz-{what}.csv", "CSV table (*.csv)", lambda path: self.export_table(path, table=table))

    def export_coordinates_dialog(self) -> None:
        self.export_table_dialog(coordinates=True)

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for source in self.settings.recent_models:
            action = QAction(source, self)
            action.triggered.connect(lambda _checked=False, s=source: self.open_model(s))
            self.recent_menu.addAction(action)
        self.recent_menu.setEnabled(bool(self.settings.recent_models))

    def open_file_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a checkpoint", "", "Checkpoints and word vectors (*.gguf *.safetensors *.pt *.pth *.bin *.gz *.txt *.vec *.npy *.kv *.model);;embviz sessions (*.embviz);;All files (*)")
        if path:
            self.open_path(path)

    def open_path(self, path: str) -> None:
        """A file the user picked or dropped: a saved session, or a model."""
        self.open_session(path) if path.endswith(SUFFIX) else self.open_model(path)

    def open_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a Hugging Face model folder")
        if path:
            self.open_model(path)

    def open_hub_dialog(self) -> None:
        repo, ok = QInputDialog.getText(self, "Open hub id", "Hugging Face id (from the local cache), e.g. HuggingFaceTB/SmolLM2-135M:")
        if ok and repo.strip():
            self.open_model(repo.strip())

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        urls = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            self.open_path(urls[0])

    # --- the cache ------------------------------------------------------------------------------
    def ask_to_clear_cache(self) -> None:
        """First the size (from the worker), then a question, then the deletion."""
        self.worker.submit(rq.CacheSize(), Reply(self._ask_to_delete, self._say))

    def _ask_to_delete(self, _rid: int, size: int) -> None:
        box = QMessageBox(QMessageBox.Icon.Question, "Clear cache",
                          f"The cache holds {size / 2**20:,.0f} MB: tables read from GGUF and word-vector files, "
                          "and language models built for logits. Delete it? Files are read again when next opened.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.accepted.connect(lambda: self.worker.submit(rq.ClearCache(), Reply(self._cache_cleared, self._say)))
        box.open()

    def _cache_cleared(self, _rid: int, freed: int) -> None:
        self.show_message(f"Cache cleared: {freed / 2**20:,.0f} MB freed.")

    def _say(self, _rid: int, message: str) -> None:
        self.show_message(message)

    # --- sessions -----------------------------------------------------------------------------
    def session_state(self) -> Session | None:
        """Every tab's state and the model they belong to; None with no model open."""
        if self.summary is None:
            return None
        source = self.model_source
        if source and os.path.exists(source):
            source = os.path.abspath(source)  # re-opened from anywhere
        custom = {name: words for name, words in self.settings.word_sets.items() if name not in self.map_panel.presets}
        return Session(
            model=ModelRef(source=source, name=self.summary.info["name"], fingerprint=self.summary.fingerprint),
            map=self.map_panel.snapshot(), neighbours=self.neighbours.state, analogies=self.analogies.state,
            logits=self.logits.state, vectors=self.vectors.state, lens=self.lens.state, drift=self.drift.state,
            custom_sets=custom, tab=self.tabs.currentIndex(),
            text_scale=style.text_scale(),
        )

    def save_session(self, path: str | Path) -> Path | None:
        session = self.session_state()
        return None if session is None else save_session(session, path)

    def save_session_dialog(self) -> None:
        if self.summary is None:
            self.show_message("Nothing to save yet: open a model first.")
            return
        name = f"embviz-{self.summary.info['name']}{SUFFIX}".replace(" ", "-").replace("/", "-")
        self._save_as("session", name, f"embviz session (*{SUFFIX})", self.save_session, title="Save session")

    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open session", str(Path.home()), f"embviz session (*{SUFFIX});;All files (*)")
        if path:
            self.open_session(path)

    def open_session(self, path: str | Path) -> bool:
        """Check the file, open its model if another is on screen (checking that it is the
        same table), then restore every tab at once. False, with one message and nothing
        changed, for a session that cannot be restored."""
        try:
            session = load_session(path)
            if (missing := session.model.missing_file()) is not None:
                raise SessionError(missing)
        except SessionError as exc:
            self._open_failed("Could not open the session", str(exc))
            return False
        name = Path(path).name
        busy = self.load_progress.isVisible()
        # Already on screen (exactly: a session from another device is checked by the worker).
        if self.summary is not None and not busy and session.model.fingerprint == self.summary.fingerprint:
            self._restore(self.summary, session, name)
            return True
        self.open_model(session.model.source, expect=session.model.expect())
        self._session = (self.load_id, session, name)
        return True

    def _open_failed(self, title: str, message: str) -> None:
        """A model or session that could not be opened: in the status bar and in a box,
        non-modal, so the window stays usable (and tests and demos never block on it)."""
        self.last_error = message
        self.show_message(message, 30000)
        box = QMessageBox(QMessageBox.Icon.Warning, title, message, parent=self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def _restore(self, summary, session: Session, name: str) -> None:
        self._session = None
        for channel in (rq.Project.channel, rq.Benchmark.channel):
            self.worker.cancel(channel)  # a map or benchmark of the state being replaced
        problems = self.map_panel.merge_word_sets(session.custom_sets)
        style.set_text_scale(session.text_scale)  # first: the map's zoom is set for the layout it makes
        self._show_model(summary, session)
        self.tabs.setCurrentIndex(min(max(session.tab, 0), self.tabs.count() - 1))
        self.show_message(f"Session {name} restored: {summary.info['name']}, " + (
            f"the map of {len(session.map.projection.ids):,} rows as saved" if session.map.projection is not None
            else "no saved map (drawing one)") + (f". {problems}" if problems else "."), 20000)

    # --- loading ----------------------------------------------------------------------------
    def open_model(self, source: str | None, expect: dict | None = None) -> None:
        """Open a checkpoint; the worker stops every job of the model shown at once. With
        `expect` (a session's), the worker keeps the model on screen unless the new one
        is that table."""
        self._session = None
        self._lesson_step = None
        self.loading_source = source
        self.load_id = self.worker.submit(
            rq.LoadModel(source=source, device=self.device, expect=expect),
            Reply(self._load_finished, lambda rid, message: self._load_ended(rid, message),
                  lambda rid: self._load_ended(rid, None), self._load_progress))
        self.load_progress.setValue(0)
        self._show_load_progress(True)
        self.set_model_text(f"Opening {Path(source).name if source else 'the default model'}…")

    def _show_load_progress(self, on: bool) -> None:
        self.load_progress.setVisible(on)
        self.load_cancel.setVisible(on)

    def submit(self, request: rq.Request, reply: Reply | None = None) -> int:
        """Send a request about the model on screen; panels submit through this. Its answer
        reaches `reply` only while that model is still on screen: never drawn on another."""
        request.generation = asked = self.generation

        def if_current(callback):
            if callback is None:
                return None
            return lambda *args: callback(*args) if self.generation == asked else None

        reply = reply or Reply()
        return self.worker.submit(request, Reply(*(if_current(getattr(reply, f.name)) for f in fields(Reply))))

    def show_message(self, text: str, timeout_ms: int = 15000) -> None:
        self.message.show_message(text, timeout_ms)

    # --- the model's own requests ---------------------------------------------------------------
    def _load_progress(self, rid: int, fraction: float, stage: str, _preview: object) -> None:
        if rid == self.load_id:
            self.load_progress.setValue(int(fraction * 1000))
            self.load_progress.setFormat(stage)

    def _load_finished(self, rid: int, summary) -> None:
        if rid == self.load_id:
            self._model_loaded(summary)

    def _load_ended(self, rid: int, message: str | None) -> None:
        """A load that failed (with its message) or was cancelled (None)."""
        if rid != self.load_id:  # an older load, superseded by the newest
            return
        self._show_load_progress(False)
        self.set_model_text(self._model_text() if self.summary else "No model")
        what = "the session" if self._session is not None else "the model"
        self._session = None
        if message is None:
            self.show_message(f"Opening {what} was cancelled.")
        else:
            self._open_failed(f"Could not open {what}", message)

    def _model_loaded(self, summary) -> None:
        if self._session is not None and self._session[0] == self.load_id:
            _, session, name = self._session
            self._restore(summary, session, name)
        else:
            self._show_model(summary)
            if self._lesson_step is not None and self._lesson_step[0] == self.load_id:
                step, self._lesson_step = self._lesson_step[1], None
                self._run_step(step)

    def _show_model(self, summary, session: Session | None = None) -> None:
        """Every panel on the new model: fresh, or as `session` saved it."""
        self.summary = summary
        self.generation = summary.generation
        self.model_source = self.loading_source
        self._show_load_progress(False)
        self.message.clear_message()  # messages belong to the model they were about
        self.set_model_text(self._model_text())
        self.setWindowTitle(f"embviz — {summary.info['name']}")
        self.tabs.setTabEnabled(3, True)
        self.map_panel.on_model(summary, session and session.map)
        self.neighbours.on_model(summary, session and session.neighbours)
        self.analogies.on_model(summary, session and session.analogies)
        self.language_model.on_model(summary)  # before the tabs, which may ask for it at once
        self.logits.on_model(summary, session and session.logits)
        self.vectors.on_model(summary, session and session.vectors)
        self.lens.on_model(summary, session and session.lens)
        self.drift.on_model(summary, session and session.drift)
        if summary.info["notes"]:
            self.show_message("   •   ".join(summary.info["notes"]), 30000)
        if self.loading_source:
            try:
                self.settings.add_recent(self.loading_source)
            except OSError as exc:
                self.show_message(f"Could not save the recent-models list: {exc}")
            self._fill_recent()

    def set_model_text(self, text: str) -> None:
        self.model_label.set_full_text(text)
        self._share_status_bar()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._share_status_bar()
        self.lessons_dock.setMaximumWidth(int(self.width() * LESSONS_MAX_SHARE))

    def _share_status_bar(self) -> None:
        """The model label takes what it needs, up to 55 % of the width while a message is
        shown; the message has the rest."""
        share = 0.55 if self.message.full_text else 0.95
        # Less the room of the status bar's margins and grip: a fixed width the bar cannot hold
        # raises the window's minimum, the window grows, the share grows, and so on off the screen.
        room = int(self.width() * share) - STATUS_BAR_SLACK
        self.model_label.setFixedWidth(max(80, min(self.model_label.text_width() + 12, room)))

    def _model_text(self) -> str:
        info = self.summary.info
        share = f", table = {info['embedding_share']:.0%} of parameters" if info.get("embedding_share") else ""
        return (f"{info['name']}  |  {info['vocab_size']:,} tokens × {info['dim']:,} dims  |  "
                f"{info['device']}, {info['dtype']}{share}")

    def _highlight(self, ids: list[int]) -> None:
        """Ring tokens on the map; one token (a clicked table row) is also panned into view."""
        self.map_panel.view.set_selected(ids)
        if len(ids) == 1:
            self.map_panel.view.reveal(ids[0])

    def _neighbours_of_selection(self, ids: list[int]) -> None:
        self.tabs.setCurrentWidget(self.neighbours)
        self.neighbours.query(list(ids))

    def _token_clicked(self, token_id: int) -> None:
        self.neighbours.show_token(token_id)
        self.map_panel.view.set_selected([token_id])

    def closeEvent(self, event) -> None:
        if self.analogies.bench_window is not None:
            self.analogies.bench_window.close()  # its own top-level window: it would outlive this one
        self.worker.shutdown()
        super().closeEvent(event)


class PanelTabs(QTabWidget):
    """The tabs, each panel in a scroll area: on a short screen with large text a tab
    scrolls instead of raising the window's minimum size past the screen. The titles
    shorten when the full ones do not fit, so no tab hides behind scroll arrows.

    Callers deal in panels: `currentWidget`, `widget`, `indexOf` and `setCurrentWidget`
    see through the scroll areas."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._names: list[tuple[str, str]] = []  # (full title, short title) per tab
        self.setUsesScrollButtons(False)
        self.setElideMode(Qt.TextElideMode.ElideRight)  # the last resort, past the short titles
        self.tabBar().setExpanding(False)
        style.follow_scale(self)

    def add_panel(self, panel: QWidget, name: str, short: str) -> None:
        self._names.append((name, short))
        self.addTab(PanelPage(panel), name)

    def _panel(self, page: QWidget | None) -> QWidget | None:
        return page.widget() if isinstance(page, QScrollArea) else page

    def currentWidget(self) -> QWidget | None:
        return self._panel(super().currentWidget())

    def widget(self, index: int) -> QWidget | None:
        return self._panel(super().widget(index))

    def indexOf(self, panel: QWidget) -> int:
        return next((i for i in range(self.count()) if self.widget(i) is panel), super().indexOf(panel))

    def setCurrentWidget(self, panel: QWidget) -> None:
        self.setCurrentIndex(self.indexOf(panel))

    def set_text_scale(self, scale: float) -> None:
        self._fit_titles()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_titles()

    def _fit_titles(self) -> None:
        """The first of TAB_TITLE_STEPS whose titles fit the width (eliding past the last)."""
        bar = self.tabBar()
        for short, size, bold in TAB_TITLE_STEPS:
            font = style.font(size, bold)
            if bar.font() != font:
                bar.setFont(font)
            for i, names in enumerate(self._names):
                if bar.tabText(i) != names[short]:
                    bar.setTabText(i, names[short])
            if sum(bar.tabSizeHint(i).width() for i in range(bar.count())) <= self.width():
                return


class PanelPage(QScrollArea):
    """A tab's page: the panel fills it, and scrolls only when the page is smaller than
    the panel's minimum. (A resizable QScrollArea gives a panel whose layout has a height
    for its width, such as a flow row's, its preferred height: the map would scroll where
    it could shrink.)"""

    def __init__(self, panel: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(False)
        self.setWidget(panel)

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
