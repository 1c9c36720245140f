"""The main window: the tabs, the lessons dock, the status bar, and the model on screen.
Its menus, files, sessions and lessons live in rooms of their own (window_*.py).

The window shows one model generation at a time. Every request it sends carries that
generation, and a result for any other generation is dropped here, so no panel ever
draws numbers of a model that is no longer on screen."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any, cast

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget, QMainWindow, QProgressBar, QPushButton, QSizePolicy, QWidget

from embviz.bridge import requests as rq
from embviz.state.kept_tabs import KeptTabs
from embviz.state.lesson_tour import LessonStep, TourState
from embviz.state.session import Session
from embviz.state.settings import Settings
from embviz.ui import style
from embviz.ui.panels.lessons import LessonsPanel
from embviz.ui.panels.language_model import LanguageModelLoader
from embviz.ui.panels.map import MapPanel
from embviz.ui.widgets import ElidedLabel, MessageLabel
from embviz.bridge.latest import Latest
from embviz.bridge.worker import ComputeWorker, Reply
from embviz.state.word_sets import preset_word_sets
from embviz.ui.window_compare import CompareMixin
from embviz.ui.window_files import FilesMixin
from embviz.ui.window_lessons import LessonsMixin
from embviz.ui.window_menus import MenusMixin
from embviz.ui.window_projector import ProjectorMixin
from embviz.ui.window_sessions import SessionsMixin
from embviz.ui.tab_list import TABS, TabServices
from embviz.ui.window_tabs import PanelTabs

STATUS_BAR_SLACK = 60  # pixels of the status bar that are not the two labels
MODEL_SHARE = 0.3  # of the status bar, while a message is shown


def _built(name: str) -> property:
    """A tab's panel, the tabs built first if they are not yet (MainWindow.build_tabs)."""

    def panel(self) -> Any:
        return self.panel_named(name)

    return property(panel)


