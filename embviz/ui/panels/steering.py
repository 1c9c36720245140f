"""Steering tab: a concept direction written into the running model. α · s_L · unit(from → to)
is added to the residual stream after layer L at every position, and the next-token guess is
shown before and after, side by side, with the watched tokens' probabilities (bridge request
`Steer`). A second page reads the same direction out of the stream, layer by layer
(`DirectionLayers`), the layer steered after marked on it."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDoubleSpinBox, QFrame, QHBoxLayout, QLabel, QLineEdit, QScrollArea, QSizePolicy, QSpinBox, QTabWidget, QVBoxLayout,
    QWidget,
)

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.views import ModelSummary
from embviz.core.lm.results import DirectionLayersResult, SteerResult
from embviz.state.tabs import SteeringState
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.formatting import percent_labels, visible_token
from embviz.ui.panels.language_model import LanguageModelLoader, LanguageModelTab
from embviz.ui.panels.steering_layers import DirectionLayersView
from embviz.ui.plots.bar_chart import BarChart
from embviz.ui.widgets import WordField, WrappedLabel, flow_row, folding

K = 10  # bars a chart
MAX_LAYER = 200  # the spin box's bound until an answer says how deep the model is
ALPHA_RANGE = 50.0  # beyond this the stream is far off anything the model has seen


def percent(p: float) -> str:
    """Two decimals for every watched token alike, so that the line reads down as a table does."""
    return "< 0.01%" if 0 < p < 5e-5 else f"{100 * p:.2f}%"


def watched_line(result: SteerResult) -> str:
    """The watched tokens' probabilities, before → after, in one line."""
    parts = [f"{visible_token(w.label)} {percent(w.prob_before)} → {percent(w.prob_after)}" for w in result.watched]
    return "Watched: " + "   ".join(parts) if parts else ""


def added_line(result: SteerResult) -> str:
    """What was added, in numbers: α, what it is counted in, and the added vector's length."""
    return (f"Added after {result.layer_name}, at every position: α = {result.alpha:g} × s = {result.scale:.1f} "
            f"× unit({result.direction}), a vector {result.added_norm:.1f} long. "
            f"α is in units of s, {result.alpha_units}.")


class _Pages(QTabWidget):
    """The two pages, whose least height is their minimum's (as the Directions tab's): a
    QTabWidget's height for its width comes from its pages' preferred sizes, and scrolled the tab."""

    def hasHeightForWidth(self) -> bool:
        return False


