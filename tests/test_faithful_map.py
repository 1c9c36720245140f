"""The map says how faithful it is, and a clicked point rings its true nearest rows."""

from __future__ import annotations

import re

import pytest

from helpers import wait_for


@pytest.mark.default_model
def test_the_caption_gives_the_share_of_true_neighbours_kept_and_a_click_rings_them(qtbot, smol):
    panel = smol.map_panel
    wait_for(qtbot, lambda: "keeps" in panel.status.text())  # measured after the map is drawn
    caption = panel.status.text()
    match = re.search(r"keeps ([\d.]+)% of each token's 10 nearest neighbours$", caption)
    assert match and float(match.group(1)) < 5  # two PCA axes keep almost none of 576 dimensions' neighbours
    assert panel.state.projection.caption == caption  # a saved session keeps it
    assert "Measured on 1,000 sampled rows" in panel.status.toolTip()  # the caption fits a projector's line
    monday = panel.view.labels.index("␣Monday")
    panel.tokenClicked.emit(monday)  # as a click on the point does
    wait_for(qtbot, lambda: "Nearest to ␣Monday" in smol.neighbours.heading.text())
    table = [row[1] for row in smol.neighbours.table.rows]
    assert panel.view._selected == [monday] + table[:10]  # the table's true top 10, ringed and labelled


def test_a_cancelled_tsne_brings_back_the_last_finished_map(qtbot, window, tmp_path):
    from conftest import make_tiny_model
    import numpy as np

    make_tiny_model(tmp_path / "tiny")
    window.open_model(str(tmp_path / "tiny"))
    panel = window.map_panel
    wait_for(qtbot, lambda: panel.view.ids.size > 0 and "PCA of" in panel.status.text(), 60_000)
    pca = panel.view.coords.copy()
    panel.method.setCurrentIndex(panel.method.findData("tsne"))
    panel.run_projection()
    wait_for(qtbot, lambda: "optimising" in panel.status.text(), 60_000)  # a half-made layout on screen
    assert not np.array_equal(panel.view.coords, pca)
    window.cancel_running()
    wait_for(qtbot, lambda: panel.status.text().startswith("Cancelled"), 30_000)
    assert np.array_equal(panel.view.coords, pca) and "back to the last finished map" in panel.status.text()
    assert "PCA of" in panel.status.text()
