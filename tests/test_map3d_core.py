"""Maps in three components: PCA, t-SNE and UMAP take the 2-D code paths with dims=3, checked
against scikit-learn, openTSNE and umap-learn on the same rows; the faithfulness caption is
measured among the 3-D points; the command line writes x, y, z."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
import torch

from embviz.cli.map_csv import map_csv
from embviz.core import EmbvizError
from embviz.core.maps import projection
from embviz.core.maps.knn import neighbour_preservation
from embviz.core.maps.projection import project
from embviz.core.model import EmbeddingModel
from embviz.core.table.vocab import vocabulary_from_ids


def clustered(n: int = 240, dim: int = 16, groups: int = 6, seed: int = 3) -> tuple[EmbeddingModel, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % groups
    rows = rng.normal(size=(groups, dim))[labels] * 3 + rng.normal(size=(n, dim))
    model = EmbeddingModel(name="c", source="test", table=torch.tensor(rows, dtype=torch.float32),
                           vocab=vocabulary_from_ids(n), device=torch.device("cpu"), storage_dtype="float32", kind="table")
    return model, labels


def units(model: EmbeddingModel) -> np.ndarray:
    rows = model.table.numpy().astype(np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_pca_in_three_components_is_sklearns():
    from sklearn.decomposition import PCA

    model, _ = clustered()
    proj = project(model, "pca", dims=3)
    ref = PCA(3, svd_solver="full").fit(units(model))
    expected = ref.transform(units(model))
    assert proj.coords.shape == (240, 3) and proj.coords.dtype == np.float32
    for axis in range(3):
        sign = np.sign(np.dot(proj.coords[:, axis], expected[:, axis]))
        np.testing.assert_allclose(proj.coords[:, axis] * sign, expected[:, axis], atol=1e-4)
    np.testing.assert_allclose(proj.explained, ref.explained_variance_ratio_, rtol=1e-4)
    # The first two axes are the 2-D map's: a third component only adds a column.
    np.testing.assert_allclose(project(model, "pca").coords, proj.coords[:, :2], atol=1e-6)


def test_faithfulness_is_measured_among_the_3d_points():
    from sklearn.neighbors import NearestNeighbors

    model, _ = clustered()
    coords = project(model, "pca", dims=3).coords
    found = neighbour_preservation(model, np.arange(240), coords, k=10, sample=240)
    truth = NearestNeighbors(n_neighbors=11, metric="cosine").fit(units(model)).kneighbors(units(model))[1][:, 1:]
    near = NearestNeighbors(n_neighbors=11).fit(coords).kneighbors(coords)[1][:, 1:]
    expected = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(near, truth)])
    assert found is not None and found.share == pytest.approx(expected, abs=1e-9)
    flat = neighbour_preservation(model, np.arange(240), coords[:, :2], k=10, sample=240)
    assert flat is not None and found.share > flat.share  # the third axis keeps more of the truth


def test_tsne_in_three_components_keeps_as_much_as_opentsne():
    from openTSNE import TSNE

    model, labels = clustered()
    proj = project(model, "tsne", dims=3, seed=0)
    assert proj.coords.shape == (240, 3) and np.isfinite(proj.coords).all()
    ref = np.asarray(TSNE(n_components=3, metric="cosine", negative_gradient_method="bh", random_state=0,
                          n_jobs=1, verbose=False).fit(units(model)), dtype=np.float32)
    ours = neighbour_preservation(model, proj.ids, proj.coords, k=10, sample=240).share
    theirs = neighbour_preservation(model, proj.ids, ref, k=10, sample=240).share
    assert ours >= theirs - 0.05, (ours, theirs)
    _, near = _nearest(proj.coords, 10)
    assert (labels[near] == labels[:, None]).mean() >= 0.9  # the planted groups stay together in 3-D


def test_a_big_3d_tsne_runs_in_the_child_with_barnes_hut(monkeypatch):
    monkeypatch.setattr(projection, "CHILD_TSNE_ROWS", 100)
    model, labels = clustered(n=180)
    previews = []

    def progress(fraction, stage, preview):
        if isinstance(preview, np.ndarray) and stage == "t-SNE: optimising":
            previews.append(preview.shape)

    proj = project(model, "tsne", dims=3, progress=progress)
    assert previews and set(previews) == {(180, 3)} and proj.coords.shape == (180, 3)
    _, near = _nearest(proj.coords, 10)
    assert (labels[near] == labels[:, None]).mean() >= 0.9


def test_umap_in_three_components_keeps_as_much_as_umap_learn():
    import umap

    model, _ = clustered()
    proj = project(model, "umap", dims=3, seed=0)
    assert proj.coords.shape == (240, 3) and np.isfinite(proj.coords).all()
    ref = umap.UMAP(n_components=3, n_neighbors=15, min_dist=0.1, metric="cosine", random_state=0,
                    n_jobs=1).fit_transform(units(model))
    ours = neighbour_preservation(model, proj.ids, proj.coords, k=10, sample=240).share
    theirs = neighbour_preservation(model, proj.ids, ref, k=10, sample=240).share
    assert ours >= theirs - 0.05, (ours, theirs)


def test_a_sampled_3d_map_places_every_other_row_in_3d():
    model, _ = clustered()
    proj = project(model, "umap", sample=60, dims=3, seed=0)
    assert proj.coords.shape == (240, 3) and proj.sampled == 60 and np.isfinite(proj.coords).all()


def test_other_dimensions_are_one_sentence():
    model, _ = clustered()
    with pytest.raises(EmbvizError, match="2 or 3 dimensions"):
        project(model, "pca", dims=4)


def test_the_csv_of_a_3d_map_has_x_y_z():
    coords = np.array([[1.5, -2.0, 3.25], [0.0, 1e-7, -4e6]], dtype=np.float32)
    text = "".join(map_csv(np.array([4, 7]), coords, ["", "", "", "", "a,b", "", "", "c"]))
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows == [["id", "token", "x", "y", "z"], ["4", "a,b", "1.5", "-2", "3.25"], ["7", "c", "0", "1e-07", "-4e+06"]]


def _nearest(coords: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    from scipy.spatial import cKDTree

    dist, near = cKDTree(coords).query(coords, k=k + 1)
    return dist[:, 1:], near[:, 1:]
