"""The first map drawn while the model opens: read from the cache with numpy alone, exactly the
map the open model's first PCA gives (same ids, coordinates and labels), never for a file changed
since it was hashed, and taken over by the open model without being drawn again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from embviz.core import EmbvizError, open_checkpoint
from embviz.core.maps import kept_maps
from embviz.core.maps.first_map import first_map
from embviz.core.maps.projection import project
from tests.test_hostile import tiny_gguf

ROOT = Path(__file__).resolve().parent.parent
WORDS = [f"w{i}" for i in range(40)] + ["café", "Ünïcode"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(kept_maps, "KEEP_ROWS", 0)  # kept for maps of tiny tables too


def glove(path: Path, seed: int = 0) -> Path:
    vecs = np.random.default_rng(seed).normal(size=(len(WORDS), 7)).astype(np.float32)
    path.write_text("".join(w + " " + " ".join(f"{x:.7g}" for x in v) + "\n" for w, v in zip(WORDS, vecs)), encoding="utf-8")
    return path


def gguf(path: Path) -> Path:
    tiny_gguf(path)
    return path


def opened_and_mapped(path: Path):
    model = open_checkpoint(str(path), "cpu")
    return model, project(model, "pca")


@pytest.mark.parametrize("make", [glove, gguf], ids=["word vectors", "gguf"])
def test_the_first_map_is_the_open_models_first_map(tmp_path, make):
    path = make(tmp_path / ("t.txt" if make is glove else "t.gguf"))
    assert first_map(str(path), "cpu") is None  # nothing kept before the first open
    model, projection = opened_and_mapped(path)
    for device in ("cpu", "auto"):
        early = first_map(str(path), device)
        assert early is not None
        np.testing.assert_array_equal(early.ids, projection.ids)
        np.testing.assert_array_equal(early.coords, projection.coords)
        assert early.labels() == list(model.vocab.labels) and early.explained == projection.explained
    assert first_map(str(path), "cuda") is None  # a map kept for the CPU is not a GPU's


def test_the_first_rows_map_and_its_key_are_the_models(tmp_path):
    path = glove(tmp_path / "t.txt")
    model = open_checkpoint(str(path), "cpu")
    first20 = project(model, "pca", np.arange(20))
    early = first_map(str(path), "cpu", limit=20)
    np.testing.assert_array_equal(early.coords, first20.coords)
    assert first_map(str(path), "cpu", limit=30) is None  # those rows were never mapped
    assert first_map(str(path), "cpu") is None


@pytest.mark.parametrize("change", ["touched", "rewritten", "replaced"])
def test_a_changed_file_never_gets_the_old_first_map(tmp_path, change):
    path = glove(tmp_path / "t.txt")
    opened_and_mapped(path)
    assert first_map(str(path), "cpu") is not None
    st = path.stat()
    if change == "touched":
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    elif change == "rewritten":  # the same size, the old mtime put back: the ctime still moves
        data = bytearray(path.read_bytes())
        data[3] = ord("9") if data[3] != ord("9") else ord("8")
        path.write_bytes(bytes(data))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    else:
        glove(tmp_path / "other.txt", seed=1).replace(path)
    assert first_map(str(path), "cpu") is None


@pytest.mark.parametrize("damage", ["meta", "table header", "map"])
def test_a_damaged_entry_gives_no_first_map(tmp_path, damage):
    path = gguf(tmp_path / "t.gguf")
    opened_and_mapped(path)
    cache = tmp_path / "cache"
    if damage == "meta":
        next(cache.glob("gguf/*/meta.json")).write_text(json.dumps({"tokens": [1, 2]}), encoding="utf-8")
    elif damage == "table header":
        entry = next(cache.glob("gguf/*/table.safetensors"))
        entry.write_bytes(b"\xff" * 8 + entry.read_bytes()[8:])
    else:
        next(cache.glob(f"{kept_maps.FOLDER}/*/pca.npz")).write_bytes(b"not a zip")
    assert first_map(str(path), "cpu") is None


def test_no_first_map_for_what_the_cache_does_not_key_on_a_file(tmp_path):
    assert first_map("spells", "cpu") is None
    assert first_map(str(tmp_path / "missing.gguf"), "cpu") is None
    assert first_map(str(tmp_path), "cpu") is None


def test_the_first_map_is_read_without_torch(tmp_path):
    path = gguf(tmp_path / "t.gguf")
    _, projection = opened_and_mapped(path)
    code = ("import sys, json\n"
            "from embviz.core.maps import kept_maps\n"
            "kept_maps.KEEP_ROWS = 0\n"
            "from embviz.bridge.first_map import first_map_of\n"
            "from embviz.bridge import requests as rq\n"
            f"m = first_map_of({str(path)!r}, 'auto', rq.Project())\n"
            "print(json.dumps({'coords': m.coords.tolist(), 'labels': m.labels(),\n"
            "                  'heavy': [n for n in ('torch', 'transformers', 'sklearn', 'scipy') if n in sys.modules]}))\n")
    env = {**os.environ, "EMBVIZ_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["heavy"] == []
    np.testing.assert_array_equal(np.asarray(got["coords"], dtype=np.float32), projection.coords)
    assert got["labels"] == ["<s>", "␣cat", "␣dog", "car", "␣tr", "uck"]


# --- the window ------------------------------------------------------------------------------


def test_the_window_draws_the_first_map_at_once_and_the_model_takes_it_over(window, qtbot, tmp_path):
    path = glove(tmp_path / "t.txt")
    _, projection = opened_and_mapped(path)
    panel = window.map_panel
    window.open_model(str(path))
    # Drawn before the worker has opened anything: the model is not on screen yet.
    assert window.generation == 0 and window.summary is None
    np.testing.assert_array_equal(panel.view.ids, projection.ids)
    np.testing.assert_array_equal(panel.view.coords, projection.coords)
    qtbot.waitUntil(lambda: panel.view.labels == WORDS, timeout=5000)
    panel.view.vb.setRange(xRange=(0, 0.5), yRange=(0, 0.5), padding=0)  # zoomed in while the model opens
    zoom = panel.view.vb.viewRange()
    drawn = []
    panel.view.set_points = lambda *args, **kwargs: drawn.append(args)  # any redraw of the points
    qtbot.waitUntil(lambda: window.generation > 0 and panel.state.projection is not None, timeout=30000)
    np.testing.assert_array_equal(panel.state.projection.coords, projection.coords)
    np.testing.assert_array_equal(panel.view.coords, projection.coords)
    np.testing.assert_array_equal(panel.view.ids, projection.ids)
    assert drawn == []  # the same map, left as it was: its zoom too (the width may follow the panel's new layout)
    (x0, x1), y = panel.view.vb.viewRange()
    assert np.allclose(y, zoom[1]) and np.isclose((x0 + x1) / 2, sum(zoom[0]) / 2)
    assert panel.status.text().startswith("PCA of 42 rows")


def test_the_window_draws_no_first_map_of_a_changed_file(window, qtbot, tmp_path):
    path = glove(tmp_path / "t.txt")
    opened_and_mapped(path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    window.open_model(str(path))
    assert window.map_panel.view.ids.size == 0
    qtbot.waitUntil(lambda: window.map_panel.state.projection is not None, timeout=30000)
    assert window.map_panel.view.ids.size == len(WORDS)


def test_the_first_map_of_a_model_that_does_not_open_is_taken_down(window, qtbot, tmp_path, monkeypatch):
    from embviz.bridge.handlers import models

    path = glove(tmp_path / "t.txt")
    opened_and_mapped(path)

    def refuse(*_args, **_kwargs):
        raise EmbvizError("This file cannot be opened now.")

    monkeypatch.setattr(models, "open_checkpoint", refuse)
    window.open_model(str(path))
    assert window.map_panel.view.ids.size == len(WORDS)
    qtbot.waitUntil(lambda: window.map_panel.view.ids.size == 0, timeout=10000)
    assert window.map_panel.view.labels == [] and window.summary is None


def test_a_word_list_that_does_not_match_its_table_gives_the_map_without_labels(tmp_path):
    path = glove(tmp_path / "t.txt")
    _, projection = opened_and_mapped(path)
    next((tmp_path / "cache").glob("word-vectors/*/words.txt")).write_text("just\nthree\nwords", encoding="utf-8")
    early = first_map(str(path), "cpu")
    np.testing.assert_array_equal(early.coords, projection.coords)  # the map is the file's, kept by its hash
    assert early.labels() == [] and early.rows == len(WORDS)
