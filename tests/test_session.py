"""Sessions: every tab's state saved to a .embviz file and restored without
recomputing the map; bad session files get one message and change nothing."""

from __future__ import annotations

import json
import os
import shutil
import zipfile

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication, QMessageBox

from embviz.bridge import requests as rq
from embviz.core.fingerprint import model_fingerprint, same_model
from embviz.state.session import ModelRef, Session, SessionError, load_session, save_session
from embviz.state.tabs import (
    AnalogyState, AttributionState, LogitsState, MapState, NeighboursState, ProjectionState, PromptState, VectorsState, WordSetsState,
)
from embviz.ui import style

from conftest import make_tiny_model
from helpers import menu_action, wait_for


@pytest.fixture(autouse=True)
def normal_text_size():
    yield
    style.set_text_scale(1.0)
    for widget in QApplication.topLevelWidgets():  # no message box may sit over the next test's window
        if isinstance(widget, QMessageBox):
            widget.close()


def _session(vocab_size: int = 100) -> Session:
    ids = np.array([5, 2, 9], dtype=np.int64)
    coords = np.array([[0.5, -1.0], [2.0, 3.0], [-4.25, 1e-3]], dtype=np.float32)
    return Session(
        model=ModelRef(source="/models/x.gguf", name="x", fingerprint={"vocab_size": vocab_size, "dim": 8,
                                                                        "vocab_sha256": "ab", "probe_norms": [1.0]}),
        states=dict(map=MapState(method="tsne", subset="first", limit=300, labels_on=False, search="␣king", regex=True,
                     word_sets=WordSetsState(names=["weekdays", "mine"], ticked=["mine", "weekdays"]),
                     projection=ProjectionState("tsne", "first", 300, ids, coords, "t-SNE of 3 rows"),
                     view_range=[-1.0, 1.0, -2.0, 2.0]),
        neighbours=NeighboursState(word="king", query=42, k=7, centered=True, hide_special=False),
        analogies=AnalogyState(a="king", b="man", c="woman", exclude_inputs=False, method="mul", k=3),
        logits=LogitsState(prompt=PromptState(parts=[("I love", None), ("�", 17)]), k=5, temperature=2.5,
                           direct=True, by_id=True, hold_axis=True),
        vectors=VectorsState(words="cat, dog"),
        attribution=AttributionState(text="The capital of Italy is", token="␣Rome", position=3, head_block=2, head=5,
                                     pinned="␣Rome, ␣Milan", compare=True, text_b="The capital of Spain is")),
        custom_sets={"mine": ["cat", "dog"]}, tab="analogies", text_scale=1.5,
    )


# --- the file, without a window ----------------------------------------------------------------

def test_a_session_round_trips_every_state_and_the_map_exactly(tmp_path):
    saved = _session()
    path = save_session(saved, tmp_path / "lesson")  # the suffix is added
    assert path.name == "lesson.embviz"
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask  # shareable, not mkstemp's owner-only
    back = load_session(path)
    assert back.model == saved.model
    assert back["neighbours"] == saved["neighbours"] and back["analogies"] == saved["analogies"]
    assert back["logits"].prompt.parts == [("I love", None), ("�", 17)] and back["logits"].temperature == 2.5
    assert (back["logits"].k, back["logits"].direct, back["logits"].by_id, back["logits"].hold_axis) == (5, True, True, True)
    assert back["map"].word_sets.ticked == ["mine", "weekdays"] and back["map"].view_range == [-1.0, 1.0, -2.0, 2.0]
    assert (back["map"].method, back["map"].subset, back["map"].limit, back["map"].labels_on, back["map"].search, back["map"].regex) == \
        ("tsne", "first", 300, False, "␣king", True)
    p = back["map"].projection
    assert (p.method, p.subset, p.limit, p.caption) == ("tsne", "first", 300, "t-SNE of 3 rows")
    assert p.ids.tolist() == [5, 2, 9] and np.array_equal(p.coords, saved["map"].projection.coords)
    assert back.custom_sets == {"mine": ["cat", "dog"]} and back.tab == "analogies" and back.text_scale == 1.5
    assert back["vectors"].words == "cat, dog" and (back["map"].axis_x, back["map"].axis_y) == ("man, woman", "man, king")
    assert back["attribution"] == saved["attribution"]


