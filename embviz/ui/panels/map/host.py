"""What the Map panel's parts (drawing, opening, three_d, colour, selecting, sets) use of the
panel and of each other, declared once: the contract a part is written against. At run time the
parts are plain mixins of MapPanel (panel.py) and this class is `object`; a type checker sees the panel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from PySide6.QtCore import QTimer, SignalInstance
    from PySide6.QtWidgets import (
        QCheckBox, QComboBox, QLabel, QLineEdit, QProgressBar, QPushButton, QSpinBox, QStackedWidget, QWidget,
    )

    from embviz.bridge.first_map import FirstMap
    from embviz.bridge.latest import Latest
    from embviz.state.settings import Settings
    from embviz.state.tabs import MapState, WordSetsState
    from embviz.ui.panels.map.selection import SelectionBox
    from embviz.ui.panels.map.word_sets import WordSetsList
    from embviz.ui.plots.map_view import MapView
    from embviz.ui.widgets import TableChoice

    class MapHost(QWidget):
        state: MapState
        word_sets: WordSetsState
        view: MapView
        view3d: Any  # a MapView3D once a 3-D map is drawn (OpenGL's bindings are imported then)
        stack: QStackedWidget
        settings: Settings
        presets: dict[str, list[str]]
        submit: Callable[..., int]
        statusMessage: SignalInstance
        summary_ready: bool
        table_shape: tuple[int, int, int, bool]
        # Its widgets.
        run_button: QPushButton
        cancel_button: QPushButton
        fit_button: QPushButton
        progress: QProgressBar
        status: QLabel
        limit: QSpinBox
        axis_x: QLineEdit
        axis_y: QLineEdit
        axes_label_x: QLabel
        axes_label_y: QLabel
        turn_box: QCheckBox
        hover_label: QLabel
        cluster_method: QComboBox
        table_choice: TableChoice
        clusters_k: QSpinBox
        search_timer: QTimer
        sets: WordSetsList
        selection: SelectionBox
        _zoom_to_search: bool
        _search_said: str
        _last_said: str
        # What a map being drawn, or a model being opened, is at.
        _asked_rows: tuple[str, str, int, str]  # method, subset, limit, table
        _first_map: FirstMap | None
        _taking_over: bool
        _unseen_preview: tuple | None
        _turn_when_drawn: bool
        _lesson_sets: tuple[str, ...]
        _placing: bool
        # Its requests (bridge.latest), one per kind.
        drawing: Latest
        measuring: Latest
        searching: Latest
        valuing: Latest
        clustering: Latest
        set_lookups: dict[str, Latest]
        # The panel's own, and one part's used by another.
        _point_clicked: Callable[[int], None]
        _hovered: Callable[[int], None]
        add_word_set: Callable[[str, list[str]], None]
        show_word_set: Callable[..., None]
        apply_colour_by: Callable[[], None]
        clear_selection: Callable[[], None]
        run_projection: Callable[[], None]
        run_search: Callable[[], None]
        _fill_sets: Callable[[], None]
        _request_set: Callable[[str], None]
        _show_selection: Callable[[], None]
        _show_cluster_controls: Callable[[], None]
        _show_limit: Callable[[], None]
        _show_axes_fields: Callable[[], None]
        _rows_changed: Callable[[], None]
        _idle: Callable[[], None]
        _dims_drawn: Callable[[], int]
        _show_points: Callable[..., None]
        _restore_camera: Callable[[], None]
        showing_3d: Callable[[], bool]
else:
    MapHost = object