class SteeringPanel(LanguageModelTab):
    CANCELLED = "Loading the language model was cancelled. Edit the text to try again."

    def __init__(self, submit, cancel, language_model: LanguageModelLoader, parent=None) -> None:
        super().__init__(submit, cancel, language_model, parent)
        self.result: SteerResult | None = None
        self.layers_result: DirectionLayersResult | None = None
        self.layers_asked: tuple[str, str, str] | None = None  # the curve's text and words, not asked twice
        self.asking_layers = Latest(submit, self.on_layers, self.on_layers_failed)
        self.state = SteeringState()
        self.bindings = Bindings(self.state)
        inputs = self._inputs()
        self._answers()
        self._lay_out(inputs)
        style.follow_scale(self)

    def _inputs(self) -> QWidget:
        self.text = QLineEdit()  # one line: the bars, not the prompt, need the height
        style.use_font(self.text, style.LABEL_POINT_SIZE + 2)
        self.text.setPlaceholderText("Text; the model guesses the token after it")
        self.text.setToolTip("The text the model reads; the bars are its guesses for the token after it.")
        self.start, self.end = WordField("from, e.g. he"), WordField("to, e.g. she")
        self.layer = QSpinBox()
        self.layer.setRange(0, MAX_LAYER)
        self.layer.setPrefix("after layer ")
        self.layer.setSpecialValueText("after the embedding")
        self.layer.setToolTip("0: added to the embedding output, before block 1; L: after block L.")
        self.alpha = QDoubleSpinBox()
        self.alpha.setRange(-ALPHA_RANGE, ALPHA_RANGE)
        self.alpha.setSingleStep(0.25)
        self.alpha.setDecimals(2)
        self.alpha.setPrefix("α = ")
        self.alpha.setToolTip("In units of s, the residual's mean length at that layer: α = 1 adds a vector as "
                              "long as a typical residual there; negative steers toward “from”.")
        for widget, name in ((self.text, "text"), (self.start, "start"), (self.end, "end"), (self.layer, "layer"),
                             (self.alpha, "alpha")):
            self.bindings.bind(widget, name)
        # Each change asks again after a pause; the Latest helpers drop the answers it replaced.
        for name in ("text", "start", "end", "layer", "alpha"):
            getattr(self.state.events, name).connect(lambda *_: self.timer.start())
        self.state.events.layer.connect(lambda *_: self.curve.mark(self.state.layer))
        words = QWidget()
        words.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Preferred)  # "he → she" as one piece
        row = QHBoxLayout(words)
        row.setContentsMargins(0, 0, 0, 0)
        for part in (QLabel("Direction"), self.start, QLabel("→"), self.end):
            row.addWidget(part)
        self.inputs = (self.text,)
        return folding(flow_row(self.text, words, self.layer, self.alpha))

    def _answers(self) -> None:
        self.watched = WrappedLabel("")
        style.use_font(self.watched, style.LABEL_POINT_SIZE + 2, bold=True)
        self.added = WrappedLabel("")
        style.use_font(self.added, style.LABEL_POINT_SIZE)
        self.notes = WrappedLabel("")
        self.notes.setStyleSheet(style.NOTE_STYLE)
        style.use_font(self.notes, style.BASE_POINT_SIZE)
        self.before_chart = BarChart("Before", style.BAR_PROB, suffix="%", axis_max=100.0)
        self.after_chart = BarChart("After", style.BAR_KEPT, suffix="%", axis_max=100.0)
        self.charts = QWidget()
        charts = QHBoxLayout(self.charts)
        charts.setContentsMargins(0, 0, 0, 0)
        charts.addWidget(self.before_chart, 1)
        charts.addWidget(self.after_chart, 1)
        self.curve = DirectionLayersView()

    def _lay_out(self, inputs: QWidget) -> None:
        # The bars' page scrolls on a short screen at a large text size, as the logits tab does.
        self.content = QWidget()
        page = QVBoxLayout(self.content)
        page.setContentsMargins(4, 4, 4, 0)
        page.addWidget(self.watched)
        page.addWidget(self.charts, 1)
        page.addWidget(self.added)
        page.addWidget(self.notes)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.content)
        self.pages = _Pages()
        self.pages.addTab(scroll, "Before and after")
        self.pages.addTab(self.curve, "The direction through the layers")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.controls = (inputs,)  # what projector mode folds
        layout.addWidget(inputs)
        layout.addWidget(self.loading)
        layout.addWidget(self.message)
        layout.addWidget(self.pages, 1)

    def set_text_scale(self, _scale: float) -> None:
        self.text.setMinimumWidth(self.text.fontMetrics().horizontalAdvance("The doctor said that___"))
        for field in (self.start, self.end):
            field.setMaximumWidth(field.fontMetrics().horizontalAdvance("engineer__") + 24)

    # --- model and inputs ---------------------------------------------------------------------
    def on_model(self, summary: ModelSummary, restore: SteeringState | None = None) -> None:
        self.asking.forget()
        self.asking_layers.forget()
        self._clear()
        self.loading.show_loading(False)
        for field in (self.start, self.end):
            field.set_vocabulary(summary.labels)
        if restore is not None:
            for name in SteeringState.__dataclass_fields__:
                setattr(self.state, name, getattr(restore, name))
        self.layer.setMaximum(MAX_LAYER)
        self.enable_for(summary.lens_reason, [self.text, self.start, self.end, self.layer, self.alpha],
                        not self.missing_input())

    def show_lesson(self, setup: dict) -> None:
        """A lesson step's or the demo's steering: text, from, to, layer and α; the page to show."""
        for name in ("text", "start", "end", "layer", "alpha"):
            if name in setup:
                setattr(self.state, name, setup[name])
        self.pages.setCurrentIndex(1 if setup.get("page") == "layers" else 0)
        self.run()

    def missing_input(self) -> str:
        state = self.state
        if state.text.strip() and state.start.strip() and state.end.strip():
            return ""
        return "Type a text and the two words whose direction steers it, e.g. he → she."

    def ask(self) -> None:
        state = self.state
        self.asking.ask(rq.Steer(text=state.text, start=state.start, end=state.end, layer=state.layer,
                                 alpha=state.alpha, k=K))
        asked = (state.text, state.start, state.end)
        if asked != self.layers_asked or self.layers_result is None:
            self.layers_asked = asked
            self.asking_layers.ask(rq.DirectionLayers(text=state.text, start=state.start, end=state.end))

    # --- results ------------------------------------------------------------------------------
    def on_result(self, result: SteerResult) -> None:
        self.result = result
        self._say("")
        before = [100 * s.prob for s in result.before]
        after = [100 * s.prob for s in result.after]
        # One axis for both: a bar's length compares across the two charts.
        held = (0.0, min(100.0, 1.35 * max(before + after + [1.0])))
        # Labelled together: the same decimals on both sides, so 13.5% never sits beside 12.90%.
        texts = percent_labels([s.prob for s in result.before] + [s.prob for s in result.after])
        self.before_chart.set_bars([s.token for s in result.before], before, texts[:len(before)], held)
        self.after_chart.set_bars([s.token for s in result.after], after, texts[len(before):], held)
        # Short titles: at 200 % on 1024 pixels a chart is 480 wide; the layer is in its box above.
        self.before_chart.set_title("Before")
        self.after_chart.set_title(f"After, α = {result.alpha:g}")
        self.watched.setText(watched_line(result))
        self.added.setText(added_line(result))
        self.notes.setText("  ".join(result.notes))
        self.notes.setVisible(bool(result.notes))
        self.charts.show()

    def on_failed(self, message: str) -> None:
        self._clear()
        self._say(message, error=True)

    def on_layers(self, result: DirectionLayersResult) -> None:
        self.layers_result = result
        self.layer.blockSignals(True)  # the model's depth, now known: not a change of the user's
        self.layer.setMaximum(len(result.layer_names) - 1)
        self.layer.blockSignals(False)
        self.curve.show_result(result, self.state.layer)

    def on_layers_failed(self, message: str) -> None:
        # The same inputs fail the steering too, whose sentence the message line shows.
        self.layers_result = None
        self.curve.clear()
        self.curve.heading.setText(message)

    def _clear(self) -> None:
        self.result = None
        self.layers_result = None
        self.layers_asked = None
        for chart in (self.before_chart, self.after_chart):
            chart.clear_bars()
        self.charts.hide()
        for label in (self.watched, self.added, self.notes):
            label.setText("")
        self.curve.clear()
        self._say("")

    # --- what File ▸ Export takes -------------------------------------------------------------
    def picture(self) -> tuple[QWidget, str]:
        if self.pages.currentIndex() == 1:
            return self.curve, self.curve.heading.text()
        return self.content, "\n".join(t for t in (self.watched.text(), self.added.text()) if t)

    def table_rows(self) -> tuple[list[str], list[tuple]] | None:
        if self.pages.currentIndex() == 1 and self.layers_result is not None:
            r = self.layers_result
            return (["layer", "name", "projection", "norm", "cosine"],
                    [(n, name, p, norm, c) for n, (name, p, norm, c)
                     in enumerate(zip(r.layer_names, r.projections, r.norms, r.cosines))])
        if self.result is None:
            return None
        rows = [("before", s.token, s.id, s.logit, s.prob) for s in self.result.before]
        rows += [("after", s.token, s.id, s.logit, s.prob) for s in self.result.after]
        return ["pass", "token", "id", "logit", "probability"], rows
