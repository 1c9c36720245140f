"""The full language model behind the logits, lens and drift tabs: built once per
model by a job of its own (progress, cancel), whichever tab asks first; every tab
that asked is told when it is there, fails or is cancelled."""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.views import ModelSummary
from embviz.bridge.worker import Reply
from embviz.ui import style

LOADING_TEXT = "Loading the language model… (once per model)"
# A tab's answer area against a trailing stretch that holds the space while the answer is
# hidden: the messages then stay at the top rather than float mid-tab.
HIDDEN_SPACE_STRETCH = 100


class LanguageModelLoader:
    def __init__(self, submit: Callable[[rq.Request, Reply], int]) -> None:
        self.building = Latest(submit, self._finished, self._failed, self._cancelled)
        self.needed = False  # the model on screen has a full model that is not built yet
        self.waiting: list[LanguageModelTab] = []

    def on_model(self, summary: ModelSummary) -> None:
        self.building.forget()
        self.waiting = []
        self.needed = bool(summary.lm_needed)

    def ensure(self, panel: LanguageModelTab) -> None:
        """Build the full model for `panel`, unless a build is already on its way."""
        if panel not in self.waiting:
            self.waiting.append(panel)
        if not self.building.waiting:
            self.building.ask(rq.LoadLanguageModel())

    def _ended(self) -> list[LanguageModelTab]:
        waiting, self.waiting = self.waiting, []
        return waiting

    def _finished(self, _result: object = None) -> None:
        self.needed = False
        for panel in self._ended():
            panel.on_language_model()

    def _failed(self, message: str) -> None:
        for panel in self._ended():
            panel.on_language_model_failed(message)

    def _cancelled(self) -> None:
        for panel in self._ended():
            panel.on_language_model_cancelled()


class LoadingRow(QWidget):
    """A note, a busy bar and Cancel, while the full model is built."""

    def __init__(self, cancel: Callable[[str], None], parent=None) -> None:
        super().__init__(parent)
        self.note = QLabel("")
        self.note.setWordWrap(True)
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)  # building a model reports no fraction: a busy bar
        self.bar.setFixedWidth(220)
        self.cancel = QPushButton("Cancel")
        self.cancel.clicked.connect(lambda: cancel(rq.LoadLanguageModel.channel))
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.note, 1)
        row.addWidget(self.bar)
        row.addWidget(self.cancel)
        self.show_loading(False)

    def show_loading(self, on: bool, text: str = "") -> None:
        self.note.setText(text)
        self.bar.setVisible(on)
        self.cancel.setVisible(on)
        self.setVisible(bool(text) or on)  # an empty row would leave a gap


class LanguageModelTab(QWidget):
    """A tab that runs the full model (logits, lens, drift): its loading row, its message
    line, the shared build's callbacks, and asking for a new model's answer only once the
    tab is shown. Subclasses build their widgets, lay out `loading` and `message`, and say
    what is missing (`missing_input`), what to ask (`ask`) and how to empty the tab (`_clear`);
    the logits tab, whose direct path needs no full model, has a `run` of its own."""

    LOADING = LOADING_TEXT
    CANCELLED = "Loading the language model was cancelled. Edit the text to try again."
    FAILED_SUFFIX = ""  # after a failed build's message: what still works
    # How long the inputs stay still before the tab asks (a forward pass each time): a
    # subclass whose pass is longer waits longer.
    DEBOUNCE_MS = 300

    def __init__(self, submit: Callable[[rq.Request, Reply], int], cancel: Callable[[str], None],
                 language_model: LanguageModelLoader, parent=None) -> None:
        super().__init__(parent)
        self.submit = submit
        self.cancel = cancel
        self.language_model = language_model
        self.asking = Latest(submit, self.on_result, self.on_failed, progress=self.on_progress)
        self.timer = QTimer(self)  # the inputs' debounce: started by each edit, it runs the tab
        self.timer.setSingleShot(True)
        self.timer.setInterval(self.DEBOUNCE_MS)
        self.timer.timeout.connect(self.run)
        self.stale = False  # a new model's answer is still to be asked for
        self.enabled = False  # whether the model on screen can run this tab
        self.loading = LoadingRow(cancel)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        style.use_font(self.message)  # with a style sheet it would not follow the text size
        self.message.hide()

    def run(self) -> None:
        """Ask for the tab's answer, once its inputs are there and the full model is built."""
        self.timer.stop()
        self.stale = False
        if not self.enabled:
            return
        if hint := self.missing_input():
            self._clear()
            self._say(hint)
            return
        if self.language_model_ready():
            self.ask()

    def missing_input(self) -> str:
        """What to type before there is anything to run; "" when the inputs are there."""
        raise NotImplementedError

    def on_result(self, result: Any) -> None:  # each tab's own result type
        """The answer of the newest request (`asking`)."""
        raise NotImplementedError

    def on_failed(self, message: str) -> None:
        self._say(message, error=True)

    def on_progress(self, fraction: float, stage: str, preview: object) -> None:
        """A part of the answer on its way; a tab that draws as it comes overrides this."""

    def ask(self) -> None:
        """Submit the tab's request (the full model is there)."""
        raise NotImplementedError

    def _clear(self) -> None:
        raise NotImplementedError

    def enable_for(self, reason: str | None, inputs: list[QWidget], wanted: bool) -> None:
        """A new model: `reason` why this tab cannot run on it (its inputs then greyed out
        and the reason shown), or None, and then its answer asked for when shown."""
        self.enabled = reason is None
        for widget in inputs:
            widget.setEnabled(self.enabled)
        if reason is not None:
            self._say(reason)
        else:
            self.ask_when_shown(wanted)

    def ask_when_shown(self, wanted: bool) -> None:
        """A new model: run now if the tab is on screen, else once it is shown. Every
        layer of a forward pass (and, the first time, building the full model) is not
        worth paying for a tab nobody looks at."""
        self.stale = wanted
        if wanted and self.isVisible():
            self.run()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self.stale:
            self.run()

    def language_model_ready(self) -> bool:
        """True when the full model is there; else its build is asked for (once, for
        every tab waiting) and the loading row shows."""
        if not self.language_model.needed:
            return True
        self.language_model.ensure(self)
        self.loading.show_loading(True, self.LOADING)
        return False

    def on_language_model(self) -> None:
        self.loading.show_loading(False)
        self.run()

    def on_language_model_failed(self, message: str) -> None:
        self.loading.show_loading(False)
        self._say(message + self.FAILED_SUFFIX, error=True)

    def on_language_model_cancelled(self) -> None:
        self.loading.show_loading(False, self.CANCELLED)

    def _say(self, text: str, error: bool = False) -> None:
        """A note in dark grey, a problem in red; no empty line left as a gap."""
        self.message.setStyleSheet(style.ERROR_STYLE if error else style.NOTE_STYLE)
        self.message.setText(text)
        self.message.setVisible(bool(text))