class MainWindow(MenusMixin, FilesMixin, SessionsMixin, LessonsMixin, CompareMixin, ProjectorMixin, QMainWindow):
    def __init__(self, worker: ComputeWorker | None = None, settings: Settings | None = None, device: str = "auto") -> None:
        settings = settings or Settings()
        # The text size before the window is made: set after, the window and so its menu bar
        # and status bar kept the 100 % font (and the menu bar its 100 % height) until the event
        # loop ran, and the first second on screen was drawn at 100 % with the menu bar cut off.
        style.set_text_scale(settings.text_scale)
        super().__init__()
        self.setWindowTitle("embviz")
        self._fit_to_screen()
        self.setAcceptDrops(True)
        self.device = device
        self.settings = settings
        self.worker = worker or ComputeWorker(self)
        self.summary = None
        self.generation = 0  # the model generation on screen
        self.loading_source: str | None = None
        self.model_source: str | None = None  # how the model on screen was opened
        # What the newest load opens the model for, if more than to show it:
        self._session: tuple[Session, str] | None = None  # (session, file name) being opened
        self._lesson_step: LessonStep | None = None  # a lesson step waiting for its model
        self.kept_tabs = KeptTabs()  # the tabs of models left, for when they come back
        self._before_lesson: Session | None = None  # the user's tabs while a lesson has them
        self.opening = Latest(self.worker.submit, self._model_loaded, self._load_ended,
                              lambda: self._load_ended(None), self._load_progress)
        self.last_error: str | None = None
        self._message_tab: QWidget | None = None  # the tab whose panel said the message on show
        self._unseen_messages: dict[QWidget, str] = {}  # what tabs out of sight said last
        self._build_panels()
        self._build_comparison_opening()
        self._build_lessons_dock()
        self._connect_panels()
        self._build_status_bar()
        self._build_menus()
        self._build_view_menu()
        self._build_keys()
        self._keep_window_keys()
        if self.settings.problem:
            self.show_message(self.settings.problem)

    # The tabs behind the map, built by build_tabs: once the window is on screen (run_app), or
    # when one is first shown or asked for, whichever comes first. (The window's own handles on
    # the tabs it wires to each other; a new tab needs none: panel_named finds every tab.)
    neighbours = _built("neighbours")
    analogies = _built("analogies")
    logits = _built("logits")
    vectors = _built("vectors")
    lens = _built("lens")
    drift = _built("drift")
    attribution = _built("attribution")
    compare = _built("compare")

    def _build_panels(self) -> None:
        self.language_model = LanguageModelLoader(self.submit)
        self._services = TabServices(self.submit, self.worker.cancel, self.language_model, self.settings,
                                     preset_word_sets())
        first, *rest = TABS
        self.map_panel = cast(MapPanel, first.make(self._services))
        self.tabs = PanelTabs()
        self.tabs.add_panel(self.map_panel, first.title, first.short)
        self._pages = {spec.key: self.tabs.add_panel(None, spec.title, spec.short) for spec in rest}
        self._tab_panels: dict[str, Any] | None = None
        self.tabs.currentChanged.connect(self.build_tabs)
        self.tabs.currentChanged.connect(self._drop_other_tabs_message)
        self.setCentralWidget(self.tabs)

    def build_tabs(self, *_args) -> None:
        """The tabs other than the map (a third of the window's making, mostly their plots): not
        needed to show the window and its first map, so built after, once (their modules too)."""
        if self._tab_panels is not None:
            return
        self._tab_panels = {}
        for spec in TABS[1:]:
            self._tab_panels[spec.key] = panel = spec.make(self._services)
            self._pages[spec.key].set_panel(panel)
            self._keep_window_keys(panel)
            self._connect_panel(panel)
        self._connect_tab_panels()

    def panels(self) -> dict[str, Any]:
        """Every tab's panel by its key, in the tabs' order (the tabs built if they are not yet)."""
        self.build_tabs()
        assert self._tab_panels is not None
        return {TABS[0].key: self.map_panel, **self._tab_panels}

    def panel_named(self, name: str) -> Any:
        """A tab's panel by its key, as lesson steps and sessions name it ("map", "logits", "compare"…)."""
        return self.map_panel if name == TABS[0].key else self.panels()[name]

    def tab_key(self) -> str:
        """The key of the tab shown."""
        return TABS[self.tabs.currentIndex()].key

    def show_tab(self, key: str) -> None:
        self.tabs.setCurrentIndex(next(i for i, spec in enumerate(TABS) if spec.key == key))

    def _build_lessons_dock(self) -> None:
        self.tour = TourState()
        self.lessons = LessonsPanel(self.tour, self.submit)
        self.lessons.stepChosen.connect(self.go_to_step)
        self.lessons_dock = QDockWidget("Lessons", self)
        self.lessons_dock.setWidget(self.lessons)
        self.lessons_dock.setAllowedAreas(Qt.DockWidgetArea.LeftDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea
                                          | Qt.DockWidgetArea.BottomDockWidgetArea)  # a caption band in projector mode
        self.lessons.closeAsked.connect(self.lessons_dock.close)
        self.lessons.bandChanged.connect(lambda: self._size_lessons() if self.projector else None)
        self.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.lessons_dock)
        self.lessons_dock.hide()
        self.lessons_dock.visibilityChanged.connect(self._lessons_shown)

    def _lessons_shown(self, visible: bool) -> None:
        if visible:
            self._size_lessons()
        elif self.lessons_dock.isHidden():  # closed, not just covered
            self.end_lesson()
        self.refold()

    def _connect_panels(self) -> None:
        self._connect_panel(self.map_panel)
        self.map_panel.tokenClicked.connect(self._token_clicked)
        self.map_panel.neighboursOf.connect(self._neighbours_of_selection)

    def _connect_panel(self, panel: QWidget) -> None:
        """The signals every tab may have (tab_list's docstring): connected where it has them."""
        if (highlight := getattr(panel, "highlight", None)) is not None:
            highlight.connect(self._highlight)
        if (message := getattr(panel, "statusMessage", None)) is not None:
            message.connect(lambda text: self._tab_message(panel, text))
        if (focus := getattr(panel, "focusToken", None)) is not None:
            focus.connect(self.focus_token)

    def _connect_tab_panels(self) -> None:
        """The few tabs that hand work to another."""
        self.lens.attributionAsked.connect(self._attribution_of)
        self.compare.reopen.connect(lambda source: self.open_comparison(source, show=False))
        self.analogies.showArrows.connect(
            lambda pairs: self.map_panel.view.set_arrows([(a, b, style.ARROW_COLORS[i % 2]) for i, (a, b) in enumerate(pairs)])
        )

    def _build_status_bar(self) -> None:
        """Messages on the left, elided to fit; the model on the right behind a rule, so
        the two never run into each other."""
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
        self.message.changed.connect(self.fit_status_bar)

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
        self.map_panel.fit_button.click()  # the flat map, and the 3-D one when it is shown

    def focus_find(self) -> None:
        if self.projector:  # the tab on the screen stays: its own field
            self.focus_input()
            return
        self.tabs.setCurrentWidget(self.map_panel)
        self.map_panel.search.setFocus()
        self.map_panel.search.selectAll()

    def cancel_running(self) -> None:
        """Esc: stop the long job, whichever it is (a map, the benchmark, a model being opened or built)."""
        for channel in (rq.Project.channel, rq.Clusters.channel, rq.Benchmark.channel, rq.LoadLanguageModel.channel,
                        rq.LoadModel.channel, rq.Compare.channel, rq.LoadComparison.channel):
            self.worker.cancel(channel)

    # --- loading ----------------------------------------------------------------------------
    def open_model(self, source: str | None, expect: dict | None = None) -> None:
        """Open a checkpoint; the worker stops every job of the model shown at once. With
        `expect` (a session's), the worker keeps the model on screen unless the new one
        is that table."""
        self._session = None
        self._lesson_step = None
        self.loading_source = source
        first_map = False
        if self.summary is None:  # nothing on screen yet: the map the cache keeps for this model, if it does
            self.map_panel.drop_first_map()
            if expect is None and self.map_panel.show_first_map(source, self.device):
                first_map = True
                self.map_panel.view.viewport().repaint()  # on screen now, before the worker's imports take the interpreter
        self.opening.ask(rq.LoadModel(source=source, device=self.device, expect=expect))
        self.load_progress.setValue(0)
        self._show_load_progress(True)
        self.set_model_text(f"Opening {Path(source).name if source else 'the default model'}…")
        if first_map:
            QTimer.singleShot(0, self.map_panel.label_first_map)

    def _show_load_progress(self, on: bool) -> None:
        self.load_progress.setVisible(on)
        self.load_cancel.setVisible(on)
        self.fit_status_bar()

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
        self._message_tab = None

    def _tab_message(self, panel: QWidget, text: str) -> None:
        """A tab's own message (a search's count, the clusters found) is about that tab: it
        goes when another tab is shown, so the Lens never shows the Map's clusters. An empty
        one takes the tab's message back, if it is still the one on show. A tab out of sight
        keeps its message until it is shown: a lesson's Logits never show the Map's word sets."""
        if self.tabs.currentWidget() is not panel:
            self._unseen_messages[panel] = text
            return
        if not text:
            if self._message_tab is panel:
                self.message.clear_message()
                self._message_tab = None
            return
        self.show_message(text)
        self._message_tab = panel

    def _drop_other_tabs_message(self, *_args) -> None:
        shown = self.tabs.currentWidget()
        if self._message_tab is not None and self._message_tab is not shown:
            self.message.clear_message()
            self._message_tab = None
        if unseen := self._unseen_messages.pop(shown, ""):
            self._tab_message(shown, unseen)

    # --- the model's own requests ---------------------------------------------------------------
    def _load_progress(self, fraction: float, stage: str, _preview: object) -> None:
        self.load_progress.setValue(int(fraction * 1000))
        self.load_progress.setFormat(stage)

    def _load_ended(self, message: str | None) -> None:
        """A load that failed (with its message) or was cancelled (None)."""
        self._show_load_progress(False)
        self.set_model_text(self._model_text() if self.summary else "No model")
        if self.summary is None:
            self.map_panel.drop_first_map()  # of a model that did not open
        what = "the session" if self._session is not None else "the model"
        self._session = None
        if message is None:
            self.show_message(f"Opening {what} was cancelled.")
        else:
            self._open_failed(f"Could not open {what}", message)

    def _model_loaded(self, summary) -> None:
        self._keep_tabs()
        if self._session is not None:
            session, name = self._session
            self._restore(summary, session, name)
        else:
            self._show_model(summary, self.kept_tabs.take(summary.fingerprint))
            if self._lesson_step is not None:
                step, self._lesson_step = self._lesson_step, None
                self._run_step(step)

    def _show_model(self, summary, session: Session | None = None) -> None:
        """Every panel on the new model: fresh, or as `session` saved it."""
        self.summary = summary
        self.generation = summary.generation
        self.model_source = self.loading_source
        self._show_load_progress(False)
        self.message.clear_message()  # messages belong to the model they were about
        self._unseen_messages.clear()
        self.set_model_text(self._model_text())
        self.setWindowTitle(f"embviz — {summary.info['name']}")
        self.language_model.on_model(summary)  # before the tabs, which may ask for it at once
        for key, panel in self.panels().items():
            panel.on_model(summary, session[key] if session is not None else None)
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
        self._cap_lessons()

    def _share_status_bar(self) -> None:
        """The model label takes what it needs, up to MODEL_SHARE of the width while a message
        is shown (its whole text in its tooltip); the message has the rest, wrapped."""
        share = MODEL_SHARE if self.message.full_text else 0.95
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

    def _attribution_of(self, text: str, position: int, token: str) -> None:
        self.tabs.setCurrentWidget(self.attribution)
        self.attribution.open_cell(text, position, token)

    def _token_clicked(self, token_id: int) -> None:
        self.neighbours.show_token(token_id)
        self.map_panel.view.set_selected([token_id])

    def focus_token(self, token_id: int) -> None:
        """A token made the focus from another tab: the Neighbours tab's word, ringed and shown on the map."""
        self._token_clicked(token_id)
        self.map_panel.view.reveal(token_id)
        self.show_message(f"{self.summary.labels[token_id]} is the focus: its neighbours in the Neighbours tab, "
                          "ringed on the map.")

    def closeEvent(self, event) -> None:
        if self._tab_panels is not None and self.analogies.bench_window is not None:
            self.analogies.bench_window.close()  # its own top-level window: it would outlive this one
        self.worker.shutdown()
        panels = [self.map_panel, *(self._tab_panels or {}).values()]
        for bindings in (getattr(panel, "bindings", None) for panel in panels):
            if bindings is not None:
                bindings.release()
        super().closeEvent(event)
