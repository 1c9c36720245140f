"""The analogy's own plane: axes from its word pairs, the parallelogram's arrows on it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from embviz.core.table.analogy import analogy_plane, pair_axes
from embviz.core.errors import EmbvizError
from embviz.core.table.similarity import unit_table

from test_core import table_model
from helpers import wait_for


def test_pair_axes_are_orthonormal_and_refuse_a_pair_without_direction():
    model = table_model([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [1.0, 1.0, 0]], ["a", "b", "c", "d"])
    axes = pair_axes(model, (0, 1), (0, 2))
    assert torch.allclose(axes @ axes.T, torch.eye(2), atol=1e-6)
    with pytest.raises(EmbvizError, match="no axis"):
        pair_axes(model, (0, 0), (0, 2))


@pytest.mark.default_model
def test_king_man_woman_queen_on_the_plane_of_its_own_pairs(default_model):
    v = default_model.vocab
    king, man, woman, queen = (v.id_of(w) for w in (" king", " man", " woman", " queen"))
    plane = analogy_plane(default_model, king, man, woman, queen)
    at = dict(zip(plane.ids, plane.coords.tolist()))
    assert at[man] == pytest.approx([0.0, 0.0], abs=1e-6)  # the origin
    assert at[woman][1] == pytest.approx(0.0, abs=1e-5) and at[woman][0] > 0  # x runs man → woman
    assert at[king][1] > 0 and at[queen][1] > 0  # y runs man → king; queen sits up there too
    u = unit_table(default_model)
    a, b = u[king] - u[man], u[queen] - u[woman]
    assert plane.parallel == pytest.approx(float(a @ b / (a.norm() * b.norm())), abs=1e-5)
    assert plane.arrows == [(man, king), (woman, queen)] and len(plane.ids) > 4
    assert plane.axes == ("␣man → ␣woman", "␣man → ␣king")


@pytest.mark.default_model
def test_the_analogies_tab_draws_the_plane_with_its_arrows_and_caption(qtbot, smol):
    panel = smol.analogies
    panel.set_words("king", "man", "woman")
    wait_for(qtbot, lambda: panel.plane.ids.size > 4)
    assert panel.table.rows[0][0] == "␣queen"
    ids = [smol.summary.labels.index(w) for w in ("␣man", "␣king", "␣woman", "␣queen")]
    assert [(a, b) for a, b, _ in panel.plane._arrows] == [(ids[0], ids[1]), (ids[2], ids[3])]
    assert "cosine 0.66" in panel.plane_caption.text()
    wait_for(qtbot, lambda: set(ids) <= set(panel.plane.placed_labels), 5_000)  # the four words are labelled
    from embviz.ui import style

    style.set_text_scale(1.5)  # the heading shares its row with the plane: it wraps, the window stays on screen
    try:
        assert smol.minimumSizeHint().width() <= 1280
    finally:
        style.set_text_scale(1.0)
    panel.a.setText("")
    panel.run()  # an error clears the plane
    wait_for(qtbot, lambda: panel.message.text())
    assert panel.plane.ids.size == 0 and panel.plane_caption.text() == ""
    # doctor − man + woman with the inputs allowed answers ␣doctor: three words span no plane,
    # and the empty box says why (the lesson step on Nissim et al. shows it).
    panel.state.exclude_inputs = False
    panel.set_words("doctor", "man", "woman")
    wait_for(qtbot, lambda: panel.table.rows and panel.table.rows[0][0].startswith("␣doctor"))
    wait_for(qtbot, lambda: panel.plane_caption.text().startswith("No plane"), 5_000)
    assert panel.plane.ids.size == 0 and "␣doctor is one of the inputs" in panel.plane_caption.text()


@pytest.mark.default_model
def test_the_map_draws_word_pair_axes(qtbot, smol):
    panel = smol.map_panel
    panel.method.setCurrentIndex(panel.method.findData("axes"))  # instant: drawn at once
    assert panel.axis_x.isVisibleTo(panel) and panel.axis_x.text() == "man, woman"
    wait_for(qtbot, lambda: panel.status.text().startswith("Word-pair axes of 49,152 rows"))
    v = smol.summary.labels
    man, woman, king = (panel.view.position_of(v.index(w)) for w in ("␣man", "␣woman", "␣king"))
    assert np.allclose(man, 0, atol=1e-5) and abs(woman[1]) < 1e-5 and woman[0] > 0 and king[1] > 0
    assert "x = ␣man → ␣woman, y = ␣man → ␣king" in panel.status.text()
    panel.axis_y.setText("king")  # one word: not an axis
    panel.run_projection()
    assert "two words for each axis" in panel.status.text()
    panel.method.setCurrentIndex(panel.method.findData("pca"))
    assert not panel.axis_x.isVisibleTo(panel)


def _wheel(widget, modifiers) -> None:
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    target = widget.viewport()
    centre = QPointF(target.rect().center())
    event = QWheelEvent(centre, QPointF(target.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, -120),
                        Qt.MouseButton.NoButton, modifiers, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(target, event)


def test_the_wheel_over_the_plane_scrolls_the_page_unless_ctrl_or_a_click_says_zoom(qtbot):
    from PySide6.QtCore import QEvent, Qt
    from PySide6.QtWidgets import QScrollArea, QVBoxLayout, QWidget

    from embviz.ui.plots.map_view import MapView

    page = QWidget()
    plane = MapView()
    plane.wheel_scrolls_page = True
    layout = QVBoxLayout(page)
    layout.addWidget(plane)
    layout.addSpacing(2000)  # a page taller than its window
    plane.setMinimumHeight(300)
    area = QScrollArea()
    area.setWidget(page)
    area.setWidgetResizable(True)
    area.resize(500, 400)
    qtbot.addWidget(area)
    area.show()
    qtbot.waitExposed(area)
    plane.set_labels([f"w{i}" for i in range(50)])
    plane.set_points(np.arange(50), np.random.default_rng(0).normal(size=(50, 2)).astype(np.float32))
    span = lambda: np.ptp(plane.vb.viewRange()[0])  # noqa: E731
    before = span()
    _wheel(plane, Qt.KeyboardModifier.NoModifier)
    assert area.verticalScrollBar().value() > 0 and span() == pytest.approx(before)
    scrolled = area.verticalScrollBar().value()
    _wheel(plane, Qt.KeyboardModifier.ControlModifier)
    assert span() != pytest.approx(before) and area.verticalScrollBar().value() == scrolled  # zoomed (out: the wheel turned down)
    qtbot.mouseClick(plane.viewport(), Qt.MouseButton.LeftButton, pos=plane.viewport().rect().center())  # engaged until the mouse leaves
    zoomed = span()
    _wheel(plane, Qt.KeyboardModifier.NoModifier)
    assert span() != pytest.approx(zoomed) and area.verticalScrollBar().value() == scrolled
    plane.leaveEvent(QEvent(QEvent.Type.Leave))
    _wheel(plane, Qt.KeyboardModifier.NoModifier)
    assert area.verticalScrollBar().value() > scrolled
