"""Hostile session files: each refused in one line, none hangs, crashes or expands past its bound.
The ones that hung or ate memory before are opened in a child process (tests/test_hostile_isolated.py)."""

from __future__ import annotations

import io
import json
import os
import zipfile

import numpy as np
import pytest

from embviz.state.session import ModelRef, Session, SessionError, load_session, save_session
from embviz.state.tabs import MapState, ProjectionState
from tests.test_hostile_isolated import assert_one_line, run_isolated


def _saved(tmp_path, name: str = "s.embviz"):
    ids = np.array([1, 2], dtype=np.int64)
    coords = np.array([[0.0, 1.0], [2.0, 3.0]], dtype=np.float32)
    session = Session(model=ModelRef(source=None, name="m", fingerprint={"vocab_size": 10, "dim": 4}),
                      states={"map": MapState(projection=ProjectionState("pca", "all", 10, ids, coords))})
    return save_session(session, tmp_path / name)


def _with(path, member: str, data: bytes | str, method: int = zipfile.ZIP_STORED):
    """`path` with one member replaced (or added)."""
    with zipfile.ZipFile(path) as archive:
        others = {n: archive.read(n) for n in archive.namelist() if n != member}
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in others.items():
            archive.writestr(name, content)
        archive.writestr(member, data, compress_type=method)
    return path


def _edited(tmp_path, change):
    path = _saved(tmp_path)
    with zipfile.ZipFile(path) as archive:
        doc = json.loads(archive.read("session.json"))
    change(doc)
    return _with(path, "session.json", json.dumps(doc))


def assert_refused(path, fragment: str) -> None:
    with pytest.raises(SessionError, match=fragment) as info:
        load_session(path)
    assert "\n" not in str(info.value)


def test_a_valid_session_still_opens(tmp_path):
    back = load_session(_saved(tmp_path))
    assert back["map"].projection.ids.tolist() == [1, 2] and back.text_scale == 1.0


def test_session_json_nested_past_the_stack(tmp_path):
    depth = 150_000
    assert_refused(_with(_saved(tmp_path), "session.json", "[" * depth + "]" * depth), "not valid JSON")


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update(text_scale=float("nan")), r"text_scale has an unusable value \(nan\)"),
    (lambda d: d.update(text_scale=1e300), "text_scale has an unusable value"),
    (lambda d: d.update(text_scale="big"), "text_scale has an unusable value"),
    (lambda d: d.update(tab=-3), "tab has an unusable value"),
    (lambda d: d.update(tab=10**400), "tab has an unusable value"),
    (lambda d: d["neighbours"].update(k=10**12), "neighbours.k has an unusable value"),
    (lambda d: d["logits"].update(temperature=0.0), "logits.temperature has an unusable value"),
    (lambda d: d["map"].update(limit=0), "map.limit has an unusable value"),
    (lambda d: d["map"].update(view_range=[0, 10**400, 0, 1]), "view_range"),
    (lambda d: d["model"].update(name=["not", "text"]), "model.name is not text"),
])
def test_every_field_is_checked_for_its_kind_and_range(tmp_path, change, words):
    assert_refused(_edited(tmp_path, change), words)


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def _npz(**members: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(f"{name}.npy", data)
    return out.getvalue()


def test_a_map_whose_header_claims_more_than_it_holds(tmp_path):
    coords = _npy(np.zeros((2, 2), np.float32)).replace(b"(2, 2)", b"(400000000, 2)".ljust(6))
    header_len = coords.index(b"\n") + 1
    coords = coords[:header_len] + b"\0" * 16
    npz = _npz(ids=_npy(np.array([1, 2], np.int64)), coords=coords)
    assert_refused(_with(_saved(tmp_path), "projection.npz", npz), r"claims an array of shape \[400000000, 2\]")


def test_a_map_of_objects_is_never_unpickled(tmp_path):
    npz = _npz(ids=_npy(np.array([1, 2], np.int64)), coords=_npy(np.array([[1, "x"], [2, "y"]], dtype=object)))
    assert_refused(_with(_saved(tmp_path), "projection.npz", npz), "not plain numbers")


def _bomb(tmp_path):
    """A projection.npz of about 1 MB whose coordinates expand to 1.2 GB."""
    rows = 150_000_000
    npz = io.BytesIO()
    with zipfile.ZipFile(npz, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("ids.npy", _npy(np.array([1, 2], np.int64)))
        with archive.open("coords.npy", "w", force_zip64=True) as member:
            member.write(_npy(np.zeros((0, 2), np.float32)).replace(b"(0, 2)", f"({rows}, 2)".encode()))
            zeros = bytes(16 << 20)
            for _ in range(rows * 8 // len(zeros)):
                member.write(zeros)
    return _with(_saved(tmp_path), "projection.npz", npz.getvalue())


def test_a_map_that_expands_past_its_bound(tmp_path):
    assert_one_line(run_isolated("session", _bomb(tmp_path)), r"its map is too large")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need a POSIX system")
def test_a_session_that_is_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "pipe.embviz")
    assert_one_line(run_isolated("session", tmp_path / "pipe.embviz"), r"pipe\.embviz is a pipe")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_session_that_is_dev_zero(tmp_path):
    (tmp_path / "zero.embviz").symlink_to("/dev/zero")
    assert_one_line(run_isolated("session", tmp_path / "zero.embviz"), r"zero\.embviz is not a regular file")
