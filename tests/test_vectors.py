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
