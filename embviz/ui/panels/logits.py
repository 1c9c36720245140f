"""Next-token logits tab: type text, see the tokens the model sees, the top-k logits
and their probabilities (softmax over the whole vocabulary); click a bar to append it.
With top-k / top-p on, a second bar a row gives each token's probability after the
filter (renormalised over the kept set); Draw samples one token and appends it, Step N.

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
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from embviz.bridge import requests as rq
from embviz.bridge.views import ModelSummary
from embviz.core.lm.results import LogitsResult, filter_phrase
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
        sampling = self._sampling()
        self._answers()
        self._lay_out(options, display, sampling)

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
        self.k.setPrefix("bars = ")
        self.k.setToolTip("How many of the most likely tokens are drawn as bars.")
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

    def _sampling(self) -> QLayout:
        """Top-k and top-p filters, the seed, Draw and Step (projector mode folds them with the rest)."""
        self.top_k = QSpinBox()
        self.top_k.setRange(0, 10_000)
        self.top_k.setPrefix("top-k = ")
        self.top_k.setSpecialValueText("top-k off")
        self.top_k.setToolTip("Keep only the k most likely tokens (ties at the k-th kept); 0 keeps every token.")
        self.top_p = QDoubleSpinBox()
        self.top_p.setRange(0.01, 1.0)
        self.top_p.setSingleStep(0.05)
        self.top_p.setDecimals(2)
        self.top_p.setPrefix("top-p = ")
        self.top_p.setToolTip("Keep the most likely tokens until their probabilities reach p (nucleus); 1.0 is off.")
        self.seed = QSpinBox()
        self.seed.setRange(0, 999_999)  # a wider box would push Draw off a projector's row
        self.seed.setPrefix("seed = ")
        self.seed.setToolTip("The same seed draws the same token; each draw moves it on by one.")
        self.steps = QSpinBox()
        self.steps.setRange(1, 200)
        self.steps.setPrefix("× ")
        self.draw_button = QPushButton("Draw")
        self.draw_button.setToolTip("Sample one token from the kept set and append it to the text.")
        self.step_button = QPushButton("Step")
        self.step_button.setToolTip("Draw and append, again and again: that many tokens.")
        for widget, attr in ((self.top_k, "top_k"), (self.top_p, "top_p"), (self.seed, "seed"), (self.steps, "steps")):
            self.bindings.bind(widget, attr)
        for w in (self.top_k, self.top_p):
            w.valueChanged.connect(self.timer.start)
        self.draw_button.clicked.connect(lambda: self.sample(1))
        self.step_button.clicked.connect(lambda: self.sample(self.state.steps))
        self.drew = QLabel("")
        self.drew.setWordWrap(True)
        style.use_font(self.drew, style.LABEL_POINT_SIZE)
        self.drew.hide()
        self._drawing_from: list | None = None  # the prompt a draw on its way will grow
        return flow_row(self.top_k, self.top_p, self.seed, self.draw_button, self.step_button, self.steps)

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

    def _lay_out(self, options: QLayout, display: QLayout, sampling: QLayout) -> None:
        # In a scroll area: on a short screen at a large text size the charts keep their
        # height and the tab scrolls, rather than squashing the bars into each other.
        content = self.content = QWidget()  # the whole tab, as a picture grabs it past the scroll
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)
        layout = QVBoxLayout(content)
        layout.addWidget(self.text)
        self.controls = (folding(options, display, sampling),)  # what projector mode folds
        self.inputs = (self.text,)  # and with a lesson's band up: the token line shows the text
        layout.addWidget(self.controls[0])
        layout.addWidget(self.loading)
        layout.addWidget(self.tokens)
        layout.addWidget(self.message)
        layout.addWidget(self.drew)
        layout.addWidget(self.charts, 1)
        layout.addWidget(self.caption)

    def picture(self) -> tuple[QWidget, str]:
        drew = self.drew.text() if self.drew.isVisible() else ""
        return self.charts, "\n".join(t for t in (self.tokens.text(), drew, self.caption.text()) if t)

    def table_rows(self) -> tuple[list[str], list[tuple]] | None:
        if not self.shown:
            return None
        kept = self._kept_by_id()
        if kept is None:
            return ["token", "id", "logit", "probability"], [(r.token, r.id, r.logit, r.prob) for r in self.shown]
        return (["token", "id", "logit", "probability", "after the filter"],
                [(r.token, r.id, r.logit, r.prob, kept[r.id]) for r in self.shown])

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
            for name in ("k", "temperature", "direct", "by_id", "hold_axis", "top_k", "top_p", "seed", "steps"):
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
        self.drew.setText("")
        self.drew.hide()
        self._drawing_from = None
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
        self._ask_logits(0)

    def sample(self, steps: int) -> None:
        """Draw `steps` tokens (Draw: one), each appended before the next."""
        self.timer.stop()
        if not self.prompt.text.strip():
            self._say("Type some text first: a token is drawn from what the model predicts after it.")
            return
        self._ask_logits(steps)

    def _ask_logits(self, steps: int) -> None:
        state = self.state
        if state.direct or self.language_model_ready():
            self._drawing_from = list(self.prompt.parts) if steps else None
            self.asking.ask(rq.Logits(text=self.prompt.request_prompt(), k=state.k, temperature=state.temperature,
                                      direct=state.direct, top_k=state.top_k, top_p=state.top_p, seed=state.seed,
                                      steps=steps))

    # --- results ------------------------------------------------------------------------------
    def on_result(self, result: LogitsResult) -> None:
        if result.drawn:
            result = self._appended(result)
        else:
            self.drew.hide()
        self.last = result
        self.shown_id = self.asking.id
        self._say("  ".join(result.notes))
        shown = " | ".join(label for _, label in result.tokens[-60:])
        more = f"… ({len(result.tokens):,} tokens) " if len(result.tokens) > 60 else ""
        self.tokens.setText(f"The model sees {len(result.tokens)} token(s): {more}{shown}")
        self._draw()

    def _appended(self, result: LogitsResult) -> LogitsResult:
        """Append a draw's tokens (unless the text changed meanwhile), say what was drawn,
        move the seed on; the distribution shown is the one the last token came from."""
        drawn = result.drawn
        if self._drawing_from == self.prompt.parts:
            for token in drawn:
                self.prompt.append_token(token.id, token.text)
            self._show_prompt()
            self.state.seed = min(drawn[-1].seed + 1, self.seed.maximum())
        self._drawing_from = None
        shown = result.last or result
        how = filter_phrase(shown.top_k, shown.top_p) or f"at T = {shown.temperature:g}, no filter"
        last = drawn[-1]
        if len(drawn) == 1:
            text = (f"Drew {last.token} (p = {last.kept_prob:.2f} {how}; {last.prob:.2f} before; "
                    f"seed {last.seed}, from {last.kept_count:,} kept tokens). It is now appended to the text.")
        else:
            text = (f"Drew {len(drawn)} tokens: {' '.join(d.token for d in drawn)} (seeds {drawn[0].seed}–{last.seed}). "
                    f"The bars: where the last, {last.token}, came from (p = {last.kept_prob:.2f} {how}).")
        self.drew.setText(text)
        self.drew.show()
        return shown

    def _kept_by_id(self) -> dict[int, float] | None:
        """Each bar's probability after the filter, by id; None with no filter and no draw."""
        result = self.last
        if result is None or result.kept_probs is None:
            return None
        return {r.id: p for r, p in zip(result.results, result.kept_probs)}

    def kept_marks(self) -> list[bool]:
        """Whether each bar on screen survived the filter (every bar, with none on)."""
        kept = self._kept_by_id()
        return [kept is None or kept[r.id] > 0 for r in self.shown]

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
        held = (0.0, 100.0) if self.state.hold_axis else None
        kept = self._kept_by_id()
        how = filter_phrase(result.top_k, result.top_p)
        if kept is None or not how:
            self.prob_chart.set_bars(labels, [100 * p for p in probs], percent_labels(probs), held)
        else:
            after = [kept[r.id] for r in self.shown]
            texts = [p if a > 0 else "dropped" for p, a in zip(percent_labels(after), after)]
            self.prob_chart.set_groups(labels, [(f"at T = {result.temperature:g}", style.BAR_PROB, [100 * p for p in probs]),
                                                (f"kept, {how}", style.BAR_KEPT, [100 * p for p in after])],
                                       held, [percent_labels(probs), texts])
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
        kept_line = ""
        if how and result.kept_count is not None and result.kept_mass is not None:
            kept_line = (f" {how[0].upper()}{how[1:]}, {result.kept_count:,} token{'s are' if result.kept_count > 1 else ' is'}"
                         f" kept ({percent_labels([result.kept_mass])[0]} of the probability), renormalised to 100% "
                         "(green): a draw picks only among them.")
        self.caption.setText(
            f"Next-token scores from {path}. Probabilities are a softmax over all {self.vocab_size:,} tokens "
            f"at temperature T = {result.temperature:g}. "
            f"{share}{order}{kept_line} Click a bar to append that token."
        )
