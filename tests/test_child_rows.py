"""Children that fit a map or k-means of a word-vector table make its unit rows from the cache
file the table maps (file_rows), bit for bit the rows the window's process would have sent."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
import torch

from embviz.core import open_checkpoint
from embviz.core.cache import MAPPED_TABLE
from embviz.core.maps import clusters, projection, tsne_child
from embviz.core.maps.file_rows import FileRows, file_rows, rows_in_child
from embviz.core.maps.knn import unit_rows
from embviz.core.model import EmbeddingModel
from embviz.core.table.similarity import mean_row, unit_recipe, unit_table
from embviz.core.table.vocab import vocabulary_from_ids

ROWS, DIM = 1500, 12


def table() -> np.ndarray:
    rng = np.random.default_rng(5)
    centres = rng.normal(size=(6, DIM)) * 4
    vecs = (centres[np.arange(ROWS) % 6] + rng.normal(size=(ROWS, DIM))).astype(np.float32)
    vecs[3] = np.nan  # the careful path: a NaN row, a zero row, one whose squares overflow, a tiny one
    vecs[7] = 0.0
    vecs[11], vecs[12] = 3e20, -3e20  # cancelling in the mean row
    vecs[13] = 1e-30
    return vecs


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def mapped(tmp_path) -> EmbeddingModel:
    vecs = table()
    words = [f"w{i}" for i in range(ROWS)]
    path = tmp_path / "w.bin"
    path.write_bytes(f"{ROWS} {DIM}\n".encode() + b"".join(w.encode() + b" " + v.astype("<f4").tobytes() + b"\n"
                                                         for w, v in zip(words, vecs)))
    model = open_checkpoint(str(path), "cpu")
    assert isinstance(model.cache.get(MAPPED_TABLE), object) and MAPPED_TABLE in model.cache
    return model


def plain(vecs: np.ndarray) -> EmbeddingModel:
    return EmbeddingModel(name="plain", source="test", table=torch.from_numpy(vecs.copy()), vocab=vocabulary_from_ids(len(vecs)),
                          device=torch.device("cpu"), storage_dtype="float32", kind="table")


@pytest.mark.parametrize("centered", [False, True])
def test_rows_made_from_the_file_are_the_unit_table_bit_for_bit(mapped, centered):
    sent = file_rows(mapped, None, centered)
    assert sent is not None and sent.ids is None
    made = sent.load()
    expected = unit_table(mapped, centered).numpy()
    assert made.tobytes() == expected.tobytes()
    assert not made[[3] if centered else [3, 7]].any() and np.isfinite(made).all()  # NaN (and zero) rows: zero vectors
    assert len(pickle.dumps(sent)) < mapped.table.numpy().nbytes / 5  # a path and 4 bytes a row, not the table


def test_a_subset_made_from_the_file_is_its_unit_rows(mapped):
    ids = np.array([11, 3, 0, 1499, 7, 42, 13, 42])
    sent = file_rows(mapped, ids)
    assert sent.load().tobytes() == unit_rows(mapped, ids).numpy().tobytes()
    every = file_rows(mapped, np.arange(ROWS))
    assert every.ids is None


def test_the_unit_table_keeps_its_numbers():
    """unit_table made from its recipe: the division it always was, the centred norms chunked."""
    vecs = table()
    model = plain(vecs)
    t = torch.from_numpy(vecs)
    ok = np.ones(ROWS, bool)
    ok[[3, 7, 11, 12, 13]] = False
    units = unit_table(model).numpy()
    assert units[ok].tobytes() == (t / torch.linalg.vector_norm(t, dim=1)[:, None]).numpy()[ok].tobytes()
    centred = t - mean_row(model)
    expected = (centred / torch.linalg.vector_norm(centred, dim=1)[:, None]).numpy()
    assert unit_table(model, centered=True).numpy()[ok].tobytes() == expected[ok].tobytes()
    np.testing.assert_allclose(np.linalg.norm(units[[11, 12, 13]], axis=1), 1.0, rtol=1e-6)
    assert sorted(unit_recipe(model).odd.tolist()) == [3, 7, 11, 12, 13]


def test_no_file_means_the_rows_themselves(mapped, tmp_path):
    assert file_rows(plain(table()), None) is None  # read from a checkpoint, not mapped from the cache
    copy = EmbeddingModel(name="copy", source="test", table=mapped.table.clone(), vocab=mapped.vocab,
                          device=torch.device("cpu"), storage_dtype="float32", kind="table",
                          cache={MAPPED_TABLE: mapped.cache[MAPPED_TABLE]})
    assert file_rows(copy, None) is None  # the table is no longer the file's map
    os.unlink(mapped.cache[MAPPED_TABLE].path)  # the cache cleared under a running window
    assert file_rows(mapped, None) is None
    assert isinstance(projection._child_rows(mapped, np.arange(ROWS)), np.ndarray)


def test_a_big_tsne_sends_the_child_the_file(mapped, monkeypatch):
    sent = []
    original = tsne_child.tsne_in_child

    def spy(rows, *args):
        sent.append(rows)
        return original(rows, *args)

    monkeypatch.setattr(tsne_child, "tsne_in_child", spy)
    proj = projection.project(mapped, "tsne")
    assert isinstance(sent[0], FileRows)
    assert proj.coords.shape == (ROWS, 2) and np.isfinite(proj.coords).all()


def test_umap_without_a_graph_sends_the_child_the_file(mapped, monkeypatch):
    monkeypatch.setattr(projection, "EXACT_KNN_ROWS", 100)  # umap-learn's own index, as above 100k rows
    sent = []

    def child(fn, args, progress, stage, fraction=0.1):
        sent.append(args[0])
        return np.zeros((ROWS, 2), np.float32)

    monkeypatch.setattr(projection, "run_in_child", child)
    projection.project(mapped, "umap")
    assert isinstance(sent[0], FileRows)
    assert rows_in_child(sent[0]).tobytes() == unit_rows(mapped, np.arange(ROWS)).numpy().tobytes()


def test_kmeans_from_the_file_is_the_kmeans_of_the_rows(mapped, monkeypatch):
    sent = []
    original = clusters.run_in_child

    def spy(fn, args, *rest):
        sent.append(args[0])
        return original(fn, args, *rest)

    monkeypatch.setattr(clusters, "run_in_child", spy)
    from_file = clusters.kmeans_clusters(mapped, 6)
    copy = plain(mapped.table.numpy())
    from_rows = clusters.kmeans_clusters(copy, 6)
    assert isinstance(sent[0], FileRows) and isinstance(sent[1], np.ndarray)
    np.testing.assert_array_equal(from_file.assignment, from_rows.assignment)
