"""Chart texts at a 1024 × 700 projector with text at 150 %: bar labels keep their full
height (␣ and g hang below the baseline), rows never touch, axes end where their data can
go and keys stay off the data."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QColor, QFont, QImage, QPainter
from PySide6.QtWidgets import QVBoxLayout, QWidget

from embviz.ui import style

pytestmark = pytest.mark.usefixtures("normal_text_size")

TOKENS = ["␣Paris", "<|im_end|>", "g", "y", "␣the", "␣London", "␣jpg", "␣gypsy", "␣Le", "␣capital"]
SECTIONS = ["capital-common-countries", "capital-world", "currency", "city-in-state", "family",
            "gram1-adjective-to-adverb", "gram2-opposite", "gram3-comparative", "gram4-superlative",
            "gram5-present-participle", "gram6-nationality-adjective", "gram7-past-tense", "gram8-plural",
            "gram9-plural-verbs"]


def _at_least(qtbot, widget: QWidget, width: int, height: int) -> QWidget:
    """`widget` in a window `width` wide and `height` tall, or as tall as the widget's least height."""
    holder = QWidget()
    layout = QVBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(widget)
    holder.resize(width, height)
    holder.show()
    qtbot.addWidget(holder)
    qtbot.waitExposed(holder)
    return holder


def _ink_rows(image: QImage, rect: QRect) -> np.ndarray:
    """The rows of `rect` in `image` with any dark pixel."""
    image = image.convertToFormat(QImage.Format.Format_Grayscale8)
    grey = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(image.height(), image.bytesPerLine())
    top, left = max(rect.top(), 0), max(rect.left(), 0)
    part = grey[top:rect.bottom() + 1, left:min(rect.right() + 1, image.width())]
    return top + np.flatnonzero((part < 128).any(axis=1))


