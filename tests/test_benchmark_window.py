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


def _benchmark_result():
    from embviz.core.table.results import BenchmarkResult, Miss, SectionScore

    names = ["capital-common-countries", "capital-world", "currency", "city-in-state", "family",
             "gram1-adjective-to-adverb", "gram2-opposite", "gram3-comparative", "gram4-superlative",
             "gram5-present-participle", "gram6-nationality-adjective", "gram7-past-tense", "gram8-plural",
             "gram9-plural-verbs"]
    sections = [SectionScore(name, 506 + 1000 * i, 380 + 10 * i, int((380 + 10 * i) * (0.95 - 0.05 * i)),
                             int((380 + 10 * i) * 0.1), 5) for i, name in enumerate(names)]
    misses = [Miss("capital-common-countries", ("␣Athens", "␣Greece", "␣Beijing", "␣China"), "China")]
    return BenchmarkResult(total=19544, sections=sections, misses=misses)


def test_the_benchmark_window_shows_names_counts_and_bars_whole(qtbot):
    from embviz.ui.panels.benchmark import BenchmarkWindow

    bench = BenchmarkWindow(lambda: None)
    qtbot.addWidget(bench)
    bench.resize(1024, 700)
    bench.show()
    bench.started()
    qtbot.waitExposed(bench)
    blank = bench.chart.grab().toImage()
    assert bench.chart.count == 0 and all(blank.pixelColor(x, y).name() == "#ffffff" for x in range(0, blank.width(), 4)
                                          for y in range(0, blank.height(), 4))  # no empty axes before a result
    bench.show_result(_benchmark_result(), "done")
    qtbot.waitUntil(lambda: bench.misses_settled)  # the window's pieces come a frame apart
    assert bench.chart.count == 14
    for table in (bench.sections, bench.misses):
        metrics = table.fontMetrics()
        for c in (0, 1):
            widest = max(metrics.horizontalAdvance(table.item(r, c).text()) for r in range(table.rowCount()))
            assert table.columnWidth(c) >= widest, (table.item(0, c).text(), table.columnWidth(c), widest)
    assert bench.sections.horizontalScrollBar().maximum() == 0  # every column in view
    # The legend lies outside the bars' plot: it covers none of them.
    layout = bench.chart.layout_now()
    assert [name for _, _, name, _ in layout["legend"]] == ["inputs excluded", "inputs allowed"]
    for swatch, text, _, _ in layout["legend"]:
        assert not layout["plot"].intersects(swatch) and not layout["plot"].intersects(text)
        assert bench.chart.rect().contains(text.toRect())
    assert len(layout["drawn"]) == 2 * 14 and bench.chart.shown_range == (0.0, 100.0)


@pytest.fixture
def at_150_percent():
    from embviz.ui import style

    style.set_text_scale(1.5)
    yield
    style.set_text_scale(1.0)


def test_enter_does_not_cancel_and_the_progress_text_is_the_bars(qtbot, at_150_percent):
    from PySide6.QtWidgets import QApplication

    from embviz.ui.panels.benchmark import BenchmarkWindow

    cancels = []
    bench = BenchmarkWindow(lambda: cancels.append(1))
    qtbot.addWidget(bench)
    bench.resize(1024, 700)
    bench.show()
    qtbot.waitExposed(bench)
    bench.started()
    bench.on_progress(0.1, "Reading the questions")
    bar = bench.progress
    assert bar.text() == "Reading the questions: 10%" and bar.value() / bar.maximum() == pytest.approx(0.1)
    assert "%" not in bench.summary.text()  # no second percentage to disagree with the bar's
    bench.activateWindow()
    for widget in (bench, bench.cancel_button, bench.sections):
        widget.setFocus()
        QApplication.processEvents()
        qtbot.keyClick(QApplication.focusWidget() or bench, Qt.Key.Key_Return)
        qtbot.keyClick(QApplication.focusWidget() or bench, Qt.Key.Key_Enter)
    assert cancels == [] and bench.isVisible()
    qtbot.mouseClick(bench.cancel_button, Qt.MouseButton.LeftButton)
    assert cancels == [1]


@pytest.mark.parametrize("scale", [1.5, 2.0])
def test_the_section_names_are_drawn_at_the_windows_text_size_and_whole(qtbot, scale):
    """At a 1024 × 700 projector with text at 150 % and 200 %: the chart's section names at
    the window's text size, a row each with air between (the pane scrolls), the table's
    names whole, and the summary as tall as it wraps to."""
    from PySide6.QtGui import QFontMetricsF

    from embviz.ui import style
    from embviz.ui.panels.benchmark import BenchmarkWindow
    from embviz.ui.plots.bar_chart import full_height

    style.set_text_scale(scale)
    try:
        bench = BenchmarkWindow(lambda: None)
        qtbot.addWidget(bench)
        bench.resize(1024, 700)
        bench.show()
        bench.started()
        result = _benchmark_result()
        bench.show_result(result, "10,231 of 19,544 questions have four single-token words. Accuracy with inputs "
                                  "excluded: 58.5%; with their case and space variants excluded too: 70.5%; with "
                                  "inputs allowed: 17.0%. Below: the first 500 questions it got wrong.")
        qtbot.waitUntil(lambda: bench.misses_settled)
        chart = bench.chart
        qtbot.waitUntil(lambda: chart.height() >= chart.minimumHeight())
        font = chart.layout_now()["label_font"]
        assert font.pointSizeF() == style.font(style.BASE_POINT_SIZE).pointSizeF()  # the body's, never shrunk
        rects = [chart.label_rect(row) for row in range(chart.count)]
        assert chart.count == 14
        metrics = QFontMetricsF(font)
        for row, rect in enumerate(rects):
            assert rect.height() >= metrics.ascent() + metrics.descent() - 1e-6  # the whole line, descenders too
            assert rect.width() >= metrics.horizontalAdvance(chart.labels[row])  # not elided
            assert chart.layout_now()["labels"][row] == result.sections[row].name
            if row:
                assert rect.top() > rects[row - 1].bottom(), chart.labels[row]
        assert rects[0].height() >= full_height(font) - 1e-6
        # The chart's every row is reachable: the pane scrolls it rather than squeezing it.
        assert bench.top.widget().height() >= chart.geometry().bottom()
        table = bench.sections
        names = max(table.fontMetrics().horizontalAdvance(s.name) for s in result.sections)
        assert table.columnWidth(0) >= names and table.viewport().width() >= names  # "capital-common-countries" whole
        assert table.height() >= table.horizontalHeader().height() + table.verticalHeader().length()  # every row
        summary = bench.summary
        assert summary.height() >= summary.heightForWidth(summary.width())  # no line cut
    finally:
        style.set_text_scale(1.0)
