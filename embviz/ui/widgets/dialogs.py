"""The save dialog every export asks, remembering the folder last saved to."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QWidget

from embviz.state.settings import Settings


def ask_save_path(parent: QWidget, settings: Settings, title: str, name: str, filters: str) -> str:
    """A path the user picks to save `name` in, starting in the folder they last saved to
    (which is remembered); "" when they cancel."""
    path, _ = QFileDialog.getSaveFileName(parent, title, str(settings.export_folder / name), filters)
    if path:
        settings.set_export_folder(Path(path).parent)
    return path
