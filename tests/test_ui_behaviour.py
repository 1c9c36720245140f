"""Behaviour the window must keep when settings, models and modes change under it
(issue 20): settings fitted to a new model, the lens without its final norm, the map's
selection, completion popups, and the Neighbours tab saying what it shows."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from embviz.state.tabs import MapState
from embviz.ui.panels.map.names import SELECTION_SET
from embviz.ui.plots.map_select import rectangle
from helpers import wait_for


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
    # The user's k = 50 and whole words are still theirs: another small model is fitted (and told) again.
    assert state.fit_to_model(max_clusters=5, word_rows=0) == said and (state.clusters_k, state.subset) == (5, "all")


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
    assert panel.view.ids.size == 6  # lookup6's six rows are its whole words (no space marker: every token is one)
    assert panel.subset.currentData() == panel.state.subset


# --- the map selection --------------------------------------------------------------------------
def select_everything(panel) -> None:
    (x0, x1), (y0, y1) = panel.view.vb.viewRange()
    panel.view.select_polygon(rectangle(x0, y0, x1, y1))
    assert len(panel.state.selection) > 100 and SELECTION_SET in panel.view.word_set_names()


def selection_gone(panel) -> bool:
    return not panel.state.selection and SELECTION_SET not in panel.view.word_set_names()


@pytest.mark.default_model
def test_the_map_selection_is_cleared_by_esc_an_empty_click_a_mode_switch_and_a_new_map(qtbot, smol):
    panel = smol.map_panel
    view = panel.view
    panel.drag_mode.setCurrentIndex(panel.drag_mode.findData("rect"))
    select_everything(panel)
    view.setFocus()
    QTest.keyClick(smol.windowHandle(), Qt.Key.Key_Escape)  # through the window's shortcuts, as a real key
    assert selection_gone(panel)

    select_everything(panel)
    empty = view.mapFromScene(view.vb.mapViewToScene(QPointF(*view.coords.max(0).tolist())))
    empty.setX(empty.x() + 40)  # right of every point
    assert view.nearest_at(view.mapToScene(empty)) < 0
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=empty)
    assert selection_gone(panel)

    select_everything(panel)
    panel.drag_mode.setCurrentIndex(panel.drag_mode.findData("lasso"))
    assert selection_gone(panel)

    select_everything(panel)
    panel.subset.setCurrentIndex(panel.subset.findData("words"))  # a new PCA of other rows
    wait_for(qtbot, lambda: "PCA of" in panel.status.text() and "49,152" not in panel.status.text(), 60_000)
    assert selection_gone(panel)


@pytest.mark.default_model
def test_a_cancelled_tsne_brings_the_last_map_back_with_its_colours(qtbot, smol):
    panel = smol.map_panel
    view = panel.view
    panel.colour_by.setCurrentIndex(panel.colour_by.findData("kind"))
    wait_for(qtbot, lambda: view.colour_codes() is not None, 60_000)
    panel.method.setCurrentIndex(panel.method.findData("tsne"))
    panel.run_projection()
    # t-SNE's live picture of other rows (as its first preview would be), then Cancel.
    preview_ids = np.arange(500)
    panel.on_progress(0.1, "t-SNE", (preview_ids, np.zeros((500, 2), np.float32)))
    assert view.ids.size == 500
    qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    wait_for(qtbot, lambda: "Cancelled" in panel.status.text(), 60_000)
    assert view.ids.size == 49152
    wait_for(qtbot, lambda: view.colour_codes() is not None, 60_000)
    assert panel.colour_by.currentData() == "kind"


@pytest.mark.default_model
def test_a_tsne_behind_another_tab_draws_its_latest_picture_when_the_map_is_shown(qtbot, smol):
    panel = smol.map_panel
    view = panel.view
    panel.method.setCurrentIndex(panel.method.findData("tsne"))
    panel.run_projection()
    smol.tabs.setCurrentWidget(smol.logits)
    for rows in (300, 400):  # two steps behind the logits tab: neither is drawn there
        panel.on_progress(0.1, "t-SNE", (np.arange(rows), np.zeros((rows, 2), np.float32)))
    assert view.ids.size == 49152
    smol.tabs.setCurrentWidget(panel)
    assert view.ids.size == 400  # the latest, at once
    panel.on_progress(0.2, "t-SNE", (np.arange(500), np.zeros((500, 2), np.float32)))
    assert view.ids.size == 500  # on screen: every step
    qtbot.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
    wait_for(qtbot, lambda: "Cancelled" in panel.status.text(), 60_000)


# --- completion popups --------------------------------------------------------------------------
def type_keys(window, text: str) -> None:
    """Keys through the window, as the keyboard sends them (an open popup gets them first)."""
    for ch in text:
        QTest.keyClick(window.windowHandle(), Qt.Key(ord(ch.upper())))


def test_a_completion_popup_lets_the_next_click_and_tab_through(qtbot, window):
    panel = window.analogies
    window.tabs.setCurrentWidget(panel)
    for field in (panel.a, panel.b, panel.c):
        field.set_vocabulary(["Paris", "␣Paris", "Parish", "France", "man", "manage", "woman"])
    qtbot.waitExposed(window)
    panel.a.setFocus()
    type_keys(window, "par")
    popup = panel.a.completer().popup()
    assert popup.isVisible()
    target = panel.b.mapTo(window, panel.b.rect().center())
    assert not popup.geometry().contains(window.mapToGlobal(target))
    QTest.mouseClick(window.windowHandle(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, target)
    assert not popup.isVisible() and QApplication.focusWidget() is panel.b
    type_keys(window, "france")
    assert (panel.a.text(), panel.b.text()) == ("par", "france")

    QTest.mouseClick(window.windowHandle(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                     panel.a.mapTo(window, panel.a.rect().center()))  # closes B's own popup
    assert QApplication.activePopupWidget() is None and QApplication.focusWidget() is panel.a
    for field in (panel.a, panel.b):
        field.clear()
    type_keys(window, "man")
    assert popup.isVisible()
    QTest.keyClick(window.windowHandle(), Qt.Key.Key_Tab)
    assert not popup.isVisible() and QApplication.focusWidget() is panel.b
    type_keys(window, "woman")
    assert (panel.a.text(), panel.b.text()) == ("man", "woman")


# --- neighbours say what they show --------------------------------------------------------------
@pytest.mark.default_model
def test_neighbours_name_a_selection_and_clear_an_old_table(qtbot, smol):
    panel = smol.neighbours
    panel.word.setText("king")
    panel.run()
    wait_for(qtbot, lambda: "␣king" in panel.heading.text() and panel.table.rowCount() == 10, 30_000)
    map_panel = smol.map_panel
    map_panel.set_selection(list(range(1000, 1100)))
    qtbot.mouseClick(map_panel.selection.neighbours_button, Qt.MouseButton.LeftButton)
    wait_for(qtbot, lambda: "selected tokens left out" in panel.heading.text(), 30_000)
    assert panel.word.text() == panel.state.word == "selection (100 tokens)"
    panel.k.setValue(5)  # asks again: the selection still, not a word typed before it
    wait_for(qtbot, lambda: panel.table.rowCount() == 5, 30_000)
    assert "selected tokens left out" in panel.heading.text()
    panel.word.setText("queen")  # typing replaces the selection
    panel.run()
    wait_for(qtbot, lambda: "␣queen" in panel.heading.text(), 30_000)
    panel.word.setText("qqqzzzxxx")
    panel.run()
    wait_for(qtbot, lambda: "not one token" in panel.message.text(), 30_000)
    assert panel.table.rowCount() == 0 and "queen" not in panel.heading.text()


def test_an_unknown_word_shows_a_busy_sign_at_once_and_never_the_old_table(qtbot, window):
    """Neighbours and Analogies: the moment a word is asked, the old answer goes and a bar
    moves; then the one sentence on what is wrong, and the bar stops."""
    window.open_model("toy4")
    wait_for(qtbot, lambda: window.summary is not None and window.summary.info["vocab_size"] == 4, 60_000)
    panel = window.neighbours
    panel.word.setText("cat")
    panel.run()
    wait_for(qtbot, lambda: panel.table.rowCount() == 3, 30_000)
    assert panel.busy.isHidden()
    panel.word.setText("zebra")
    panel.run()
    assert not panel.busy.isHidden() and panel.table.rowCount() == 0 and panel.heading.text() == "Finding the nearest tokens…"
    wait_for(qtbot, lambda: panel.message.text(), 30_000)
    assert "zebra" in panel.message.text() and panel.busy.isHidden() and panel.table.rowCount() == 0
    analogies = window.analogies
    analogies.set_words("cat", "dog", "car")
    wait_for(qtbot, lambda: analogies.table.rowCount() > 0, 30_000)
    analogies.state.c = "zebra"
    analogies.run()
    assert not analogies.busy.isHidden() and analogies.table.rowCount() == 0
    assert analogies.heading.text() == "Solving the analogy…"
    wait_for(qtbot, lambda: analogies.message.text(), 30_000)
    assert "zebra" in analogies.message.text() and analogies.busy.isHidden() and analogies.table.rowCount() == 0


# --- the lens without its final norm, and while typing ------------------------------------------
@pytest.mark.default_model
def test_the_raw_lens_claims_no_answer_and_follows_the_newest_token(qtbot, smol):
    lens = smol.lens
    smol.resize(1024, 700)  # the grid scrolls sideways once the text is long
    smol.tabs.setCurrentWidget(lens)
    lens.set_text("The capital of France is")
    wait_for(qtbot, lambda: lens.result is not None and len(lens.result.tokens) == 5, 300_000)
    assert lens.table.headerData(0, Qt.Orientation.Vertical) == "30 = output" and "own answer" in lens.caption.text()
    lens.final_norm.setChecked(False)
    wait_for(qtbot, lambda: lens.result is not None and lens.result.final_norm is False, 60_000)
    assert lens.table.headerData(0, Qt.Orientation.Vertical) == "block 30"
    assert "own answer" not in lens.caption.text() and "not even the top one" in lens.caption.text()
    lens.text.setPlainText("The capital of France is Paris, and the capital of Germany is")  # as typed
    wait_for(qtbot, lambda: lens.result is not None and len(lens.result.tokens) > 10, 60_000)
    last = len(lens.result.tokens) - 1
    grid = lens.grid
    # The columns' second fit, the scroll to the chosen cell and its bars come a frame or two later.
    wait_for(qtbot, lambda: lens.cell == (30, last) and "after “␣is”" in lens.bars.title
             and grid.viewport().rect().contains(grid.visualRect(lens.table.index(0, last))), 5_000)
    assert grid.horizontalScrollBar().maximum() > 0  # the text is wider than the grid
