"""The Vectors tab: raw rows as colour strips, centred on zero."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import wait_for


@pytest.mark.default_model
def test_king_man_woman_queen_as_strips_of_their_raw_rows(qtbot, smol, default_model):
    panel = smol.vectors
    wait_for(qtbot, lambda: panel.shown is not None)  # the default words, asked when the model opened
    view = panel.shown
    assert view.labels == ["␣king", "␣man", "␣woman", "␣queen"] and view.rows.shape == (4, 576)
    ids = [default_model.vocab.id_of(w) for w in (" king", " man", " woman", " queen")]
    np.testing.assert_allclose(view.rows, default_model.table[ids].numpy())
    low, high = panel.image.getLevels()
    assert low == pytest.approx(-high) and high > 0  # centred on zero
    assert np.array_equal(panel.image.image, view.rows)
    headers, rows = panel.table_rows()
    assert headers[:3] == ["token", "id", "d0"] and len(headers) == 578 and rows[0][:2] == ["␣king", ids[0]]
    panel.words.setText("cat, qwzxv")
    panel.run()
    wait_for(qtbot, lambda: panel.shown is not None and panel.shown.labels == ["␣cat"])
    assert "qwzxv" in panel.message.text()


@pytest.mark.default_model
def test_the_axis_follows_the_models_width(qtbot, smol):
    """SmolLM2's rows are 576 numbers; toy4's are 3, each ticked, whatever the words typed."""
    panel = smol.vectors
    wait_for(qtbot, lambda: panel.shown is not None)
    axis = panel.plot.getPlotItem().getAxis("bottom")
    assert panel.plot.getPlotItem().viewRange()[0] == pytest.approx([0, 576])
    smol.open_model("toy4")
    wait_for(qtbot, lambda: smol.summary.info["vocab_size"] == 4, 60_000)
    wait_for(qtbot, lambda: panel.asking.waiting is False)
    assert panel.plot.getPlotItem().viewRange()[0] == pytest.approx([0, 3])
    assert [text for _, text in axis._tickLevels[0]] == ["0", "1", "2"]
    panel.words.setText("cat, dog")
    panel.run()
    wait_for(qtbot, lambda: panel.shown is not None and panel.shown.labels == ["cat", "dog"])
    assert panel.plot.getPlotItem().viewRange()[0] == pytest.approx([0, 3])
