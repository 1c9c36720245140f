"""What the Map panel's parts (colour, selecting, sets) use of the panel and of each
other, declared once: the contract a part is written against. At run time the parts are plain
mixins of MapPanel (panel.py) and this class is `object`; a type checker sees the panel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from PySide6.QtCore import QTimer, SignalInstance
    from PySide6.QtWidgets import QComboBox, QProgressBar, QPushButton, QSpinBox, QWidget

    from embviz.bridge.latest import Latest
    from embviz.state.settings import Settings
    from embviz.state.tabs import MapState, WordSetsState
    from embviz.ui.panels.map.selection import SelectionBox
    from embviz.ui.panels.map.word_sets import WordSetsList
    from embviz.ui.plots.map_view import MapView

    class MapHost(QWidget):
        state: MapState
        word_sets: WordSetsState
        view: MapView
        settings: Settings
        presets: dict[str, list[str]]
        submit: Callable[..., int]
        statusMessage: SignalInstance
        # Its widgets.
        cancel_button: QPushButton
        progress: QProgressBar
        cluster_method: QComboBox
        clusters_k: QSpinBox
        search_timer: QTimer
        sets: WordSetsList
        selection: SelectionBox
        _zoom_to_search: bool
        _search_said: str
        _last_said: str
        # Its requests (bridge.latest), one per kind.
        searching: Latest
        valuing: Latest
        clustering: Latest
        set_lookups: dict[str, Latest]
        # One part's, used by another.
        add_word_set: Callable[[str, list[str]], None]
        apply_colour_by: Callable[[], None]
        clear_selection: Callable[[], None]
        _fill_sets: Callable[[], None]
        _show_selection: Callable[[], None]
else:
    MapHost = object
