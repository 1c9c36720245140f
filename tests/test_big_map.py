"""A map of 2,000,000 points: the grid index answers as a pass over every point would; the
density image holds every point once the view settles; hover, click, search and labels pick
the right tokens."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QImage, QPainter

from embviz.ui import style
from embviz.ui.plots import map_view
from embviz.ui.plots.map_density import density_image
from embviz.ui.plots.map_index import GridIndex

N = 2_000_000


def _brute_rows(coords: np.ndarray, rect) -> np.ndarray:
    x, y = coords[:, 0], coords[:, 1]
    return np.flatnonzero((x >= rect[0]) & (x <= rect[1]) & (y >= rect[2]) & (y <= rect[3]))


@pytest.mark.parametrize("n", [0, 1, 7, 3_000, 60_000])
def test_the_grid_index_answers_as_a_pass_over_every_point(n):
    rng = np.random.default_rng(n)
    coords = rng.normal(size=(n, 2)).astype(np.float32)
    if n == 7:
        coords[:] = (1.0, -2.0)  # all on one spot: cells of no width
    coords[: n // 10] *= 0.01  # a dense core: cells of many points
    index = GridIndex(coords)
    for _ in range(200):
        (x0, x1), (y0, y1) = np.sort(rng.normal(size=2) * 1.5), np.sort(rng.normal(size=2) * 1.5)
        rect = (float(x0), float(x1), float(y0), float(y1))
        want = _brute_rows(coords, rect)
        assert index.count(rect) == len(want)
        assert np.array_equal(index.rows_in(rect), want)
        assert sorted(map(tuple, index.points_in(rect).tolist())) == sorted(map(tuple, coords[want].tolist()))
        cells = index.cells_rect(rect)
        block = index.block(rect)
        xs, ys = index.xs[block], index.ys[block]
        assert set(index.rows[block].tolist()) >= set(want.tolist())
        if cells is not None:
            assert ((xs >= cells[0]) & (xs <= cells[1]) & (ys >= cells[2]) & (ys <= cells[3])).all()
        if n:
            q, radius = rng.normal(size=2) * 0.5, float(abs(rng.normal()) * 0.2)
            d2 = ((coords.astype(np.float64) - q) ** 2).sum(1)
            got = index.nearest(float(q[0]), float(q[1]), radius)
            assert (got >= 0) == (d2.min() <= radius**2)
            assert got < 0 or d2[got] == d2.min()


def test_a_map_of_fifty_thousand_keeps_its_unshaded_exact_image(qtbot):
    view = map_view.MapView()
    qtbot.addWidget(view)
    view.resize(1000, 700)
    view.show()
    coords = np.random.default_rng(3).normal(size=(49_152, 2)).astype(np.float32)
    view.set_points(np.arange(len(coords)), coords)
    assert view.mode == "density" and not view._density_stale  # every point binned at once
    region, dx, dy = view._density_key
    (x0, x1), (y0, y1) = view.vb.viewRange()
    assert np.isclose(dx, (x1 - x0) / int(view.vb.width() / 2)) and np.isclose(dy, (y1 - y0) / int(view.vb.height() / 2))
    want = density_image(coords[:, 0], coords[:, 1], None, region, view.density.image.shape[:2])
    assert np.array_equal(view.density.image, want)
    # As it always was: the plain grey, more opaque by 1 - exp(-0.8 × count), never shaded.
    (bh, bw), (rx0, rx1, ry0, ry1) = want.shape[:2], region
    ix = np.minimum(((coords[:, 0] - rx0) * (bw / (rx1 - rx0))).astype(np.int64), bw - 1)
    iy = np.minimum(((coords[:, 1] - ry0) * (bh / (ry1 - ry0))).astype(np.int64), bh - 1)
    counts = np.bincount(iy * bw + ix, minlength=bw * bh).reshape(bh, bw)
    assert np.array_equal(want[..., 3], (255 * (1 - np.exp(-0.8 * counts))).astype(np.uint8))
    grey = style.POINT_COLOR
    assert (want[..., :3] == (grey.red(), grey.green(), grey.blue())).all()


@pytest.fixture(scope="module")
def big(qapp):
    """One 2,000,000-point map (a dense core in a wide cloud), shared by the tests below."""
    rng = np.random.default_rng(7)
    coords = rng.normal(size=(N, 2)).astype(np.float32)
    coords[: N // 4] *= 0.15
    view = map_view.MapView()
    view.resize(1000, 700)
    view.show()
    view.set_labels([f"tok{i}" for i in range(N)])
    view.set_points(np.arange(N), coords)
    qapp.processEvents()
    yield view, coords
    view.close()
    view.deleteLater()
    qapp.processEvents()


def _picture(view) -> QImage:
    image = QImage(view.width(), view.height(), QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    view.render(painter)
    painter.end()
    return image


def _pixel(view, image: QImage, x: float, y: float) -> QColor:
    at = view.mapFromScene(view.vb.mapViewToScene(QPointF(x, y)))
    return image.pixelColor(at.x(), at.y())


def test_a_two_million_point_map_draws_every_point_once_settled(big, qtbot):
    view, coords = big
    view.fit()
    assert view.mode == "density" and view.density.isVisible() and not view.points.isVisible()
    qtbot.waitUntil(lambda: not view._label_timer.isActive(), timeout=10_000)
    assert not view._density_stale  # the settled image bins every point, not a sample
    region, _, _ = view._density_key
    shape = view.density.image.shape[:2]
    want = density_image(coords[:, 0], coords[:, 1], None, region, shape, shade=True)
    assert np.array_equal(view.density.image, want)
    # The core's cells are darker than the cloud's: a map of millions is not one flat blob.
    plain = density_image(coords[:, 0], coords[:, 1], None, region, shape)
    darker = want[..., :3].sum(-1) < plain[..., :3].sum(-1)
    assert darker.sum() > 1000 and want[..., :3].min() < 0.6 * plain[..., :3].max()
    assert np.array_equal(want[~darker], plain[~darker])  # only crowded cells change, and only in colour
    assert np.array_equal(want[..., 3], plain[..., 3])
    picture = _picture(view)
    background = pg.mkColor(style.BACKGROUND)
    assert _pixel(view, picture, 0.0, 0.0) != background  # the dense core is drawn
    corner = view.mapFromScene(view.vb.mapViewToScene(QPointF(float(coords[:, 0].max()), float(coords[:, 1].max()))))
    assert picture.pixelColor(min(corner.x() + 20, view.width() - 1), max(corner.y() - 20, 0)) == background
    # A pan step reuses the image; a zoom step shows the one made before until the view settles.
    key = view._density_key
    view.vb.translateBy(x=0.05)
    assert view._density_key == key
    view.vb.scaleBy((0.7, 0.7))
    assert view._density_key == key and view._density_stale
    view._settle()
    assert view._density_key != key and not view._density_stale


def test_hover_and_click_pick_the_nearest_of_two_million(big, qtbot):
    view, coords = big
    target = 1_234_567  # in the wide cloud, outside the core
    x, y = coords[target].tolist()
    view.vb.setRange(xRange=(x - 0.05, x + 0.05), yRange=(y - 0.05, y + 0.05), padding=0)
    view._settle()
    scene = view.vb.mapViewToScene(QPointF(x, y))
    assert view.nearest_at(scene) == target
    # Zoomed out, the nearest of the crowd under the mouse, as a pass over every point finds it.
    view.fit()
    px = view.vb.viewPixelSize()
    radius = map_view.HOVER_RADIUS_PX * max(px)
    for probe in [(0.0, 0.0), (1.3, -0.7), (x, y)]:
        d2 = ((coords.astype(np.float64) - probe) ** 2).sum(1)
        got = view.nearest_at(view.vb.mapViewToScene(QPointF(*probe)))
        assert got >= 0 and d2[got] == d2.min() and d2.min() <= radius**2
    # Real mouse events, zoomed in: the hover box names the point, a click announces it.
    view.vb.setRange(xRange=(x - 0.05, x + 0.05), yRange=(y - 0.05, y + 0.05), padding=0)
    where = view.mapFromScene(view.vb.mapViewToScene(QPointF(x, y)))
    with qtbot.waitSignal(view.pointHovered) as hovered:
        qtbot.mouseMove(view.viewport(), where)
    assert hovered.args == [target] and view.hover_text.isVisible() and f"tok{target}" in view.hover_text.toPlainText()
    with qtbot.waitSignal(view.pointClicked) as clicked:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=where)
    assert clicked.args == [target]


def test_labels_name_the_points_in_view_when_zoomed_in(big):
    view, coords = big
    target = 1_500_000
    x, y = coords[target].tolist()
    view.vb.setRange(xRange=(x - 0.02, x + 0.02), yRange=(y - 0.014, y + 0.014), padding=0)
    view._settle()
    in_view = _brute_rows(coords, view._view_rect())
    assert 0 < len(in_view) <= 200 and view.count_in_view() == len(in_view)
    assert view.mode == "points" and view.points.isVisible()
    assert np.array_equal(view.rows_in_view(), in_view)
    assert view.placed_labels and set(view.placed_labels) <= set(in_view.tolist())
    shown = {label.toPlainText() for label in view._label_items if label.isVisible()}
    assert shown == {f"tok{i}" for i in view.placed_labels}
    # Zoomed out, no token is labelled: too many are in view.
    view.fit()
    view._settle()
    assert view.placed_labels == []


def test_search_highlights_and_labels_the_found_point(big, qtbot):
    view, coords = big
    found = 42  # inside the dense core
    view.fit()
    view._settle()
    view.set_word_set("search", [found], style.SEARCH_COLOR)
    view.set_selected([found])
    view.zoom_to([found])
    view._settle()
    assert view.mode == "density"  # the core is dense even this far in
    scatter = view._sets["search"][0]
    assert np.allclose(np.column_stack([scatter.data["x"], scatter.data["y"]]), coords[[found]])
    assert found in view.placed_labels
    picture = _picture(view)
    colour = _pixel(view, picture, *coords[found].tolist())
    assert (colour.red(), colour.green(), colour.blue()) == (style.SEARCH_COLOR.red(), style.SEARCH_COLOR.green(),
                                                              style.SEARCH_COLOR.blue())
    view.remove_word_set("search")
    view.set_selected([])
