"""Map tab: projection controls, progress and cancel, search, word sets, and the map."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QFileDialog, QHBoxLayout, QInputDialog, QLabel, QLayout, QLineEdit, QProgressBar, QPushButton,
    QSpinBox, QSplitter, QVBoxLayout, QWidget,
)

from embviz.bridge import requests as rq
from embviz.bridge.worker import Reply
from embviz.state.tabs import MapState, ProjectionState
from embviz.state.settings import atomic_write_text
from embviz.ui.tables import map_rows, rows_to_text
from embviz.ui.plots import colouring
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.plots.map_view import MapView
from embviz.ui.panels.map_selection import SelectionBox
from embviz.ui.panels.map_word_sets import WordSetsList
from embviz.ui.widgets import flow_row
from embviz.state.word_sets import parse_word_list

METHOD_NAMES = {"pca": "PCA (instant)", "tsne": "t-SNE (minutes)", "umap": "UMAP (minutes)",
                "axes": "Word-pair axes (instant)"}
METHOD_SHORT = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP", "axes": "Word-pair axes"}
INSTANT = ("pca", "axes")
SUBSETS = {"all": "All rows", "first": "First N ids", "words": "Whole words only"}
HOVER_HINT = "Hover over a point: its token shows here."
SIDE_WIDTH = 260  # the side column's width at 100 % text
SEARCH_WIDTH = 340  # the search field and its two switches, at 100 % text
SEARCH_SET = "search"
SELECTION_SET = "selection"
DRAG_MODES = {"pan": "Drag: pan", "rect": "Drag: rectangle", "lasso": "Drag: lasso"}
SEARCH_DEBOUNCE_MS = 300


def clusters_summary(found) -> str:
    """One line for the status bar: how many clusters, and the largest that whole words name."""
    if not found.clusters:
        return "No clusters found on this map."
    named = [f"{found.clusters[c].label} ({found.clusters[c].size:,})" for c in found.largest_readable]
    return f"{len(found.clusters)} clusters; the largest: " + "; ".join(named) if named else \
        f"{len(found.clusters)} clusters, none named by whole words."


def combo(choices: dict[str, str]) -> QComboBox:
    """A combo box of `choices` (data → text)."""
    box = QComboBox()
    for key, text in choices.items():
        box.addItem(text, key)
    return box


class MapPanel(QWidget):
    tokenClicked = Signal(int)
    statusMessage = Signal(str)
    neighboursOf = Signal(list)  # the selection's ids: list the neighbours of their mean

    def __init__(self, submit, cancel, settings, presets: dict[str, list[str]], parent=None) -> None:
        super().__init__(parent)
        self.submit = submit
        self.settings = settings
        self.presets = presets
        self.request_id = 0
        self.search_id = 0
        self.faithful_id = 0
        self.colour_id = 0  # the colour-by lookup (values or clusters) on its way
        self.set_ids: dict[int, str] = {}  # word-set lookups on their way: request id → set name
        self.state = MapState()
        self.word_sets = self.state.word_sets
        self._asked_rows: tuple[str, str, int] = (self.state.method, self.state.subset, self.state.limit)
        self._zoom_to_search = True
        self.summary_ready = False  # no model yet: changing Rows has nothing to redraw
        self.bindings = Bindings(self.state)
        self.view = MapView()
        self.view.pointClicked.connect(self.tokenClicked)
        self.view.pointHovered.connect(self._hovered)
        self.view.selectionMade.connect(self.set_selection)
        self.view.scene().sigMouseClicked.connect(self._map_clicked)
        self.view.installEventFilter(self)  # Esc on the map clears its selection
        projection_row = self._projection_controls(cancel)
        # Colours, drag mode and search share one wrapping row: on a 1024 × 700 projector at
        # 150 % every row of controls is a row the map loses.
        colour_row = flow_row(*self._colour_controls(), self._search_controls())
        self._lay_out(projection_row, colour_row, self._side_column())
        self._show_axes_fields()
        self._show_cluster_controls()
        self.view.set_select_mode(self.state.drag_mode)
        self._fill_sets()
        self._show_selection()

    def _projection_controls(self, cancel) -> QLayout:
        """Method, rows, Draw map, Cancel, Fit view and Labels; the progress bar and caption."""
        self.method = combo(METHOD_NAMES)
        self.subset = combo(SUBSETS)
        self.limit = QSpinBox()
        self.limit.setRange(10, 10_000_000)
        self.limit.setSingleStep(1000)
        self.limit.setPrefix("N = ")
        # Bound before any other slot is connected: those slots read the state.
        for widget, attr in ((self.method, "method"), (self.subset, "subset"), (self.limit, "limit")):
            self.bindings.bind(widget, attr)
            (widget.valueChanged if widget is self.limit else widget.currentIndexChanged).connect(self._rows_changed)
        self._show_limit()
        self.run_button = QPushButton("Draw map")
        self.run_button.clicked.connect(self.run_projection)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(lambda: (cancel(rq.Project.channel), cancel(rq.Clusters.channel)))
        self.fit_button = QPushButton("Fit view")
        self.fit_button.setToolTip("Show every point (Home)")
        self.fit_button.clicked.connect(self.view.fit)
        self.labels_box = QCheckBox("Labels")
        self.labels_box.setToolTip("Label the highlighted tokens, and every token once about 200 or fewer are in view; "
                                   "coloured by cluster, name a few broad groups zoomed out, the clusters zoomed in")
        self.bindings.bind(self.labels_box, "labels_on")
        self.labels_box.toggled.connect(self.view.set_labels_on)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setTextVisible(False)
        self.progress.setFixedWidth(160)
        self.progress.hide()  # shown while a projection runs
        self.status = QLabel("")
        self.status.setWordWrap(True)
        # Word-pair axes (TF Projector's custom projection): x and y from two pairs of words.
        self.axis_x, self.axis_y = QLineEdit(), QLineEdit()
        for field, attr, tip in ((self.axis_x, "axis_x", "x axis: from, to (e.g. man, woman)"),
                                 (self.axis_y, "axis_y", "y axis: from, to (e.g. man, king)")):
            field.setToolTip(tip)
            field.setPlaceholderText(tip)
            self.bindings.bind(field, attr)
            field.returnPressed.connect(self.run_projection)
        self.axes_label_x, self.axes_label_y = QLabel("x axis"), QLabel("y axis")
        return flow_row(QLabel("Method"), self.method, self.axes_label_x, self.axis_x, self.axes_label_y, self.axis_y,
                        QLabel("Rows"), self.subset, self.limit, self.run_button,
                        self.cancel_button, self.fit_button, self.labels_box)

    def _colour_controls(self) -> list[QWidget]:
        """Colour by (a value per point, drawn as per-point brushes and in the density image) and the drag mode."""
        self.colour_by = combo(colouring.COLOUR_BY)
        self.colour_by.setToolTip("Colour every point: by the kind of token, its id (BPE merge order), "
                                  "its row's length, or its cluster")
        self.cluster_method = combo(colouring.CLUSTER_METHODS)
        self.cluster_method.setToolTip("Communities of each row's 10 nearest rows (the neighbours the Neighbours tab "
                                       "lists), k-means of the rows' directions, or HDBSCAN of the points as this "
                                       "map places them")
        self.clusters_k = QSpinBox()
        self.clusters_k.setRange(2, 1000)
        self.clusters_k.setPrefix("k = ")
        for widget, attr in ((self.colour_by, "colour_by"), (self.cluster_method, "cluster_method"),
                             (self.clusters_k, "clusters_k")):
            self.bindings.bind(widget, attr)
            (widget.valueChanged if widget is self.clusters_k else widget.currentIndexChanged).connect(self.apply_colour_by)
        self.contours_box = QCheckBox("Contours")
        self.contours_box.setToolTip("Outline where the points crowd: density contours under the map's points")
        self.bindings.bind(self.contours_box, "contours")
        self.state.events.contours.connect(self.view.set_contours_on)  # the box, or a restored session
        self.drag_mode = combo(DRAG_MODES)
        self.drag_mode.setToolTip("Pan the map, or select the points inside a rectangle or a lasso you draw")
        self.bindings.bind(self.drag_mode, "drag_mode")
        self.state.events.drag_mode.connect(self._drag_mode_changed)
        return [QLabel("Colour by"), self.colour_by, self.cluster_method, self.clusters_k, self.contours_box,
                self.drag_mode]

    def _search_controls(self) -> QWidget:
        """Find tokens with its two switches, in one box so a wrapping row keeps them together."""
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find tokens: king, ␣king (the leading space), or a regex…")
        self.bindings.bind(self.search, "search")
        self.search.returnPressed.connect(self.run_search)
        self.search.textChanged.connect(self._search_edited)
        self.search_timer = QTimer(self)
        self.search_timer.setSingleShot(True)
        self.search_timer.setInterval(SEARCH_DEBOUNCE_MS)
        self.search_timer.timeout.connect(self.run_search)
        self.regex = QCheckBox("regex")
        self.substring = QCheckBox("substring")
        self.substring.setToolTip("Every token that contains the text, not only whole tokens")
        for box, attr in ((self.regex, "regex"), (self.substring, "substring")):
            self.bindings.bind(box, attr)
            box.toggled.connect(self._search_edited)
        self.search_box = QWidget()
        row = QHBoxLayout(self.search_box)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.search, 1)
        row.addWidget(self.regex)
        row.addWidget(self.substring)
        return self.search_box

    def _side_column(self) -> QWidget:
        """The hovered token (big, for the back row), the word sets and the selection."""
        self.hover_label = QLabel(HOVER_HINT)
        self.hover_label.setWordWrap(True)
        style.use_font(self.hover_label, style.LABEL_POINT_SIZE, bold=True)
        self.sets = WordSetsList(self.word_sets)
        self.sets.toggled.connect(self._set_toggled)
        self.sets.add_button.clicked.connect(self.add_custom_set)
        self.selection = SelectionBox()
        self.selection.tokenClicked.connect(lambda token_id: self.view.set_selected([token_id]))
        self.selection.saveAsSet.connect(self.word_set_from_selection)
        self.selection.neighbours.connect(lambda: self.neighboursOf.emit(list(self.state.selection)))
        self.selection.export.connect(self.export_selection_dialog)
        side = QWidget()
        column = QVBoxLayout(side)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.hover_label)
        column.addWidget(QLabel("Highlight word sets"))
        column.addWidget(self.sets, 1)
        column.addWidget(self.sets.add_button)
        column.addWidget(self.selection, 1)
        style.follow_scale(self)  # after the list: its width follows the text size
        return side

    def _lay_out(self, projection_row: QLayout, colour_row: QLayout, side: QWidget) -> None:
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress)
        progress_row.addWidget(self.status, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.view)
        splitter.addWidget(side)
        splitter.setStretchFactor(0, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(projection_row)
        layout.addLayout(colour_row)
        layout.addLayout(progress_row)
        layout.addWidget(splitter, 1)

    def set_text_scale(self, scale: float) -> None:
        self.search_box.setMinimumWidth(round(SEARCH_WIDTH * scale))
        self.sets.setMaximumWidth(round(SIDE_WIDTH * scale))
        self.hover_label.setMaximumWidth(round(SIDE_WIDTH * scale))

    # --- model and projection ---------------------------------------------------------------
    def on_model(self, summary, restore: MapState | None = None) -> None:
        """A new model: nothing of the old one stays (points, sets, rings, arrows, hover).
        With `restore` (a saved session of this model) its controls, sets, search and
        map come back, the map as saved rather than computed again."""
        self.request_id = self.search_id = self.faithful_id = self.colour_id = 0
        self.summary_ready = True
        self.clear_selection()  # ids of the old vocabulary
        self.set_ids.clear()
        self.word_sets.model_changed()
        self.view.clear_map()
        self.view.set_labels(summary.labels)
        self.hover_label.setText(HOVER_HINT)
        self.state.projection = None
        if restore is None:
            self.state.method = "pca"
            self._fit_to_model(summary)
            self.run_projection()
        else:
            self._restore(restore)
        self.clusters_k.setMaximum(max(2, summary.max_clusters))  # after the fit, which names the change
        for name in self.word_sets.ticked:
            self._request_set(name)
        if restore is not None and self.state.search:
            self._zoom_to_search = False  # the saved zoom, not the hits', is what was shown
            self.run_search()

    def _fit_to_model(self, summary) -> None:
        """Settings the model cannot honour are changed, silently in the controls (one
        projection, not one per control) and said once in the status bar."""
        changed = self.state.fit_to_model(summary.max_clusters, summary.word_rows)
        self.bindings.push()
        self._show_cluster_controls()
        self._show_limit()
        if changed:
            self.statusMessage.emit(changed)

    def _restore(self, saved: MapState) -> None:
        for name in ("method", "subset", "limit", "labels_on", "search", "regex", "substring", "axis_x", "axis_y",
                     "colour_by", "cluster_method", "clusters_k", "drag_mode", "selection", "contours"):
            setattr(self.state, name, getattr(saved, name))
        self.bindings.push()
        self._show_axes_fields()
        self._show_cluster_controls()
        self._show_limit()
        self.view.set_labels_on(self.state.labels_on)
        self.word_sets.ticked = [n for n in saved.word_sets.ticked if n in self.word_sets.names]
        self._fill_sets()
        projection = saved.projection
        if projection is None:
            self.run_projection()
            return
        self._idle()  # a map that was on its way is not waited for
        self.state.projection = projection
        self.view.set_points(projection.ids, projection.coords)
        if saved.view_range is not None:
            x0, x1, y0, y1 = saved.view_range
            self.view.vb.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
        self.status.setText(projection.caption)
        self.apply_colour_by()
        self._show_selection()
        self.run_button.setText("Draw map" if (projection.method, projection.subset, projection.limit) ==
                                (self.state.method, self.state.subset, self.state.limit) else "Draw map (settings changed)")

    def snapshot(self) -> MapState:
        """The state with the zoom on screen, for a session."""
        (x0, x1), (y0, y1) = self.view.vb.viewRange()
        self.state.view_range = [float(x0), float(x1), float(y0), float(y1)] if len(self.view.ids) else None
        return self.state

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
        request = rq.Project(method=self.state.method, subset=self.state.subset, limit=self.state.limit,
                             axes=tuple(x + y) if pairs else rq.Project.axes)
        self.request_id = self.submit(request, Reply(self.on_result, self.on_failed, self.on_cancelled, self.on_progress))
        self.faithful_id = 0  # the measure of the map on screen no longer matters
        self._asked_rows = (request.method, request.subset, request.limit)
        self.run_button.setText("Draw map")
        self.cancel_button.setEnabled(True)
        self.progress.setValue(0)
        self.progress.show()
        self.status.setText(f"{METHOD_SHORT[request.method]}: starting…")

    def _idle(self) -> None:
        self.cancel_button.setEnabled(False)
        self.progress.setValue(0)
        self.progress.hide()

    def on_progress(self, rid: int, fraction: float, stage: str, preview) -> None:
        if rid == self.colour_id:
            self.statusMessage.emit(f"Clusters: {stage} — {fraction:.0%}")
            return
        if rid != self.request_id:
            return
        self.progress.setValue(int(fraction * 1000))
        self.status.setText(f"{stage} — {fraction:.0%}")
        if isinstance(preview, tuple):  # (row ids, coordinates so far): t-SNE's live picture
            self.clear_selection()  # its rings would scatter over the new layout
            self.view.set_points(*preview, autorange=True)

    def on_result(self, rid: int, projection) -> None:
        if rid != self.request_id:
            return
        self.view.set_points(projection.ids, projection.coords)
        self._idle()
        extra = ""
        explained = projection.explained  # in the tooltip: the caption keeps to two lines on a projector
        self.status.setToolTip(f"The axes explain {explained[0]:.1%} and {explained[1]:.1%} of the variance."
                               if explained else "")
        if projection.method == "axes" and projection.notes:
            extra = " — " + projection.notes[0].rstrip(".")
        caption = f"{METHOD_SHORT[projection.method]} of {len(projection.ids):,} rows{extra}"
        self.status.setText(caption)
        _, subset, limit = self._asked_rows
        self.state.projection = ProjectionState(projection.method, subset, limit, projection.ids, projection.coords,
                                                caption)
        for note in projection.notes:
            self.statusMessage.emit(note)
        self.apply_colour_by()  # the new map's points, coloured as asked
        self.clear_selection()  # picked on another layout: its points are elsewhere here
        # Drawn first, measured next (a second, on the long lane): how faithful is this picture?
        self.faithful_id = self.submit(rq.Faithfulness(ids=projection.ids, coords=projection.coords),
                                       Reply(self.on_faithfulness, self.on_failed, self.on_cancelled))

    def on_faithfulness(self, rid: int, faithful) -> None:
        if rid != self.faithful_id or faithful is None or self.state.projection is None:
            return
        self.state.projection.caption = f"{self.state.projection.caption} — {faithful.caption()}"
        self.status.setText(self.state.projection.caption)

    def on_failed(self, rid: int, message: str) -> None:
        if rid == self.request_id:
            self._idle()
            self.status.setText("Map failed: " + message)
        elif rid == self.search_id:  # e.g. a regex that does not parse: its old hits would mislead
            self.view.remove_word_set(SEARCH_SET)
            self.view.set_selected([])
            self.statusMessage.emit(message)
        elif rid == self.faithful_id:
            self.statusMessage.emit(f"Could not measure how faithful the map is: {message}")
        elif rid == self.colour_id:
            self.colour_id = 0
            self.cancel_button.setEnabled(self.progress.isVisible())
            self.view.set_colours(None)
            self.statusMessage.emit(f"Colour by {colouring.COLOUR_BY[self.state.colour_by].lower()}: {message}")
        elif (name := self.set_ids.pop(rid, None)) is not None:
            self.statusMessage.emit(f"{name}: {message}")

    def on_cancelled(self, rid: int) -> None:
        if rid == self.request_id:
            self._idle()
            done = self.state.projection
            if done is not None and not (np.array_equal(done.ids, self.view.ids) and np.array_equal(done.coords, self.view.coords)):
                self.view.set_points(done.ids, done.coords)  # not the half-made layout of the cancelled run
                self.status.setText(f"Cancelled: back to the last finished map. {done.caption}")
                self.apply_colour_by()  # its colours went with the preview's rows; Colour by still names them
            else:
                self.status.setText("Cancelled: the last picture is kept")
        elif rid == self.colour_id:
            self.colour_id = 0
            self.cancel_button.setEnabled(self.progress.isVisible())
            self.statusMessage.emit("Clustering cancelled: the map is drawn without its colours.")
        elif rid == self.faithful_id:
            self.statusMessage.emit("Measuring how faithful the map is was cancelled.")
        self.set_ids.pop(rid, None)

    # --- colour by ----------------------------------------------------------------------------
    def _show_cluster_controls(self) -> None:
        clusters = self.state.colour_by == "cluster"
        self.cluster_method.setVisible(clusters)
        self.clusters_k.setVisible(clusters and self.state.cluster_method != "hdbscan")  # the graph's is about k

    def apply_colour_by(self) -> None:
        """Ask for the values that colour the map on screen (clusters on the long lane)."""
        self._show_cluster_controls()
        self.colour_id = 0
        view = self.view
        if self.state.colour_by == "none" or not len(view.ids):
            view.set_colours(None)
            return
        if self.state.colour_by == "cluster":
            self.colour_id = self.submit(rq.Clusters(method=self.state.cluster_method, k=self.state.clusters_k,
                                                     ids=view.ids, coords=view.coords),
                                         Reply(self.on_clusters, self.on_failed, self.on_cancelled, self.on_progress))
            self.cancel_button.setEnabled(True)
            self.statusMessage.emit("Clusters: starting…")
        else:
            self.colour_id = self.submit(rq.PointValues(by=self.state.colour_by, ids=view.ids),
                                         Reply(self.on_point_values, self.on_failed, self.on_cancelled))

    def _same_map(self, ids: np.ndarray) -> bool:
        return ids.shape == self.view.ids.shape and np.array_equal(ids, self.view.ids)

    def on_point_values(self, rid: int, values) -> None:
        if rid != self.colour_id or not self._same_map(values.ids):
            return
        self.colour_id = 0
        if values.by == "kind":
            self.view.set_colours(*colouring.kind_colours(values.values, values.names))
        else:
            self.view.set_colours(*colouring.gradient_colours(values.values, values.by))

    def on_clusters(self, rid: int, found) -> None:
        if rid != self.colour_id or not self._same_map(found.ids):
            return
        self.colour_id = 0
        self.cancel_button.setEnabled(self.progress.isVisible())
        codes, table, legend = colouring.cluster_colours(found.codes, found.clusters, found.method, found.k)
        self.view.set_colours(codes, table, legend)
        self.view.set_cluster_labels(colouring.cluster_centres(codes, self.view.coords, found.clusters, table),
                                     colouring.coarse_centres(codes, self.view.coords, found.coarse, found.coarse_of))
        self.statusMessage.emit(clusters_summary(found))

    # --- selection ------------------------------------------------------------------------------
    def set_selection(self, ids: list[int]) -> None:
        """The tokens inside a drawn rectangle or lasso (or a restored session's)."""
        self.state.selection = [int(i) for i in ids]
        self._show_selection()

    def clear_selection(self) -> None:
        if self.state.selection:
            self.set_selection([])

    def _drag_mode_changed(self, mode: str) -> None:
        self.clear_selection()  # another mode is another task: the old outline's picks would linger
        self.view.set_select_mode(mode)

    def _map_clicked(self, event) -> None:
        """A click on empty map (no point under it) clears the selection."""
        if event.button() == Qt.MouseButton.LeftButton and self.view.nearest_at(event.scenePos()) < 0:
            self.clear_selection()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Esc on the map clears a selection; the window's Esc (cancel the long job) waits
        for the next press. Claimed at ShortcutOverride, so the shortcut does not fire."""
        if watched is self.view and self.state.selection and event.type() in (QEvent.Type.ShortcutOverride,
                                                                              QEvent.Type.KeyPress):
            if event.key() == Qt.Key.Key_Escape:
                event.accept()
                if event.type() == QEvent.Type.KeyPress:
                    self.clear_selection()
                return True
        return super().eventFilter(watched, event)

    def _show_selection(self) -> None:
        ids = [i for i in self.state.selection if self.view.position_of(i) is not None]
        labels = self.view.labels
        self.selection.show_tokens([(labels[i] if i < len(labels) else f"#{i}", i) for i in ids])
        if ids:
            self.view.set_word_set(SELECTION_SET, ids, style.SELECTION_COLOR)
        else:
            self.view.remove_word_set(SELECTION_SET)

    def selection_rows(self) -> tuple[list[str], list[list[object]]]:
        return ["id", "token"], [[i, label] for label, i in self.selection.rows]

    def export_selection(self, path: str | Path) -> Path:
        path = Path(path)
        atomic_write_text(path, rows_to_text(*self.selection_rows()))
        return path

    def export_selection_dialog(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export the selection", "embviz-selection.csv", "CSV table (*.csv)")
        if path:
            try:
                self.statusMessage.emit(f"Saved {self.export_selection(path)}")
            except OSError as exc:
                self.statusMessage.emit(f"Could not save the selection: {exc}")

    def word_set_from_selection(self) -> None:
        number = 1 + sum(name.startswith("selection ") for name in self.settings.word_sets)
        name, ok = QInputDialog.getText(self, "Word set from the selection", "Name of the set:", text=f"selection {number}")
        if ok and name.strip():
            self.add_selection_set(name.strip())

    def add_selection_set(self, name: str) -> None:
        """The selected tokens as a word set (their labels: ␣ marks the leading space)."""
        self.add_word_set(name, [label for label, _ in self.selection.rows])

    # --- export ---------------------------------------------------------------------------------
    def picture(self) -> tuple[QWidget, str]:
        return self.view, self.status.text()

    def table_rows(self) -> tuple[list[str], list[list[object]]] | None:
        """The map's coordinates: id, token, x, y and word sets."""
        view = self.view
        if not len(view.ids):
            return None
        return map_rows(view.ids.tolist(), view.coords.tolist(), view.labels, {n: ids for n, (_, ids, _) in view._sets.items()})

    # --- search -------------------------------------------------------------------------------
    def _search_edited(self) -> None:
        self.search_timer.start()

    def run_search(self) -> None:
        """Find as you type (debounced); an empty field takes the search off the map."""
        self.search_timer.stop()
        if not self.state.search:
            self.search_id = 0
            self.view.remove_word_set(SEARCH_SET)
            self.view.set_selected([])  # its rings and labels go with it
            return
        self.search_id = self.submit(rq.Search(pattern=self.state.search, regex=self.state.regex,
                                               substring=self.state.substring),
                                     Reply(self.on_search, self.on_failed, self.on_cancelled))

    def on_search(self, rid: int, ids: list[int]) -> None:
        if rid != self.search_id:
            return
        shown = [i for i in ids if self.view.position_of(i) is not None]
        self.view.set_word_set(SEARCH_SET, shown, style.SEARCH_COLOR)
        self.view.set_selected(shown[:12])
        if self._zoom_to_search:
            self.view.zoom_to(shown)
        self._zoom_to_search = True
        more = "" if len(ids) < rq.Search.limit else f" (first {rq.Search.limit})"
        self.statusMessage.emit(f"Search '{self.state.search}': {len(ids)} tokens{more}, {len(shown)} on this map")

    # --- word sets: ticks, dots and legend all follow self.word_sets -----------------------
    def _fill_sets(self) -> None:
        self.sets.fill(list(self.presets) + [n for n in self.settings.word_sets if n not in self.presets])

    def words_of(self, name: str) -> list[str]:
        return self.presets.get(name) or self.settings.word_sets.get(name, [])

    def show_word_set(self, name: str, on: bool = True) -> None:
        self.sets.tick(name, on)

    def _set_toggled(self, name: str, on: bool) -> None:
        if on:
            self._request_set(name)
        else:
            self.view.remove_word_set(name)

    def _request_set(self, name: str) -> None:
        rid = self.submit(rq.WordSet(name=name, words=self.words_of(name)),
                          Reply(self.on_word_set, self.on_failed, self.on_cancelled))
        self.set_ids = {r: n for r, n in self.set_ids.items() if n != name}  # only the newest lookup counts
        self.set_ids[rid] = name

    def on_word_set(self, rid: int, view) -> None:
        if self.set_ids.pop(rid, None) is None or not self.word_sets.resolve(view.name, view.ids):
            return  # an older lookup, or a set unticked while this one was on its way
        self.view.set_word_set(view.name, view.ids, self.sets.colour_of.get(view.name, style.SET_COLORS[0]))
        if not view.ids:
            self.statusMessage.emit(f"{view.name}: none of its words is a single token in this model, so none is marked.")
        elif view.missing:
            self.statusMessage.emit(f"{view.name}: not single tokens here: {', '.join(view.missing)}")

    def add_custom_set(self) -> None:
        name, ok = QInputDialog.getText(self, "New word set", "Name of the set:")
        if not ok or not name.strip():
            return
        words, ok = QInputDialog.getMultiLineText(self, "New word set", "Words, separated by commas or new lines:")
        if not ok:
            return
        self.add_word_set(name.strip(), parse_word_list(words))

    def add_word_set(self, name: str, words: list[str]) -> None:
        """Save a set of the user's and tick it; the sets already ticked stay ticked."""
        self.settings.set_word_set(name, words)
        self.word_sets.tick(name, False)  # its words may have changed: look them up again
        self.view.remove_word_set(name)
        self._fill_sets()
        self.show_word_set(name)

    def merge_word_sets(self, sets: dict[str, list[str]]) -> str:
        """A session's own word sets join the user's list (one of the same name takes the
        session's words); a problem saving them is returned, not raised."""
        changed = {name: words for name, words in sets.items()
                   if name not in self.presets and self.settings.word_sets.get(name) != words}
        problem = ""
        for name, words in changed.items():
            try:
                self.settings.set_word_set(name, words)
            except OSError as exc:
                problem = f"The session's word sets could not be saved to your settings: {exc}"
                break
        if changed:
            self._fill_sets()
        return problem

    def _hovered(self, token_id: int) -> None:
        if token_id >= 0 and token_id < len(self.view.labels):
            self.hover_label.setText(f"{self.view.labels[token_id]}   (id {token_id})")
