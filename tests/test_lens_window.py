"""The Logit lens and Drift tabs in the real window (pytest-qt, offscreen)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from embviz.state.session import load_session, save_session
from embviz.state.tabs import DriftState, LensState
from embviz.ui import style

from helpers import wait_for


@pytest.mark.default_model
def test_the_tabs_ask_nothing_until_they_are_shown(qtbot, smol):
    assert smol.lens.stale and smol.drift.stale
    assert smol.lens.asking.id == smol.drift.asking.id == 0  # no forward pass for a tab nobody looks at
    smol.tabs.setCurrentWidget(smol.drift)
    wait_for(qtbot, lambda: smol.drift.result is not None, 300_000)
    assert not smol.drift.stale and smol.lens.stale and smol.lens.asking.id == 0


@pytest.mark.default_model
def test_the_lens_grid_reads_up_to_the_models_answer(qtbot, smol):
    lens = smol.lens
    smol.tabs.setCurrentWidget(lens)
    lens.set_text("The capital of France is")
    wait_for(qtbot, lambda: lens.result is not None and len(lens.result.tokens) == 5, 300_000)
    wait_for(qtbot, lambda: lens.bars.count)  # the bars come in the next turn of the event loop
    grid = lens.grid
    table = lens.table
    assert table.rowCount() == 31 and table.columnCount() == 5 and not lens.splitter.isHidden()
    vertical, horizontal = Qt.Orientation.Vertical, Qt.Orientation.Horizontal
    assert table.headerData(0, vertical) == "30 = output" and table.headerData(30, vertical) == "embedding"
    assert [table.headerData(c, horizontal) for c in range(5)] == ["The", "␣capital", "␣of", "␣France", "␣is"]
    assert table.text(0, 4) == "␣Paris"
    # The answer's cell is shown as bars at first: the same top guess as the Logits tab.
    assert lens.cell == (30, 4) and lens.bars.count == 10 and "block 30" in lens.bars.title
    # A cell's colour follows its probability: the confident output cell is darker than a doubtful one.
    top = lens.result.top
    probs = {(layer, p): top[layer][p][0].prob for layer in range(31) for p in range(5)}
    low, high = min(probs, key=probs.get), max(probs, key=probs.get)
    dark = lambda cell: table.index(lens._row_of(cell[0]), cell[1]).data(Qt.ItemDataRole.BackgroundRole).lightness()  # noqa: E731
    assert dark(high) < dark(low)
    grid.clicked.emit(table.index(lens._row_of(12), 1))  # block 12 after "capital"
    assert lens.cell == (12, 1) and "block 12" in lens.bars.title and "␣capital" in lens.bars.title
    assert lens.cell_caption.text().startswith("The top 10 guesses at block 12")
    lens.final_norm.setChecked(False)
    wait_for(qtbot, lambda: lens.result is not None and lens.result.final_norm is False, 60_000)
    assert "no final norm" in lens.caption.text()
    assert lens.cell == (12, 1)  # the chosen cell stays chosen


@pytest.mark.default_model
def test_drift_draws_one_line_per_sentence_and_names_what_is_wrong(qtbot, smol):
    drift = smol.drift
    smol.tabs.setCurrentWidget(drift)
    drift.set_inputs("bank", ["I sat on the river bank", "She paid the cash into the bank"])
    wait_for(qtbot, lambda: drift.result is not None, 300_000)
    assert drift.key_names == ["between the sentences", "any two tokens (baseline)",
                     "sentence 1 to its static row", "sentence 2 to its static row"]
    assert drift.neighbours.columnCount() == 2 and drift.neighbours.rowCount() == 8
    assert "through 30 blocks" in drift.heading.text()
    drift.layer.setValue(3)
    wait_for(qtbot, lambda: drift.result is not None and drift.result.neighbours_layer == 3, 60_000)
    assert "block 3" in drift.neighbours_heading.text()
    drift.set_inputs("bank", ["I sat on the river bank", "Money is nice"])
    wait_for(qtbot, lambda: "not a token of sentence 2" in drift.message.text(), 60_000)
    assert drift.result is None and not drift.key_names


def test_lesson_models_explain_that_they_have_no_layers(qtbot, window):
    window.open_model("spells")
    wait_for(qtbot, lambda: window.summary is not None, 30_000)
    for panel in (window.lens, window.drift):
        assert not panel.enabled and "no blocks" in panel.message.text()
        assert not panel.message.isHidden() and panel.splitter.isHidden()  # no empty axes
    window.lens.set_text("I cast")
    assert window.lens.asking.id == 0  # nothing is asked of a model without layers


def test_lens_and_drift_inputs_round_trip_through_a_session(qtbot, window, tmp_path):
    window.open_model("toy4")
    wait_for(qtbot, lambda: window.summary is not None, 30_000)
    window.lens.state.text, window.lens.state.final_norm = "river", False
    window.drift.state.word, window.drift.state.sentences, window.drift.state.layer = "cat", "a cat\nthe cat", 4
    session = load_session(save_session(window.session_state(), tmp_path / "s.embviz"))
    assert session["lens"] == LensState(text="river", final_norm=False)
    assert session["drift"] == DriftState(word="cat", sentences="a cat\nthe cat", layer=4)


def _grid_result(ids: list[int], final_norm: bool = True, truncated: int = 0, seed: int = 0):
    """A hand-made lens result: three layers, top-2 cells whose ids depend on the position's
    token and the ones before it, as a causal model's do."""
    from embviz.core.lm.results import LensCells, LensResult
    from embviz.core.lm.results import TokenScore

    def score(token: int) -> TokenScore:
        return TokenScore(token, f"t{token}", 0.0, 0.5, f"t{token}")

    top = [[[score(100 * layer + sum(ids[:p + 1]) + seed), score(7)] for p in range(len(ids))] for layer in range(3)]
    return LensResult(tokens=[(i, f"w{i}") for i in ids], token_texts=[f"w{i}" for i in ids],
                      layer_names=["embedding", "block 1", "block 2"], cells=LensCells.of_scores(top),
                      final_norm=final_norm, truncated=truncated)


