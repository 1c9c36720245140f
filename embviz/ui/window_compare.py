"""File ▸ Compare with…: a second model beside the first, or the first's own output head
beside its input table, for the Compare tab.

A part of `MainWindow` (see main_window.py), kept in a room of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.core.lessons import EXAMPLES
from embviz.core.table.results import ONE_TABLE
from embviz.state.tabs import OWN_OUTPUT
from embviz.ui.window_files import ask_folder, ask_hub_id
from embviz.ui.window_host import WindowHost

DEFAULT_SOURCE = ""  # how LoadComparison names the default model (None means no second model)


OWN_OUTPUT_TITLE = "Its own output table (head)"


def source_name(source: str) -> str:
    if source == OWN_OUTPUT:
        return "the output table (head)"
    return Path(source).name if source else "the default model"


class CompareMixin(WindowHost):
    def _build_compare_menu(self, file_menu: QMenu) -> None:
        menu = file_menu.addMenu("Compare with…")
        for text, slot in (("File…", self.compare_file_dialog), ("Folder…", self.compare_folder_dialog),
                           ("Hub id…", self.compare_hub_dialog)):
            self._action(menu, text, None, slot)
        menu.addSeparator()
        own = self._action(menu, OWN_OUTPUT_TITLE, None, lambda: self.open_comparison(OWN_OUTPUT))
        menu.setToolTipsVisible(True)  # a tied model's entry says why it is off
        menu.aboutToShow.connect(lambda: self._offer_own_output(own))
        menu.addSeparator()
        self._action(menu, "Default model (SmolLM2-135M)", None, lambda: self.open_comparison(DEFAULT_SOURCE))
        for name, (*_, title, _) in EXAMPLES.items():
            action = QAction(title, self)
            action.triggered.connect(lambda _checked=False, n=name: self.open_comparison(n))
            menu.addAction(action)

    def _offer_own_output(self, action: QAction) -> None:
        """The head's entry only for an open untied model: a tied one's head is its input table."""
        tied = self.summary is None or self.summary.info["tied"]
        action.setEnabled(not tied)
        action.setToolTip(ONE_TABLE if self.summary is not None and tied else "")

    def compare_file_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Compare with a model file", str(Path.home()))
        if path:
            self.open_comparison(path)

    def compare_folder_dialog(self) -> None:
        if path := ask_folder(self, "Compare with a Hugging Face model folder"):
            self.open_comparison(path)

    def compare_hub_dialog(self) -> None:
        if repo := ask_hub_id(self, "Compare with a hub id", "Hugging Face id (from the local cache):"):
            self.open_comparison(repo)

    def open_comparison(self, source: str, show: bool = True) -> int:
        """Open `source` beside the model on screen (and show the Compare tab); the first model
        stays whatever happens. Returns the request's id (0 with no first model)."""
        if self.summary is None:
            self.show_message("Open a model first: the second is compared with it.")
            return 0
        if show:
            self.tabs.setCurrentWidget(self.compare)
        self.compare.opening(source_name(source))
        self._comparison_source = source
        request = (rq.LoadComparison(against="output") if source == OWN_OUTPUT
                   else rq.LoadComparison(source=source, device=self.device, tables=self.compare.state.table))
        return self.comparison_opening.ask(request)

    def _build_comparison_opening(self) -> None:
        self._comparison_source = ""  # of the newest LoadComparison
        self.comparison_opening = Latest(
            self.submit, self._comparison_opened, self._comparison_failed,
            lambda: self._comparison_failed("Opening the model to compare with was cancelled."),
            lambda *progress: self.compare.progressed(*progress))

    def _comparison_opened(self, summary: Any) -> None:
        """The second model is open: Compare scores it, and every tab that also shows it is told."""
        self.compare.on_comparison(self._comparison_source, summary)
        for panel in self.panels().values():
            if (opened := getattr(panel, "on_second_model", None)) is not None:
                opened(summary)

    def _comparison_failed(self, message: str) -> None:
        self.last_error = message
        self.compare.open_failed(message)
        self.show_message(message, 30000)

    def lesson_compare(self, source: str, k: int, focus: str) -> None:
        """A lesson's comparison, its whole list and its word in focus; what is already
        open or computed is not asked again."""
        panel = self.compare
        panel.state.low, panel.state.high, panel.state.token = 0.0, 1.0, focus
        same_scores = panel.view is not None and panel.view.k == k
        panel.state.k = k
        if panel.state.source != source:
            self.open_comparison(source)
        elif same_scores:
            panel.show_token(focus)
        else:
            panel.run()
