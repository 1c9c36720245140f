"""The compute worker: stale requests dropped, cancel, errors as messages."""

from __future__ import annotations

import pytest

from embviz.bridge import requests as rq
from embviz.bridge.worker import ComputeWorker
from helpers import wait_until_idle


@pytest.fixture
def worker(qtbot):
    w = ComputeWorker()
    yield w
    w.shutdown()


def load(qtbot, worker, source):
    with qtbot.waitSignal(worker.finished, timeout=120_000, check_params_cb=lambda ch, rid, res: ch == "load"):
        worker.submit(rq.LoadModel(source=source, device="cpu"))


def test_stale_requests_never_finish(qtbot, worker, monkeypatch):
    import threading

    from embviz.bridge import handlers

    load(qtbot, worker, "toy4")
    finished, cancelled = [], []
    worker.finished.connect(lambda ch, rid, res: finished.append((ch, rid, res)))
    worker.cancelled.connect(lambda ch, rid: cancelled.append(rid))
    # The first lookup is held running until all six are asked: on a busy machine it could
    # otherwise end before the second one supersedes it, and the test would race.
    go, real = threading.Event(), handlers.run_request
    first = []

    def held(model, request, progress):
        if not first:
            first.append(request.request_id)
            go.wait(10)
        return real(model, request, progress)

    monkeypatch.setattr(handlers, "run_request", held)  # what the worker runs, looked up per job
    ids = [worker.submit(rq.Neighbours(query=w, k=2)) for w in ("cat", "dog", "car", "truck", "cat", "dog")]
    go.set()
    qtbot.waitUntil(lambda: any(rid == ids[-1] for _, rid, _ in finished), timeout=10_000)
    wait_until_idle(qtbot, worker)  # every lane empty: a late finish of a stale request would be in by now
    got = [rid for ch, rid, _ in finished if ch == "neighbours"]
    assert got == [ids[-1]]
    assert sorted(cancelled) == ids[:-1]  # each replaced request says so
    assert finished[-1][2].query_label == "dog" and finished[-1][2].hits[0].token == "cat"


def test_an_error_becomes_a_message_and_the_worker_goes_on(qtbot, worker):
    load(qtbot, worker, "toy4")
    with qtbot.waitSignal(worker.failed, timeout=10_000) as failed:
        worker.submit(rq.Neighbours(query="zebra"))
    assert "not in the vocabulary" in failed.args[2]
    with qtbot.waitSignal(worker.finished, timeout=10_000) as ok:
        worker.submit(rq.Neighbours(query="car", k=1))
    assert ok.args[2].hits[0].token == "truck"


def random_table(tmp_path, rows=3000, dim=16) -> str:
    import torch
    from safetensors.torch import save_file

    path = tmp_path / "table.safetensors"
    save_file({"embedding.weight": torch.randn(rows, dim, generator=torch.Generator().manual_seed(0))}, str(path))
    return str(path)


def test_long_job_cancels_and_quick_lane_stays_free(qtbot, worker, tmp_path):
    load(qtbot, worker, random_table(tmp_path))
    previews = []
    worker.progressed.connect(lambda ch, rid, f, stage, preview: previews.append(preview))
    with qtbot.waitSignal(worker.cancelled, timeout=120_000) as cancelled:
        rid = worker.submit(rq.Project(method="tsne"))
        qtbot.waitUntil(lambda: any(isinstance(p, tuple) for p in previews), timeout=120_000)
        # While t-SNE runs on the long lane, a neighbour lookup still answers.
        with qtbot.waitSignal(worker.finished, timeout=10_000, check_params_cb=lambda ch, r, res: ch == "neighbours"):
            worker.submit(rq.Neighbours(query=5, k=3))
        worker.cancel("project")
    assert cancelled.args == ["project", rid]


def test_a_new_projection_replaces_a_running_one(qtbot, worker, tmp_path):
    load(qtbot, worker, random_table(tmp_path))
    events = []
    worker.cancelled.connect(lambda ch, rid: events.append(("cancelled", rid)))
    worker.finished.connect(lambda ch, rid, res: events.append(("finished", rid)))
    started = []
    worker.started.connect(lambda ch, rid: started.append(rid))
    first = worker.submit(rq.Project(method="tsne"))
    qtbot.waitUntil(lambda: first in started, timeout=30_000)
    second = worker.submit(rq.Project(method="pca"))
    qtbot.waitUntil(lambda: ("finished", second) in events, timeout=120_000)
    assert ("cancelled", first) in events and ("finished", first) not in events


def test_bad_checkpoint_fails_cleanly(qtbot, worker, tmp_path):
    bad = tmp_path / "junk.safetensors"
    bad.write_bytes(b"\x00" * 3 + b"not a checkpoint" * 10)
    with qtbot.waitSignal(worker.failed, timeout=10_000) as failed:
        worker.submit(rq.LoadModel(source=str(bad), device="cpu"))
    assert "safetensors" in failed.args[2]


def test_opening_stops_at_a_progress_report_when_cancelled(tmp_path):
    """The core half of a cancelled load; the worker half (a cancelled load is never
    installed) is in test_lifecycle."""
    from conftest import make_tiny_model

    from embviz.core import Cancelled, open_checkpoint

    make_tiny_model(tmp_path / "tiny")
    seen = []

    def cancel_midway(fraction, stage, preview):
        seen.append((fraction, stage))
        if fraction >= 0.3:
            raise Cancelled()

    with pytest.raises(Cancelled):
        open_checkpoint(str(tmp_path / "tiny"), "cpu", progress=cancel_midway)
    assert seen[-1] == (0.3, "Reading the embedding table")  # stopped before the table was read


def test_closing_the_window_during_a_job_exits_cleanly(qtbot, tmp_path):
    from embviz.state.settings import Settings
    from embviz.ui.main_window import MainWindow

    window = MainWindow(settings=Settings(tmp_path / "s.json"), device="cpu")
    qtbot.addWidget(window)
    window.show()
    window.open_model(random_table(tmp_path, rows=8000))
    qtbot.waitUntil(lambda: window.summary is not None, timeout=60_000)
    window.map_panel.method.setCurrentIndex(1)  # t-SNE
    window.map_panel.run_projection()
    qtbot.waitUntil(lambda: "t-SNE" in window.map_panel.status.text(), timeout=60_000)
    window.close()
    assert not window.worker.lanes_alive()["quick"]
    qtbot.waitUntil(lambda: not any(window.worker.lanes_alive().values()), timeout=30_000)


def test_a_job_ending_after_the_window_deleted_the_worker_says_nothing(qtbot, monkeypatch):
    """The window's close shuts the worker down and deletes it; a job that could not stop at
    once must end silently, not raise 'Signal source has been deleted' in its lane."""
    import threading

    import shiboken6

    from embviz.bridge import handlers

    worker = ComputeWorker()
    load(qtbot, worker, "toy4")
    running, go, ended, errors = threading.Event(), threading.Event(), threading.Event(), []
    real = handlers.run_request

    def held(model, request, progress):
        running.set()
        go.wait(10)
        try:
            return real(model, request, progress)
        finally:
            ended.set()

    monkeypatch.setattr(handlers, "run_request", held)  # what the worker runs, looked up per job
    monkeypatch.setattr(threading, "excepthook", lambda hook: errors.append(hook.exc_value))
    worker.submit(rq.Neighbours(query="cat", k=2))
    assert running.wait(10)
    lane = worker._lanes[rq.QUICK]
    worker.shutdown(timeout=0.0)
    shiboken6.delete(worker)
    go.set()
    assert ended.wait(10)
    lane.join(10)
    assert not lane.is_alive() and errors == []
