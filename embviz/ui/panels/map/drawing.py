"""The Map tab's drawing: a projection asked of the worker on Draw map (or at once, for the
instant methods), its progress and t-SNE's live picture, its answer, failure or cancel, and
then how faithful the drawn map is.

A part of `MapPanel` (see panel.py), kept in a room of its own."""

from __future__ import annotations

import numpy as np

from embviz.bridge import requests as rq
from embviz.state.map_estimate import map_choices
from embviz.state.tabs import ProjectionState
from embviz.state.word_sets import parse_word_list
from embviz.ui.panels.map.choice import ask_map_choice
from embviz.ui.panels.map.host import MapHost
from embviz.ui.panels.map.names import INSTANT, METHOD_SHORT


class DrawingMixin(MapHost):
    def _rows_changed(self) -> None:
        """A PCA redraws at once (it takes a second); a slower method waits for Draw map."""
        self._show_limit()
        self._show_axes_fields()
        if not self.summary_ready:
            return
        if self.state.method in INSTANT:
            self.run_projection()
        else:
            self.run_button.setText("Draw map (settings changed)")

    def _show_limit(self) -> None:
        """N only where it counts (Rows ▸ First N ids): hidden, it leaves its room to the other controls."""
        self.limit.setVisible(self.state.subset == "first")

    def _show_axes_fields(self) -> None:
        for w in (self.axes_label_x, self.axis_x, self.axes_label_y, self.axis_y):
            w.setVisible(self.state.method == "axes")

    def run_projection(self) -> None:
        x, y = parse_word_list(self.state.axis_x), parse_word_list(self.state.axis_y)
        pairs = len(x) == len(y) == 2
        if self.state.method == "axes" and not pairs:
            self.status.setText("Word-pair axes: type two words for each axis, e.g. x: man, woman and y: man, king.")
            return
        asked = rq.Project(method=self.state.method, subset=self.state.subset, limit=self.state.limit,
                           axes=(x[0], x[1], y[0], y[1]) if pairs else rq.Project.axes, dims=self._dims_drawn(),
                           table=self.state.table)
        request = self._long_map_choice(asked)
        if request is None:
            return
        self._unseen_preview = None
        self.drawing.ask(request)
        self.measuring.forget()  # the measure of the map on screen no longer matters
        self._asked_rows = (request.method, request.subset, request.limit, request.table)
        self.run_button.setText("Draw map")
        self.cancel_button.setEnabled(True)
        self.progress.setValue(0)
        self.progress.show()
        self.status.setText(f"{METHOD_SHORT[request.method]}: starting…")

    def rows_asked(self) -> int:
        """How many rows the map's Rows setting takes of this model."""
        rows, _, words, _ = self.table_shape
        return {"first": min(self.state.limit, rows), "words": words}.get(self.state.subset, rows)

    def _long_map_choice(self, request: rq.Project) -> rq.Project | None:
        """A t-SNE or UMAP of more than 100,000 rows on a CPU asks first (how long, and the
        quicker maps); None when the question is cancelled."""
        _, dim, _, on_gpu = self.table_shape
        choices = map_choices(request.method, self.rows_asked(), dim, on_gpu)
        if not choices:
            return request
        choice = ask_map_choice(self, request.method, choices)
        if choice is None:
            self.status.setText("No map drawn: the long map was not started.")
            return None
        if choice.key == "first":
            if request.subset == "first":
                request.limit = choice.rows
            else:
                request.first = choice.rows
        elif choice.key == "placed":
            request.sample = choice.rows
        return request

    def _idle(self) -> None:
        self.cancel_button.setEnabled(False)
        self.progress.setValue(0)
        self.progress.hide()

    def on_progress(self, fraction: float, stage: str, preview) -> None:
        self.progress.setValue(int(fraction * 1000))
        self.status.setText(f"{stage} — {fraction:.0%}")
        if isinstance(preview, tuple) and not self._taking_over:  # (row ids, coordinates so far): t-SNE's live picture
            if self.isVisible():
                self._draw_preview(preview)
            else:
                self._unseen_preview = preview

    def _draw_preview(self, preview: tuple) -> None:
        self._unseen_preview = None
        self.clear_selection()  # its rings would scatter over the new layout
        ids, coords = preview
        self._show_points(ids, coords, autorange=True)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        unseen = self._unseen_preview
        if unseen is not None and not self._taking_over:
            self._draw_preview(unseen)

    def on_result(self, projection) -> None:
        taking_over, self._taking_over = self._taking_over, False
        self._unseen_preview = None
        if not (taking_over and np.array_equal(projection.ids, self.view.ids)
                and np.array_equal(projection.coords, self.view.coords)):
            self._show_points(projection.ids, projection.coords)  # (the same map stays as it is, zoom and all)
        self._idle()
        extra = ""
        explained = projection.explained  # in the tooltip: the caption keeps to two lines on a projector
        self.status.setToolTip("The axes explain " + " and ".join(f"{e:.1%}" for e in explained) + " of the variance."
                               if explained else "")
        if projection.method == "axes" and projection.notes:
            extra = " — " + projection.notes[0].rstrip(".")
        rows = f"{len(projection.ids):,} rows"
        if projection.sampled:
            rows = f"{projection.sampled:,} sampled rows, {len(projection.ids) - projection.sampled:,} more placed beside them"
        _, subset, limit, table = self._asked_rows
        if table == "output":
            rows += " of the output head"
        caption = f"{METHOD_SHORT[projection.method]} of {rows}{extra}"
        self.status.setText(caption)
        self.state.projection = ProjectionState(projection.method, subset, limit, projection.ids, projection.coords,
                                                caption, table)
        for note in projection.notes:
            self.statusMessage.emit(note)
        self.apply_colour_by()  # the new map's points, coloured as asked
        self.clear_selection()  # picked on another layout: its points are elsewhere here
        # Drawn first, measured next (a second, on the long lane): how faithful is this picture?
        self.measuring.ask(rq.Faithfulness(ids=projection.ids, coords=projection.coords, table=table))

    def on_faithfulness(self, faithful) -> None:
        if faithful is None or self.state.projection is None:
            return
        self.state.projection.caption = f"{self.state.projection.caption} — {faithful.caption()}"
        self.status.setText(self.state.projection.caption)
        self.status.setToolTip(f"{self.status.toolTip()} {faithful.how_measured()}".strip())

    def _map_failed(self, message: str) -> None:
        self._idle()
        self._taking_over = False
        self._unseen_preview = None
        self.status.setText("Map failed: " + message)

    def _faithfulness_failed(self, message: str) -> None:
        self.statusMessage.emit(f"Could not measure how faithful the map is: {message}")

    def _faithfulness_cancelled(self) -> None:
        self.statusMessage.emit("Measuring how faithful the map is was cancelled.")

    def _map_cancelled(self) -> None:
        self._idle()
        self._taking_over = False
        self._unseen_preview = None
        done = self.state.projection
        if done is not None and not (np.array_equal(done.ids, self.view.ids) and np.array_equal(done.coords, self.view.coords)):
            self._show_points(done.ids, done.coords)  # not the half-made layout of the cancelled run
            self.status.setText(f"Cancelled: back to the last finished map. {done.caption}")
            self.apply_colour_by()  # its colours went with the preview's rows; Colour by still names them
        else:
            self.status.setText("Cancelled: the last picture is kept")
