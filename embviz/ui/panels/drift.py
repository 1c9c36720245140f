"""Drift tab: one word in several sentences. A line chart per layer of how alike the
word's vectors in the sentences stay, how far each is from its static row, and what
any two tokens score (the baseline); the nearest vocabulary rows at a chosen layer."""

from __future__ import annotations

from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSpinBox, QVBoxLayout, QWidget

from embviz.bridge import requests as rq
from embviz.bridge.views import ModelSummary
from embviz.core.lm.results import DriftResult
from embviz.state.tabs import DriftState
from embviz.ui import style
from embviz.ui.plots.still_plot import StillPlot
from embviz.ui.binding import Bindings
from embviz.ui.panels.language_model import HIDDEN_SPACE_STRETCH, LanguageModelLoader, LanguageModelTab
from embviz.ui.widgets import LinesBox, ResultsTable, WordField, WrappedLabel, side_by_side

TOP = 1.1  # the y axis ends just past cosine 1, the most a cosine can be, with room for the 1's label
MAX_LAYER = 200  # the spin box's bound before the model's depth is known
BETWEEN_COLOR = style.SET_COLORS[6]  # black: the line the chart is about
BASELINE_COLOR = "#888888"


def sentences_of(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


CHART_MIN_HEIGHT = 180  # pixels at 100 % text
SENTENCE_LINES = 2.5  # the sentences' box shows two whole lines and a hint of a third
# The nearest rows sit beside the chart where the tab is this wide at 100 % text (times the text
# size), under it where not: at 1024 px and 200 % the key took the chart's room and the column
# beside it was a word a line.
SIDE_BY_SIDE_WIDTH = 700
NEIGHBOUR_ROWS = 5  # in sight under the chart before the tab scrolls
NEIGHBOURS_MIN_WIDTH = 260  # pixels at 100 % text: two columns of tokens, readable beside the chart


class WrappedKey(WrappedLabel):
    """A key of a few entries above the plot, on white as the plot is."""

    def __init__(self) -> None:
        super().__init__("")
        self.setTextFormat(Qt.TextFormat.RichText)
        style.use_font(self, style.BASE_POINT_SIZE)
        self.setAutoFillBackground(True)  # white, as the plot under it: one picture
        palette = self.palette()
        palette.setColor(QPalette.ColorRole.Window, QColor("white"))
        self.setPalette(palette)


class DriftPanel(LanguageModelTab):
    CANCELLED = "Loading the language model was cancelled. Edit a sentence to try again."

    def __init__(self, submit, cancel, language_model: LanguageModelLoader, parent=None) -> None:
        super().__init__(submit, cancel, language_model, parent)
        self.result: Any = None  # the DriftResult on screen
        self.state = DriftState()
        inputs = self._inputs()
        self._chart()
        right = self._neighbours_column()
        self._lay_out(inputs, right)
        style.follow_scale(self)

    def _inputs(self) -> QHBoxLayout:
        """The word, the layer its nearest rows are listed at, and the sentences; a pause sends the request."""
        self.word = WordField("Word, e.g. bank")
        self.sentences = LinesBox(SENTENCE_LINES)
        self.sentences.setPlaceholderText("Sentences that use the word, one per line")
        style.use_font(self.sentences, style.LABEL_POINT_SIZE + 2)
        self.layer = QSpinBox()
        self.layer.setRange(-1, MAX_LAYER)
        self.layer.setSpecialValueText("nearest rows at the last block")
        self.layer.setPrefix("nearest rows at layer ")
        self.bindings = Bindings(self.state)
        self.bindings.bind(self.word, "word")
        self.bindings.bind(self.sentences, "sentences")
        self.bindings.bind(self.layer, "layer")
        self.word.textChanged.connect(self.timer.start)
        self.sentences.textChanged.connect(self.timer.start)
        self.layer.valueChanged.connect(self.timer.start)
        inputs = QHBoxLayout()
        inputs.addWidget(QLabel("Word"))
        inputs.addWidget(self.word)
        inputs.addWidget(self.layer)
        inputs.addStretch(1)
        return inputs

    def _chart(self) -> None:
        """Per layer: the sentences' vectors' cosines, to each other and to the static row."""
        self.heading = QLabel("")
        self.heading.setWordWrap(True)
        style.use_font(self.heading, style.LABEL_POINT_SIZE + 2, bold=True)
        self.plot = StillPlot(min_height=CHART_MIN_HEIGHT, grid=True)
        self.plot.item.setLabel("bottom", "layer (0 = the embedding)")
        self.plot.item.setLabel("left", "cosine")
        # The key above the plot, not in it: inside, it was cut at the plot's edge and hid the black line.
        self.key = WrappedKey()
        self.key_names: list[str] = []  # what the key names, in its order
        self.chart = QWidget()
        chart_layout = QVBoxLayout(self.chart)
        chart_layout.setContentsMargins(0, 0, 0, 0)
        chart_layout.setSpacing(0)
        chart_layout.addWidget(self.key)
        chart_layout.addWidget(self.plot, 1)

    def _neighbours_column(self) -> QWidget:
        """The nearest vocabulary rows of each sentence's vector, and what the chart means."""
        self.neighbours = ResultsTable(["1", "2"])
        style.use_font(self.neighbours, style.BASE_POINT_SIZE)  # several columns side by side: a size smaller
        # Two lines under the chart; the whole story in their tooltip: at 150 % on a 700-pixel
        # screen five lines of caption left the chart no height at all.
        self.caption = QLabel(
            "Black: how alike the word's vectors in the sentences are, layer by layer. Coloured: each one's cosine "
            "to its row of the table. Grey: any two tokens, the floor black must rise above.")
        self.caption.setToolTip(
            "Layer 0 is the word's row of the table, the same in every sentence (GPT-2-style models add a position's "
            "vector); each block mixes in context. Grey: unrelated tokens of the sentences, a floor that every "
            "vector of a layer shares (a few huge directions), so black means something only above grey.")
        self.caption.setWordWrap(True)
        right = QWidget()
        self.right_layout = right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        self.neighbours_heading = WrappedLabel("")  # as tall as it wraps: a splitter cut its last line
        right_layout.addWidget(self.neighbours_heading)
        right_layout.addWidget(self.neighbours, 1)
        return right

    def _lay_out(self, inputs: QHBoxLayout, right: QWidget) -> None:
        self.right = right
        self.splitter = side_by_side(self.chart, right, 3, 2)
        self.splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addLayout(inputs)
        layout.addWidget(self.sentences)
        layout.addWidget(self.loading)
        layout.addWidget(self.message)
        layout.addWidget(self.heading)
        layout.addWidget(self.splitter, HIDDEN_SPACE_STRETCH)
        layout.addWidget(self.caption)
        layout.addStretch(1)  # holds the space while the answer is hidden; a sliver of it otherwise

    def set_text_scale(self, scale: float) -> None:
        # A chart never squashed below reading height: the tab scrolls instead (it sits in a scroll area).
        self.plot.set_text_scale(scale)
        self._arrange()
        if self.result is not None:
            self._draw()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._arrange()

    def _arrange(self) -> None:
        """The nearest rows beside the chart (two columns of tokens readable at 1024 px), or under
        it, where the tab is narrow for its text size, with NEIGHBOUR_ROWS of them in sight."""
        scale = style.text_scale()
        beside = self.width() >= SIDE_BY_SIDE_WIDTH * scale
        self.splitter.setOrientation(Qt.Orientation.Horizontal if beside else Qt.Orientation.Vertical)
        self.right.setMinimumWidth(round(NEIGHBOURS_MIN_WIDTH * scale) if beside else 0)
        table = self.neighbours
        rows = table.horizontalHeader().sizeHint().height() + NEIGHBOUR_ROWS * table.verticalHeader().defaultSectionSize()
        heading = self.neighbours_heading.minimumHeight() + self.right_layout.spacing()
        self.right.setMinimumHeight(0 if beside else rows + 2 * table.frameWidth() + heading)

    def picture(self) -> tuple[QWidget, str]:
        return self.chart, f"{self.heading.text()}\n{self.caption.text()}"

    def table_rows(self) -> tuple[list[str], list[list[object]]] | None:
        result = self.result
        if result is None:
            return None
        headers = ["layer", "name", "between sentences", "baseline"] + [f"to static, sentence {i + 1}"
                                                                       for i in range(len(result.sentences))]
        return headers, [[n, name, b, base, *s] for n, (name, b, base, s)
                         in enumerate(zip(result.layer_names, result.between, result.baseline, result.to_static))]

    # --- model and inputs ---------------------------------------------------------------------
    def on_model(self, summary: ModelSummary, restore: DriftState | None = None) -> None:
        self.asking.forget()
        self._clear()
        self.loading.show_loading(False)
        self.word.set_vocabulary(summary.labels)
        if restore is not None:
            self.state.word, self.state.sentences = restore.word, restore.sentences
            self.state.layer = restore.layer
        self.layer.setMaximum(MAX_LAYER)  # until an answer says how many this model has
        self.enable_for(summary.lens_reason, [self.word, self.sentences, self.layer],
                        bool(self.state.word.strip() and sentences_of(self.state.sentences)))

    def set_inputs(self, word: str, sentences: list[str]) -> None:
        self.state.word, self.state.sentences = word, "\n".join(sentences)
        self.run()

    def missing_input(self) -> str:
        if self.state.word.strip() and sentences_of(self.state.sentences):
            return ""
        return "Type a word and, one per line, sentences that use it."

    def ask(self) -> None:
        layer = None if self.state.layer < 0 else self.state.layer
        self.asking.ask(rq.Drift(word=self.state.word, sentences=sentences_of(self.state.sentences), layer=layer))

    # --- results ------------------------------------------------------------------------------
    def on_result(self, result: DriftResult) -> None:
        self.result = result
        self._say("")
        for widget in (self.splitter, self.caption):
            widget.show()
        self.layer.blockSignals(True)
        self.layer.setMaximum(len(result.layer_names) - 1)
        self.layer.blockSignals(False)
        self._draw()

    def _draw(self) -> None:
        result = self.result
        item = self.plot.getPlotItem()
        item.clear()
        layers = list(range(len(result.layer_names)))
        width = max(2, round(3 * style.text_scale()))
        key = []  # (colour, a piece of line in its style, name)
        if len(result.sentences) > 1:
            item.plot(layers, result.between, pen=pg.mkPen(BETWEEN_COLOR, width=width + 1))
            key.append((BETWEEN_COLOR.name(), "━━", "between the sentences"))
        if result.baseline and result.baseline[0] is not None:
            item.plot(layers, result.baseline, pen=pg.mkPen(BASELINE_COLOR, width=width, style=Qt.PenStyle.DotLine))
            key.append((BASELINE_COLOR, "┅┅", "any two tokens (baseline)"))
        for s in range(len(result.sentences)):
            color = style.SET_COLORS[s % 5]
            item.plot(layers, [row[s] for row in result.to_static], pen=pg.mkPen(color, width=width, style=Qt.PenStyle.DashLine))
            key.append((color.name(), "╍╍", f"sentence {s + 1} to its static row"))
        self.key_names = [name for _, _, name in key]
        # Entries kept whole (no break inside one), the lines between them free to wrap.
        self.key.setText(" &nbsp; ".join(f'<b style="color:{color}">{line}</b>&nbsp;{name.replace(" ", "&nbsp;")}'
                                          for color, line, name in key))
        item.setYRange(min(-0.1, min(min(r) for r in result.to_static)), TOP, padding=0)
        item.getAxis("left").setTicks([[(v / 5, f"{v / 5:g}") for v in range(-5, 6)]])
        item.setXRange(0, layers[-1], padding=0.02)
        label = result.word.replace(" ", "␣")
        self.heading.setText(f"“{label}” in {len(result.sentences)} sentence(s), through {len(layers) - 1} blocks")
        at = result.layer_names[result.neighbours_layer]
        self.neighbours_heading.setText(f"Nearest rows of the table to the word's vector at {at}, "
                                        "one column per sentence:")
        self.neighbours.headers = [str(s + 1) for s in range(len(result.sentences))]
        self.neighbours.setColumnCount(len(self.neighbours.headers))
        self.neighbours.setHorizontalHeaderLabels(self.neighbours.headers)
        depth = max((len(h) for h in result.neighbours), default=0)
        rows = [tuple(hits[r].token if r < len(hits) else "" for hits in result.neighbours) for r in range(depth)]
        self.neighbours.fill(rows, [result.neighbours[0][r].id if r < len(result.neighbours[0]) else -1 for r in range(depth)])
        for r in range(depth):  # the cosines as tooltips: the tokens need the width
            for s, hits in enumerate(result.neighbours):
                if r < len(hits) and (cell := self.neighbours.item(r, s)) is not None:
                    cell.setToolTip(f"{hits[r].token} (id {hits[r].id}): cosine {hits[r].score:.3f}")
        self._arrange()  # the heading's lines are known now

    def on_failed(self, message: str) -> None:
        self._clear()
        self._say(message, error=True)

    def _clear(self) -> None:
        self.result = None
        for widget in (self.splitter, self.caption):
            widget.hide()  # no empty axes before an answer
        self.plot.getPlotItem().clear()
        self.key.setText("")
        self.key_names = []
        self.heading.setText("")
        self.neighbours_heading.setText("")
        self.neighbours.fill([], [])
        self._say("")

