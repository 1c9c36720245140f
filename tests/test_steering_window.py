"""The Steering tab in the real window (pytest-qt, offscreen): its bars, watched tokens and layer
curve are the handlers' own answers to the same requests, and a bad input is one sentence."""

from __future__ import annotations

import pytest

from embviz.bridge import requests as rq
from embviz.bridge.handlers.lm import direction_layers, steer
from embviz.ui import style

from helpers import wait_for

DOCTOR = "The doctor said that"


def _steering(qtbot, window):
    window.open_model(None)
    wait_for(qtbot, lambda: window.summary is not None, 120_000)
    window.show_tab("steering")
    return window.panel_named("steering")


@pytest.mark.default_model
def test_the_bars_before_and_after_are_the_handlers_answer(qtbot, window, default_model):
    panel = _steering(qtbot, window)
    panel.show_lesson({"text": DOCTOR, "start": "he", "end": "she", "layer": 10, "alpha": 2.0})
    wait_for(qtbot, lambda: panel.result is not None and panel.layers_result is not None, 300_000)
    default_model.language_model()  # the handler runs on a built model, as the window's worker does
    direct = steer(default_model, rq.Steer(text=DOCTOR, start="he", end="she", layer=10, alpha=2.0, k=10),
                   lambda *_: None)
    shown = panel.result
    assert [s.id for s in shown.before] == [s.id for s in direct.before]
    assert [s.id for s in shown.after] == [s.id for s in direct.after]
    assert [s.prob for s in shown.after] == pytest.approx([s.prob for s in direct.after], abs=1e-6)
    # The charts draw those numbers, in percent, in that order.
    before, after = panel.before_chart, panel.after_chart
    assert before.series[0][2] == pytest.approx([100 * s.prob for s in direct.before], abs=1e-4)
    assert after.series[0][2] == pytest.approx([100 * s.prob for s in direct.after], abs=1e-4)
    assert after.labels[0] == "␣she" and before.labels[0] == "␣the"
    assert before.shown_range == after.shown_range  # one axis: bar lengths compare across the charts
    # The watched tokens, before → after: he falls, she rises, as the handler says.
    he, she = direct.watched
    assert (he.label, she.label) == ("␣he", "␣she") and she.prob_after > 2 * she.prob_before
    line = panel.watched.text()
    assert "␣he 3.52" in line and "␣she 7.53" in line and "29.47" in line, line
    assert f"{direct.scale:.1f}" in panel.added.text() and f"{direct.added_norm:.1f}" in panel.added.text()
    assert direct.alpha_units in panel.added.text()

    # The curve: one point a layer, each the handler's cosine.
    layers = direction_layers(default_model, rq.DirectionLayers(text=DOCTOR, start="he", end="she"), lambda *_: None)
    points = panel.curve.points()
    assert [x for x, _ in points] == list(range(len(layers.layer_names))) == list(range(31))
    assert [y for _, y in points] == pytest.approx(layers.cosines, abs=1e-6)
    assert panel.curve.marked == 10
    names = dict(panel.curve.plot.getPlotItem().getAxis("bottom")._tickLevels[0])
    assert names[0] in ("embedding", "emb") and names[30] == "block 30"

    # α = 0: the two charts are the same bars.
    panel.state.alpha = 0.0
    wait_for(qtbot, lambda: panel.result is not None and panel.result.alpha == 0.0, 300_000)
    assert after.series[0][2] == before.series[0][2]


@pytest.mark.default_model
def test_a_bad_direction_is_one_sentence_and_no_bars(qtbot, window):
    panel = _steering(qtbot, window)
    panel.show_lesson({"text": DOCTOR, "start": "he", "end": "he", "layer": 10, "alpha": 2.0})
    wait_for(qtbot, lambda: panel.message.isVisible() and panel.message.text(), 300_000)
    text = panel.message.text()
    assert panel.message.styleSheet() == style.ERROR_STYLE and text.count(". ") == 0 and text.endswith("."), text
    assert panel.result is None and panel.charts.isHidden() and panel.before_chart.count == 0
    panel.state.end = "she"  # fixed: the bars come back and the message goes
    wait_for(qtbot, lambda: panel.result is not None, 300_000)
    assert not panel.message.isVisible() and panel.after_chart.count == 10
