"""The Map tab's third dimension: a 3-D map in its own view (made the first time one is drawn,
as it needs OpenGL), its slow turn and its camera, and a lesson's 3-D map turning about its sets.

A part of `MapPanel` (see panel.py), kept in a room of its own."""

from __future__ import annotations

from typing import Any

import numpy as np

from embviz.ui.panels.map.host import MapHost


class ThreeDMixin(MapHost):
    def _dims_drawn(self) -> int:
        """The dimensions a new map is asked in: 3 where asked for and OpenGL is at hand."""
        if self.state.dims != 3:
            return 2
        from embviz.ui.plots.map_view3d import gl_available  # OpenGL's bindings: only for a 3-D map

        return 3 if gl_available() else 2

    def _dims_changed(self) -> None:
        if self.state.dims == 3 and self._dims_drawn() == 2:
            from embviz.ui.plots.map_view3d import NO_GL

            self.statusMessage.emit(NO_GL)
            if self.summary_ready and self.state.projection is not None and self.state.projection.coords.shape[1] == 2:
                return  # the 2-D map on screen is the one it would draw again
        self._rows_changed()

    def _show_points(self, ids: np.ndarray, coords: np.ndarray, autorange: bool = True) -> None:
        """Points on the 2-D map (a 3-D map's first two axes: it keeps what the sets, search and
        selection mark), and a 3-D map's in the 3-D view, which is then the one shown."""
        self._placing = True  # the flat map's change is not yet the 3-D map's: no framing until both are placed
        self.view.set_points(ids, coords[:, :2], autorange)
        self._placing = False
        three = coords.shape[1] == 3 and self._dims_drawn() == 3
        if three:
            self._make_view3d().set_points(ids, coords, autorange)
            if self._turn_when_drawn and not self.drawing.waiting:
                self._turn_when_drawn = False
                self._start_turn()
        self.stack.setCurrentIndex(1 if three else 0)
        if three:
            self._frame_lesson_sets()
        self.turn_box.setVisible(three)
        if not three and self.view3d is not None:
            self.view3d.set_turning(False)

    def _make_view3d(self) -> Any:
        if self.view3d is None:
            from embviz.ui.plots.map_view3d import MapView3D

            self.view3d = MapView3D(self.view)
            self.view3d.pointClicked.connect(self._point_clicked)
            self.view3d.pointHovered.connect(self._hovered)
            self.view3d.turningChanged.connect(self._turning_changed)
            self.fit_button.clicked.connect(lambda: self.showing_3d() and self.view3d.fit())
            self.stack.addWidget(self.view3d)
        return self.view3d

    def show_lesson_map(self, dims: int, sets: tuple[str, ...], turn: bool) -> None:
        """A lesson's map: in `dims` dimensions, its word sets ticked, turning slowly once drawn if `turn`."""
        if self.state.dims != dims:
            self.state.dims = dims
            self._dims_changed()
        self._lesson_sets = tuple(sets) if dims == 3 else ()
        # The step's sets alone: no rings, arrows or other sets (the user's) left from another step or tab.
        self.view.set_selected([])
        self.view.set_arrows([])
        for name in [n for n in self.word_sets.ticked if n not in sets]:
            self.show_word_set(name, False)
        for name in sets:
            self.show_word_set(name)
        self._frame_lesson_sets()
        if turn and self.showing_3d() and not self.drawing.waiting:
            self._start_turn()
        else:
            self._turn_when_drawn = turn

    def _start_turn(self) -> None:
        """The slow turn, with the keyboard on the 3-D map so that T stops it, as the lesson says."""
        self.view3d.set_turning(True)
        self.view3d.setFocus()

    def _frame_lesson_sets(self) -> None:
        """Once a lesson's 3-D map and its sets are on screen: the camera turns about the sets."""
        shown = self.word_sets.shown()
        if self._lesson_sets and self.showing_3d() and not self.drawing.waiting and not self._placing \
                and all(name in shown for name in self._lesson_sets):
            self.view3d.frame_ids([i for name in self._lesson_sets for i in shown[name]])
            self._lesson_sets = ()

    def showing_3d(self) -> bool:
        return self.view3d is not None and self.stack.currentWidget() is self.view3d

    def _turning_changed(self, on: bool) -> None:
        self.turn_box.blockSignals(True)
        self.turn_box.setChecked(on)
        self.turn_box.blockSignals(False)

    def _restore_camera(self) -> None:
        """A restored 3-D map's camera as saved (a distance of 0 and no centre: the cloud fitted)."""
        if self.showing_3d() and self.state.camera_distance > 0 and self.state.camera_centre is not None:
            from embviz.ui.plots.map_view3d import Camera

            self.view3d.set_camera(Camera(self.state.camera_distance, self.state.camera_elevation,
                                          self.state.camera_azimuth, list(self.state.camera_centre)))
