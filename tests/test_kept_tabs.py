"""Settings that belong to a model stay with it: each model gets back the tabs it was left
with, and a lesson borrows the user's tabs and gives them back when it closes."""

from __future__ import annotations

import numpy as np

from embviz.state.kept_tabs import KEPT_MODELS, KeptTabs
from embviz.state.session import ModelRef, ProjectionState, Session
from embviz.state.tabs import MapState, NeighboursState
from tests.helpers import wait_for


def _session(vocab_size: int, k: int = 10) -> Session:
    projection = ProjectionState(method="pca", subset="all", limit=vocab_size, ids=np.arange(3, dtype=np.int64),
                                 coords=np.zeros((3, 2), np.float32), caption="PCA")
    return Session(model=ModelRef(source=None, name="m", fingerprint={"vocab_size": vocab_size, "dim": 4}),
                   states={"neighbours": NeighboursState(k=k), "map": MapState(projection=projection)})


def test_kept_tabs_are_copies_by_model_and_bounded():
    kept = KeptTabs()
    session = _session(10, k=7)
    kept.keep(session)
    session["neighbours"].k = 99  # the window's state moves on: the kept copy does not
    session["map"].projection.coords[:] = 5
    back = kept.take({"dim": 4, "vocab_size": 10})  # a fingerprint is the same in any key order
    assert back is not None and back["neighbours"].k == 7
    assert np.array_equal(back["map"].projection.coords, np.zeros((3, 2)))
    assert kept.take({"vocab_size": 10, "dim": 4}) is None  # taken: the window holds it again
    for size in range(KEPT_MODELS + 1):
        kept.keep(_session(100 + size))
    assert kept.take({"vocab_size": 100, "dim": 4}) is None  # the model left longest ago went first
    assert kept.take({"vocab_size": 100 + KEPT_MODELS, "dim": 4}) is not None


def _open(qtbot, window, source: str, vocab_size: int) -> None:
    window.open_model(source)
    wait_for(qtbot, lambda: window.summary is not None and window.summary.info["vocab_size"] == vocab_size
             and not window.load_progress.isVisible(), 30_000)


def test_each_model_gets_its_own_settings_back(qtbot, window):
    _open(qtbot, window, "toy4", 4)
    window.neighbours.state.k = 3
    window.neighbours.state.by = "dot"
    window.map_panel.state.colour_by = "kind"
    _open(qtbot, window, "lookup6", 6)
    window.neighbours.state.k = 5  # this model's own
    window.neighbours.state.by = "cosine"
    window.map_panel.state.colour_by = "none"
    _open(qtbot, window, "toy4", 4)
    assert (window.neighbours.state.k, window.neighbours.state.by, window.map_panel.state.colour_by) == (3, "dot", "kind")
    assert window.neighbours.k.value() == 3  # the widgets follow the state
    _open(qtbot, window, "lookup6", 6)
    assert (window.neighbours.state.k, window.neighbours.state.by, window.map_panel.state.colour_by) == (5, "cosine", "none")


def test_a_lesson_borrows_the_tabs_and_gives_them_back(qtbot, window):
    _open(qtbot, window, "toy4", 4)
    state = window.neighbours.state
    state.by, state.k, state.word = "dot", 2, "truck"
    window.map_panel.state.colour_by = "kind"
    window.show_tab("map")
    step = next(i for i, s in enumerate(window.tour.steps) if s.model == "toy4" and s.tab == "neighbours")
    window.go_to_step(step)
    wait_for(qtbot, lambda: window.neighbours.state.word == "cat", 30_000)
    assert state.by == "cosine" and window.tab_key() == "neighbours"
    lookup = next(i for i, s in enumerate(window.tour.steps) if s.model == "lookup6")
    window.go_to_step(lookup)  # another model: its map shows the lesson's picture, not the user's colours
    wait_for(qtbot, lambda: window.summary.info["vocab_size"] == 6 and window.tab_key() == "map", 30_000)
    assert window.map_panel.state.colour_by == "none"
    window.go_to_step(step)  # back on the user's model, still in the lesson
    wait_for(qtbot, lambda: window.summary.info["vocab_size"] == 4 and state.word == "cat", 30_000)
    window.lessons_dock.close()
    assert (state.by, state.k, state.word) == ("dot", 2, "truck")
    assert window.map_panel.state.colour_by == "kind" and window.tab_key() == "map"


def test_a_lesson_closed_on_another_model_gives_the_tabs_back_with_the_users_model(qtbot, window):
    _open(qtbot, window, "toy4", 4)
    window.neighbours.state.k = 2
    window.go_to_step(next(i for i, s in enumerate(window.tour.steps) if s.model == "lookup6"))
    wait_for(qtbot, lambda: window.summary.info["vocab_size"] == 6 and not window.load_progress.isVisible(), 30_000)
    window.neighbours.state.k = 9
    window.lessons_dock.close()
    assert window.neighbours.state.k == 9  # lookup6's, as the lesson left it: nothing of toy4's here
    _open(qtbot, window, "toy4", 4)
    assert window.neighbours.state.k == 2
