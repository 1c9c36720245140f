"""The Map tab as a model opens: the map the cache kept of it, drawn before it is open; then
the open model's own first map, or a saved session's map and controls as they were; and the
snapshot a session saves.

A part of `MapPanel` (see panel.py), kept in a room of its own."""

from __future__ import annotations

from embviz.bridge import requests as rq
from embviz.bridge.views import ModelSummary
from embviz.state.tabs import MapState
from embviz.ui.panels.map.host import MapHost
from embviz.ui.panels.map.names import HOVER_HINT, METHOD_SHORT

FIRST_MAP_LABELS = 200_000


class OpeningMixin(MapHost):
    def show_first_map(self, source: str | None, device: str) -> bool:
        """Before the first model is open: its PCA map as the cache keeps it (exactly the map
        the open model's first PCA reads back), drawn now; whether the cache had it. Its labels
        come with `label_first_map`, after it is on screen."""
        from embviz.bridge.first_map import first_map_of  # the cache's readers: not needed to show the window

        self.drop_first_map()
        request = rq.Project(method="pca", subset=self.state.subset, limit=self.state.limit)
        first = first_map_of(source, device, request)
        if first is None:
            return False
        self._first_map = first
        self.view.set_points(first.ids, first.coords)
        self.status.setText(f"The map kept from the last open ({METHOD_SHORT['pca']}, {len(first.ids):,} rows); "
                            "opening the model…")
        return True

    def label_first_map(self) -> None:
        """Hover labels for the kept map, where decoding them here takes a moment (a vocabulary
        of up to FIRST_MAP_LABELS rows, ~0.1 s for 49,152 BPE pieces); a bigger one's come with the model."""
        first = self._first_map
        if first is not None and not self.view.labels and first.rows <= FIRST_MAP_LABELS:
            self.view.set_labels(first.labels())

    def drop_first_map(self) -> None:
        """The model it was drawn for did not open (or another is asked for): nothing of it stays."""
        if self._first_map is not None:
            self._first_map = None
            self.view.clear_map()
            self.view.set_labels([])
            self.status.setText("")

    def on_model(self, summary: ModelSummary, restore: MapState | None = None) -> None:
        """A new model: nothing of the old one stays (points, sets, rings, arrows, hover).
        With `restore` (a saved session of this model) its controls, sets, search and
        map come back, the map as saved rather than computed again. A map drawn from the
        cache while it opened stays on screen until the model's own map replaces it, and then
        only if the two differ."""
        for asked in (self.drawing, self.measuring, self.searching, self.valuing, self.clustering):
            asked.forget()
        self._turn_when_drawn = False
        self._lesson_sets = ()
        if self.view3d is not None:
            self.view3d.set_turning(False)
        self.set_lookups.clear()
        self._unseen_preview = None
        self.summary_ready = True
        info = summary.info
        self.table_shape = (int(info.get("vocab_size", 0)), int(info.get("dim", 0)), summary.word_rows,
                            str(info.get("device", "cpu")).startswith("cuda"))
        self.clear_selection()  # ids of the old vocabulary
        self.word_sets.model_changed()
        first, self._first_map = self._first_map, None
        self._taking_over = first is not None and restore is None
        self.view.clear_map(keep_points=self._taking_over)
        self.view.set_labels(summary.labels)
        self.hover_label.setText(HOVER_HINT)
        self.state.projection = None
        self.table_choice.follow_model(summary, self.state)
        if restore is None:
            self.state.method = "pca"
            self.state.table = "input"  # the map the cache kept, and that the first open draws
            self._fit_to_model(summary)
            self.run_projection()
        else:
            self._restore(restore)
        self.clusters_k.setMaximum(max(2, summary.max_clusters))  # after the fit, which names the change
        self.clusters_k.setValue(self.state.clusters_k)  # a k the last model's maximum held down, back
        for name in self.word_sets.ticked:
            self._request_set(name)
        if restore is not None and self.state.search:
            self._zoom_to_search = False  # the saved zoom, not the hits', is what was shown
            self.run_search()

    def _fit_to_model(self, summary) -> None:
        """Settings the model cannot honour are changed, silently in the controls (one
        projection, not one per control) and said once in the status bar."""
        changed = self.state.fit_to_model(summary.max_clusters, summary.word_rows)
        self._show_cluster_controls()
        self._show_limit()
        if changed:
            self.statusMessage.emit(changed)

    def _restore(self, saved: MapState) -> None:
        for name in ("method", "subset", "limit", "labels_on", "search", "regex", "substring", "axis_x", "axis_y",
                     "colour_by", "cluster_method", "clusters_k", "drag_mode", "selection", "contours", "dims",
                     "camera_distance", "camera_elevation", "camera_azimuth", "camera_centre"):
            setattr(self.state, name, getattr(saved, name))
        if self.table_choice.two_tables:
            self.state.table = saved.table
        self.state.forget_fits()
        self._show_axes_fields()
        self._show_cluster_controls()
        self._show_limit()
        self.view.set_labels_on(self.state.labels_on)
        self.word_sets.ticked = [n for n in saved.word_sets.ticked if n in self.word_sets.names]
        self._fill_sets()
        projection = saved.projection
        if projection is None or projection.table != self.state.table:  # (the head's map, saved of an untied model)
            self.run_projection()
            return
        self._idle()  # a map that was on its way is not waited for
        self.state.projection = projection
        self._show_points(projection.ids, projection.coords)
        self._restore_camera()
        if saved.view_range is not None:
            x0, x1, y0, y1 = saved.view_range
            self.view.vb.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
        self.status.setText(projection.caption)
        self.apply_colour_by()
        self._show_selection()
        drawn = (projection.method, projection.subset, projection.limit, projection.table)
        asked = (self.state.method, self.state.subset, self.state.limit, self.state.table)
        self.run_button.setText("Draw map" if drawn == asked else "Draw map (settings changed)")

    def snapshot(self) -> MapState:
        """The state with the zoom on screen, for a session."""
        (x0, x1), (y0, y1) = self.view.vb.viewRange()
        self.state.view_range = [float(x0), float(x1), float(y0), float(y1)] if len(self.view.ids) else None
        if self.showing_3d():
            camera = self.view3d.camera()
            self.state.camera_distance, self.state.camera_elevation = camera.distance, camera.elevation
            self.state.camera_azimuth, self.state.camera_centre = camera.azimuth, camera.centre
        return self.state
