"""The map by zoom level: coarse names zoomed out, fine names zoomed in, tokens further in;
contours; word-set markers that stay apart from the colouring; dots that grow with zoom;
highlighted points drawn at their own places, labelled near them."""

from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtGui import QColor

from embviz.ui import style
from embviz.ui.plots import colouring
from embviz.ui.plots.map_labels import TOKEN_STEPS
from embviz.ui.plots.map_markers import GROWN_PX

GROUPS, FINE_PER_GROUP, PER_CLUSTER = 8, 6, 150


@pytest.fixture
def view(qtbot):
    from embviz.ui.plots.map_view import MapView

    v = MapView()
    qtbot.addWidget(v)
    v.resize(1000, 700)
    v.show()
    qtbot.waitExposed(v)
    return v


def _blobs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(coords, fine cluster of each point, coarse group of each fine cluster): 8 groups far
    apart, each of 6 tight clusters."""
    rng = np.random.default_rng(0)
    coarse_of = np.repeat(np.arange(GROUPS), FINE_PER_GROUP)
    centres = []
    for g in range(GROUPS):
        middle = 100 * np.array([np.cos(g * 2 * np.pi / GROUPS), np.sin(g * 2 * np.pi / GROUPS)])
        for f in range(FINE_PER_GROUP):
            centres.append(middle + 15 * np.array([np.cos(f * 2 * np.pi / FINE_PER_GROUP), np.sin(f * 2 * np.pi / FINE_PER_GROUP)]))
    codes = np.repeat(np.arange(len(centres)), PER_CLUSTER)
    coords = (np.array(centres)[codes] + rng.normal(scale=1.5, size=(len(codes), 2))).astype(np.float32)
    return coords, codes, coarse_of


def _show(view, points: np.ndarray) -> None:
    (x0, y0), (x1, y1) = points.min(0).tolist(), points.max(0).tolist()
    view.vb.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)


def _coloured_map(view) -> tuple[np.ndarray, np.ndarray]:
    coords, codes, coarse_of = _blobs()
    view.set_labels([f"tok{i}" for i in range(len(coords))])
    view.set_points(np.arange(len(coords)), coords)
    fine = [type("C", (), {"label": f"fine{c}", "size": PER_CLUSTER})() for c in range(GROUPS * FINE_PER_GROUP)]
    coarse = [type("C", (), {"label": f"GROUP{g}", "size": PER_CLUSTER * FINE_PER_GROUP})() for g in range(GROUPS)]
    codes_, table, legend = colouring.cluster_colours(codes, fine, "graph", 48)
    view.set_colours(codes_, table, legend)
    view.set_cluster_labels(colouring.cluster_centres(codes, coords, fine, table),
                            colouring.coarse_centres(codes, coords, coarse, coarse_of))
    view.fit()
    view._settle()
    return coords, codes


def test_names_follow_the_zoom_coarse_then_fine_then_tokens(view):
    coords, codes = _coloured_map(view)
    assert view.label_level == "coarse"
    assert view.placed_cluster_labels and all(name.startswith("GROUP") for name in view.placed_cluster_labels)
    assert not view.placed_labels  # thousands of points in view: no token is labelled
    view.zoom_to(np.flatnonzero(codes < FINE_PER_GROUP).tolist())  # one coarse group
    view._settle()
    assert view.label_level == "fine"
    assert view.placed_cluster_labels and all(name.startswith("fine") for name in view.placed_cluster_labels)
    # Further in: about a cluster's 150 points in view, every one labelled that has room.
    members = np.flatnonzero(codes == 0)
    _show(view, coords[members])
    view._settle()
    assert 50 <= len(view.rows_in_view()) <= 200
    assert len(view.placed_labels) >= 20 and set(view.placed_labels) <= set(view.ids[view.rows_in_view()].tolist())


def test_points_grow_with_zoom(view):
    coords, codes = _coloured_map(view)
    whole = view.dot_size()
    assert whole == 4.0  # 7,200 points: dots, as before
    members = np.flatnonzero(codes == 0)
    _show(view, coords[members])
    view._settle()
    assert 2.5 * whole <= view.dot_size() <= GROWN_PX
    name = "weekdays"
    view.set_word_set(name, [int(members[0])], style.SET_COLORS[0])
    assert view._sets[name][0].opts["size"] > view.dot_size()  # a set's marker stays bigger than the dots


def test_word_set_markers_differ_from_every_colour_in_use(view):
    rng = np.random.default_rng(1)
    coords = rng.normal(size=(3000, 2)).astype(np.float32)
    view.set_labels([f"t{i}" for i in range(3000)])
    view.set_points(np.arange(3000), coords)
    view.set_word_set("months", list(range(12)), style.SET_COLORS[1])  # the word starts' blue
    assert view.set_marker("months")[3] is None  # a plain grey map: no halo needed
    codes = rng.integers(0, len(style.KIND_COLORS), 3000)
    view.set_colours(*colouring.kind_colours(codes, [f"kind {k}" for k in range(len(style.KIND_COLORS))]))
    fill, outline, width, halo = view.set_marker("months")
    in_use = {QColor(c).rgb() for c in style.KIND_COLORS} | {style.POINT_COLOR.rgb()}
    assert fill.rgb() in in_use  # the clash the halo is for
    assert halo is not None and halo.rgb() not in in_use and width >= 2 and outline.lightness() < 40
    assert view._halo.isVisible() and len(view._halo.data) == 12
    assert view._halo.opts["size"] > view._sets["months"][0].opts["size"]  # the halo rings the marker
    view.set_colours(None)
    assert not view._halo.isVisible()


def _label_distances(view, ids) -> dict[int, float]:
    """How far each placed label's box is from its own point, in pixels."""
    frame = view._frame()
    out = {}
    for item, token_id in zip(view._label_items, view.placed_labels):
        if token_id in ids:
            px, py = frame.to_px(*view.position_of(token_id))
            left, top = frame.to_px(item.pos().x(), item.pos().y())
            rect = item.boundingRect()
            nx, ny = min(max(px, left), left + rect.width()), min(max(py, top), top + rect.height())
            out[token_id] = float(np.hypot(nx - px, ny - py))
    return out


