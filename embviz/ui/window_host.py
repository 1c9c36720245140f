"""What the window's parts (window_*.py) use of the window and of each other, declared once:
the contract a part is written against. At run time the parts are plain mixins of MainWindow
(main_window.py) and this class is `object`; a type checker sees the window they are part of."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from pathlib import Path

    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QProgressBar

    from embviz.bridge import requests as rq
    from embviz.bridge.worker import ComputeWorker, Reply
    from embviz.state.kept_tabs import KeptTabs
    from embviz.state.lesson_tour import LessonStep, TourState
    from embviz.state.session import Session
    from embviz.state.settings import Settings
    from embviz.ui.panels.lessons import LessonsPanel
    from embviz.ui.panels.map import MapPanel
    from embviz.ui.widgets import ElidedLabel, MessageLabel
    from embviz.ui.window_tabs import PanelTabs

    class WindowHost(QMainWindow):
        # The window's own (main_window.py).
        settings: Settings
        worker: ComputeWorker
        device: str
        summary: Any  # the model on screen: bridge.handlers.models.ModelSummary, or None
        generation: int
        loading_source: str | None
        model_source: str | None
        last_error: str | None
        _session: tuple[Session, str] | None
        _lesson_step: LessonStep | None
        kept_tabs: KeptTabs
        _before_lesson: Session | None
        session_state: Callable[[], Session | None]
        tabs: PanelTabs
        map_panel: MapPanel
        load_progress: QProgressBar
        model_label: ElidedLabel
        message: MessageLabel
        tour: TourState
        lessons: LessonsPanel
        lessons_dock: QDockWidget
        submit: Callable[[rq.Request, Reply | None], int]
        show_message: Callable[..., None]
        open_model: Callable[..., None]
        panels: Callable[[], dict[str, Any]]
        panel_named: Callable[[str], Any]
        tab_key: Callable[[], str]
        show_tab: Callable[[str], None]
        _show_model: Callable[..., None]
        set_text_size: Callable[[float], None]
        toggle_full_screen: Callable[[], None]
        fit_map: Callable[[], None]
        focus_find: Callable[[], None]
        cancel_running: Callable[[], None]
        escape: Callable[[], None]

        # The tabs the window wires to each other (its properties).
        @property
        def neighbours(self) -> Any: ...
        @property
        def analogies(self) -> Any: ...
        @property
        def logits(self) -> Any: ...
        @property
        def attribution(self) -> Any: ...
        @property
        def compare(self) -> Any: ...

        # One part's, used by another.
        _action: Callable[..., QAction]
        recent_menu: QMenu
        _fill_recent: Callable[[], None]
        _save_as: Callable[..., None]
        _build_compare_menu: Callable[[QMenu], None]
        open_comparison: Callable[..., int]
        lesson_compare: Callable[[str, int, str], None]
        open_session: Callable[[str | Path], bool]
        _open_failed: Callable[[str, str], None]
        _restore: Callable[..., None]
        _run_step: Callable[[LessonStep], None]
        _size_lessons: Callable[[], None]
        _cap_lessons: Callable[[], None]
        projector: bool
        _build_projector: Callable[[QMenu], None]
        set_projector: Callable[[bool], None]
        projector_for_lesson: Callable[[], None]
        projector_after_lesson: Callable[[], None]
        focus_input: Callable[[], None]
        open_file_dialog: Callable[[], None]
        open_folder_dialog: Callable[[], None]
        open_hub_dialog: Callable[[], None]
        open_session_dialog: Callable[[], None]
        save_session_dialog: Callable[[], None]
        export_picture_dialog: Callable[[], None]
        export_table_dialog: Callable[..., None]
        export_coordinates_dialog: Callable[[], None]
        export_page_dialog: Callable[[], None]
        ask_to_clear_cache: Callable[[], None]
else:
    WindowHost = object