def _free_ink_height(text: str, font: QFont) -> int:
    """How many pixel rows `text` in `font` inks when nothing cuts it."""
    image = QImage(800, 200, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setFont(font)
    painter.setPen(QColor("black"))
    painter.drawText(20, 100, text)
    painter.end()
    rows = _ink_rows(image, image.rect())
    return int(rows.max() - rows.min() + 1)


def _check_labels(chart) -> None:
    """Every label inks as many rows as it does uncut, within its own row's band."""
    from embviz.ui.plots.bar_chart import full_height

    layout = chart.layout_now()
    image = chart.grab().toImage()
    font, plot, pitch = layout["label_font"], layout["plot"], layout["pitch"]
    rects = [chart.label_rect(row) for row in range(chart.count)]
    for row, rect in enumerate(rects):
        assert rect.height() >= full_height(font) - 1e-6
        assert plot.top() + row * pitch <= rect.top() and rect.bottom() <= plot.top() + (row + 1) * pitch
        if row:
            assert rect.top() > rects[row - 1].bottom(), chart.labels[row]  # a gap: rows never touch
        band = QRect(0, round(plot.top() + row * pitch), int(layout["label_w"]), int(pitch))
        ink = _ink_rows(image, band)
        label = layout["labels"][row]
        assert ink.size and ink.max() - ink.min() + 1 == _free_ink_height(label, font), label


def test_bar_labels_keep_their_descenders_and_rows_never_touch(qtbot):
    from embviz.ui.plots.bar_chart import BarChart

    style.set_text_scale(1.5)
    chart = BarChart("Probabilities", style.BAR_PROB, suffix="%")
    holder = _at_least(qtbot, chart, 480, 10)
    chart.set_bars(TOKENS, [77.25 / (i + 1) for i in range(10)], [f"{77.25 / (i + 1):.2f}%" for i in range(10)])
    qtbot.waitUntil(lambda: chart.height() == chart.minimumHeight())
    assert chart.layout_now()["label_font"].pointSizeF() == chart.tick_font.pointSizeF()  # full size at its least height
    _check_labels(chart)
    holder.close()


def test_a_short_window_keeps_a_row_per_label_at_full_size(qtbot):
    from embviz.ui.plots.bar_chart import BarChart

    style.set_text_scale(1.5)
    chart = BarChart("", style.BAR_LOGIT, axis_name="% correct", point_size=style.BASE_POINT_SIZE - 1,
                     label_share=0.6)  # as the benchmark window makes it
    holder = _at_least(qtbot, chart, 600, 330)
    chart.set_groups(SECTIONS, [("inputs excluded", style.BAR_LOGIT, [50.0] * 14),
                                ("inputs allowed", style.BAR_PROB, [20.0] * 14)], (0.0, 100.0))
    qtbot.waitUntil(lambda: chart.height() >= chart.minimumHeight() > 330)  # taller than asked, never shrunk
    assert chart.layout_now()["label_font"].pointSizeF() == chart.tick_font.pointSizeF()
    _check_labels(chart)
    holder.close()


def test_the_lens_probability_axis_without_the_final_norm_stops_at_100_percent(qtbot, lens_panel):
    from embviz.core.lm.results import LensCells, LensResult, TokenScore

    style.set_text_scale(1.5)
    lens_panel.resize(1024, 700)
    # Without the final norm an early layer reads ␣aneur at 99.8 %: its text has no room past the bar.
    top = [[[TokenScore(5, "␣aneur", 0.0, 0.998, " aneur"), TokenScore(6, "␣TType", 0.0, 0.0015, " TType")]]
           for _ in range(3)]
    lens_panel.on_result(LensResult(tokens=[(1, "␣is")], token_texts=[" is"], layer_names=["embedding", "block 1", "block 2"],
                                    cells=LensCells.of_scores(top), final_norm=False))
    qtbot.waitUntil(lambda: lens_panel.bars.count == 2)
    chart = lens_panel.bars
    assert chart.shown_range[1] <= 100.0
    assert max(float(text.rstrip("%")) for _, _, text in chart.layout_now()["ticks"]) <= 100.0
    plot = chart.plot_rect()
    for row in range(2):
        assert plot.contains(chart.text_rect(row)), chart.texts[row]
    assert chart.layout_now()["bars"][0].contains(chart.text_rect(0))  # 99.8 % is written inside its bar


def test_the_drift_key_sits_outside_the_plot_and_the_axis_ends_at_cosine_one(qtbot):
    from embviz.core.lm.results import DriftResult
    from embviz.ui.panels.drift import DriftPanel
    from embviz.ui.panels.language_model import LanguageModelLoader

    style.set_text_scale(1.5)
    panel = DriftPanel(lambda request, reply=None: 1, lambda channel: None, LanguageModelLoader(lambda request: 1))
    qtbot.addWidget(panel)
    panel.resize(1024, 700)
    panel.show()
    layers = 31
    panel.on_result(DriftResult(word=" bank", token_ids=[3, 3], positions=[5, 7], sentences=["a", "b"],
                                layer_names=["embedding"] + [f"block {b}" for b in range(1, layers)],
                                between=[1.0] + [0.7] * (layers - 2) + [0.98],  # the black line up at the top
                                to_static=[[1.0, 1.0]] + [[0.02, 0.01]] * (layers - 1),
                                baseline=[0.2] + [0.65] * (layers - 1)))
    qtbot.waitUntil(lambda: panel.key.isVisible() and panel.plot.isVisible())
    assert panel.key_names == ["between the sentences", "any two tokens (baseline)",
                               "sentence 1 to its static row", "sentence 2 to its static row"]
    _, (bottom, top) = panel.plot.getPlotItem().viewRange()
    assert 1.0 < top <= 1.1 and bottom <= 0.0  # a cosine is at most 1
    # The key above the plot, whole: no line under it.
    qtbot.waitUntil(lambda: panel.key.geometry().bottom() < panel.plot.geometry().top())
    assert panel.key.heightForWidth(panel.key.width()) <= panel.key.height() + 1  # wrapped, not cut
    assert panel.picture()[0].isAncestorOf(panel.key)  # an exported picture carries its key


def test_the_compare_histograms_count_stays_under_its_axis_numbers(qtbot):
    from embviz.ui.panels.compare import ComparePanel

    style.set_text_scale(1.5)
    panel = ComparePanel(lambda *_: 0, lambda *_: None)
    qtbot.addWidget(panel)
    panel.resize(1000, 520)  # the tab's room in a 1024 × 700 window
    panel.show()
    panel.source.setText("A (SmolLM2-135M-Instruct.Q4_1.gguf) and B (glove_6B_50d_emb.npy) share 23,172 words; "
                         "left out: 25,980 tokens of A, 376,828 of B.")
    panel.show_rule.setVisible(True)
    panel.shown.set_full_text("89 words in 0.30–1.00")
    qtbot.waitExposed(panel)
    qtbot.waitUntil(lambda: not panel.shown.geometry().intersects(panel.histogram.geometry()), timeout=2_000)
    def on_panel(widget) -> QRect:  # the two sit in different columns
        return QRect(widget.mapTo(panel, widget.rect().topLeft()), widget.size())

    assert not on_panel(panel.show_rule).intersects(on_panel(panel.shown))
