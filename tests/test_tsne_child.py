"""t-SNE of big maps in a child process: previews through the progress file, the graph
handed back and kept, cancel kills the child, the convergence stop."""

from __future__ import annotations

import numpy as np
import psutil
import pytest
import torch

from embviz.core.maps import tsne_child
from embviz.core.device import limit_compute_threads
from embviz.core.errors import Cancelled
from embviz.core.maps.knn import kept_knn, neighbour_preservation
from embviz.core.model import EmbeddingModel
from embviz.core.maps.projection import CHILD_TSNE_ROWS, project
from embviz.core.table.vocab import vocabulary_from_ids


def clustered_model(n: int = 1500, dim: int = 24, groups: int = 6) -> EmbeddingModel:
    rng = np.random.default_rng(7)
    centres = rng.normal(size=(groups, dim)) * 4
    rows = centres[np.arange(n) % groups] + rng.normal(size=(n, dim))
    return EmbeddingModel(name="clusters", source="test", table=torch.tensor(rows, dtype=torch.float32),
                          vocab=vocabulary_from_ids(n), device=torch.device("cpu"), storage_dtype="float32", kind="table")


def embviz_children() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True)
            if "embviz.core.child" in " ".join(p.cmdline())]


def test_a_big_map_runs_in_a_child_and_streams_previews():
    model = clustered_model()
    assert model.vocab_size > CHILD_TSNE_ROWS
    previews, stages, children = [], [], []

    def progress(fraction, stage, preview):
        stages.append(stage)
        if isinstance(preview, np.ndarray) and stage == "t-SNE: optimising":
            previews.append(preview)
            children.extend(embviz_children())

    proj = project(model, "tsne", progress=progress)
    assert children, "the optimiser ran in a child process"
    assert len(previews) >= 5 and all(p.shape == (1500, 2) for p in previews)
    assert proj.coords.shape == (1500, 2) and np.isfinite(proj.coords).all()
    assert "t-SNE: each row's nearest rows in the full table" in stages
    assert kept_knn(model, proj.ids, 90) is not None  # computed in the child, kept for the next map
    pca = project(model, "pca")
    assert neighbour_preservation(model, proj.ids, proj.coords).share > neighbour_preservation(model, pca.ids, pca.coords).share
    assert not embviz_children()


def test_a_cancel_kills_the_child_at_once():
    model = clustered_model()

    def cancel_at_first_preview(fraction, stage, preview):
        if isinstance(preview, np.ndarray) and stage == "t-SNE: optimising":
            raise Cancelled()

    with pytest.raises(Cancelled):
        project(model, "tsne", progress=cancel_at_first_preview)
    assert not embviz_children()


def test_kept_share_counts_the_true_neighbours_a_map_keeps():
    from scipy.spatial import cKDTree

    coords = np.random.default_rng(0).normal(size=(400, 2)).astype(np.float32)
    _, near = cKDTree(coords).query(coords, 11)
    share = tsne_child._kept_share(near[:, 1:], seed=0)
    assert share(coords) == pytest.approx(1.0)
    assert share(np.random.default_rng(1).permutation(coords)) < 0.1


@pytest.mark.parametrize("gain, stops", [(1.0, True), (-1.0, False)])
def test_the_convergence_stop(tmp_path, monkeypatch, gain, stops):
    """In this process, to set the threshold: once the gain of CHECK_EVERY iterations is
    under STOP_GAIN the run ends, with a note; a threshold never met runs every iteration."""
    monkeypatch.setattr(tsne_child, "STOP_GAIN", gain)
    rows = torch.nn.functional.normalize(clustered_model(300).table, dim=1).numpy()
    init = (rows[:, :2] * 1e-4).astype(np.float64)
    try:
        coords, computed, note = tsne_child.optimise(rows, None, init, 90, 30.0, 0, True, str(tmp_path / "p.npz"))
    finally:
        limit_compute_threads()  # optimise takes every core, as it does in its child
    assert coords.shape == (300, 2) and computed[0].shape == (300, 90)
    if stops:
        assert note.startswith(f"t-SNE stopped after {tsne_child.CHECK_FROM + tsne_child.CHECK_EVERY} of 750 iterations")
    else:
        assert note is None
    with np.load(tmp_path / "p.npz") as report:
        assert report["stage"] == "t-SNE: optimising" and report["preview"].shape == (300, 2)


def test_a_big_graph_is_kept_on_disk_for_the_next_session(tmp_path, monkeypatch):
    from embviz.core.maps import knn

    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(knn, "DISK_ROWS", 100)
    first = clustered_model(300)
    ids = np.arange(300)
    positions, cosines = knn.table_knn(first, ids, 20)
    assert len(list((tmp_path / "knn").glob("*-k20"))) == 1
    again = clustered_model(300)  # the same table, opened afresh: nothing in memory

    def no_compute(*_a, **_k):
        raise AssertionError("the graph was computed again")

    monkeypatch.setattr(knn, "self_top_k", no_compute)
    kept = knn.kept_knn(again, ids, 10)
    assert kept is not None and (kept[0] == positions[:, :10]).all() and np.allclose(kept[1], cosines[:, :10])
    assert knn.kept_knn(again, ids, 30) is None  # kept with 20 neighbours only
    other = clustered_model(300)
    other.table[5, 0] += 1e-3  # one value of another table
    assert knn.kept_knn(other, ids, 10) is None
    assert knn.kept_knn(again, ids[:-1], 10) is None  # other rows
