"""Next-token logits tab: type text, see the tokens the model sees, the top-k logits
and their probabilities (softmax over the whole vocabulary); click a bar to append it.

The full model is built on first use by a job of its own (progress, cancel), never by
the lookup that asks for logits, so neighbours and search never wait for it."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QDoubleSpinBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QRadioButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from embviz.bridge import requests as rq
from embviz.bridge.views import ModelSummary
from embviz.core.lm.results import LogitsResult
from embviz.state.tabs import LogitsState
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.formatting import logit_labels, percent_labels
from embviz.ui.panels.language_model import LOADING_TEXT, LanguageModelLoader, LanguageModelTab
from embviz.ui.plots.bar_chart import BarChart
from embviz.ui.widgets import LinesBox, flow_row, folding


class LogitsPanel(LanguageModelTab):
    LOADING = LOADING_TEXT[:-1] + "; the direct path works meanwhile)"
    CANCELLED = "Loading the language model was cancelled. Edit the text to try again, or pick the direct path."
    FAILED_SUFFIX = " The direct path still works."
    DEBOUNCE_MS = 120

    def __init__(self, submit, cancel, language_model: LanguageModelLoader, parent=None) -> None:
        super().__init__(submit, cancel, language_model, parent)
        self.shown_id = 0  # the request whose bars are on screen (what the benchmark waits for)
        self.shown: list = []  # the bars on screen, in their order
        self.last: LogitsResult | None = None  # the last answer
        self.vocab_size = 0
        self.state = LogitsState()
        self.prompt = self.state.prompt
        self._prompt_box()
        options, display = self._options()
        self._answers()
        self._lay_out(options, display)

    def _prompt_box(self) -> None:
        """The text box; a pause in typing sends the request."""
        self.text = LinesBox(2)
        style.use_font(self.text, style.LABEL_POINT_SIZE + 4)
        self.text.setPlaceholderText("Type text; the model predicts the next token.")
        self.text.textChanged.connect(self._text_edited)

    def _options(self) -> tuple[QLayout, QLayout]:
        """k, temperature, full model or direct path; the bars' order and axis."""
        self.k = QSpinBox()
        self.k.setRange(1, 50)
        self.k.setPrefix("top k = ")
        self.temperature = QDoubleSpinBox()
        self.temperature.setRange(0.05, 10.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setPrefix("temperature = ")
        self.full = QRadioButton("Full model (all blocks)")
        self.direct = QRadioButton("Direct path (embedding → head)")
        self.direct.setToolTip("Skip every block: the logits of the last token's embedding row through the output head.")
        self.by_id = QCheckBox("Order bars by token id")
        self.by_id.setToolTip("The top k, in vocabulary order (as the lesson's [0, .5, 0, 1, 2] reads) instead of by score.")
        self.hold_axis = QCheckBox("Hold the probability axis at 0–100%")
        self.hold_axis.setToolTip("Keep the same scale while you change the temperature, to compare them.")
        group = QButtonGroup(self)
        group.addButton(self.full)
        group.addButton(self.direct)
        # Bound before the slots that read the state.
        self.bindings = Bindings(self.state)
        for widget, attr in ((self.k, "k"), (self.temperature, "temperature"), (self.by_id, "by_id"),
                             (self.hold_axis, "hold_axis")):
            self.bindings.bind(widget, attr)
        self.bindings.bind_choice({False: self.full, True: self.direct}, "direct")
        # The bars' order and axis follow the state, however it changed (a click, a lesson step).
        for event in (self.state.events.by_id, self.state.events.hold_axis):
            event.connect(self._draw)
        for w in (self.k, self.temperature):
            w.valueChanged.connect(self.timer.start)
        self.full.toggled.connect(self.timer.start)
        return flow_row(self.k, self.temperature, self.full, self.direct), flow_row(self.by_id, self.hold_axis)

    def _answers(self) -> None:
        """The tokens as the model sees them, the two bar charts (hidden until an answer) and the caption."""
        self.tokens = QLabel("")
        style.use_font(self.tokens, style.LABEL_POINT_SIZE)
        self.tokens.setWordWrap(True)
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        self.logit_chart = BarChart("Logits (raw scores)", style.BAR_LOGIT)
        self.prob_chart = BarChart("Probabilities", style.BAR_PROB, suffix="%", axis_max=100.0)
        for chart in (self.logit_chart, self.prob_chart):
            chart.barClicked.connect(self.append_token)
        self.charts = QWidget()
        charts = QHBoxLayout(self.charts)
        charts.setContentsMargins(0, 0, 0, 0)
        charts.addWidget(self.logit_chart, 1)
        charts.addWidget(self.prob_chart, 1)
        self.charts.hide()  # no empty axes before the first answer

    def _lay_out(self, options: QLayout, display: QLayout) -> None:
        # In a scroll area: on a short screen at a large text size the charts keep their
        # height and the tab scrolls, rather than squashing the bars into each other.
        content = QWidget()
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        layout = QVBoxLayout(content)
        layout.addWidget(self.text)
        self.controls = (folding(options, display),)  # what projector mode folds
        self.inputs = (self.text,)  # and with a lesson's band up: the token line shows the text
        layout.addWidget(self.controls[0])
        layout.addWidget(self.loading)
        layout.addWidget(self.tokens)
        layout.addWidget(self.message)
        layout.addWidget(self.charts, 1)
        layout.addWidget(self.caption)

    def picture(self) -> tuple[QWidget, str]:
        return self.charts, f"{self.tokens.text()}\n{self.caption.text()}".strip()

    def table_rows(self) -> tuple[list[str], list[tuple]] | None:
        if not self.shown:
            return None
        return ["token", "id", "logit", "probability"], [(r.token, r.id, r.logit, r.prob) for r in self.shown]

    # --- model ------------------------------------------------------------------------------
    def on_model(self, summary: ModelSummary, restore: LogitsState | None = None) -> None:
        """A new model: the old bars, tokens and notes go; the text is asked again. A
        session of this model (`restore`) brings back its prompt, clicked ids included,
        and its switches."""
        self.asking.forget()
        self.shown_id = 0
        self.vocab_size = summary.info["vocab_size"]
        self._clear_results()
        self.loading.show_loading(False)
        if restore is not None:
            for name in ("k", "temperature", "direct", "by_id", "hold_axis"):
                setattr(self.state, name, getattr(restore, name))
            self.prompt.parts = list(restore.prompt.parts)
            self._show_prompt()
        else:
            # Clicked ids name tokens of the old vocabulary: keep the text, forget the ids.
            self.prompt.parts = [(self.prompt.text, None)] if self.prompt.text else []
        self.text.setEnabled(summary.text_enabled)
        # Without blocks the direct path is the whole model: no choice of path to offer.
        for radio in (self.full, self.direct):
            radio.setVisible(summary.info["kind"] == "transformer")
        self._say(summary.text_disabled_reason or "")
        if summary.text_enabled and self.text.toPlainText().strip():
            self.run()

    @property
    def results(self) -> list:
        """The last answer's hits, by score."""
        return self.last.results if self.last is not None else []

    def _clear_results(self) -> None:
        self.shown = []
        self.last = None
        self.tokens.setText("")
        self.caption.setText("")
        self._say("")
        self.logit_chart.clear_bars()
        self.prob_chart.clear_bars()
        self.charts.hide()

    # --- the prompt -------------------------------------------------------------------------
    def set_text(self, text: str) -> None:
        """The prompt as plain text (a lesson step, a test); the box follows, one request goes."""
        self.prompt.set_text(text)
        self._show_prompt()
        self.run()

    def _text_edited(self) -> None:
        self.prompt.set_text(self.text.toPlainText())
        self.timer.start()

    def append_token(self, row: int) -> None:
        """Step through generation: append the clicked bar's token, by its id."""
        if 0 <= row < len(self.shown):
            hit = self.shown[row]
            self.prompt.append_token(hit.id, hit.text)
            self._show_prompt()
            self.run()

    def _show_prompt(self) -> None:
        self.text.blockSignals(True)  # the prompt already holds the ids the box cannot show
        self.text.setPlainText(self.prompt.text)
        self.text.blockSignals(False)
        self.text.moveCursor(self.text.textCursor().MoveOperation.End)

    def run(self) -> None:
        self.timer.stop()
        if not self.prompt.text.strip():
            self._say("Type some text: the model predicts the token that comes after it.")
            return
        if self.state.direct or self.language_model_ready():
            self.asking.ask(rq.Logits(text=self.prompt.request_prompt(), k=self.state.k,
                                      temperature=self.state.temperature, direct=self.state.direct))

    # --- results ------------------------------------------------------------------------------
    def on_result(self, result: LogitsResult) -> None:
        self.last = result
        self.shown_id = self.asking.id
        self._say("  ".join(result.notes))
        shown = " | ".join(label for _, label in result.tokens[-60:])
        more = f"… ({len(result.tokens):,} tokens) " if len(result.tokens) > 60 else ""
        self.tokens.setText(f"The model sees {len(result.tokens)} token(s): {more}{shown}")
        self._draw()

    def _draw(self) -> None:
        """The bars of the last answer, in the order and scale the switches ask for."""
        result = self.last
        if result is None:
            return
        self.shown = sorted(self.results, key=lambda r: r.id) if self.state.by_id else list(self.results)
        labels = [r.token for r in self.shown]
        logits, probs = [r.logit for r in self.shown], [r.prob for r in self.shown]
        self.logit_chart.set_bars(labels, logits, logit_labels(logits))
        # Drawn in percent, so the axis reads as the labels do; held, 0–100 % (long bars carry their labels inside).
        self.prob_chart.set_bars(labels, [100 * p for p in probs], percent_labels(probs),
                                 (0.0, 100.0) if self.state.hold_axis else None)
        self.prob_chart.set_title(f"Probabilities, T = {result.temperature:g}")
        self.charts.show()
        path = "the full model" if result.path == "full" else "the direct path (embedding → head, no blocks)"
        total = sum(probs)
        if len(self.shown) >= self.vocab_size:
            share = f"These {len(self.shown)} bars are the whole vocabulary, so they sum to 100%."
        else:
            share = (f"These {len(self.shown)} bars hold {percent_labels([total])[0]} of it; "
                     "the other tokens share the rest.")
        order = " Bars in token-id order." if self.state.by_id else ""
        self.caption.setText(
            f"Next-token scores from {path}. Probabilities are a softmax over all {self.vocab_size:,} tokens "
            f"at temperature T = {result.temperature:g}. "
            f"{share}{order} Click a bar to append that token."
        )