def test_a_3d_map_and_its_camera_round_trip(tmp_path):
    saved = _session()
    coords = np.array([[0.5, -1.0, 2.0], [2.0, 3.0, -0.5], [-4.25, 1e-3, 7.0]], dtype=np.float32)
    saved["map"].projection = ProjectionState("pca", "all", 300, np.array([5, 2, 9]), coords, "PCA of 3 rows")
    saved["map"].dims, saved["map"].camera_distance, saved["map"].camera_elevation = 3, 4.5, -30.0
    saved["map"].camera_azimuth, saved["map"].camera_centre = 135.0, [0.25, -1.0, 2.0]
    back = load_session(save_session(saved, tmp_path / "turned"))["map"]
    assert (back.dims, back.camera_distance, back.camera_elevation, back.camera_azimuth, back.camera_centre) == \
        (3, 4.5, -30.0, 135.0, [0.25, -1.0, 2.0])
    assert np.array_equal(back.projection.coords, coords)


def _rewrite(path, change) -> None:
    """Edit session.json inside a saved session."""
    with zipfile.ZipFile(path) as archive:
        doc = json.loads(archive.read("session.json"))
        others = {n: archive.read(n) for n in archive.namelist() if n != "session.json"}
    change(doc)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("session.json", json.dumps(doc))
        for name, data in others.items():
            archive.writestr(name, data)


@pytest.mark.parametrize("change, words", [
    (lambda d: d["neighbours"].update(k="ten"), "neighbours.k"),
    (lambda d: d["map"].update(method="magic"), "map.method"),
    (lambda d: d["logits"].update(temperature=float("nan")), "logits.temperature"),
    (lambda d: d["logits"].update(prompt=[["x", 10**9]]), "logits.prompt"),
    (lambda d: d["neighbours"].update(query=[1.5]), "neighbours.query"),  # a list must be token ids
    (lambda d: d["map"].update(view_range=[1, 0, 0, 1]), "view_range"),
    (lambda d: d.update(version=99), "newer embviz"),
    (lambda d: d.update(format="something else"), "not an embviz session"),
    (lambda d: d.pop("model"), "vocabulary size"),
    (lambda d: d["attribution"].update(head=-7), "attribution.head"),
    (lambda d: d["attribution"].update(pinned=["x"]), "attribution.pinned"),
    (lambda d: d["map"].update(dims=4), "map.dims"),
    (lambda d: d["map"].update(camera_elevation=120), "map.camera_elevation"),
    (lambda d: d["map"].update(camera_centre=[0, "1", 2]), "map.camera_centre"),
])
def test_values_of_the_wrong_kind_are_named(tmp_path, change, words):
    path = save_session(_session(), tmp_path / "s.embviz")
    _rewrite(path, change)
    with pytest.raises(SessionError, match=words):
        load_session(path)


def test_a_version_1_session_keeps_its_tab_as_an_index_and_opens_on_that_tab(tmp_path):
    """Before tabs were kept by key, a session stored the index of the tab shown."""
    for index, key in ((0, "map"), (2, "analogies"), (3, "logits"), (7, "attribution"), (8, "compare")):
        path = save_session(_session(), tmp_path / f"old{index}.embviz")
        _rewrite(path, lambda d: d.update(version=1, tab=index))
        assert load_session(path).tab == key
    path = save_session(_session(), tmp_path / "new.embviz")
    _rewrite(path, lambda d: d.update(tab="no such tab"))
    with pytest.raises(SessionError, match="tab has an unusable value"):
        load_session(path)


def test_damaged_files_get_one_clear_message(tmp_path):
    garbage = tmp_path / "garbage.embviz"
    garbage.write_bytes(b"\x00not a zip" * 100)
    with pytest.raises(SessionError, match="not an embviz session, or it is damaged"):
        load_session(garbage)
    empty = tmp_path / "empty.embviz"
    with zipfile.ZipFile(empty, "w") as archive:
        archive.writestr("other.txt", "x")
    with pytest.raises(SessionError, match="no session.json"):
        load_session(empty)
    broken = save_session(_session(), tmp_path / "broken.embviz")
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("session.json", "{not json")
    with pytest.raises(SessionError, match="not valid JSON"):
        load_session(broken)
    with pytest.raises(SessionError, match="no session file"):
        load_session(tmp_path / "nowhere.embviz")
    # A map naming rows past the vocabulary, or with NaN coordinates.
    wrong = _session(vocab_size=100)
    wrong["map"].projection.ids = np.array([5, 2, 100])
    with pytest.raises(SessionError, match="rows this model does not have"):
        load_session(save_session(wrong, tmp_path / "rows.embviz"))
    wrong = _session()
    wrong["map"].projection.coords[0, 0] = np.nan
    with pytest.raises(SessionError, match="not all finite"):
        load_session(save_session(wrong, tmp_path / "nan.embviz"))


