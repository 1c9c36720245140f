"""The screenshot command (embviz.ui.screenshots)."""

from __future__ import annotations

import pytest

from helpers import wait_for


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
