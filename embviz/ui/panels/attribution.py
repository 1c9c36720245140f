"""Attribution tab: which block, and which attention head, wrote the model's answer. The
logit of one token split into the embedding's, each block's attention and MLP parts and
each head's; one head's attention pattern; pinned tokens through the layers; and two
prompts side by side with their difference."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.views import ModelSummary
from embviz.core.lm.results import AttentionResult, AttributionResult, PinnedResult
from embviz.state.tabs import AttributionState
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.panels import attribution_text as say
from embviz.ui.panels.attribution_views import AttentionView, BlocksView, PinnedView
from embviz.ui.panels.language_model import HIDDEN_SPACE_STRETCH, LanguageModelLoader, LanguageModelTab
from embviz.ui.tables import attribution_rows
from embviz.ui.widgets import folding

MAX_POSITION = 511  # the spin box's top; the core names a position past the text's end


class AttributionPanel(LanguageModelTab):
    def __init__(self, submit, cancel, language_model: LanguageModelLoader, parent=None) -> None:
        super().__init__(submit, cancel, language_model, parent)
        self.state = AttributionState()
        self.result: Any = None  # prompt A's AttributionResult on screen
        self.result_b: Any = None  # prompt B's, beside it when the two are compared
        self.pattern: Any = None  # the AttentionResult on screen
        self.pinned: PinnedResult | None = None  # on screen
        self.asking_b = Latest(submit, self.on_result_b, self.on_failed)
        self.asking_attention = Latest(submit, self.on_pattern, self.on_failed)
        self.asking_pinned = Latest(submit, self.on_pinned, self.on_failed)
        self.blocks, self.attention, self.pinned_view = BlocksView(), AttentionView(), PinnedView()
        self.pin = self.pinned_view.pin  # on its page: the tab's top rows are the split's inputs
        self._build_inputs()
        self.views = QTabWidget()
        for view, name in ((self.blocks, "Blocks and heads"), (self.attention, "Attention"),
                           (self.pinned_view, "Pinned tokens")):
            self.views.addTab(view, name)
        self.views.currentChanged.connect(lambda _: self._tell())
        self.pinned_view.changed.connect(self._tell)
        self.blocks.headChosen.connect(self.choose_head)
        self.attention.headChosen.connect(self.choose_head)
        self.sentence = QLabel("")
        self.sentence.setWordWrap(True)
        style.use_font(self.sentence)
        layout = QVBoxLayout(self)
        layout.addWidget(self.inputs[0])
        layout.addWidget(self.loading)
        layout.addWidget(self.message)
        layout.addWidget(self.views, HIDDEN_SPACE_STRETCH)
        layout.addWidget(self.sentence)
        layout.addStretch(1)
        self._clear()

    def _build_inputs(self) -> None:
        self.text, self.token, self.text_b = QLineEdit(), QLineEdit(), QLineEdit()
        self.token.setPlaceholderText("top guess")
        self.token.setToolTip("The token whose logit is split: its exact text, ␣ for a leading space; "
                              "empty: the model's top guess")
        self.position = QSpinBox()
        self.position.setRange(-1, MAX_POSITION)
        self.position.setSpecialValueText("last")
        self.compare = QCheckBox("Prompt B:")
        self.compare.setToolTip("Split the same token's logit after a second prompt, and show B − A")
        self.bindings = Bindings(self.state)
        for widget, name in ((self.text, "text"), (self.token, "token"), (self.pin, "pinned"),
                             (self.text_b, "text_b"), (self.position, "position"), (self.compare, "compare")):
            self.bindings.bind(widget, name)
        for edit in (self.text, self.token, self.pin, self.text_b):
            edit.textChanged.connect(self.timer.start)
        self.position.valueChanged.connect(self.timer.start)
        self.compare.toggled.connect(self.run)
        grid = QGridLayout()
        # Two rows: at 150 % text on a 1024 × 700 screen a third took the room the bars' axis needs.
        row: list[tuple[Any, ...]] = [(QLabel("Prompt A:"), 0, 0), (self.text, 0, 1), (QLabel("Token:"), 0, 2), (self.token, 0, 3),
               (QLabel("After:"), 0, 4), (self.position, 0, 5), (self.compare, 1, 0), (self.text_b, 1, 1, 1, 5)]
        for cell, *where in row:
            grid.addWidget(cell, *where)
        grid.setColumnStretch(1, 3)
        grid.setColumnStretch(3, 1)
        self.inputs = (folding(grid),)  # what projector mode folds with a lesson's band up: the sentence names them
        self.position.setToolTip("The position (0 = the first token) whose guess for the token after it is split")

    def inputs_widgets(self) -> list[QWidget]:
        return [self.text, self.token, self.pin, self.text_b, self.position, self.compare]

    def picture(self) -> tuple[QWidget, str]:
        return self.views, self.sentence.text()

    def table_rows(self) -> tuple[list[str], list[list[object]]] | None:
        """The split on screen: prompt A's parts and heads, with B's and B − A beside them
        when the two are compared."""
        if self.result is None:
            return None
        return attribution_rows(self.result, self.result_b)

    # --- model, text and choices -------------------------------------------------------------------
    def on_model(self, summary: ModelSummary, restore: AttributionState | None = None) -> None:
        for asking in (self.asking, self.asking_b, self.asking_attention, self.asking_pinned):
            asking.forget()
        self._clear()
        self.loading.show_loading(False)
        if restore is None:
            self.state.head_block, self.state.head = 0, -1  # another model has other blocks
        else:
            for name in ("text", "token", "position", "head_block", "head", "pinned", "compare", "text_b"):
                setattr(self.state, name, getattr(restore, name))
        self.enable_for(summary.lens_reason, self.inputs_widgets(), bool(self.state.text.strip()))

    def open_cell(self, text: str, position: int, token: str) -> None:
        """Split the logit of `token` after `position` of `text` (a lens cell's)."""
        self.state.text, self.state.position, self.state.token = text, position, say.label(token)
        self.state.head_block, self.state.head, self.state.compare = 0, -1, False
        self.run()

    def show_lesson(self, text: str, pinned: str, block: int, head: int) -> None:
        """A lesson step (or the demo): the top guess after `text` split, the attention of
        `block`'s `head` (0, −1: the top head's), `pinned` followed through the layers."""
        self.state.text, self.state.token, self.state.position, self.state.compare = text, "", -1, False
        self.state.pinned, self.state.head_block, self.state.head = pinned, block, head
        self.views.setCurrentWidget(self.blocks)
        self.run()

    def choose_head(self, block: int, head: int) -> None:
        self.state.head_block, self.state.head = block, head
        if self.result is not None:
            self.attention.show_ranking(self.result, (block, head))
            self._ask_attention()
        self.views.setCurrentWidget(self.attention)

    def _token(self) -> str | None:
        return self.state.token.strip() or None

    def _position(self) -> int | None:
        return None if self.state.position < 0 else self.state.position

    # --- requests ---------------------------------------------------------------------------------
    def missing_input(self) -> str:
        return "" if self.state.text.strip() else \
            "Type a prompt: the bars show which blocks wrote the model's guess for the token after it."

    def ask(self) -> None:
        self.asking.ask(rq.Attribution(self.state.text, self._token(), self._position()))
        self._ask_pinned()

    def _ask_pinned(self) -> None:
        tokens: list[str | int] = [*self.state.pinned_tokens()]
        if not tokens:
            self.pinned = None
            self.pinned_view.clear()
            return
        self.asking_pinned.ask(rq.PinnedTokens(self.state.text, tokens, self._position()))

    def _ask_attention(self) -> None:
        result = self.result
        self.asking_attention.ask(
            rq.Attention(self.state.text, self.state.head_block, self.state.head, result.target_id, result.position))

    # --- results ----------------------------------------------------------------------------------
    def on_result(self, result: AttributionResult) -> None:
        self.result, self.result_b = result, None
        self.views.show()
        self._say("  ".join(result.notes))
        self.token.setPlaceholderText(say.label(result.target) if not self._token() else "")
        if self.state.head_block <= 0 or self.state.head < 0:
            top = result.ranked_heads()[0]  # heads only: never an attention bias, whose head is None
            self.state.head_block, self.state.head = top.block, int(top.head or 0)
        self.attention.show_ranking(result, (self.state.head_block, self.state.head))
        self._ask_attention()
        if self.state.compare and self.state.text_b.strip():
            self.asking_b.ask(rq.Attribution(self.state.text_b, result.target_id, None))
        else:
            self.blocks.show_one(result)
            self._tell()

    def on_result_b(self, result: AttributionResult) -> None:
        if self.result is not None:
            self.result_b = result
            self.blocks.show_two(self.result, result)
            self._tell()

    def on_pattern(self, pattern: AttentionResult) -> None:
        self.pattern = pattern
        self.attention.show_pattern(pattern)
        self._tell()

    def on_pinned(self, result: PinnedResult) -> None:
        self.pinned = result
        self.pinned_view.show_pinned(result)
        self._tell()

    def _tell(self) -> None:
        """The sentence of the page on screen, under the pages: one line of room for all three."""
        page: Any = self.views.currentWidget()  # each page says its own sentence
        self.sentence.setText(page.sentence if self.result is not None else "")

    def _clear(self) -> None:
        self.result = self.result_b = self.pattern = self.pinned = None
        self.views.hide()  # no empty axes before an answer
        self.sentence.setText("")
        self._say("")
