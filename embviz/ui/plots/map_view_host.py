"""What the map view's parts (map_keys, map_markers, map_labels) use of the view and of each
other, declared once: the contract a part is written against. At run time the parts are plain
mixins of MapView (map_view.py) and this class is `object`; a type checker sees the view."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    import numpy as np
    import pyqtgraph as pg
    from PySide6.QtCore import QTimer, SignalInstance
    from PySide6.QtGui import QColor

    class MapViewHost(pg.PlotWidget):  # type: ignore[misc]  # pyqtgraph has no type information
        ids: np.ndarray  # int64 row ids of the points
        coords: np.ndarray  # float32 (len(ids), 2)
        labels: list[str]  # every row's label, by row id
        vb: Any  # the plot's pg.ViewBox
        _codes: np.ndarray | None  # the points' colour codes, when coloured
        _sets: dict[str, tuple[Any, list[int], QColor]]  # word set → (scatter, ids, colour)
        _selected: list[int]
        _overlays: list[Any]
        _arrows: list[tuple[int, int, QColor]]
        _halo: Any
        _label_timer: QTimer
        _scale: float  # the text size
        _dot_px: float
        contentChanged: SignalInstance
        rows_of: Callable[[np.ndarray | list[int]], np.ndarray]
        position_of: Callable[[int], np.ndarray | None]
        rows_in_view: Callable[[], np.ndarray]
        count_in_view: Callable[[], int]
        key_rects: Callable[[], list[tuple[float, float, float, float]]]
        _rebuild_legend: Callable[[], None]
else:
    MapViewHost = object
