"""Colour by, clusters on the map and rectangle / lasso selection, in the real window."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from embviz.core.table.token_kinds import KIND_NAMES
from embviz.ui import style
from embviz.ui.plots.map_select import points_in_polygon, rectangle

from helpers import wait_for


def choose(combo, key) -> None:
    combo.setCurrentIndex(combo.findData(key))


def test_points_in_polygon_even_odd_rule():
    pts = np.array([(0.5, 0.5), (1.5, 0.5), (0.5, 1.5), (-0.1, 0.2), (0.9, 0.1)])
    square = rectangle(0, 0, 1, 1)
    assert points_in_polygon(pts, square).tolist() == [True, False, False, False, True]
    # An L shape: (0.5, 1.5) is inside, (1.5, 1.5) is in the notch.
    ell = np.array([(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)])
    assert points_in_polygon(np.array([(0.5, 1.5), (1.5, 1.5), (1.5, 0.5)]), ell).tolist() == [True, False, True]
    assert not points_in_polygon(pts, square[:2]).any()  # two vertices enclose nothing


@pytest.mark.default_model
def test_colour_by_kind_sets_a_brush_per_point_and_a_legend(qtbot, smol):
    panel = smol.map_panel
    view = panel.view
    choose(panel.colour_by, "kind")
    wait_for(qtbot, lambda: view.colour_codes() is not None, 30_000)
    codes = view.colour_codes()
    assert len(codes) == 49152 and len(view._brushes) == 49152
    word = view.labels.index("␣king")
    assert KIND_NAMES[codes[np.flatnonzero(view.ids == word)[0]]].startswith("word start")
    assert view._brushes[word].color().name() == style.KIND_COLORS[0].name()
    entries = view.colour_legend_entries()
    assert entries[0].startswith("word start (␣…) (") and any(e.startswith("special (17)") for e in entries)
    assert sum(int(e.rsplit("(", 1)[1].rstrip(")").replace(",", "")) for e in entries) == 49152
    assert view.colour_legend.isVisible() and view.mode == "density"
    # Zoomed in, the points drawn carry their own colours.
    panel.show_word_set("weekdays")
    wait_for(qtbot, lambda: "weekdays" in view.word_set_names(), 30_000)
    x, y = view.position_of(view.labels.index("␣Monday")).tolist()
    view.vb.setRange(xRange=(x - 0.01, x + 0.01), yRange=(y - 0.01, y + 0.01), padding=0)
    wait_for(qtbot, lambda: view.mode == "points", 10_000)
    drawn = view.points.data
    assert len({b.color().name() for b in drawn["brush"]}) > 1
    assert view._sets["weekdays"][0].zValue() > view.points.zValue()  # highlights stay on top
    choose(panel.colour_by, "id")
    wait_for(qtbot, lambda: view.colour_legend_entries() and view.colour_legend_entries()[0].startswith("id 49,151"), 30_000)
    assert view.colour_legend_entries()[-1] == "id 0 (low)"
    choose(panel.colour_by, "none")
    assert view.colour_codes() is None and not view.colour_legend.isVisible()


def test_every_cluster_has_a_colour_and_the_key_names_the_largest():
    from embviz.core.maps.clusters import Cluster
    from embviz.ui.plots.colouring import KEY_CLUSTERS, cluster_centres, cluster_colours

    clusters = [Cluster(50 - c, f"pieces: p{c}", [], False) for c in range(KEY_CLUSTERS)]
    clusters += [Cluster(30, "June April July", [], True), Cluster(20, "single letters", [], False)]
    codes = np.repeat(np.arange(len(clusters)), [c.size for c in clusters])
    _, table, legend = cluster_colours(codes, clusters, "graph", len(clusters))
    assert style.POINT_COLOR not in table and len(set(map(QColor.name, table[:KEY_CLUSTERS]))) == KEY_CLUSTERS
    assert [text for _, text in legend] == [f"pieces: p{c} ({50 - c})" for c in range(KEY_CLUSTERS)] + ["… 2 more neighbour-graph clusters"]
    coords = np.arange(len(codes) * 2, dtype=float).reshape(-1, 2)
    names = [name for name, *_ in cluster_centres(codes, coords, clusters, table)]
    assert names[:2] == ["June April July", "pieces: p0"] and len(names) == len(clusters)  # words first


@pytest.mark.default_model
def test_colour_by_cluster_names_clusters_on_the_map(qtbot, smol):
    panel = smol.map_panel
    view = panel.view
    choose(panel.cluster_method, "kmeans")  # exactly k clusters (the neighbour graph's are about k)
    panel.clusters_k.setValue(12)
    choose(panel.colour_by, "cluster")
    wait_for(qtbot, lambda: view.colour_codes() is not None and view._cluster_labels, 120_000)
    codes = view.colour_codes()
    assert set(np.unique(codes)) == set(range(12))
    assert len(view._cluster_labels) == 12  # every cluster is named
    # Names are placed by a 30 ms timer after the map changes: some fit at this zoom, the others are dropped.
    wait_for(qtbot, lambda: view.placed_cluster_labels, 10_000)
    assert set(view.placed_cluster_labels) <= {label for label, *_ in view._cluster_labels}
    # The key names the six largest named clusters with their sizes, then says how many more.
    sizes = np.bincount(codes).tolist()
    entries = view.colour_legend_entries()
    named = [int(e.rsplit("(", 1)[1].rstrip(")").replace(",", "")) for e in entries
             if not e.startswith("…")]
    assert len(named) == 6 and named == sorted(named, reverse=True) and set(named) <= set(sizes)
    assert "clusters; the largest named by whole words: " in smol.message.full_text
    # HDBSCAN of the map's own points: its noise stays grey.
    choose(panel.cluster_method, "hdbscan")
    assert panel.clusters_k.isHidden()
    wait_for(qtbot, lambda: any("in no cluster" in e for e in view.colour_legend_entries()), 120_000)
    assert (view.colour_codes() < 0).any()


@pytest.mark.default_model
def test_rectangle_and_lasso_select_exactly_the_points_inside(qtbot, smol, tmp_path):
    window = smol
    panel = window.map_panel
    view = panel.view
    x, y = view.coords[:, 0], view.coords[:, 1]
    cx, cy = float(np.median(x)), float(np.median(y))
    w = 0.02 * float(np.ptp(x))
    inside = (x > cx - w) & (x < cx + w) & (y > cy - w) & (y < cy + w)
    picked = view.select_polygon(rectangle(cx - w, cy - w, cx + w, cy + w))
    assert sorted(picked) == sorted(view.ids[inside].tolist()) and len(picked) > 5
    assert panel.state.selection == picked and panel.selection.table.rowCount() == len(picked)
    assert "selection" in view.word_set_names()
    # A lasso: a triangle, tested against the half-plane it spans.
    tri = np.array([(cx - w, cy - w), (cx + w, cy - w), (cx - w, cy + w)])
    lasso = view.select_polygon(tri)
    expect = inside & ((x - (cx - w)) + (y - (cy - w)) < 2 * w)
    assert sorted(lasso) == sorted(view.ids[expect].tolist())
    # CSV of the selection: id and token of each.
    path = panel.export_selection(str(tmp_path / "sel.csv"))
    rows = list(csv.reader(open(path, encoding="utf-8")))
    assert rows[0] == ["id", "token"] and [int(r[0]) for r in rows[1:]] == lasso
    assert rows[1][1] == view.labels[lasso[0]]
    # A word set from it.
    panel.add_selection_set("my corner")
    wait_for(qtbot, lambda: "my corner" in view.word_set_names(), 30_000)
    assert window.settings.word_sets["my corner"] == [view.labels[i] for i in lasso]
    # Neighbours of the mean: the selected tokens themselves are left out.
    panel.selection.neighbours_button.click()
    nb = window.neighbours
    wait_for(qtbot, lambda: "mean of" in nb.heading.text() and nb.table.rowCount() == 10, 30_000)
    assert not set(nb.table.ids) & set(lasso)


@pytest.mark.default_model
def test_weekday_selection_mean_finds_the_other_weekdays(qtbot, smol):
    window = smol
    ids = [window.map_panel.view.labels.index(w) for w in ("␣Monday", "␣Tuesday", "␣Friday")]
    window.map_panel.set_selection(ids)
    window.map_panel.selection.neighbours_button.click()
    nb = window.neighbours
    wait_for(qtbot, lambda: "mean of 3 selected tokens" in nb.heading.text(), 30_000)
    top = [nb.table.item(r, 0).text() for r in range(3)]
    assert set(top) <= {"␣Wednesday", "␣Thursday", "␣Saturday", "␣Sunday"}
    assert float(nb.table.item(0, 2).text()) == pytest.approx(0.938, abs=0.002)


def test_colour_controls_keep_the_window_inside_1280_at_150_percent(qtbot, window):
    before = style.text_scale()
    style.set_text_scale(1.5)
    try:
        choose(window.map_panel.colour_by, "cluster")
        QApplication.processEvents()
        assert window.minimumSizeHint().width() <= 1280
    finally:
        style.set_text_scale(before)  # a failed assertion must not leave the next tests at 150 %


def test_lesson_model_colours_by_kind_and_clusters(qtbot, window):
    window.open_model("toy4")
    panel = window.map_panel
    view = panel.view
    wait_for(qtbot, lambda: view.ids.size == 4, 30_000)
    choose(panel.colour_by, "kind")
    wait_for(qtbot, lambda: view.colour_codes() is not None, 30_000)
    assert view.colour_codes().tolist() == [0, 0, 0, 0]  # four whole words
    assert view.colour_legend_entries() == ["word start (␣…) (4)"]
    panel.clusters_k.setValue(2)
    choose(panel.colour_by, "cluster")
    wait_for(qtbot, lambda: view._cluster_labels, 30_000)
    names = sorted(label for label, *_ in view._cluster_labels)
    assert names == ["car truck", "cat dog"] or names == ["car truck", "dog cat"] or names == ["cat dog", "truck car"]
    panel.clusters_k.setValue(9)  # more clusters than rows: the control stops at the model's four
    assert panel.clusters_k.value() == panel.state.clusters_k == 4 and view.ids.size == 4


def test_contours_box_follows_the_map_state(qtbot, window):
    panel = window.map_panel
    assert not panel.contours_box.isChecked() and not panel.view.contours.on
    panel.contours_box.setChecked(True)
    assert panel.state.contours and panel.view.contours.on
    panel.state.contours = False  # a restored session's state: the box and the map follow it
    assert not panel.contours_box.isChecked() and not panel.view.contours.on