def test_an_edit_at_the_end_keeps_and_does_not_repaint_the_columns_before_it(qtbot):
    from embviz.ui.plots.lens_grid import LensTable

    table = LensTable()
    first = _grid_result([1, 2, 3])
    assert table.start(first) == 0
    table.put(first.cells, [0, 1, 2])
    changed = []
    table.dataChanged.connect(lambda a, b: changed.append((a.column(), b.column())))
    second = _grid_result([1, 2, 4, 5])
    assert table.start(second) == 2  # w1 w2 read the same; w4 replaced w3 and w5 is new
    assert table.columnCount() == 4 and [table.headerData(c, Qt.Orientation.Horizontal) for c in range(4)] == \
        ["w1", "w2", "w4", "w5"]
    assert table.text(2, 0) == "t1" and table.text(2, 2) is None and table.text(2, 3) is None  # kept, then blank
    changed.clear()
    table.put(second.cells, [0, 1, 2, 3])
    assert changed == [(2, 3)]  # the kept columns are not redrawn
    assert [table.text(2, c) for c in range(4)] == ["t1", "t3", "t7", "t12"]
    assert table.start(_grid_result([1, 2], final_norm=False)) == 0  # every row reads differently
    table.put(_grid_result([1, 2], final_norm=False).cells, [0, 1])
    assert table.start(_grid_result([1, 2, 3], final_norm=False, truncated=4)) == 0  # earlier context moved
    assert table.columnCount() == 3 and table.text(2, 0) is None


def test_the_grid_paints_each_cell_its_colour_and_frames_the_chosen_one(qtbot, lens_panel):
    from embviz.ui.plots.lens_grid import FRAME, cell_color

    panel = lens_panel
    result = _grid_result([1, 2, 3])
    panel.on_result(result)
    wait_for(qtbot, lambda: panel.bars.count)
    grid, table = panel.grid, panel.table
    picture = grid.viewport().grab().toImage()
    ratio = picture.devicePixelRatio()
    for row in range(3):
        for column in range(3):
            rect = grid.visualRect(table.index(row, column))
            middle = round((rect.top() + rect.height() // 2) * ratio)
            pixel = picture.pixelColor(round((rect.left() + 6) * ratio), middle)
            want = table.data(table.index(row, column), Qt.ItemDataRole.BackgroundRole)
            if (row, column) == grid.framed:  # the frame, 4 px wide, over the cell's edge
                assert picture.pixelColor(round((rect.left() + 2) * ratio), middle).name() == FRAME.name()
            else:
                assert pixel.name() == want.name() == cell_color(0.5).name(), (row, column)
    assert grid.framed == (0, 2)  # the top row (the output) at the newest token


def test_the_grid_keeps_pictures_only_for_the_columns_near_the_view(qtbot, lens_panel):
    from embviz.ui.plots.lens_grid import KEPT_PICTURES

    panel = lens_panel
    panel.resize(700, 500)
    panel.on_result(_grid_result(list(range(1, 61))))
    wait_for(qtbot, lambda: panel.bars.count)
    grid = panel.grid
    for column in (0, 59, 30):  # scrolled across the whole text
        grid.scrollTo(panel.table.index(0, column))
        grid.viewport().grab()
    shown = range(grid.columnAt(0), grid.columnAt(grid.viewport().width() - 1) + 1)
    assert 30 in shown and set(grid.pictures) <= set(range(shown[0] - KEPT_PICTURES, shown[-1] + KEPT_PICTURES + 1))


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
