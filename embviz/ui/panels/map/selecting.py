"""The Map tab's selection: a rectangle or lasso's tokens, cleared by Esc, an empty click or a new map; exported or kept as a word set.

A part of `MapPanel` (see panel.py), kept in a room of its own."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QInputDialog

from embviz.state.settings import atomic_write_text
from embviz.ui import style
from embviz.ui.panels.map.host import MapHost
from embviz.ui.panels.map.names import SELECTION_SET
from embviz.ui.tables import rows_to_text
from embviz.ui.widgets import ask_save_path


class SelectionMixin(MapHost):
    def set_selection(self, ids: list[int]) -> None:
        """The tokens inside a drawn rectangle or lasso (or a restored session's)."""
        self.state.selection = [int(i) for i in ids]
        self._show_selection()

    def clear_selection(self) -> None:
        if self.state.selection:
            self.set_selection([])

    def _drag_mode_changed(self, mode: str) -> None:
        self.clear_selection()  # another mode is another task: the old outline's picks would linger
        self.view.set_select_mode(mode)

    def _map_clicked(self, event) -> None:
        """A click on empty map (no point under it) clears the selection."""
        if event.button() == Qt.MouseButton.LeftButton and self.view.nearest_at(event.scenePos()) < 0:
            self.clear_selection()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Esc on the map clears a selection; the window's Esc (cancel the long job) waits
        for the next press. Claimed at ShortcutOverride, so the shortcut does not fire."""
        if watched is self.view and self.state.selection and event.type() in (QEvent.Type.ShortcutOverride,
                                                                              QEvent.Type.KeyPress):
            if isinstance(event, QKeyEvent) and event.key() == Qt.Key.Key_Escape:
                event.accept()
                if event.type() == QEvent.Type.KeyPress:
                    self.clear_selection()
                return True
        return super().eventFilter(watched, event)

    def _show_selection(self) -> None:
        ids = self.view.on_map(self.state.selection).tolist()
        labels = self.view.labels
        self.selection.show_tokens([(labels[i] if i < len(labels) else f"#{i}", i) for i in ids])
        if ids:
            self.view.set_word_set(SELECTION_SET, ids, style.SELECTION_COLOR)
        else:
            self.view.remove_word_set(SELECTION_SET)

    def selection_rows(self) -> tuple[list[str], list[list[object]]]:
        return ["id", "token"], [[i, label] for label, i in self.selection.rows]

    def export_selection(self, path: str | Path) -> Path:
        path = Path(path)
        atomic_write_text(path, rows_to_text(*self.selection_rows()))
        return path

    def export_selection_dialog(self) -> None:
        path = ask_save_path(self, self.settings, "Export the selection", "embviz-selection.csv", "CSV table (*.csv)")
        if path:
            try:
                self.statusMessage.emit(f"Saved {self.export_selection(path)}")
            except OSError as exc:
                self.statusMessage.emit(f"Could not save the selection: {exc}")

    def word_set_from_selection(self) -> None:
        number = 1 + sum(name.startswith("selection ") for name in self.settings.word_sets)
        name, ok = QInputDialog.getText(self, "Word set from the selection", "Name of the set:", text=f"selection {number}")
        if ok and name.strip():
            self.add_selection_set(name.strip())

    def add_selection_set(self, name: str) -> None:
        """The selected tokens as a word set (their labels: ␣ marks the leading space)."""
        self.add_word_set(name, [label for label, _ in self.selection.rows])

