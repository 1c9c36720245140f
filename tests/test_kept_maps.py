"""The PCA map kept in the cache folder: read back exactly on the next open of the same
file, recomputed for another file or a damaged entry, never for a file the cache has not hashed."""

from __future__ import annotations

import numpy as np
import pytest

from embviz.core import open_checkpoint
from embviz.core.maps import projection
from embviz.core.maps import kept_maps
from embviz.core.maps.kept_maps import FOLDER

WORDS = [f"w{i}" for i in range(40)]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(kept_maps, "KEEP_ROWS", 0)  # kept for maps of tiny tables too


def test_small_maps_are_not_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(kept_maps, "KEEP_ROWS", len(WORDS) + 1)
    projection.project(open_checkpoint(str(glove(tmp_path / "glove.txt")), "cpu"), "pca")
    assert not (tmp_path / "cache" / FOLDER).exists()


def glove(path, seed=0):
    vecs = np.random.default_rng(seed).normal(size=(len(WORDS), 7)).astype(np.float32)
    path.write_text("".join(w + " " + " ".join(f"{x:.7g}" for x in v) + "\n" for w, v in zip(WORDS, vecs)), encoding="utf-8")
    return path


def no_pca(*_args, **_kwargs):
    raise AssertionError("computed instead of read from the cache")


def test_the_second_open_reads_the_pca_map_it_kept(tmp_path, monkeypatch):
    path = glove(tmp_path / "glove.txt")
    first = projection.project(open_checkpoint(str(path), "cpu"), "pca")
    assert len(list((tmp_path / "cache" / FOLDER).iterdir())) == 1
    monkeypatch.setattr(projection, "pca", no_pca)
    again = projection.project(open_checkpoint(str(path), "cpu"), "pca")
    np.testing.assert_array_equal(again.coords, first.coords)
    assert again.explained == first.explained and np.array_equal(again.ids, first.ids)
    with pytest.raises(AssertionError, match="computed"):  # other rows: another map
        projection.project(open_checkpoint(str(path), "cpu"), "pca", np.arange(20))


def test_another_file_or_a_damaged_entry_is_computed_again(tmp_path):
    a = projection.project(open_checkpoint(str(glove(tmp_path / "a.txt", 0)), "cpu"), "pca")
    b = projection.project(open_checkpoint(str(glove(tmp_path / "b.txt", 1)), "cpu"), "pca")
    assert not np.allclose(a.coords, b.coords)
    for entry in (tmp_path / "cache" / FOLDER).iterdir():
        (entry / "pca.npz").write_bytes(b"not a zip")
    again = projection.project(open_checkpoint(str(tmp_path / "a.txt"), "cpu"), "pca")
    np.testing.assert_allclose(again.coords, a.coords, atol=1e-6)


def test_a_file_the_cache_never_hashed_keeps_no_map(tmp_path):
    import torch
    from safetensors.torch import save_file

    path = tmp_path / "table.safetensors"
    save_file({"embed_tokens.weight": torch.randn(40, 7)}, str(path))
    try:
        model = open_checkpoint(str(path), "cpu")
    except Exception:  # noqa: BLE001 - a bare table without a vocabulary may be refused: nothing to test then
        pytest.skip("a bare safetensors table does not open")
    # A .safetensors file is read directly, not hashed into the cache: no key for its map.
    projection.project(model, "pca")
    assert not (tmp_path / "cache" / FOLDER).exists()
