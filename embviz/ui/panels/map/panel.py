"""Map tab: projection controls, progress and cancel, search, word sets, and the map."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.views import ModelSummary
from embviz.state.map_estimate import map_choices
from embviz.state.tabs import MapState, ProjectionState
from embviz.state.word_sets import parse_word_list
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.panels.map.choice import ask_map_choice
from embviz.ui.panels.map.colour import ColourByMixin
from embviz.ui.panels.map.names import (
    DRAG_MODES,
    HOVER_HINT,
    INSTANT,
    METHOD_NAMES,
    METHOD_SHORT,
    SEARCH_DEBOUNCE_MS,
    SEARCH_SET,
    SEARCH_WIDTH,
    SIDE_WIDTH,
    SUBSETS,
    combo,
)
from embviz.ui.panels.map.selecting import SelectionMixin
from embviz.ui.panels.map.selection import SelectionBox
from embviz.ui.panels.map.sets import WordSetsMixin
from embviz.ui.panels.map.word_sets import WordSetsList
from embviz.ui.plots import colouring
from embviz.ui.plots.map_view import MapView
from embviz.ui.tables import map_rows
from embviz.ui.widgets import ScrollColumn, ShownWhenEnabled, WrappedLabel, flow_row, folding

if TYPE_CHECKING:  # the cache's readers: not needed to show the window
    from embviz.bridge.first_map import FirstMap

FIRST_MAP_LABELS = 200_000


class MapPanel(ColourByMixin, SelectionMixin, WordSetsMixin, QWidget):
    tokenClicked = Signal(int)
    statusMessage = Signal(str)
    neighboursOf = Signal(list)  # the selection's ids: list the neighbours of their mean

    def __init__(self, submit, cancel, settings, presets: dict[str, list[str]], parent=None) -> None:
        super().__init__(parent)
        self.submit = submit
        self.settings = settings
        self.presets = presets
        self.drawing = Latest(submit, self.on_result, self._map_failed, self._map_cancelled, self.on_progress)
        self.measuring = Latest(submit, self.on_faithfulness, self._faithfulness_failed, self._faithfulness_cancelled)
        self.searching = Latest(submit, self.on_search, self._search_failed)
        # The colour-by lookup: values or clusters, one at a time (asking one forgets the other).
        self.valuing = Latest(submit, self.on_point_values, self._colours_failed, self._colours_cancelled)
        self.clustering = Latest(submit, self.on_clusters, self._colours_failed, self._colours_cancelled,
                                 self._clusters_progress)
        self.set_lookups: dict[str, Latest] = {}  # per word set: its newest lookup
        self.state = MapState()
        self.word_sets = self.state.word_sets
        self._asked_rows: tuple[str, str, int] = (self.state.method, self.state.subset, self.state.limit)
        self._zoom_to_search = True
        self._search_said = ""  # the search's last message: the one an emptied field takes back
        self._last_said = ""
        self.statusMessage.connect(lambda text: setattr(self, "_last_said", text))
        self.summary_ready = False  # no model yet: changing Rows has nothing to redraw
        self._first_map: FirstMap | None = None  # a bridge.first_map.FirstMap drawn from the cache while the model opens
        self._taking_over = False  # the open model's first map is on its way, its kept copy on screen
        # t-SNE's latest live picture while the tab is not on screen: drawn when it is shown,
        # not at every step (20,000 points a step cost the tab on screen its frames).
        self._unseen_preview: tuple | None = None
        self.table_shape = (0, 0, 0, False)  # rows, dimensions, whole-word rows, on a GPU: what a long map is asked of
        self.bindings = Bindings(self.state)
        self.view = MapView()
        self.view.pointClicked.connect(self._point_clicked)
        self.view.pointHovered.connect(self._hovered)
        self.view.selectionMade.connect(self.set_selection)
        self.view.scene().sigMouseClicked.connect(self._map_clicked)
        self.view.installEventFilter(self)  # Esc on the map clears its selection
        # The 3-D view, made the first time a 3-D map is drawn (it needs OpenGL): it shows the
        # 2-D map's highlights, so every part of the panel keeps talking to self.view.
        self.view3d: Any = None
        self._turn_when_drawn = False  # a lesson's 3-D map turns once it is on screen
        self._lesson_sets: tuple[str, ...] = ()  # a lesson's 3-D map turns about these sets once they are marked
        self._placing = False
        self.view.contentChanged.connect(self._frame_lesson_sets)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.view)
        # The projection, colours and search share one wrapping row (the combos say what they
        # choose, with no labels beside them): on a 1024 × 700 projector at 150 % it is two
        # rows, and every row of controls is a row the map loses. How the map is drawn and
        # dragged (labels, contours, drag mode) heads the side column.
        controls = flow_row(*self._projection_controls(cancel), *self._colour_controls(), self._search_controls())
        self._lay_out(controls, self._side_column())
        self._show_axes_fields()
        self._show_cluster_controls()
        self.view.set_select_mode(self.state.drag_mode)
        self._fill_sets()
        self._show_selection()

    def _projection_controls(self, cancel) -> list[QWidget]:
        """Method, rows, Draw map, Cancel and Fit view (Labels and 2-D / 3-D go to the side column); the
        progress bar and caption."""
        self.method = combo(METHOD_NAMES)
        self.method.setToolTip("How the map places the rows: PCA and word-pair axes at once, t-SNE and UMAP "
                               "in minutes (Draw map)")
        self.subset = combo(SUBSETS)
        self.subset.setToolTip("Which rows the map shows (row ids stay the true ids)")
        self.limit = QSpinBox()
        self.limit.setRange(10, 10_000_000)
        self.limit.setSingleStep(1000)
        self.limit.setPrefix("N = ")
        # Bound before any other slot is connected: those slots read the state.
        for choice, attr in ((self.method, "method"), (self.subset, "subset")):
            self.bindings.bind(choice, attr)
            choice.currentIndexChanged.connect(self._rows_changed)
        self.bindings.bind(self.limit, "limit")
        self.limit.valueChanged.connect(self._rows_changed)
        self._show_limit()
        self.run_button = QPushButton("Draw map")
        self.run_button.clicked.connect(self.run_projection)
        self.cancel_button = ShownWhenEnabled("Cancel")  # beside the progress bar, while a job runs
        self.cancel_button.clicked.connect(lambda: (cancel(rq.Project.channel), cancel(rq.Clusters.channel)))
        self.fit_button = QPushButton("Fit view")
        self.fit_button.setToolTip("Show every point (Home)")
        self.fit_button.clicked.connect(self.view.fit)
        self.dims_box = QComboBox()
        self.dims_box.addItem("2-D", 2)
        self.dims_box.addItem("3-D", 3)
        self.dims_box.setToolTip("Dimensions: a flat map, or a cloud to turn with the mouse (OpenGL)")
        self.bindings.bind(self.dims_box, "dims")
        self.dims_box.currentIndexChanged.connect(self._dims_changed)
        self.turn_box = QCheckBox("Turn (T)")
        self.turn_box.setToolTip("Turn the 3-D map slowly, for a projector; T on the map starts and stops it")
        self.turn_box.toggled.connect(lambda on: self.view3d is not None and self.view3d.set_turning(on))
        self.turn_box.hide()
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
        return [self.method, self.axes_label_x, self.axis_x, self.axes_label_y, self.axis_y, self.subset, self.limit,
                self.run_button, self.fit_button]

    def _colour_controls(self) -> list[QWidget]:
        """Colour by (a value per point, drawn as per-point brushes and in the density image) and the drag mode."""
        self.colour_by = combo({key: f"Colour: {text[0].lower()}{text[1:]}" for key, text in colouring.COLOUR_BY.items()})
        self.colour_by.setToolTip("Colour every point: by the kind of token, its id (BPE merge order), "
                                  "its row's length, or its cluster")
        self.cluster_method = combo(colouring.CLUSTER_METHODS)
        self.cluster_method.setToolTip("Communities of each row's 10 nearest rows (the neighbours the Neighbours tab "
                                       "lists), k-means of the rows' directions, or HDBSCAN of the points as this "
                                       "map places them")
        self.clusters_k = QSpinBox()
        self.clusters_k.setRange(2, 1000)
        self.clusters_k.setPrefix("k = ")
        for choice, attr in ((self.colour_by, "colour_by"), (self.cluster_method, "cluster_method")):
            self.bindings.bind(choice, attr)
            choice.currentIndexChanged.connect(self.apply_colour_by)
        self.bindings.bind(self.clusters_k, "clusters_k")
        self.clusters_k.valueChanged.connect(self.apply_colour_by)
        self.contours_box = QCheckBox("Contours")
        self.contours_box.setToolTip("Outline where the points crowd: density contours under the map's points")
        self.bindings.bind(self.contours_box, "contours")
        self.state.events.contours.connect(self.view.set_contours_on)  # the box, or a restored session
        self.drag_mode = combo(DRAG_MODES)
        self.drag_mode.setToolTip("Pan the map, or select the points inside a rectangle or a lasso you draw")
        self.bindings.bind(self.drag_mode, "drag_mode")
        self.state.events.drag_mode.connect(self._drag_mode_changed)
        return [self.colour_by, self.cluster_method, self.clusters_k]

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

    def _side_column(self) -> ScrollColumn:
        """The hovered token (big, for the back row), the word sets and the selection, in a
        column that scrolls where the map is shorter than they are (1024 × 700 at 200 %)."""
        self.hover_label = WrappedLabel(HOVER_HINT)  # as tall as it wraps: a splitter gave it a line less
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
        # Rows of a fixed height, not a wrapping one: the column's least height counts them, so
        # a short map scrolls its tab rather than drawing the hover label over them.
        switches = QHBoxLayout()
        switches.addWidget(self.labels_box)
        switches.addWidget(self.contours_box)
        switches.addWidget(self.turn_box)
        switches.addStretch(1)
        column.addLayout(switches)
        # 2-D / 3-D beside the drag mode: the controls' two rows above the map are full at 150 %.
        drag_row = QHBoxLayout()
        drag_row.addWidget(self.drag_mode, 1)
        drag_row.addWidget(self.dims_box)
        column.addLayout(drag_row)
        column.addWidget(self.hover_label)
        column.addWidget(QLabel("Highlight word sets"))
        column.addWidget(self.sets, 1)
        column.addWidget(self.sets.add_button)
        column.addWidget(self.selection, 1)
        self.side = ScrollColumn(side)
        style.follow_scale(self)  # after the list: its width follows the text size
        return self.side

    def _lay_out(self, controls: QLayout, side: ScrollColumn) -> None:
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress)
        progress_row.addWidget(self.cancel_button)
        progress_row.addWidget(self.status, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.stack)
        splitter.addWidget(side)
        splitter.setStretchFactor(0, 1)
        layout = QVBoxLayout(self)
        rows = folding(controls)
        layout.addWidget(rows)
        layout.addLayout(progress_row)
        layout.addWidget(splitter, 1)
        self.controls = (rows, side)  # what projector mode folds: the map, its caption and progress stay

    def set_text_scale(self, scale: float) -> None:
        self.search_box.setMinimumWidth(round(SEARCH_WIDTH * scale))
        self.sets.setMaximumWidth(round(SIDE_WIDTH * scale))
        self.hover_label.setMaximumWidth(round(SIDE_WIDTH * scale))
        # Four sets in sight before the column scrolls.
        self.sets.setMinimumHeight(4 * self.sets.fontMetrics().height() + 2 * self.sets.frameWidth())

    # --- model and projection ---------------------------------------------------------------
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

    def _point_clicked(self, token_id: int) -> None:
        if self.summary_ready:
            self.tokenClicked.emit(token_id)
        else:  # a map drawn from the cache: the model that answers about its points is still opening
            self.statusMessage.emit("The model is still opening: click the point again in a moment.")

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
        if restore is None:
            self.state.method = "pca"
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
        self.state.forget_fits()
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
        self._show_points(projection.ids, projection.coords)
        self._restore_camera()
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
        if self.showing_3d():
            camera = self.view3d.camera()
            self.state.camera_distance, self.state.camera_elevation = camera.distance, camera.elevation
            self.state.camera_azimuth, self.state.camera_centre = camera.azimuth, camera.centre
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
        asked = rq.Project(method=self.state.method, subset=self.state.subset, limit=self.state.limit,
                           axes=(x[0], x[1], y[0], y[1]) if pairs else rq.Project.axes, dims=self._dims_drawn())
        request = self._long_map_choice(asked)
        if request is None:
            return
        self._unseen_preview = None
        self.drawing.ask(request)
        self.measuring.forget()  # the measure of the map on screen no longer matters
        self._asked_rows = (request.method, request.subset, request.limit)
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

    def _clusters_progress(self, fraction: float, stage: str, _preview: object) -> None:
        self.statusMessage.emit(f"Clusters: {stage} — {fraction:.0%}")

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
        caption = f"{METHOD_SHORT[projection.method]} of {rows}{extra}"
        self.status.setText(caption)
        _, subset, limit = self._asked_rows
        self.state.projection = ProjectionState(projection.method, subset, limit, projection.ids, projection.coords,
                                                caption)
        for note in projection.notes:
            self.statusMessage.emit(note)
        self.apply_colour_by()  # the new map's points, coloured as asked
        self.clear_selection()  # picked on another layout: its points are elsewhere here
        # Drawn first, measured next (a second, on the long lane): how faithful is this picture?
        self.measuring.ask(rq.Faithfulness(ids=projection.ids, coords=projection.coords))

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

    def _search_failed(self, message: str) -> None:
        self.view.remove_word_set(SEARCH_SET)  # e.g. a regex that does not parse: its old hits would mislead
        self.view.set_selected([])
        self._say_of_search(message)

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

    # --- three dimensions ------------------------------------------------------------------------
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

    # --- export ---------------------------------------------------------------------------------
    def picture(self) -> tuple[QWidget, str]:
        return (self.view3d if self.showing_3d() else self.view), self.status.text()

    def table_rows(self) -> tuple[list[str], list[list[object]]] | None:
        """The map's coordinates: id, token, x, y and word sets."""
        view = self.view
        if not len(view.ids):
            return None
        return map_rows(view.ids.tolist(), view.coords.tolist(), view.labels, {n: ids for n, (_, ids, _) in view._sets.items()})

    def _hovered(self, token_id: int) -> None:
        if token_id >= 0 and token_id < len(self.view.labels):
            self.hover_label.setText(f"{self.view.labels[token_id]}   (id {token_id})")
