"""The Directions tab in the window: the core's numbers for a ranked direction, its words placed
and a WEAT test; a missing word in one sentence; its state through a session; and the lesson
steps saying the numbers their tabs show."""

from __future__ import annotations

import pytest

from embviz.bridge import requests as rq
from embviz.bridge.handlers import run_request
from embviz.state.lesson_tour import STEPS
from embviz.state.session import load_session

from helpers import wait_for

pytestmark = pytest.mark.default_model


def opened(qtbot, window):
    window.show_tab("directions")
    panel = window.panel_named("directions")
    qtbot.waitUntil(lambda: panel.shown is not None and panel.weat.shown is not None, timeout=120_000)
    return panel


def test_he_she_ranks_the_vocabulary_as_the_core_does(qtbot, smol, default_model):
    panel = opened(qtbot, smol)
    assert (panel.state.start, panel.state.end) == ("he", "she")
    expected = run_request(default_model, rq.Direction(start="he", end="she", top=20, words=panel.state.words.split()))
    shown = panel.shown
    assert [h.id for h in shown.toward] == [h.id for h in expected.toward]
    assert [h.id for h in shown.away] == [h.id for h in expected.away]
    assert panel.ends.rows[0] == (expected.away[0].token, round(expected.away[0].score, 3),
                                  expected.toward[0].token, round(expected.toward[0].score, 3))
    assert expected.toward[0].token == "␣she" and expected.away[0].token == "␣he"
    assert f"{expected.ranked:,} whole words ranked" in panel.headline.text()
    assert f"DirectBias of the {len(expected.placed)} placed words: {expected.direct_bias:.3f}" in panel.bias.text()
    assert "homemaker" in panel.bias.text()  # two tokens here: named as left out
    assert panel.strip.words == [p.word for p in expected.placed]
    assert panel.strip.cosines == pytest.approx([p.cosine for p in expected.placed])
    assert len(panel.strip.labels) == len(expected.placed)

    # Pairs, by Bolukbasi's first principal component: its explained share in the headline.
    panel.state.pca = True
    panel.state.source = "pairs"
    wait_for(qtbot, lambda: panel.shown is not None and panel.shown.kind == "pca", 60_000)
    pca = run_request(default_model, rq.Direction(pairs=panel.state.pair_list(), pca=True, top=20,
                                                  words=panel.state.words.split()))
    assert f"3 pairs (first principal component, {pca.explained:.1%} of the variance)" in panel.headline.text()
    assert [h.id for h in panel.shown.toward] == [h.id for h in pca.toward]

    # A second direction: the placed words on a scatter, x the first, y the second.
    panel.state.second = True
    wait_for(qtbot, lambda: panel.second_shown is not None, 60_000)
    small_big = run_request(default_model, rq.Direction(start="small", end="big", top=1,
                                                        words=[p.word for p in panel.shown.placed]))
    assert panel.scatter.isVisible() and list(panel.scatter.named.values()) == [p.word for p in small_big.placed]
    assert list(panel.scatter.ys) == pytest.approx([p.cosine for p in small_big.placed])


def test_a_weat_run_shows_the_cores_effect_size_and_p(qtbot, smol, default_model):
    panel = opened(qtbot, smol)
    weat = panel.weat
    expected = run_request(default_model, rq.Weat(test=7))
    assert (weat.shown.effect_size, weat.shown.p_value, weat.shown.exact) == \
        (expected.effect_size, expected.p_value, True)
    text = weat.numbers.text()
    assert f"d = {expected.effect_size:.3f} (population std over X∪Y, as WEFE)" in text
    assert f"p = {expected.p_value:.4g} (exact, over all {expected.permutations:,} partitions)" in text
    assert weat.chart.count == len(expected.associations_x) + len(expected.associations_y) == 16
    assert weat.chart.texts[0] == f"{expected.associations_x[0].s:+.3f}"
    assert "None dropped" in weat.sets_line.text()

    # The baseline beside ␣Monday–␣Tuesday, in one line.
    baseline = run_request(default_model, rq.CosineBaseline())
    wait_for(qtbot, lambda: "Monday" in weat.baseline_line.text(), 60_000)
    assert f"mean cosine of {baseline.mean_cosine:.3f}" in weat.baseline_line.text()
    assert f"{baseline.pairs:,} pairs" in weat.baseline_line.text()

    # Sets of one's own: a word the vocabulary lacks is dropped and named.
    weat.state.weat_test = 0
    weat.state.x = "math algebra xqzzv"
    weat.run()
    wait_for(qtbot, lambda: weat.shown is not None and weat.shown.name == "WEAT", 60_000)
    own = run_request(default_model, rq.Weat(x=["math", "algebra", "xqzzv"], y=weat.state.y.split(),
                                             a=weat.state.a.split(), b=weat.state.b.split()))
    assert weat.shown.effect_size == own.effect_size and "X: xqzzv" in weat.sets_line.text()


