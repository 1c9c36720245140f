"""The analogy benchmark's window: per-section table and chart, misses, Cancel."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from helpers import wait_for


@pytest.mark.default_model
def test_the_benchmark_window_lists_sections_misses_and_cancels(qtbot, smol):
    panel = smol.analogies
    qtbot.mouseClick(panel.bench_button, Qt.MouseButton.LeftButton)
    bench = panel.bench_window
    assert bench.isVisible() and bench.cancel_button.isVisible()
    wait_for(qtbot, lambda: bench.sections.rowCount() > 0, 180_000)
    rows = bench.sections.rows
    assert len(rows) == 14 and rows[0][0] == "capital-common-countries" and rows[0][1] == "380 of 506"
    assert rows[0][2] == "60.3%" and rows[0][4] == "1.8%"  # excluded vs allowed, as the CLI reports them
    assert bench.misses.rowCount() == 500
    athens = bench.misses.rows[0]
    assert athens[:5] == ("capital-common-countries", "␣Athens", "␣Greece", "␣Beijing", "␣China") and athens[5] == "China"
    # The misses' cells come a hundred rows a turn, then each column takes its longest text's width.
    wait_for(qtbot, lambda: bench.misses_settled, 10_000)
    metrics = bench.misses.fontMetrics()
    for column in range(1, 5):
        widest = max(metrics.horizontalAdvance(bench.misses.item(r, column).text()) for r in range(500))
        assert bench.misses.columnWidth(column) >= widest
    assert [name for name, _, _ in bench.chart.series] == ["inputs excluded", "inputs allowed"]
    assert bench.chart.series[0][2][0] == pytest.approx(60.3, abs=0.05) and not bench.cancel_button.isVisible()
    assert "58.5%" in bench.summary.text() and "70.5%" in bench.summary.text()
    # Again, and cancelled at once.
    panel.run_benchmark()
    qtbot.mouseClick(bench.cancel_button, Qt.MouseButton.LeftButton)
    wait_for(qtbot, lambda: "cancelled" in bench.summary.text(), 60_000)
    assert bench.sections.rowCount() == 0
