"""Many hits on a big map (a search, a lasso, a word set) are looked up in one sorted lookup:
the same points, the same legend count and the same zoom as looking each one up."""

from __future__ import annotations

import numpy as np
import pytest

from embviz.ui import style
from embviz.ui.plots import map_view

N = 40_000


def one_by_one(view, ids) -> list[int]:
    return [i for i in ids if view.position_of(i) is not None]


@pytest.fixture
def view(qtbot):
    v = map_view.MapView()
    qtbot.addWidget(v)
    v.resize(800, 600)
    return v


@pytest.mark.parametrize("order", ["sorted", "shuffled"])
def test_many_hits_are_the_points_on_the_map(view, order):
    rng = np.random.default_rng(11)
    ids = np.sort(rng.choice(3 * N, N, replace=False)) if order == "sorted" else rng.permutation(3 * N)[:N]
    view.set_points(ids.astype(np.int64), rng.normal(size=(N, 2)).astype(np.float32))
    hits = rng.choice(3 * N, N // 2, replace=False).tolist() + [-1, 10 * N, 5, 5]
    shown = view.on_map(hits)
    assert shown.tolist() == one_by_one(view, hits)
    assert 0 < len(shown) < len(hits)

    view.set_word_set("search", hits, style.SEARCH_COLOR)
    (_, label), = view.legend.items
    assert label.text == f"search ({len(shown)})"

    few = shown[:50].tolist() + [10 * N]
    view.zoom_to(few)
    got = view.getViewBox().viewRange()
    points = np.array([view.position_of(i) for i in few if view.position_of(i) is not None], dtype=np.float32)
    view.zoom_to([])  # nothing on the map: the view stays
    assert view.getViewBox().viewRange() == got
    lo, hi = points.min(0), points.max(0)
    (x0, x1), (y0, y1) = got
    assert x0 <= lo[0] and hi[0] <= x1 and y0 <= lo[1] and hi[1] <= y1


def test_no_points_no_hits(view):
    view.set_points(np.zeros(0, np.int64), np.zeros((0, 2), np.float32))
    assert view.on_map([1, 2, 3]).size == 0 and view.on_map([]).size == 0
