"""Maps of big tables, on small ones: the caption's blocked exact search and its sample,
t-SNE of a sample with the other rows placed, the choices offered before a long map,
PCA against numpy."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from embviz.core.maps import knn
from embviz.state import map_estimate as estimate
from embviz.core.maps.knn import neighbour_preservation
from embviz.core.maps.placement import nearest_sampled, sample_positions
from embviz.core.maps.projection import pca, project
from embviz.core.readers.assemble import assemble
from embviz.core.table.similarity import UNIT_TABLE, unit_table
from embviz.core.table.vocab import vocabulary_from_words


def table_model(rows: np.ndarray):
    table = torch.tensor(rows, dtype=torch.float32)
    return assemble(name="t", source="t", table=table, vocab=vocabulary_from_words([f"w{i}" for i in range(len(rows))]),
                    device=torch.device("cpu"), kind="table")


def clusters(n_per: int = 50, groups: int = 6, dim: int = 24, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(groups), n_per)
    centres = rng.normal(size=(groups, dim)) * 4
    rows = centres[labels] + rng.normal(size=(labels.size, dim)) * rng.uniform(0.5, 3.0, size=(labels.size, 1))
    return rows.astype(np.float32), labels


def brute_neighbours(rows: np.ndarray, picked: np.ndarray, k: int) -> np.ndarray:
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    scores = unit[picked] @ unit.T
    scores[np.arange(len(picked)), picked] = -np.inf
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


@pytest.mark.parametrize("unit_built", [False, True])
def test_the_captions_blocked_search_finds_the_exact_neighbours(monkeypatch, unit_built):
    monkeypatch.setattr(knn, "CHUNK_SCORES", 7 * 40)  # 40 picked rows against 7-row blocks: many merges
    rows, _ = clusters(dim=16)
    rows *= np.random.default_rng(1).uniform(0.1, 10, size=(len(rows), 1)).astype(np.float32)  # lengths vary
    model = table_model(rows)
    if unit_built:
        unit_table(model)
    assert (UNIT_TABLE in model.cache) == unit_built
    ids = np.arange(len(rows))
    picked = np.sort(np.random.default_rng(2).choice(len(rows), 40, replace=False))
    found = knn._sample_neighbours(model, ids, picked, 5)
    truth = brute_neighbours(rows, picked, 5)
    assert (np.sort(found, axis=1) == np.sort(truth, axis=1)).all()
    some = ids[::3]  # a subset of the rows: positions into it
    found = knn._sample_neighbours(model, some, np.arange(0, len(some), 4), 5)
    truth = brute_neighbours(rows[some], np.arange(0, len(some), 4), 5)
    assert (np.sort(found, axis=1) == np.sort(truth, axis=1)).all()


def test_a_big_table_is_measured_on_fewer_rows_and_the_caption_says_how():
    assert knn.faithful_sample(2_000_000, 300) == knn.FAITHFUL_MIN_SAMPLE == 200
    assert knn.faithful_sample(49_152, 576) == 1000  # the default model keeps its 1,000
    assert knn.faithful_sample(500, 16) == 500
    rows, _ = clusters()
    model = table_model(rows)
    ids = np.arange(len(rows))
    coords = pca(model, ids)[0]
    exact = neighbour_preservation(model, ids, coords, sample=100)
    assert exact.method == "exact" and exact.how_measured() == "Measured on 100 sampled rows, their true neighbours from an exact search."
    graph = neighbour_preservation(model, ids, coords, knn=brute_neighbours(rows, ids, 10))
    assert graph.method == "graph" and "from the map's neighbour graph" in graph.how_measured()
    assert graph.share == pytest.approx(neighbour_preservation(model, ids, coords, sample=len(ids)).share)
    assert graph.as_dict()["method"] == "graph"


def test_a_sampled_tsne_places_every_other_row_beside_its_nearest_sampled_rows():
    rows, labels = clusters()
    model = table_model(rows)
    ids = np.arange(len(rows))
    previews = []
    projection = project(model, "tsne", ids, sample=90, progress=lambda f, s, p: previews.append(p))
    sampled = sample_positions(len(ids), 90)
    assert projection.method == "tsne" and (projection.ids == ids).all() and projection.coords.shape == (len(ids), 2)
    assert np.isfinite(projection.coords).all()
    assert any("90 sampled rows" in note and "210 placed" in note for note in projection.notes)
    assert projection.sampled == 90 and project(model, "pca", ids, sample=90).sampled == 0  # a PCA maps every row
    assert {len(p) for p in previews if isinstance(p, np.ndarray)} == {90, len(ids)}  # the sample's, then the whole map's
    others = np.setdiff1d(ids, sampled)
    near = nearest_sampled(model, ids[others], ids[sampled], 10)
    expected = np.median(projection.coords[sampled][near], axis=1)
    assert np.allclose(projection.coords[others], expected, atol=1e-5)  # at the median of its 10 nearest sampled rows
    # ... so on the map a placed row sits among its own cluster's sampled rows.
    sampled_coords = projection.coords[sampled]
    closest = np.argmin(((projection.coords[others, None, :] - sampled_coords[None]) ** 2).sum(-1), axis=1)
    assert (labels[sampled][closest] == labels[others]).mean() > 0.95
    faithful = neighbour_preservation(model, ids, projection.coords)
    assert faithful is not None and faithful.rows == len(ids) and faithful.method == "exact" and faithful.share > 0.2


def test_nearest_sampled_rows_are_by_cosine_over_every_dimension():
    rows, _ = clusters(dim=12)
    rows *= np.random.default_rng(3).uniform(0.1, 10, size=(len(rows), 1)).astype(np.float32)
    model = table_model(rows)
    anchors = np.arange(0, len(rows), 5)
    queries = np.setdiff1d(np.arange(len(rows)), anchors)
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    truth = np.argsort(-(unit[queries] @ unit[anchors].T), axis=1, kind="stable")[:, :4]
    found = nearest_sampled(model, queries, anchors, 4)
    assert (np.sort(found, axis=1) == np.sort(truth, axis=1)).all()
    assert UNIT_TABLE not in model.cache  # no copy of the table for it


def test_a_long_map_on_a_cpu_offers_three_choices_with_their_times():
    assert estimate.map_choices("tsne", 100_000, 300, on_gpu=False) == []
    assert estimate.map_choices("tsne", 2_000_000, 300, on_gpu=True) == []  # the torch gradient takes every row
    on_gpu = estimate.map_choices("umap", 2_000_000, 300, on_gpu=True)  # umap-learn's layout stays on the CPU
    assert [c.key for c in on_gpu] == ["all", "first", "placed"]
    assert on_gpu[0].seconds < estimate.map_choices("umap", 2_000_000, 300, on_gpu=False)[0].seconds
    assert estimate.map_choices("pca", 2_000_000, 300, on_gpu=False) == []
    every, first, placed = estimate.map_choices("tsne", 2_000_000, 300, on_gpu=False)
    assert (every.key, every.rows, every.placed) == ("all", 2_000_000, 0)
    assert (first.key, first.rows, first.placed) == ("first", estimate.SAMPLE_ROWS, 0)
    assert (placed.key, placed.rows, placed.placed) == ("placed", estimate.SAMPLE_ROWS, 2_000_000 - estimate.SAMPLE_ROWS)
    assert every.seconds > 30 * 60 > placed.seconds > first.seconds
    assert every.label("tsne").startswith("t-SNE of all 2,000,000 rows — about") and "hours" in every.label("tsne")
    assert "1,990,000 placed" in placed.label("tsne") and "minutes" in placed.label("tsne")
    assert "most frequent" in first.label("umap") and first.label("umap").startswith("UMAP")
    umap_every = estimate.map_choices("umap", 300_000, 300, on_gpu=False)[0]
    assert umap_every.seconds == pytest.approx(estimate.map_seconds("umap", 300_000, 300))
    assert [estimate.duration(s) for s in (5, 40, 600, 3 * 3600)] == ["5 seconds", "40 seconds", "10 minutes",
                                                                      "3.0 hours"]


def test_pca_equals_numpys_on_the_unit_rows():
    rows, _ = clusters(dim=20)
    rows *= np.random.default_rng(4).uniform(0.1, 10, size=(len(rows), 1)).astype(np.float32)
    model = table_model(rows)
    coords, ratio = pca(model, np.arange(len(rows)))
    unit = rows.astype(np.float64) / np.linalg.norm(rows.astype(np.float64), axis=1, keepdims=True)
    centred = unit - unit.mean(0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    expected = centred @ vt[:2].T
    expected *= np.sign(expected[np.abs(expected).argmax(0), [0, 1]]) * np.sign(coords[np.abs(expected).argmax(0), [0, 1]])
    assert np.allclose(coords, expected, atol=1e-4)
    assert np.allclose(ratio, (s**2 / (s**2).sum())[:2], atol=1e-5)


@pytest.mark.parametrize("offset, passes", [(0.0, 1), (300.0, 2)])
@pytest.mark.parametrize("unit_built", [False, True])
def test_pca_subtracts_the_mean_afterwards_unless_the_mean_is_most_of_every_row(monkeypatch, offset, passes, unit_built):
    """Σxxᵀ − n·μμᵀ needs no centred copy, but cancels the variance when every row is mostly
    the mean: then (and only then) the chunks are centred first. Both answer as float64 does."""
    from embviz.core.maps import projection

    rows, _ = clusters(dim=20, seed=3)
    rows += offset
    model = table_model(rows)
    if unit_built:
        unit_table(model)
    calls = []
    scatter = projection._scatter
    monkeypatch.setattr(projection, "_scatter", lambda *a: calls.append(a[2] is not None) or scatter(*a))
    coords, ratio = pca(model, np.arange(len(rows)))
    assert len(calls) == passes and calls[-1] == (passes == 2)
    unit = rows.astype(np.float64) / np.linalg.norm(rows.astype(np.float64), axis=1, keepdims=True)
    centred = unit - unit.mean(0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    expected = centred @ vt[:2].T
    assert np.allclose(np.abs(coords), np.abs(expected), atol=2e-5 if offset else 1e-5)
    assert np.allclose(ratio, (s**2 / (s**2).sum())[:2], rtol=1e-4)


def test_the_map_panel_asks_before_a_long_tsne_and_sends_the_choice(qapp, monkeypatch):
    from types import SimpleNamespace

    from embviz.ui.panels.map import MapPanel, drawing
    from embviz.ui.panels.map.choice import MapChoiceDialog

    sent = []
    panel = MapPanel(lambda request, reply: sent.append(request) or len(sent), lambda channel: None,
                      SimpleNamespace(word_sets={}), {})
    panel.table_shape = (2_000_000, 300, 1_500_000, False)
    panel.state.method = "tsne"
    offered = []

    def answer(pick):
        def ask(_parent, method, choices):
            offered.append((method, [c.key for c in choices]))
            return None if pick is None else next(c for c in choices if c.key == pick)
        return ask

    for pick in ("placed", "first", "all", None):
        monkeypatch.setattr(drawing, "ask_map_choice", answer(pick))
        panel.run_projection()
    assert offered == [("tsne", ["all", "first", "placed"])] * 4
    placed, first, every = sent  # the cancelled question sent nothing
    assert (placed.sample, placed.first) == (estimate.SAMPLE_ROWS, None)
    assert (first.sample, first.first, first.subset) == (None, estimate.SAMPLE_ROWS, "all")
    assert (every.sample, every.first) == (None, None)
    assert "not started" in panel.status.text()
    panel.state.subset = "words"
    panel.state.method = "pca"
    panel.run_projection()  # PCA of two million rows is asked at once
    assert len(sent) == 4 and len(offered) == 4
    panel.table_shape = (2_000_000, 300, 1_500_000, True)
    panel.state.method = "tsne"
    panel.run_projection()  # so is a GPU's t-SNE
    assert len(sent) == 5 and len(offered) == 4

    dialog = MapChoiceDialog("tsne", estimate.map_choices("tsne", 2_000_000, 300, on_gpu=False))
    assert dialog.chosen().key == "placed"  # the quickest map of every row is picked
    dialog.group.button(0).setChecked(True)
    assert dialog.chosen().key == "all"
    assert dialog.maximumWidth() <= 1024


def test_a_sampled_maps_previews_carry_the_sampled_rows_ids():
    from embviz.bridge import requests as rq
    from embviz.bridge.handlers import maps

    rows, _ = clusters()
    model = table_model(rows)
    previews = []
    projection = maps.project(model, rq.Project(method="tsne", subset="first", limit=250, sample=80),
                              lambda f, s, p: previews.append(p))
    assert (projection.ids == np.arange(250)).all() and projection.coords.shape == (250, 2)
    drawn = [p for p in previews if p is not None]
    assert drawn and all(len(ids) == len(coords) for ids, coords in drawn)
    sampled = np.arange(250)[sample_positions(250, 80)]
    assert any(np.array_equal(ids, sampled) for ids, _ in drawn) and np.array_equal(drawn[-1][0], np.arange(250))


def test_long_products_widen_to_every_core_only_when_the_cores_are_idle(monkeypatch):
    import os

    import threadpoolctl

    from embviz.core import device

    def blas_threads() -> int:
        return min(pool["num_threads"] for pool in threadpoolctl.threadpool_info() if pool["user_api"] == "blas")

    usual = device.limit_compute_threads()
    cores = os.cpu_count() or 1
    monkeypatch.setattr(device, "busy_cores", lambda seconds=0.3: 1)
    with device.every_idle_core() as threads:
        assert threads == usual and torch.get_num_threads() == usual
    monkeypatch.setattr(device, "busy_cores", lambda seconds=0.3: 0)
    with device.every_idle_core() as threads:
        assert threads == max(cores, usual) and torch.get_num_threads() == threads and blas_threads() == threads
        with device.every_idle_core() as inner:  # one widening at a time
            assert inner == usual
    assert torch.get_num_threads() == usual and blas_threads() == usual


def test_the_analogy_benchmark_answers_the_same_in_batches_sized_to_a_big_table(monkeypatch):
    from embviz.core.table import analogy_benchmark
    from embviz.core.table.analogy_benchmark import Question, evaluate

    rows, _ = clusters(dim=12)
    model = table_model(rows)
    rng = np.random.default_rng(5)
    questions = [Question("s", tuple(f"w{j}" for j in rng.choice(len(rows), 4, replace=False))) for _ in range(40)]
    whole = evaluate(model, questions)
    monkeypatch.setattr(analogy_benchmark, "SCORES", 3 * len(rows))  # three questions a product, as 2M rows get 67
    batched = evaluate(model, questions)
    assert [(s.correct_excluded, s.correct_included, s.correct_variants) for s in batched.sections] == \
        [(s.correct_excluded, s.correct_included, s.correct_variants) for s in whole.sections]
    assert [m.predicted for m in batched.misses] == [m.predicted for m in whole.misses] and len(whole.misses) > 30


def test_a_sampled_maps_caption_says_how_many_rows_were_placed(qapp):
    from types import SimpleNamespace

    from embviz.core.maps.projection import Projection
    from embviz.ui.panels import map as map_panel

    sent = []
    panel = map_panel.MapPanel(lambda request, reply: sent.append(request) or len(sent), lambda channel: None,
                               SimpleNamespace(word_sets={}), {})
    panel.view.set_labels([f"w{i}" for i in range(300)])
    coords = np.random.default_rng(0).normal(size=(300, 2)).astype(np.float32)
    panel.on_result(Projection("tsne", np.arange(300), coords, sampled=90))
    assert panel.status.text() == "t-SNE of 90 sampled rows, 210 more placed beside them"
    assert panel.state.projection.caption == panel.status.text()  # a saved session keeps it


def test_a_subsets_unit_rows_equal_the_unit_tables_without_building_it():
    from embviz.core.maps.knn import unit_rows

    rows, _ = clusters(dim=10)
    rows *= np.random.default_rng(6).uniform(0.1, 10, size=(len(rows), 1)).astype(np.float32)
    model = table_model(rows)
    some = np.array([5, 3, 250, 11])
    sub = unit_rows(model, some)
    assert UNIT_TABLE not in model.cache
    assert torch.equal(sub, unit_table(model)[some])  # bit for bit


def test_the_analogy_benchmark_searches_again_only_where_the_best_was_excluded_and_answers_the_same():
    from embviz.core.table.analogy_benchmark import Question, _variant_table, evaluate

    rows, _ = clusters(n_per=20, dim=6)
    rows[100:120] = rows[:20]  # duplicated rows: tied scores, where argmax takes the first
    words = [f"w{i}" for i in range(len(rows))]
    words[7], words[8] = "Paris", "paris"  # a case variant
    model = assemble(name="t", source="t", table=torch.tensor(rows), vocab=vocabulary_from_words(words),
                     device=torch.device("cpu"), kind="table")
    rng = np.random.default_rng(7)
    questions = [Question("s", tuple(words[j] for j in rng.choice(len(rows), 4, replace=False))) for _ in range(60)]
    questions += [Question("s", (words[1], words[7], words[2], words[3]))]
    result = evaluate(model, questions)
    # The three full passes it replaces.
    quads = torch.tensor([[model.vocab.id_of(w) for w in q.words] for q in questions])
    units = unit_table(model)
    scores = (units[quads[:, 1]] - units[quads[:, 0]] + units[quads[:, 2]]) @ units.T
    included = scores.argmax(1) == quads[:, 3]
    scores.scatter_(1, quads[:, :3], -torch.inf)
    predicted = scores.argmax(1)
    scores.scatter_(1, _variant_table(model, [tuple(r) for r in quads.tolist()]), -torch.inf)
    variants = scores.argmax(1) == quads[:, 3]
    (section,) = result.sections
    assert section.correct_included == int(included.sum()) and section.correct_variants == int(variants.sum())
    assert section.correct_excluded == int((predicted == quads[:, 3]).sum())
    wrong = (predicted != quads[:, 3]).nonzero().flatten().tolist()
    assert [m.predicted for m in result.misses] == [model.vocab.label(int(predicted[i])) for i in wrong]
