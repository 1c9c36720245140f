"""Helpers the window's tests share (their fixtures are in conftest.py)."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication


def wait_for(qtbot, predicate, timeout=120_000):
    qtbot.waitUntil(lambda: bool(predicate()), timeout=timeout)


def wait_until_idle(qtbot, worker, timeout=60_000):
    """Wait until no request is queued or running on any lane of `worker`, then deliver the
    end signals already posted: after this no request can end any more, late or not."""
    qtbot.waitUntil(lambda: all(not lane.pending and lane.running is None for lane in worker._lanes.values()),
                    timeout=timeout)
    QCoreApplication.processEvents()


def menu_action(menu, text: str):
    """The action whose text starts with `text`, searched through submenus."""
    for action in menu.actions():
        if action.menu() is not None and (found := menu_action(action.menu(), text)) is not None:
            return found
        if action.text().startswith(text):
            return action
    return None
