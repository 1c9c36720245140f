"""Side columns and keys beside a picture on a 1024 × 700 projector with text at 150 % and
200 %: every wrapped label as tall as its lines, no two labels over each other, and a
column taller than its room scrolls instead of being clipped."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QApplication, QLabel, QScrollArea, QWidget

from embviz.ui import style

from helpers import wait_for

pytestmark = pytest.mark.usefixtures("normal_text_size")


def settle(qtbot) -> None:
    for _ in range(5):
        QApplication.sendPostedEvents()
        QApplication.processEvents()
        qtbot.wait(20)


def visible_labels(root: QWidget) -> list[QLabel]:
    return [label for label in root.findChildren(QLabel) if label.isVisibleTo(root) and label.text()]


def assert_labels_whole(root: QWidget) -> None:
    """Each wrapped label at least as tall as its text wraps to, each one a line of its font
    tall, and no two of them over each other."""
    labels = visible_labels(root)
    for label in labels:
        if label.wordWrap():
            assert label.height() >= label.heightForWidth(label.width()), (label.text(), label.height(),
                                                                            label.heightForWidth(label.width()))
        assert label.height() >= label.fontMetrics().height(), label.text()
    rects = [(label, QRect(label.mapTo(root, label.rect().topLeft()), label.size())) for label in labels]
    for i, (a, ra) in enumerate(rects):
        for b, rb in rects[i + 1:]:
            if not (a.isAncestorOf(b) or b.isAncestorOf(a)):
                assert not ra.intersects(rb), (a.text(), ra, b.text(), rb)


def assert_scrolls_rather_than_clips(area: QScrollArea) -> None:
    inner = area.widget()
    assert inner.height() >= inner.minimumSizeHint().height()  # every row has its height: the area scrolls
    assert inner.width() <= area.viewport().width()  # nothing cut at the side


@pytest.mark.parametrize("scale", [1.5, 2.0])
def test_the_maps_side_column_scrolls_and_its_hint_is_whole(qtbot, window, scale):
    style.set_text_scale(scale)
    window.resize(1024, 700)
    window.open_model("toy4")
    wait_for(qtbot, lambda: window.summary is not None and window.map_panel.view.ids.size == 4, 60_000)
    settle(qtbot)
    panel = window.map_panel
    assert isinstance(panel.side, QScrollArea) and panel.side in panel.controls
    assert panel.hover_label.isVisible() and "Hover over a point" in panel.hover_label.text()
    assert_labels_whole(panel.side.widget())
    assert_scrolls_rather_than_clips(panel.side)
    # A selection's box comes into the column too: the column grows and scrolls.
    panel.set_selection([0, 1, 2, 3])
    settle(qtbot)
    assert panel.selection.isVisible()
    assert_labels_whole(panel.side.widget())
    assert_scrolls_rather_than_clips(panel.side)


def _drift_panel(qtbot) -> tuple[QScrollArea, QWidget]:
    from embviz.core.lm.results import DriftResult
    from embviz.core.table.results import Hit
    from embviz.ui.panels.drift import DriftPanel
    from embviz.ui.panels.language_model import LanguageModelLoader

    panel = DriftPanel(lambda request, reply=None: 1, lambda channel: None, LanguageModelLoader(lambda request: 1))
    area = QScrollArea()  # as the window holds a tab
    area.setWidgetResizable(True)
    area.setWidget(panel)
    qtbot.addWidget(area)
    area.resize(1000, 560)  # a tab's room in a 1024 × 700 window
    area.show()
    layers = 31
    panel.set_inputs("bank", ["I sat on the river bank.", "She paid the cash into the bank."])
    panel.on_result(DriftResult(
        word=" bank", token_ids=[3, 3], positions=[5, 7], sentences=["a", "b"],
        layer_names=["embedding"] + [f"block {b}" for b in range(1, layers)],
        between=[1.0] + [0.7] * (layers - 2) + [0.98], to_static=[[1.0, 1.0]] + [[0.02, 0.01]] * (layers - 1),
        baseline=[0.2] + [0.65] * (layers - 1), neighbours_layer=layers - 1,
        neighbours=[[Hit(i, t, 0.5) for i, t in enumerate(["␣river", "␣banks", "␣shore", "␣Bank", "␣lake"])],
                    [Hit(i, t, 0.5) for i, t in enumerate(["␣account", "␣banks", "␣money", "␣Bank", "␣loan"])]]))
    settle(qtbot)
    return area, panel


@pytest.mark.parametrize("scale", [1.5, 2.0])
def test_drift_keeps_its_chart_and_puts_the_nearest_rows_under_it(qtbot, scale):
    from embviz.ui.panels.drift import CHART_MIN_HEIGHT, NEIGHBOUR_ROWS

    style.set_text_scale(scale)
    _area, panel = _drift_panel(qtbot)
    assert_labels_whole(panel)
    # The key above the plot and the plot its full reading height, the nearest rows under the chart
    # as wide as it is, with their heading whole and NEIGHBOUR_ROWS rows in sight.
    assert panel.key.geometry().bottom() < panel.plot.geometry().top()
    assert panel.plot.height() >= round(CHART_MIN_HEIGHT * scale)
    assert panel.key.height() < panel.plot.height()
    chart, right = panel.chart.geometry(), panel.right.geometry()
    assert right.top() > chart.bottom() and right.width() == chart.width()
    table = panel.neighbours
    assert table.viewport().height() >= NEIGHBOUR_ROWS * table.verticalHeader().defaultSectionSize()
    box = panel.sentences  # both sentences whole
    assert box.viewport().height() >= 2 * box.fontMetrics().lineSpacing()


def test_drift_keeps_the_nearest_rows_beside_the_chart_at_1920(qtbot):
    area, panel = _drift_panel(qtbot)
    area.resize(1900, 940)
    settle(qtbot)
    assert_labels_whole(panel)
    chart, right = panel.chart.geometry(), panel.right.geometry()
    assert right.left() > chart.right() and abs(right.top() - chart.top()) <= 1
