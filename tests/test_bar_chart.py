"""The bar chart of the logits tab and the benchmark window: its labels, its axis, its clicks."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QPointF, Qt

from embviz.ui import style
from embviz.ui.formatting import percent_labels
from helpers import wait_for


def _decimals(label: str) -> int:
    match = re.search(r"\.(\d+)", label)
    return len(match.group(1)) if match else 0


def test_a_sharp_softmax_reads_as_bounds_not_eight_decimals():
    # T = 0.1 on SmolLM2: the top token holds all but 1e-13 of the mass.
    labels = percent_labels([1 - 1e-13, 1e-13, 3e-14])
    assert labels == ["> 99.99%", "< 0.01%", "< 0.01%"]
    assert percent_labels([0.6, 0.4 - 1e-15, 1e-15]) == ["60.00%", "40.00%", "< 0.01%"]
    assert percent_labels([0.999999, 1e-6]) == ["99.9999%", "0.0001%"]  # apart in four decimals: still numbers
    assert percent_labels([1.0]) == ["100.0%"]  # exactly all of it is not "> 99.99%"


def test_the_held_probability_axis_stops_at_100_percent_and_keeps_every_label_in_view(qtbot, window):
    window.open_model("spells")
    wait_for(qtbot, lambda: "lesson:spells" in window.model_label.full_text, 30_000)
    panel = window.logits
    window.tabs.setCurrentWidget(panel)
    panel.hold_axis.setChecked(True)
    panel.temperature.setValue(0.1)
    panel.set_text("I cast")
    wait_for(qtbot, lambda: panel.results and panel.results[0].token == "fireball", 30_000)
    chart = panel.prob_chart
    wait_for(qtbot, lambda: chart.shown_range == (0.0, 100.0) and len(chart.texts) == len(panel.results), 5_000)
    assert chart.shown_range == (0.0, 100.0)
    plot = chart.plot_rect()
    for row, text in enumerate(chart.texts):
        assert plot.contains(chart.text_rect(row)), text
    labels = chart.texts
    assert all(_decimals(label) <= 5 for label in labels) and not any(label.startswith("100.0") for label in labels)


def test_an_invisible_token_reads_as_its_code_point():
    from embviz.ui.formatting import visible_token

    assert visible_token("\ufe0f") == "U+FE0F"
    assert visible_token("\u200b") == "U+200B"
    assert visible_token("❤\ufe0f") == "❤\ufe0f" and visible_token("␣king") == "␣king"


@pytest.fixture
def chart(qtbot):
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from embviz.ui.plots.bar_chart import BarChart

    holder = QWidget()
    widget = BarChart("Probabilities", style.BAR_PROB)
    QVBoxLayout(holder).addWidget(widget)
    holder.resize(500, 300)
    holder.show()
    qtbot.waitExposed(holder)
    yield widget
    holder.close()


def test_an_invisible_token_gets_a_visible_bar_label(chart):
    chart.set_bars(["\ufe0f", "␣Paris"], [60.0, 40.0], ["60.0%", "40.0%"])
    assert chart.labels == ["U+FE0F", "␣Paris"]


def _click(qtbot, chart, x: float, row: float) -> None:
    qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=chart.point_at(x, row).toPoint())


def test_only_a_bar_or_its_label_is_clickable(qtbot, chart):
    chart.set_bars(["a", "b"], [90.0, 5.0], ["90%", "5%"], (0.0, 100.0))
    qtbot.waitUntil(lambda: len(chart.layout_now()["bars"]) == 2)  # laid out, as a click would find it
    with qtbot.assertNotEmitted(chart.barClicked, wait=50):
        _click(qtbot, chart, 70.0, 1.0)  # the empty row right of b's short bar and its text
    with qtbot.waitSignal(chart.barClicked, timeout=1000) as clicked:
        _click(qtbot, chart, 2.5, 1.0)  # on b's bar
    assert clicked.args == [1]
    value_text = chart.text_rect(1).center().toPoint()
    with qtbot.waitSignal(chart.barClicked, timeout=1000) as clicked:
        qtbot.mouseClick(chart, Qt.MouseButton.LeftButton, pos=value_text)
    assert clicked.args == [1]


def test_a_bar_too_long_for_its_text_on_a_held_axis_carries_it_inside(chart):
    chart.set_bars(["a", "b"], [99.0, 1.0], ["99.0%", "1.0%"], (0.0, 100.0))
    assert chart.layout_now()["bars"][0].contains(chart.text_rect(0))  # past 100 % there is no room
    assert chart.text_rect(1).left() > chart.layout_now()["bars"][1].right()  # a short bar's text after it
    assert chart.row_at(chart.point_at(-1.0, 0.0) - QPointF(20, 0)) == 0  # its token's label is clickable too


def test_negative_logits_keep_their_texts_inside_the_plot(chart):
    chart.set_bars(["a", "b", "c"], [-3.5, 2.0, -0.25], ["-3.50", "2.00", "-0.25"])
    plot = chart.plot_rect()
    lo, hi = chart.shown_range
    assert lo < -3.5 and hi > 2.0
    for row in range(3):
        assert plot.contains(chart.text_rect(row)), chart.texts[row]


def test_axis_ticks_are_round_numbers_within_the_range():
    from embviz.ui.plots.bar_chart import nice_ticks

    assert nice_ticks(0.0, 100.0, 5) == [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
    assert nice_ticks(-3.6, 2.4, 4) == [-2.0, 0.0, 2.0]
    assert nice_ticks(-1.5, 99.4, 2) == [0.0, 50.0]  # not 0 alone, with 100 just past the end
    assert nice_ticks(0.0, 0.0, 5) == [] and nice_ticks(0.0, 1.0, 0) == []


def test_a_narrow_chart_wraps_its_legend_and_cuts_no_name(qtbot):
    from embviz.ui.plots.bar_chart import BarChart

    chart = BarChart("Probabilities", style.BAR_PROB)
    qtbot.addWidget(chart)
    names = ["at T = 1", "kept, after top-p 0.9"]
    chart.set_groups(["a", "b"], [(names[0], style.BAR_PROB, [60.0, 40.0]), (names[1], style.BAR_KEPT, [100.0, 0.0])])
    chart.resize(900, 400)
    wide = chart.layout_now()["legend"]
    assert len({round(text.top()) for _, text, _, _ in wide}) == 1  # room for both on one line
    chart.set_text_scale(2.0)
    chart.resize(300, 400)
    narrow = chart.layout_now()["legend"]
    assert [name for _, _, name, _ in narrow] == names  # whole, not elided
    assert len({round(text.top()) for _, text, _, _ in narrow}) == 2  # one line each
    for _, text, name, _ in narrow:
        assert text.right() <= chart.width() + 1, name
        assert text.bottom() <= chart.height() + 1, name
