"""Map tab: projection controls, progress and cancel, search, word sets, and the map, laid out.

The panel's parts (drawing, opening, three_d, colour, selecting, sets) are mixins of it, each in
a module of its own; host.py declares what they use of it and of each other."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
from embviz.state.tabs import MapState
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.panels.map.colour import ColourByMixin
from embviz.ui.panels.map.drawing import DrawingMixin
from embviz.ui.panels.map.names import (
    DRAG_MODES,
    HOVER_HINT,
    METHOD_NAMES,
    SEARCH_DEBOUNCE_MS,
    SEARCH_WIDTH,
    SIDE_WIDTH,
    SUBSETS,
    combo,
)
from embviz.ui.panels.map.opening import OpeningMixin
from embviz.ui.panels.map.selecting import SelectionMixin
from embviz.ui.panels.map.selection import SelectionBox
from embviz.ui.panels.map.sets import WordSetsMixin
from embviz.ui.panels.map.three_d import ThreeDMixin
from embviz.ui.panels.map.word_sets import WordSetsList
from embviz.ui.plots import colouring
from embviz.ui.plots.map_view import MapView
from embviz.ui.tables import map_rows
from embviz.ui.widgets import ScrollColumn, ShownWhenEnabled, TableChoice, WrappedLabel, flow_row, folding

TWO_TABLES = ("Which rows the map places: the embedding each token enters the model as, or the output head's rows "
              "that score it at the end (this model keeps the two apart).")

if TYPE_CHECKING:  # the cache's readers: not needed to show the window
    from embviz.bridge.first_map import FirstMap


class MapPanel(DrawingMixin, OpeningMixin, ThreeDMixin, ColourByMixin, SelectionMixin, WordSetsMixin, QWidget):
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
        self._asked_rows: tuple[str, str, int, str] = (self.state.method, self.state.subset, self.state.limit,
                                                       self.state.table)
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
        self.table_choice = TableChoice(TWO_TABLES)
        # Bound before any other slot is connected: those slots read the state.
        for choice, attr in ((self.method, "method"), (self.subset, "subset"), (self.table_choice, "table")):
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
        return [self.method, self.axes_label_x, self.axis_x, self.axes_label_y, self.axis_y, self.table_choice,
                self.subset, self.limit, self.run_button, self.fit_button]

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

    def _point_clicked(self, token_id: int) -> None:
        if self.summary_ready:
            self.tokenClicked.emit(token_id)
        else:  # a map drawn from the cache: the model that answers about its points is still opening
            self.statusMessage.emit("The model is still opening: click the point again in a moment.")

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