def test_a_pickle_inside_a_session_is_never_loaded(tmp_path):
    """np.load with allow_pickle=False: an object array in projection.npz is refused."""
    import io

    path = save_session(_session(), tmp_path / "s.embviz")
    buffer = io.BytesIO()
    np.savez(buffer, ids=np.array([object()], dtype=object), coords=np.zeros((1, 2)))
    with zipfile.ZipFile(path) as archive:
        doc = archive.read("session.json")
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("session.json", doc)
        archive.writestr("projection.npz", buffer.getvalue())
    with pytest.raises(SessionError):
        load_session(path)


def test_fingerprints_match_the_same_table_and_not_another(toy4, spells, default_model):
    a = model_fingerprint(default_model)
    assert a["vocab_size"] == 49152 and a["dim"] == 576 and len(a["probe_norms"]) == 16
    assert same_model(a, model_fingerprint(default_model))
    near = dict(a, probe_norms=[n * 1.001 for n in a["probe_norms"]])  # another dtype or device
    assert same_model(a, near)
    assert not same_model(a, dict(a, probe_norms=[n * 1.05 for n in a["probe_norms"]]))
    assert not same_model(model_fingerprint(toy4), model_fingerprint(spells))


# --- the window ----------------------------------------------------------------------------------

def _submitted(window) -> list:
    seen = []
    submit = window.worker.submit

    def spy(request, reply=None):
        seen.append(request)
        return submit(request, reply)
    window.worker.submit = spy
    return seen


@pytest.mark.default_model
def test_the_window_saves_and_restores_every_tab_without_recomputing_the_map(qtbot, smol, qapp, tmp_path):
    from embviz.state.settings import Settings
    from embviz.ui.main_window import MainWindow

    window = smol
    panel = window.map_panel
    panel.subset.setCurrentIndex(panel.subset.findData("first"))
    panel.limit.setValue(2000)  # a PCA redraws at once
    wait_for(qtbot, lambda: "PCA of 2,000 rows" in panel.status.text())
    panel.add_word_set("pets", ["cat", "dog", "horse"])
    panel.show_word_set("weekdays")
    wait_for(qtbot, lambda: {"pets", "weekdays"} <= set(panel.view.word_set_names()))
    panel.labels_box.setChecked(False)
    panel.view.vb.setRange(xRange=(-0.05, 0.05), yRange=(-0.04, 0.04), padding=0)
    window.neighbours.show_token(7)  # a clicked point: an id, not text
    wait_for(qtbot, lambda: window.neighbours.table.rowCount() > 0)
    window.neighbours.k.setValue(6)
    window.analogies.exclude.setChecked(False)
    window.analogies.set_words("king", "man", "woman")
    wait_for(qtbot, lambda: window.analogies.table.rowCount() > 0)
    window.logits.direct.setChecked(True)
    window.logits.temperature.setValue(2.0)
    window.logits.by_id.setChecked(True)
    window.logits.set_text("The capital of France is")
    wait_for(qtbot, lambda: window.logits.results)
    window.logits.append_token(0)  # a clicked bar: kept as its id
    wait_for(qtbot, lambda: window.logits.results and len(window.logits.prompt.parts) == 2)
    window.attribution.state.pinned = "␣Rome"
    window.tabs.setCurrentIndex(2)
    window.set_text_size(1.5)
    coords = panel.view.coords.copy()
    path = window.save_session(tmp_path / "class")
    assert path.name == "class.embviz"

    # A fresh window, as on another day: the session brings back everything.
    fresh = MainWindow(settings=Settings(tmp_path / "other-config" / "settings.json"), device="cpu")
    fresh.resize(1300, 850)
    fresh.show()
    style.set_text_scale(1.0)
    try:
        asked = _submitted(fresh)
        assert fresh.open_session(path)
        wait_for(qtbot, lambda: fresh.summary is not None and fresh.analogies.table.rowCount() > 0
                 and fresh.neighbours.table.rowCount() > 0 and fresh.logits.results, 60_000)
        fp = fresh.map_panel
        wait_for(qtbot, lambda: {"pets", "weekdays"} <= set(fp.view.word_set_names()))
        assert not [r for r in asked if isinstance(r, rq.Project)]  # the map was not computed again
        assert np.array_equal(fp.view.coords, coords) and fp.view.ids.size == 2000
        assert "PCA of 2,000 rows" in fp.status.text()
        (x0, x1), (y0, y1) = fp.view.vb.viewRange()
        # The zoom that was on screen (the locked aspect may widen one axis to the view's shape).
        assert x0 <= -0.05 + 1e-6 and x1 >= 0.05 - 1e-6 and y0 <= -0.04 + 1e-6 and y1 >= 0.04 - 1e-6
        assert x1 - x0 < 0.3 and y1 - y0 < 0.3
        assert fp.subset.currentData() == "first" and fp.limit.value() == 2000 and not fp.labels_box.isChecked()
        assert fp.words_of("pets") == ["cat", "dog", "horse"] and fp.word_sets.ticked == ["pets", "weekdays"]
        assert fresh.neighbours.state.query == 7 and fresh.neighbours.k.value() == 6
        assert fresh.neighbours.table.rowCount() == 6
        assert [r[1] for r in fresh.neighbours.table.rows] == [r[1] for r in window.neighbours.table.rows][:6]
        assert not fresh.analogies.exclude.isChecked() and fresh.analogies.a.text() == "king"
        assert fresh.analogies.table.rows == window.analogies.table.rows
        lg = fresh.logits
        assert lg.direct.isChecked() and lg.by_id.isChecked() and lg.temperature.value() == 2.0
        assert lg.prompt.parts == window.logits.prompt.parts and lg.prompt.parts[1][1] is not None
        assert [r.id for r in lg.results] == [r.id for r in window.logits.results]
        assert fresh.tabs.currentIndex() == 2 and style.text_scale() == 1.5
        assert fresh.attribution.state.pinned == "␣Rome" and fresh.attribution.pin.text() == "␣Rome"
        assert "restored" in fresh.message.full_text
    finally:
        fresh.close()
    # The same model still on screen: restored in place, neither reopened nor redrawn.
    window.neighbours.k.setValue(3)
    window.analogies.exclude.setChecked(True)
    panel.run_projection()
    asked = _submitted(window)
    assert window.open_session(path)
    wait_for(qtbot, lambda: window.neighbours.table.rowCount() == 6 and window.analogies.table.rows == fresh.analogies.table.rows)
    assert not [r for r in asked if isinstance(r, (rq.LoadModel, rq.Project))]
    assert np.array_equal(panel.view.coords, coords) and not panel.progress.isVisible()


