"""Saving a session and opening one: the model, the map as drawn, every tab's inputs.

A part of `MainWindow` (see main_window.py), kept in a room of its own."""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from embviz.bridge import requests as rq
from embviz.state.session import SUFFIX, ModelRef, Session, SessionError, load_session, save_session
from embviz.ui import style
from embviz.ui.window_host import WindowHost


class SessionsMixin(WindowHost):
    def session_state(self) -> Session | None:
        """Every tab's state and the model they belong to; None with no model open."""
        if self.summary is None:
            return None
        source = self.model_source
        if source and os.path.exists(source):
            source = os.path.abspath(source)  # re-opened from anywhere
        custom = {name: words for name, words in self.settings.word_sets.items() if name not in self.map_panel.presets}
        states = {key: panel.snapshot() if hasattr(panel, "snapshot") else panel.state
                  for key, panel in self.panels().items()}
        return Session(
            model=ModelRef(source=source, name=self.summary.info["name"], fingerprint=self.summary.fingerprint),
            states=states, custom_sets=custom, tab=self.tab_key(), text_scale=style.text_scale(),
        )

    def _keep_tabs(self) -> None:
        """Before another model replaces the one on screen: its tabs as the user left them
        (the lesson's borrowed ones given back first), for when it comes back."""
        session = self._before_lesson if self._before_lesson is not None else self.session_state()
        if session is not None and session.model.fingerprint == getattr(self.summary, "fingerprint", None):
            self.kept_tabs.keep(session)

    def save_session(self, path: str | Path) -> Path | None:
        session = self.session_state()
        return None if session is None else save_session(session, path)

    def save_session_dialog(self) -> None:
        if self.summary is None:
            self.show_message("Nothing to save yet: open a model first.")
            return
        name = f"embviz-{self.summary.info['name']}{SUFFIX}".replace(" ", "-").replace("/", "-")
        self._save_as("session", name, f"embviz session (*{SUFFIX})", self.save_session, title="Save session")

    def open_session_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open session", str(Path.home()), f"embviz session (*{SUFFIX});;All files (*)")
        if path:
            self.open_session(path)

    def open_session(self, path: str | Path) -> bool:
        """Check the file, open its model if another is on screen (checking that it is the
        same table), then restore every tab at once. False, with one message and nothing
        changed, for a session that cannot be restored."""
        try:
            session = load_session(path)
            if (missing := session.model.missing_file()) is not None:
                raise SessionError(missing)
        except SessionError as exc:
            self._open_failed("Could not open the session", str(exc))
            return False
        name = Path(path).name
        busy = self.load_progress.isVisible()
        # Already on screen (exactly: a session from another device is checked by the worker).
        if self.summary is not None and not busy and session.model.fingerprint == self.summary.fingerprint:
            self._restore(self.summary, session, name)
            return True
        self.open_model(session.model.source, expect=session.model.expect())
        self._session = (session, name)
        return True

    def _open_failed(self, title: str, message: str) -> None:
        """A model or session that could not be opened: in the status bar and in a box,
        non-modal, so the window stays usable (and tests and demos never block on it)."""
        self.last_error = message
        self.show_message(message, 30000)
        box = QMessageBox(QMessageBox.Icon.Warning, title, message, parent=self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    def _restore(self, summary, session: Session, name: str) -> None:
        self._session = None
        for channel in (rq.Project.channel, rq.Benchmark.channel):
            self.worker.cancel(channel)  # a map or benchmark of the state being replaced
        problems = self.map_panel.merge_word_sets(session.custom_sets)
        style.set_text_scale(session.text_scale)  # first: the map's zoom is set for the layout it makes
        self._show_model(summary, session)
        self.show_tab(session.tab)
        second = session["compare"].source
        if second is not None:
            self.open_comparison(second, show=False)
        projection = session["map"].projection
        self.show_message(f"Session {name} restored: {summary.info['name']}, " + (
            f"the map of {len(projection.ids):,} rows as saved" if projection is not None
            else "no saved map (drawing one)") + (f". {problems}" if problems else "."), 20000)