def test_weekdays_on_one_spot_each_get_a_label_beside_their_own_markers(view):
    rng = np.random.default_rng(2)
    coords = rng.uniform(-50, 50, size=(2000, 2)).astype(np.float32)
    coords[:7] = (1.0, 1.0)  # the seven weekdays of a t-SNE map, on nearly one point
    coords[:7] += rng.normal(scale=1e-3, size=(7, 2)).astype(np.float32)
    days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    view.set_labels(days + [f"t{i}" for i in range(7, 2000)])
    view.set_points(np.arange(2000), coords)
    view.set_word_set("weekdays", list(range(7)), style.SET_COLORS[0])
    view._settle()
    assert sorted(view.placed_labels[:7]) == list(range(7))
    x, y = view._sets["weekdays"][0].getData()
    assert np.allclose(np.column_stack([x, y]), coords[:7])  # each marker where the map puts its word
    height = view._label_items[0].boundingRect().height()
    far = _label_distances(view, set(range(7)))
    assert max(far.values()) <= (TOKEN_STEPS + 1) * height
    # A label off its point is tied to it: the line starts at the word's own place.
    assert view.leader_lines and {i for i, _, _ in view.leader_lines} <= set(range(7))
    assert all(np.allclose(start, coords[i], atol=1e-3) for i, start, _ in view.leader_lines)


def test_a_collapsed_t_sne_cloud_keeps_its_words_in_it(view):
    """Early in a t-SNE every point sits in a tiny disc: the 60 highlighted words stay in it
    (no ring or column of markers around it) and only those labels that fit near it show."""
    rng = np.random.default_rng(4)
    coords = rng.normal(scale=1e-4, size=(3000, 2)).astype(np.float32)
    coords[-2:] = ((-1.0, -1.0), (1.0, 1.0))  # the view's extent, so the cloud is a few pixels wide
    view.set_labels([f"word{i}" for i in range(3000)])
    view.set_points(np.arange(3000), coords)
    view.set_word_set("sets", list(range(60)), style.SET_COLORS[0])
    view.vb.setRange(xRange=(-1, 1), yRange=(-1, 1), padding=0)
    view._settle()
    x, y = view._sets["sets"][0].getData()
    assert np.allclose(np.column_stack([x, y]), coords[:60])
    placed = [i for i in view.placed_labels if i < 60]
    height = view._label_items[0].boundingRect().height()
    assert 0 < len(placed) < 60 and max(_label_distances(view, set(placed)).values()) <= (TOKEN_STEPS + 1) * height


def test_contours_switch_on_and_off_and_stay_quick(view):
    rng = np.random.default_rng(3)
    n = 49_152
    view.set_labels([f"t{i}" for i in range(n)])
    view.set_points(np.arange(n), rng.normal(size=(n, 2)).astype(np.float32))
    view._settle()
    assert not view.contours.shown()
    view.set_contours_on(True)
    assert view.contours.shown()
    start = time.perf_counter()
    view.vb.scaleBy((0.8, 0.8))
    view._settle()
    print(f"contours and labels, one zoom step over {n:,} points: {1000 * (time.perf_counter() - start):.1f} ms")
    assert view.contours.shown()
    view.set_contours_on(False)
    assert not view.contours.shown()


def test_session_keeps_contours(tmp_path):
    from embviz.state.session import ModelRef, Session, load_session, save_session
    from embviz.state.tabs import MapState

    path = save_session(Session(model=ModelRef("toy4", "toy4", {"vocab_size": 4, "dim": 2}), states={"map": MapState(contours=True)}),
                        tmp_path / "c.embviz")
    assert load_session(path)["map"].contours is True
