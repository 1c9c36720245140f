"""Every bar's value can be read: on hover, and printed on the bar (projector mode asks
with `set_print_values`), on the bar chart's groups and the attribution's parts chart, at
a 1024 × 700 projector with text at 150 %."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QPointF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QVBoxLayout, QWidget

from embviz.ui import style

pytestmark = pytest.mark.usefixtures("normal_text_size")

SECTIONS = ["capital-common-countries", "family", "gram3-comparative", "gram7-past-tense"]
EXCLUDED = [92.5, 70.25, 31.0, 8.0]
ALLOWED = [20.0, 11.5, 2.75, 0.0]


def _shown(qtbot, widget: QWidget, width: int = 1024, height: int = 700) -> QWidget:
    holder = QWidget()
    QVBoxLayout(holder).addWidget(widget)
    holder.resize(width, height)
    holder.show()
    qtbot.addWidget(holder)
    qtbot.waitExposed(holder)
    return holder


@pytest.fixture
def groups(qtbot):
    from embviz.ui.plots.bar_chart import BarChart

    style.set_text_scale(1.5)
    chart = BarChart("", style.BAR_LOGIT, axis_name="% correct")
    holder = _shown(qtbot, chart, 700, 420)
    chart.set_groups(SECTIONS, [("inputs excluded", style.BAR_LOGIT, EXCLUDED),
                                ("inputs allowed", style.BAR_PROB, ALLOWED)], (0.0, 100.0))
    yield chart
    holder.close()


def test_a_groups_values_are_printed_only_when_asked_and_never_overlap(groups):
    assert groups.printed_texts() == []
    groups.set_print_values(True)
    printed = groups.printed_texts()
    assert sorted(text for _, text in printed) == sorted(f"{v:.1f}" for v in EXCLUDED + ALLOWED)
    rects = [rect for rect, _ in printed]
    for i, rect in enumerate(rects):
        assert groups.rect().contains(rect.toAlignedRect()), printed[i][1]
        assert not any(rect.intersects(other) for other in rects[i + 1:]), printed[i][1]
    # Each value beside (or inside) its own bar: its middle at the bar's middle height.
    for s, values in enumerate((EXCLUDED, ALLOWED)):
        for row, value in enumerate(values):
            bar = groups.layout_now()["drawn"][s * len(SECTIONS) + row][0]
            rect = next(r for r, text in printed if text == f"{value:.1f}")
            assert abs(rect.center().y() - bar.center().y()) < 1.0
    groups.set_print_values(False)
    assert groups.printed_texts() == []


def test_hovering_either_bar_of_a_group_names_every_value_of_its_row(qtbot, groups):
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication, QToolTip

    second = groups.layout_now()["drawn"][len(SECTIONS) + 1][0]  # family, inputs allowed
    assert groups.row_at(second.center()) == 1
    assert groups.hover_text(1) == "family\ninputs excluded: 70.2\ninputs allowed: 11.5"
    point = second.center().toPoint()
    QApplication.sendEvent(groups, QHelpEvent(QEvent.Type.ToolTip, point, groups.mapToGlobal(point)))
    qtbot.waitUntil(lambda: QToolTip.text() == groups.hover_text(1), timeout=2_000)


def test_a_single_series_hover_names_the_label_and_its_shown_value(qtbot):
    from embviz.ui.plots.bar_chart import BarChart

    style.set_text_scale(1.5)
    chart = BarChart("Probabilities", style.BAR_PROB, suffix="%")
    holder = _shown(qtbot, chart, 500, 300)
    chart.set_bars(["␣Paris", "<|im_end|>"], [77.3, 4.1], ["77.3%", "4.1%"], (0.0, 100.0))
    assert chart.hover_text(0) == "␣Paris: 77.3%"
    assert [text for _, text in chart.printed_texts()] == ["77.3%", "4.1%"]  # always printed when given
    holder.close()


@pytest.fixture
def parts(qtbot):
    from embviz.ui.plots.parts_chart import PartsChart, Series

    style.set_text_scale(1.5)
    chart = PartsChart()
    holder = _shown(qtbot, chart, 620, 330)
    blocks = 30
    attention = [0.1 * ((b * 7) % 11 - 5) for b in range(blocks)]
    attention[20] = 6.98
    mlp = [0.05 * ((b * 5) % 13 - 6) for b in range(blocks)]
    mlp[29] = 3.34
    mlp[3] = -2.5
    chart.set_series(["emb"] + [str(b) for b in range(1, blocks + 1)],
                     [Series("emb", QColor("#555555"), [0.42] + [None] * blocks),
                      Series("attention", QColor("#0072B2"), [None, *attention]),
                      Series("MLP", QColor("#E69F00"), [None, *mlp])])
    qtbot.wait(50)
    yield chart
    holder.close()


def test_a_parts_bar_names_its_value_under_the_mouse(parts):
    # Block 21's attention bar: group 21, the second of three series.
    x = 21 - 0.42 + 0.84 / 3 * 1.5
    assert parts.bar_at(x, 3.0) == (21, 1)
    assert parts.hover_text(21, 1) == "block 21, attention: +6.98"
    assert parts.bar_at(x, 7.5) is None  # above the bar's end
    assert parts.hover_text(0, 0) == "the embedding, emb: +0.42"
    scene = parts.item.vb.mapViewToScene(QPointF(x, 3.0))
    assert parts.bar_at(*_view(parts, parts.mapFromScene(scene))) == (21, 1)


def _view(chart, pos: QPoint) -> tuple[float, float]:
    point = chart.item.vb.mapSceneToView(chart.mapToScene(pos))
    return point.x(), point.y()


def _check_printed(parts) -> list[str]:
    """The printed values: none over another, none cut, each a whole line of the chart's font
    (never shrunk), upright over its own bar and past its end. Their texts."""
    from PySide6.QtGui import QFontMetricsF

    assert parts.printed
    line = QFontMetricsF(style.font(style.BASE_POINT_SIZE - 1)).height()
    vb = parts.item.vb
    bars = {parts.value_text(v): [] for s in parts.series for v in s.values if v is not None}
    for k, s in enumerate(parts.series):
        for g, v in enumerate(s.values):
            if v is not None:
                bars[parts.value_text(v)].append((g - 0.42 + 0.84 / 3 * (k + 0.5), v))
    boxes = [item.sceneBoundingRect() for item in parts.printed]
    texts = [item.toPlainText() for item in parts.printed]
    for i, (box, text) in enumerate(zip(boxes, texts)):
        assert not any(box.intersects(other) for other in boxes[i + 1:]), text
        assert vb.sceneBoundingRect().contains(box), text  # not cut at the plot's edge
        assert box.width() >= line - 1 and box.height() > box.width(), text  # upright, a whole line of its font
        # Over a bar of its value, past that bar's end.
        assert any(abs(box.center().x() - vb.mapViewToScene(QPointF(x, 0.0)).x()) <= box.width() / 2
                   and ((box.bottom() <= vb.mapViewToScene(QPointF(x, v)).y() + 1) if v > 0
                        else (box.top() >= vb.mapViewToScene(QPointF(x, v)).y() - 1)) for x, v in bars[text]), text
    return texts


def test_printed_parts_values_stand_over_their_bars_the_largest_first(qtbot, parts):
    """31 blocks at 150 % on a 1024 × 700 screen: bars a few pixels wide; a value whose bar's
    end is taken stands further out over its bar, so the largest and many more are written."""
    assert parts.printed_values() == []
    parts.set_print_values(True)
    qtbot.wait(50)  # the view's new range drawn
    texts = _check_printed(parts)
    assert {"+6.98", "+3.34", "-2.50", "+0.42"} <= set(texts)
    assert len(texts) >= 20
    parts.set_print_values(False)
    assert parts.printed_values() == []


def test_a_taller_parts_chart_prints_nearly_every_value(qtbot, parts):
    parts.parentWidget().resize(1300, 700)
    parts.set_print_values(True)
    qtbot.waitUntil(lambda: parts.height() > 600)
    qtbot.wait(50)
    texts = _check_printed(parts)
    values = [v for s in parts.series for v in s.values if v is not None and round(abs(v), 2) > 0]
    assert len(texts) >= len(values) - 1  # all but +0.15 beside the +6.98 bar, which is on hover


def test_a_short_parts_chart_still_prints_its_largest_value(qtbot, parts):
    """The chart as lesson 11 shows it in projector mode at 1024 × 700 and 150 %: about 180 px of
    plot. The bars keep a third of it, and the longest bar's value is written at its end."""
    parts.parentWidget().resize(560, 250)
    parts.set_print_values(True)
    qtbot.waitUntil(lambda: parts.item.vb.height() < 200)
    qtbot.wait(50)
    texts = _check_printed(parts)
    assert {"+6.98", "+3.34"} <= set(texts)
    vb = parts.item.vb
    bars = vb.mapViewToScene(QPointF(0.0, 6.98)).y() - vb.mapViewToScene(QPointF(0.0, -2.5)).y()
    assert abs(bars) >= vb.height() / 3 - 1
