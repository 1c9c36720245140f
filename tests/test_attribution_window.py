"""The Attribution tab in the real window (pytest-qt, offscreen): which block and which head
wrote the answer, one head's attention, pinned tokens, two prompts, the lesson step."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QRect

from embviz.state.lesson_tour import STEPS

from helpers import wait_for
from test_projector_layout import on_screen

pytestmark = pytest.mark.usefixtures("normal_text_size")

TEXT = "The capital of France is"


def answered(panel) -> bool:
    return panel.result is not None and panel.pattern is not None


def in_sight(widget, window) -> bool:
    """Shown, not empty, and wholly inside the part of its tab on screen."""
    page = window.tabs.currentWidget().parentWidget()  # the scroll area's viewport
    rect = QRect(widget.mapTo(page, widget.rect().topLeft()), widget.size())
    return widget.isVisible() and rect.width() > 150 and rect.height() > 150 and page.rect().contains(rect)


def open_attribution(window, qtbot, text: str = TEXT):
    panel = window.attribution
    window.tabs.setCurrentWidget(panel)
    panel.state.text = text
    panel.run()
    wait_for(qtbot, lambda: answered(panel) and panel.pinned is not None, 300_000)
    return panel


@pytest.mark.default_model
@pytest.mark.parametrize("width, height, scale", [(1024, 700, 1.5), (1920, 1080, 1.0)])
def test_the_bars_heads_and_attention_are_in_sight_and_are_the_requests_parts(qtbot, smol, width, height, scale):
    on_screen(smol, qtbot, width, height, scale)
    panel = open_attribution(smol, qtbot)
    result = panel.result
    assert result.target == " Paris" and result.position == 4
    assert in_sight(panel.blocks.chart, smol) and in_sight(panel.blocks.heads, smol)
    parts = {(p.block, p.kind): p.value for p in result.parts}
    chart = panel.blocks.chart
    assert chart.values_shown(0) == pytest.approx([parts[(0, "embedding")]])
    assert chart.values_shown(1) == pytest.approx([parts[(b, "attention")] for b in range(1, 31)])
    assert chart.values_shown(2) == pytest.approx([parts[(b, "mlp")] for b in range(1, 31)])
    assert f"{result.logit:.2f}" in panel.sentence.text() and "␣Paris" in panel.sentence.text()
    assert panel.blocks.heads.shape == (30, 9)
    heads = panel.blocks.heads
    assert heads.cell_at(heads.scene_pos_of(6, 4)) == (6, 4)  # the mouse finds the cell drawn there
    heads.cellHovered.emit(30 - 24, 4)  # the last block on top: block 24 is row 6
    assert panel.blocks.hover == "Block 24, head 4: +2.82 of the logit of ␣Paris"
    assert heads.title == "Block 24 · head 4: +2.82"
    assert (panel.state.head_block, panel.state.head) == (24, 4)  # the top head is chosen at first
    panel.views.setCurrentWidget(panel.attention)
    wait_for(qtbot, lambda: in_sight(panel.attention.map, smol), 5_000)
    assert panel.attention.map.shape == (5, 5)
    assert panel.attention.ranked.item(0).text().startswith("block 24 · head 4")
    assert "90% of its attention on “␣France”" in panel.attention.sentence
    panel.attention.map.cellHovered.emit(4, 3)
    assert panel.attention.map.title == "“␣is” → “␣France”: 90%"
    panel.views.setCurrentWidget(panel.blocks)
    heads.cellClicked.emit(0, 1)  # block 30, head 1: its attention is asked for and shown
    assert (panel.state.head_block, panel.state.head) == (30, 1) and panel.views.currentWidget() is panel.attention
    wait_for(qtbot, lambda: (panel.pattern.block, panel.pattern.heads) == (30, [1]), 300_000)
    assert panel.attention.map.title == "Block 30 · head 1"
    assert panel.attention.ranked.selectedItems()[0].text().startswith("block 30 · head 1")


@pytest.mark.default_model
def test_a_double_clicked_lens_cell_opens_its_attribution(qtbot, smol):
    lens = smol.lens
    smol.tabs.setCurrentWidget(lens)
    lens.set_text(TEXT)
    wait_for(qtbot, lambda: lens.result is not None and len(lens.result.tokens) == 5, 300_000)
    top = lens.result.top[30][3][0]  # the output's guess after "France"
    lens.grid.doubleClicked.emit(lens.table.index(lens._row_of(30), 3))
    panel = smol.attribution
    assert smol.tabs.currentWidget() is panel
    wait_for(qtbot, lambda: panel.result is not None and panel.result.position == 3, 300_000)
    assert panel.result.target_id == top.id and panel.state.position == 3


@pytest.mark.default_model
def test_pinned_tokens_and_two_prompts(qtbot, smol):
    panel = smol.attribution
    panel.state.pinned = "␣Paris, ␣Rome"
    panel = open_attribution(smol, qtbot)
    paris, rome = panel.pinned.pinned
    assert paris.ranks[-1] == 1 and rome.ranks[-1] > 1
    assert len(panel.pinned_view.plot.getPlotItem().listDataItems()) == 2
    panel.pinned_view.by_rank.setChecked(True)
    assert panel.pinned_view.plot.getPlotItem().getAxis("left").labelText == "rank"
    panel.views.setCurrentWidget(panel.pinned_view)
    assert "rank among the guesses" in panel.sentence.text() and "␣Rome" in panel.sentence.text()
    panel.views.setCurrentWidget(panel.blocks)
    panel.state.text_b = "The capital of Italy is"
    panel.compare.setChecked(True)
    wait_for(qtbot, lambda: panel.result_b is not None, 300_000)
    a, b = panel.result, panel.result_b
    assert b.target_id == a.target_id  # the same token's logit after both prompts
    total = lambda r, blk: sum(p.value for p in r.parts if p.block == blk)  # noqa: E731
    chart = panel.blocks.chart
    assert chart.values_shown(2) == pytest.approx([total(b, k) - total(a, k) for k in range(31)], abs=1e-4)
    assert f"{b.logit - a.logit:+.2f}" in panel.sentence.text()


@pytest.mark.default_model
def test_the_lesson_steps_numbers_are_the_tools(qtbot, smol):
    index = next(i for i, s in enumerate(STEPS) if "attribution" in s.setup)
    smol.go_to_step(index)
    panel = smol.attribution
    wait_for(qtbot, lambda: answered(panel) and panel.pinned is not None and panel.pattern.block == 24, 300_000)
    assert smol.tabs.currentWidget() is panel
    result, text = panel.result, STEPS[index].text
    parts = {(p.block, p.kind): p.value for p in result.parts}
    late = sum(v for (blk, _), v in parts.items() if blk and blk >= 24)
    head = next(h for h in result.heads if (h.block, h.head) == (24, 4))
    weight = panel.pattern.weights[0][4][3]  # from " is" onto " France"
    ranks = panel.pinned.pinned[0].ranks
    for shown in (f"{result.logit:.2f}", f"{result.prob:.1%}", f"MLP wrote {parts[(30, 'mlp')]:+.2f}",
                  f"attention {parts[(24, 'attention')]:+.2f}", f"together {late:+.2f}", f"({head.value:+.2f})",
                  f"{weight:.0%} of its attention", f"{ranks[23]:,} after block 23", f"{ranks[24]:,} after block 24"):
        assert shown in text
    assert ranks[30] == 1 and "first after block 30" in text
    assert re.search(r"blocks 24–30", text)


def test_a_model_without_blocks_says_why(qtbot, window):
    window.open_model("toy4")
    wait_for(qtbot, lambda: window.summary is not None, 60_000)
    window.tabs.setCurrentWidget(window.attribution)
    panel = window.attribution
    assert not panel.text.isEnabled() and panel.message.isVisible()
    reason = window.summary.lens_reason
    assert reason and panel.message.text() == reason and reason.count(". ") == 0
