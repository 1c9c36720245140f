"""The window's language model in a child process: the same answers as in-process, the
lens's last column first, cancels, errors as one sentence, a dead child restarted, and
a model switch that stops it. A tiny Llama saved by the test, so each child starts fast."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from PySide6.QtCore import Qt

from embviz.bridge import requests as rq
from embviz.bridge.worker import ComputeWorker, Reply
from embviz.core.lm.lens import logit_lens
from embviz.core.lm.results import LensCells, LensColumns, LensResult
from embviz.core.lm.logits import next_token_logits
from embviz.core.lm.process import run_lm

from conftest import make_tiny_model

TEXT = "the king and the queen ruled the kingdom"


def die(_model) -> None:
    """Called in the child: it dies mid-call, as one killed for its memory would."""
    os._exit(7)


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny-llama")
    make_tiny_model(folder, arch="llama")
    return folder


@pytest.fixture(scope="module")
def in_process(tiny_folder):
    from embviz.core import open_checkpoint

    return open_checkpoint(str(tiny_folder), "cpu")


@pytest.fixture
def worker(qtbot):
    w = ComputeWorker()
    yield w
    w.shutdown()


def ask(qtbot, worker, request, timeout=120_000):
    """(how it ended, its result or message, the previews of its progress)."""
    ended, previews = [], []
    worker.submit(request, Reply(finished=lambda _r, x: ended.append(("finished", x)),
                                 failed=lambda _r, m: ended.append(("failed", m)),
                                 cancelled=lambda _r: ended.append(("cancelled", None)),
                                 progress=lambda _r, _f, _s, p: p is not None and previews.append(p)))
    qtbot.waitUntil(lambda: bool(ended), timeout=timeout)
    return ended[0][0], ended[0][1], previews


def open_with_child(qtbot, worker, folder):
    assert ask(qtbot, worker, rq.LoadModel(source=str(folder), device="cpu"))[0] == "finished"
    assert ask(qtbot, worker, rq.LoadLanguageModel())[0] == "finished"
    model = worker.model
    assert model.lm_host is not None and model.lm_host.ready and model.lm_loaded
    return model


def test_the_child_gives_the_in_process_answers_and_the_window_builds_no_model(qtbot, worker, tiny_folder, in_process):
    model = open_with_child(qtbot, worker, tiny_folder)
    assert model._lm is None  # the forward passes run in the child only
    kind, logits, _ = ask(qtbot, worker, rq.Logits(text=TEXT, k=5))
    expected = next_token_logits(in_process, TEXT, 5)
    assert kind == "finished" and [s.id for s in logits.results] == [s.id for s in expected.results]
    assert [s.prob for s in logits.results] == pytest.approx([s.prob for s in expected.results], rel=1e-4)
    kind, lens, previews = ask(qtbot, worker, rq.Lens(text=TEXT, k=3))
    alone = logit_lens(in_process, TEXT, k=3)
    assert kind == "finished" and lens.tokens == alone.tokens and lens.layer_names == alone.layer_names
    assert [[[s.id for s in cell] for cell in row] for row in lens.top] == \
           [[[s.id for s in cell] for cell in row] for row in alone.top]
    # The last position's column comes first, alone and whole; then the rest, each column once.
    positions = len(lens.tokens)
    assert all(isinstance(p, LensColumns) for p in previews)
    assert list(previews[0].columns) == [positions - 1] and len(previews[0].columns[positions - 1]) == len(lens.top)
    seen = [p for preview in previews for p in preview.columns]
    assert sorted(seen) == list(range(positions)) and len(seen) == positions
    for preview in previews:
        for p, cells in preview.columns.items():
            assert [[s.id for s in cell] for cell in cells] == [[s.id for s in row[p]] for row in lens.top]


def test_drift_attribution_and_pinned_tokens_run_in_the_child(qtbot, worker, tiny_folder):
    open_with_child(qtbot, worker, tiny_folder)
    kind, drift, _ = ask(qtbot, worker, rq.Drift(word="king", sentences=["the king ruled", "a king and the queen"]))
    assert kind == "finished" and len(drift.sentences) == 2 and len(drift.between) == len(drift.layer_names)
    kind, parts, _ = ask(qtbot, worker, rq.Attribution(text=TEXT))
    assert kind == "finished" and sum(p.value for p in parts.parts) == pytest.approx(parts.logit, rel=1e-3, abs=1e-3)
    kind, message, _ = ask(qtbot, worker, rq.PinnedTokens(text=TEXT, tokens=[10 ** 9]))
    assert kind == "failed" and "\n" not in message and "Unexpected" not in message


def test_a_newer_lens_replaces_the_running_one(qtbot, worker, tiny_folder):
    open_with_child(qtbot, worker, tiny_folder)
    ends: dict[int, str] = {}
    reply = lambda: Reply(finished=lambda r, _x: ends.__setitem__(r, "finished"),  # noqa: E731
                          cancelled=lambda r: ends.__setitem__(r, "cancelled"),
                          failed=lambda r, m: ends.__setitem__(r, m))
    ids = [worker.submit(rq.Lens(text=TEXT + " the" * n), reply()) for n in range(4)]
    qtbot.waitUntil(lambda: len(ends) == 4, timeout=120_000)
    assert ends[ids[-1]] == "finished" and set(ends.values()) <= {"finished", "cancelled"}
    assert ask(qtbot, worker, rq.Logits(text=TEXT))[0] == "finished"  # the child still answers


def test_a_dead_child_fails_its_call_in_one_sentence_and_is_started_again(qtbot, worker, tiny_folder):
    model = open_with_child(qtbot, worker, tiny_folder)
    host = model.lm_host
    with pytest.raises(Exception) as failed:
        run_lm(model, die)
    assert "stopped" in str(failed.value) and "\n" not in str(failed.value)
    assert not host.ready
    kind, logits, _ = ask(qtbot, worker, rq.Logits(text=TEXT))
    assert kind == "finished" and logits.results and host.ready and host.restarts == 1


def test_a_model_switch_stops_the_child(qtbot, worker, tiny_folder):
    model = open_with_child(qtbot, worker, tiny_folder)
    child = model.lm_host._child
    assert ask(qtbot, worker, rq.LoadModel(source="toy4", device="cpu"))[0] == "finished"
    assert child.wait(10) is not None and worker.model.lm_host is None  # a lesson model has no language model


def test_a_checkpoint_the_child_cannot_open_is_one_sentence(qtbot, worker, tmp_path):
    folder = tmp_path / "tiny"
    make_tiny_model(folder, arch="llama")
    assert ask(qtbot, worker, rq.LoadModel(source=str(folder), device="cpu"))[0] == "finished"
    (folder / "model.safetensors").write_bytes(b"not a checkpoint")
    kind, message, _ = ask(qtbot, worker, rq.LoadLanguageModel())
    assert kind == "failed" and message and "\n" not in message and not worker.model.lm_loaded


def test_lens_results_travel_packed_and_come_back_equal(in_process):
    result = logit_lens(in_process, TEXT, k=4)
    data = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    back = pickle.loads(data)
    assert isinstance(back, LensResult) and back == result and back.top == result.top
    # Packed: the cells are three arrays and two joined strings, never one object per score.
    assert isinstance(back.cells.ids, np.ndarray) and back.cells.ids.dtype == np.int32
    assert back.cells.ids.shape == (len(result.layer_names), len(result.tokens), 4)
    assert b"TokenScore" not in data
    assert back.as_dict() == result.as_dict()
    columns = LensColumns(result.tokens, result.layer_names, True, [2],
                          LensCells.of_scores([[row[2]] for row in result.top]))
    again = pickle.loads(pickle.dumps(columns))
    assert again == columns and again.columns == {2: [row[2] for row in result.top]}


def _hand_made_result(layers: int, positions: int):
    from embviz.core.lm.lens import layer_names
    from embviz.core.lm.results import TokenScore

    cell = lambda layer, p: [TokenScore(10 * layer + p, f"t{layer}.{p}", 1.0, 0.5 + 0.1 * layer, f"t{layer}.{p}"),  # noqa: E731
                             TokenScore(999, "other", 0.5, 0.05, "other")]
    tokens = [(i, f"w{i}") for i in range(positions)]
    return LensResult(tokens, [t for _, t in tokens], layer_names(layers - 1),
                      LensCells.of_scores([[cell(layer, p) for p in range(positions)] for layer in range(layers)]), True)


def _preview(result, positions: list[int]) -> LensColumns:
    return LensColumns(result.tokens, result.layer_names, True, positions,
                       LensCells.of_scores([[row[p] for p in positions] for row in result.top]))


def test_the_lens_tab_draws_the_columns_as_they_come(qtbot, lens_panel):
    layers, positions = 4, 6
    result = _hand_made_result(layers, positions)
    panel = lens_panel
    table = panel.table
    changed, resets = [], []
    table.dataChanged.connect(lambda first, last, *_: changed.append((first.column(), last.column())))
    table.modelReset.connect(lambda: resets.append(1))
    panel.reply.progress(7, 0.1, "Reading every layer", _preview(result, [positions - 1]))
    assert table.rowCount() == layers and table.columnCount() == positions and not panel.splitter.isHidden()
    assert [table.text(panel._row_of(layer), positions - 1) for layer in range(layers)] == \
           [f"t{layer}.{positions - 1}" for layer in range(layers)]
    assert all(table.text(r, 0) is None for r in range(layers))  # the rest is still to come
    assert changed == [(positions - 1, positions - 1)]  # only the preview's column is redrawn
    panel.reply.progress(6, 0.5, "", _preview(result, [0]))  # an older request's
    assert table.text(0, 0) is None
    for p in range(0, positions - 1, 2):
        panel.reply.progress(7, 0.5, "", _preview(result, [p, p + 1]))
        assert changed[-1] == (p, p + 1)
    assert len(resets) == 1  # one new grid; every preview after it only fills in its columns
    panel.reply.finished(7, result)
    assert len(resets) == 1  # every cell was drawn already: no new grid
    assert panel.result is result and panel.shown_id == 7 and panel.cell == (layers - 1, positions - 1)
    assert [[table.text(panel._row_of(layer), p) for p in range(positions)] for layer in range(layers)] == \
           [[f"t{layer}.{p}" for p in range(positions)] for layer in range(layers)]


def test_the_lens_table_shows_each_cells_top_guess_colour_and_tooltip(qtbot, lens_panel):
    from embviz.ui.plots.lens_grid import cell_color, row_names

    layers, positions = 3, 4
    result = _hand_made_result(layers, positions)
    panel = lens_panel
    panel.reply.finished(7, result)
    table = panel.table
    role = Qt.ItemDataRole
    assert [table.headerData(r, Qt.Orientation.Vertical) for r in range(layers)] == row_names(result)[::-1]
    assert [table.headerData(c, Qt.Orientation.Horizontal) for c in range(positions)] == [f"w{p}" for p in range(positions)]
    for layer in range(layers):
        for p in range(positions):
            index = table.index(panel._row_of(layer), p)
            best = result.top[layer][p][0]
            assert index.data() == best.token
            assert index.data(role.BackgroundRole).getRgb()[:3] == pytest.approx(cell_color(best.prob).getRgb()[:3], abs=1)
            assert index.data(role.ForegroundRole).name() == ("#ffffff" if best.prob > 0.45 else "#000000")
            assert index.data(role.ToolTipRole) == (f"{best.token}  {best.prob:.1%}\nother  5.0%\n"
                                                    "Double-click: which blocks wrote it")
    headers, rows = panel.table_rows()
    assert headers == ["layer"] + [f"{p}: w{p}" for p in range(positions)]
    assert rows[1] == ["block 1"] + [f"t1.{p} 0.6000" for p in range(positions)]
    asked = []
    panel.attributionAsked.connect(lambda *args: asked.append(args))
    panel.state.text = "w0 w1 w2 w3"
    panel.grid.doubleClicked.emit(table.index(panel._row_of(1), 2))
    assert asked == [("w0 w1 w2 w3", 2, "t1.2")]
    panel.grid.clicked.emit(table.index(panel._row_of(0), 3))
    assert panel.cell == (0, 3) and panel.bars.count == 2 and "after “w3”" in panel.bars.title
