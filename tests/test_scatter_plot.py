"""The similarity tab's scatter: points where their values put them, the fitted line through
its two ends, the named points labelled without overlap, a click reporting the nearest point."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from embviz.ui.plots.scatter_plot import PICK, ScatterPlot


def test_points_line_labels_and_clicks(qtbot):
    plot = ScatterPlot("people's rating", "cosine")
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    plot.show()
    rng = np.random.default_rng(0)
    xs = rng.uniform(0, 10, 200)
    ys = 0.1 + 0.05 * xs + rng.normal(0, 0.1, 200)
    named = {i: f"pair {i}" for i in range(12)}
    plot.set_points(xs.tolist(), ys.tolist(), named, (0.1, 0.05), "a model")
    layout = plot.layout_now()
    plot_rect = layout["plot"]
    points = np.array([[p.x(), p.y()] for p in layout["points"]])
    # higher ratings lie further right, higher cosines higher up: the order of the values is kept
    assert np.all(np.diff(points[np.argsort(xs), 0]) >= -1e-9)
    assert np.all(np.diff(points[np.argsort(ys), 1]) <= 1e-9)
    assert all(plot_rect.contains(QPointF(x, y)) for x, y in points)
    # the line's ends are on y = 0.1 + 0.05 x: its slope in pixels matches the points' scale
    (a, b) = layout["line"]
    i, j = int(np.argmin(xs)), int(np.argmax(xs))
    per_x = (points[j, 0] - points[i, 0]) / (xs[j] - xs[i])
    per_y = (points[j, 1] - points[i, 1]) / (ys[j] - ys[i])
    assert (b.y() - a.y()) / (b.x() - a.x()) == pytest.approx(0.05 * per_y / per_x, rel=1e-6)
    labels = layout["labels"]
    assert labels and all(plot_rect.contains(rect) for rect, _, _ in labels)
    assert not any(r.intersects(s) for n, (r, _, _) in enumerate(labels) for s, _, _ in labels[n + 1:])
    assert plot.labelled() == [text for _, text, _ in labels]
    with qtbot.waitSignal(plot.pointClicked) as clicked:
        qtbot.mouseClick(plot, Qt.MouseButton.LeftButton, pos=plot.point_position(5).toPoint())
    chosen = plot.point_position(clicked.args[0])
    assert abs(chosen.x() - plot.point_position(5).x()) <= 1 and abs(chosen.y() - plot.point_position(5).y()) <= 1
    far = QPointF(plot_rect.left() - 3 * PICK, plot_rect.top())
    assert plot.point_at(far) is None
    plot.clear_points()
    assert plot.layout_now()["points"] == [] and plot.labelled() == []