def test_a_word_the_vocabulary_lacks_gets_one_sentence(qtbot, smol):
    panel = opened(qtbot, smol)
    panel.state.start = "zzqxv"
    panel.run()
    wait_for(qtbot, lambda: panel.message.isVisible(), 60_000)
    message = panel.message.text()
    assert "'zzqxv'" in message and "5 tokens" in message and message.count(". ") == 0 and message.endswith(".")
    assert panel.shown is None and panel.ends.rowCount() == 0 and panel.strip.words == []
    panel.state.start = "he"
    panel.run()
    wait_for(qtbot, lambda: panel.shown is not None, 60_000)
    assert not panel.message.isVisible()


def test_the_state_round_trips_through_a_session(qtbot, smol, tmp_path):
    panel = opened(qtbot, smol)
    state = panel.state
    state.source, state.pairs, state.pca, state.words = "pairs", "man:woman, boy:girl", True, "nurse doctor"
    state.second, state.second_start, state.second_end, state.weat_test = True, "cold", "hot", 3
    path = smol.save_session(tmp_path / "directions.embviz")
    back = load_session(path)["directions"]
    assert back == state and back.pair_list() == [("man", "woman"), ("boy", "girl")]


def _step(window, qtbot, title: str, ready, timeout=120_000) -> None:
    window.go_to_step([s.title for s in STEPS].index(title))
    wait_for(qtbot, lambda: window.summary is not None and not window.load_progress.isVisible() and ready(), timeout)


def _text(title: str) -> str:
    return next(s.text for s in STEPS if s.title == title)


def test_the_lesson_steps_say_the_numbers_their_tabs_show(qtbot, window):
    an = window.analogies
    allowed, excluded = "man : doctor :: woman : ?, inputs allowed", "man : doctor :: woman : ?, inputs excluded"
    _step(window, qtbot, allowed, lambda: an.table.rowCount() and "inputs allowed" in an.heading.text()
          and "doctor" in an.heading.text())
    token, _id, score = an.table.rows[0]
    assert token == "␣doctor   ← an input" and f"␣doctor itself ({score:.3f})" in _text(allowed)
    _step(window, qtbot, excluded, lambda: an.table.rowCount() and "(inputs excluded)" in an.heading.text())
    token, _id, score = an.table.rows[0]
    assert f"{token} ({score:.3f})" in _text(excluded) and token == "␣physician"

    panel = window.panel_named("directions")
    _step(window, qtbot, "The random baseline", lambda: "Monday" in panel.weat.baseline_line.text())
    assert panel.isVisible() and panel.pages.currentWidget() is panel.weat
    base, pair = panel.weat.baseline.mean_cosine, panel.weat.pair_cosine
    assert f"mean cosine of {base:.3f}" in _text("The random baseline") and f"is {pair:.3f}" in _text("The random baseline")
    assert f"{base:.3f}" in panel.weat.baseline_line.text() and f"{pair:.3f}" in panel.weat.baseline_line.text()

    drift = window.panel_named("drift")
    _step(window, qtbot, "Static and contextual: ␣bank", lambda: drift.result is not None, 300_000)
    r = drift.result
    said = _text("Static and contextual: ␣bank")
    assert f"cosine {r.between[0]:.3f}" in said and f"is {r.between[-1]:.3f}" in said and f"{r.baseline[-1]:.3f}" in said

    _step(window, qtbot, "A direction: he → she", lambda: panel.shown is not None and panel.shown.described == "he → she"
          and [p.word for p in panel.shown.placed] == ["doctor", "nurse", "engineer", "teacher"])
    placed = {p.word: p.cosine for p in panel.shown.placed}
    said = _text("A direction: he → she")
    assert f"({panel.shown.ranked:,})" in said and f"is {panel.shown.direct_bias:.3f}" in said
    assert all(f"␣{w} {placed[w]:.3f}" in said for w in ("nurse", "engineer", "doctor"))
    assert panel.strip.words == list(placed)

    _step(window, qtbot, "WEAT 8: science vs arts", lambda: panel.weat.shown is not None
          and panel.weat.shown.name.startswith("WEAT 8"))
    found = panel.weat.shown
    said = _text("WEAT 8: science vs arts")
    assert f"d = {found.effect_size:.3f}" in said and f"p = {found.p_value:.4f}" in said
    assert f"all {found.permutations:,} partitions" in said and found.exact
    assert f"p = {found.p_value:.4g}" in panel.weat.numbers.text()
