"""The full language model behind the logits, lens and drift tabs: built once per
model by a job of its own (progress, cancel), whichever tab asks first; every tab
that asked is told when it is there, fails or is cancelled."""

from __future__ import annotations

from typing import Callable, Protocol

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from embviz import requests as rq

LOADING_TEXT = "Loading the language model… (once per model)"


class NeedsLanguageModel(Protocol):
    def on_language_model(self) -> None: ...
    def on_language_model_failed(self, message: str) -> None: ...
    def on_language_model_cancelled(self) -> None: ...


class LanguageModelLoader:
    def __init__(self, submit: Callable[[rq.Request], int]) -> None:
        self.submit = submit
        self.request_id = 0
        self.needed = False  # the model on screen has a full model that is not built yet
        self.waiting: list[NeedsLanguageModel] = []

    def on_model(self, summary) -> None:
        self.request_id = 0
        self.waiting = []
        self.needed = bool(summary.lm_needed)

    def ensure(self, panel: NeedsLanguageModel) -> None:
        """Build the full model for `panel`, unless a build is already on its way."""
        if panel not in self.waiting:
            self.waiting.append(panel)
        if not self.request_id:
            self.request_id = self.submit(rq.LoadLanguageModel())

    def _ended(self, rid: int) -> list[NeedsLanguageModel]:
        if rid != self.request_id:
            return []
        self.request_id = 0
        waiting, self.waiting = self.waiting, []
        return waiting

    def finished(self, rid: int) -> None:
        if rid == self.request_id:
            self.needed = False
        for panel in self._ended(rid):
            panel.on_language_model()

    def failed(self, rid: int, message: str) -> None:
        for panel in self._ended(rid):
            panel.on_language_model_failed(message)

    def cancelled(self, rid: int) -> None:
        for panel in self._ended(rid):
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