def _boxes(window) -> list[str]:
    return [w.text() for w in QApplication.topLevelWidgets()
            if isinstance(w, QMessageBox) and w.isVisible() and w.windowTitle() == "Could not open the session"]


def test_bad_sessions_say_so_and_leave_the_window_as_it_was(qtbot, window, tmp_path):
    tiny = tmp_path / "tiny"
    make_tiny_model(tiny, arch="gpt2")
    window.open_model(str(tiny))
    wait_for(qtbot, lambda: window.summary is not None and window.map_panel.view.ids.size > 0, 60_000)
    good = window.save_session(tmp_path / "tiny.embviz")
    window.open_model("spells")
    wait_for(qtbot, lambda: window.summary is not None and window.summary.info["vocab_size"] == 5, 30_000)
    wait_for(qtbot, lambda: window.map_panel.view.ids.size == 5, 30_000)
    before = window.map_panel.view.coords.copy()

    def still_spells():
        assert window.summary.info["vocab_size"] == 5
        assert np.array_equal(window.map_panel.view.coords, before)

    # Corrupt.
    broken = tmp_path / "broken.embviz"
    broken.write_bytes(b"PK\x03\x04 truncated")
    assert not window.open_session(broken)
    assert any("damaged" in text for text in _boxes(window))
    still_spells()
    # From another model: the folder now holds a different table (same vocabulary, other weights).
    shutil.rmtree(tiny)
    make_tiny_model(tiny, arch="llama")
    assert window.open_session(good)  # accepted for opening; the worker checks the table
    wait_for(qtbot, lambda: any("different table" in text for text in _boxes(window)), 60_000)
    assert window.last_error.endswith("Nothing was restored.")
    still_spells()
    # The model file is gone.
    shutil.rmtree(tiny)
    assert not window.open_session(good)
    assert any("is missing" in text and str(tiny) in text for text in _boxes(window))
    still_spells()


def test_file_menu_and_keys_for_sessions(qtbot, window):
    save = menu_action(window.menuBar(), "Save session")
    assert save is not None and save.shortcut().toString() == "Ctrl+S"
    assert menu_action(window.menuBar(), "Open session").shortcut().toString() == "Ctrl+Shift+O"
    save.trigger()  # no model yet: a message, no dialog
    assert "open a model first" in window.message.full_text


def test_the_command_line_takes_a_session():
    from embviz.cli import build_parser

    assert build_parser().parse_args(["--session", "class.embviz"]).session == "class.embviz"
