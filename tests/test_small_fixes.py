"""Small fixes of issue 20 (item 7): each test failed before its fix."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QPointF, Qt

from embviz.ui.formatting import percent_labels
from embviz.ui import style
from helpers import wait_for


def _decimals(label: str) -> int:
    match = re.search(r"\.(\d+)", label)
    return len(match.group(1)) if match else 0


# --- a, b: the logits tab's probabilities -----------------------------------------------------

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
    qtbot.wait(50)
    chart = panel.prob_chart
    assert chart.shown_range == (0.0, 100.0)
    plot = chart.plot_rect()
    for row, text in enumerate(chart.texts):
        assert plot.contains(chart.text_rect(row)), text
    labels = chart.texts
    assert all(_decimals(label) <= 5 for label in labels) and not any(label.startswith("100.0") for label in labels)


# --- c, h: the bar chart ----------------------------------------------------------------------

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
    qtbot.wait(20)
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


# --- f: the analogy benchmark window ------------------------------------------------------------

def _benchmark_result():
    from embviz.core.table.analogy_benchmark import BenchmarkResult, Miss, SectionScore

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
    qtbot.wait(20)
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


# --- i: no progress bar from the first full-model build -------------------------------------------

@pytest.fixture
def progress_bars_on():
    """transformers' bars on, as where it was imported before embviz.core set its environment."""
    from transformers.utils import logging as hf_logging

    hf_logging.enable_progress_bar()  # huggingface_hub's own bars stay off, and warns so
    yield
    hf_logging.disable_progress_bar()


@pytest.mark.filterwarnings("ignore:Cannot enable progress bars")
def test_building_the_full_model_prints_no_progress_bar(tmp_path, capfd, progress_bars_on):
    from conftest import make_tiny_model
    from embviz.core import open_checkpoint

    make_tiny_model(tmp_path / "tiny")
    model = open_checkpoint(str(tmp_path / "tiny"), "cpu")
    capfd.readouterr()
    model.load_language_model()
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "%|" not in err, err


@pytest.mark.filterwarnings("ignore:Cannot enable progress bars")
def test_quiet_loading_silences_the_gguf_bar_too_and_then_restores_the_bars(capfd, progress_bars_on):
    from transformers import modeling_gguf_pytorch_utils as gguf
    from transformers.utils import logging as hf_logging

    from embviz.core.lm.causal_lm import quiet_loading

    with quiet_loading():
        list(gguf.tqdm(range(3), desc="Converting and de-quantizing GGUF tensors..."))
        list(hf_logging.tqdm(range(3), desc="Loading weights"))
    assert capfd.readouterr().err == ""
    assert hf_logging.is_progress_bar_enabled()
    list(gguf.tqdm(range(3), desc="after"))  # the module's own tqdm again
    assert "after" in capfd.readouterr().err


# --- j: the drift tab's message line follows the text size ------------------------------------------

def test_the_drift_tabs_error_line_follows_the_text_size(qtbot):
    from embviz.ui.panels.drift import DriftPanel
    from embviz.ui.panels.language_model import LanguageModelLoader

    panel = DriftPanel(lambda request: 1, lambda channel: None, LanguageModelLoader(lambda request: 1))
    qtbot.addWidget(panel)
    panel.on_failed("The word is not one token.")
    try:
        style.set_text_scale(2.0)
        assert panel.message.font().pointSize() == style.pt(style.BASE_POINT_SIZE)
    finally:
        style.set_text_scale(1.0)


# --- k: --version ---------------------------------------------------------------------------------

def test_version_prints_the_package_version(capsys):
    from importlib.metadata import version

    from embviz.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"embviz {version('embviz')}"


# --- g: SVG export of word-set markers --------------------------------------------------------------

def test_svg_export_draws_each_word_set_marker_as_one_whole_path(qtbot, tmp_path):
    import xml.etree.ElementTree as ET

    import numpy as np

    from embviz.ui.export import export_picture
    from embviz.ui.plots.map_view import MapView

    view = MapView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    n = 200
    view.set_labels([f"#{i}" for i in range(n)])
    view.set_points(np.arange(n), np.random.default_rng(1).normal(size=(n, 2)).astype(np.float32))
    view.set_word_set("weekdays", list(range(7)), style.SET_COLORS[0])
    qtbot.wait(50)
    root = ET.parse(export_picture(view, "seven weekdays", tmp_path / "map.svg")).getroot()
    svg = "{http://www.w3.org/2000/svg}"
    # Copied from a pixmap atlas, every marker was an <image> fragment of it.
    assert not list(root.iter(f"{svg}image"))
    colour = style.SET_COLORS[0].name().lower()
    markers = [g for g in root.iter(f"{svg}g")
               if g.get("fill", "").lower() == colour and g.find(f"{svg}path") is not None]
    assert len(markers) >= 7  # the seven markers (and the legend's sample)
    assert all(len(g.findall(f"{svg}path")) == 1 for g in markers)


# --- d, e: the lesson tour ----------------------------------------------------------------------------

def test_lesson_step_1_offers_no_full_model_and_says_plainly_why_a_row_is_zero(qtbot, window):
    window.go_to_step(0)  # spells: an embedding and a linear head, no blocks
    panel = window.logits
    wait_for(qtbot, lambda: panel.results and "direct path" in panel.caption.text(), 30_000)
    assert panel.full.isHidden() and panel.direct.isHidden()  # one path only: no choice shown
    status = window.message.full_text
    assert "1 row is all zeros (ids 0: <eos>)" in status and "on purpose" in status, status


@pytest.mark.default_model
def test_lesson_step_8_shows_the_analogy_arrows_on_the_map(qtbot, window):
    from embviz.state.lesson_tour import STEPS

    assert "map shows the arrows" in STEPS[7].text
    window.go_to_step(7)
    view = window.map_panel.view
    wait_for(qtbot, lambda: len(view._arrows) == 2 and view.ids.size == 49152, 300_000)
    assert window.tabs.currentWidget() is window.map_panel


# --- l: the screenshot command draws t-SNE's live picture ----------------------------------------------

@pytest.mark.default_model
def test_the_screenshot_command_saves_tsne_live_part_way_then_cancels(qtbot, qapp, window, monkeypatch):
    from embviz.ui import screenshots

    monkeypatch.setattr(screenshots, "TSNE_ROWS", 300)  # the same steps, quicker
    window.open_model(None)
    panel = window.map_panel
    wait_for(qtbot, lambda: "PCA of 49,152 rows" in panel.status.text())
    seen = []
    screenshots._tsne_live(qapp, window, lambda name: seen.append((name, panel.status.text(), panel.view.ids.size)))
    assert seen and {name for name, _, _ in seen} == {"tsne_live"}  # saved again while its previews come
    _, status, rows = seen[-1]
    assert "t-SNE: optimising" in status and rows == 300, status
    assert not panel.progress.isVisible() and panel.view.ids.size == 49152  # the map's rows as they were
    assert (panel.state.method, panel.state.subset) == ("pca", "all")
