"""Behaviour the window must keep when settings, models and modes change under it
(issue 20): settings fitted to a new model, the lens without its final norm, the map's
selection, completion popups, and the Neighbours tab saying what it shows."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QHBoxLayout, QWidget

from embviz.state import MapState
from test_gui import smol, wait_for  # noqa: F401 - smol is a fixture


def collect(signal) -> list[str]:
    said: list[str] = []
    signal.connect(said.append)
    return said


# --- settings that do not fit the new model -----------------------------------------------------
def test_map_state_fits_a_model_and_names_what_changed():
    state = MapState(colour_by="cluster", clusters_k=50, subset="words")
    said = state.fit_to_model(max_clusters=5, word_rows=0)
    assert (state.clusters_k, state.subset) == (5, "all")
    assert said.count(".") == 1 and "k = 5" in said and "all rows" in said
    assert state.fit_to_model(max_clusters=5, word_rows=0) == ""  # nothing more to change


def test_cluster_k_and_whole_words_fit_a_small_lesson_model(qtbot, window):
    panel = window.map_panel
    panel.subset.setCurrentIndex(panel.subset.findData("words"))
    panel.colour_by.setCurrentIndex(panel.colour_by.findData("cluster"))
    panel.clusters_k.setValue(50)
    said = collect(panel.statusMessage)
    window.open_model("lesson:spells")
    wait_for(qtbot, lambda: panel.view.colour_codes() is not None or window.last_error, 60_000)
    assert window.last_error is None
    assert panel.clusters_k.value() == panel.state.clusters_k == 5
    assert any("k = 5" in s for s in said)
    window.open_model("lesson:lookup6")
    wait_for(qtbot, lambda: "PCA of 6 rows" in panel.status.text() or "failed" in panel.status.text(), 60_000)
    assert panel.view.ids.size == 6
    assert panel.subset.currentData() == panel.state.subset == "all"
    assert any("all rows" in s for s in said)
