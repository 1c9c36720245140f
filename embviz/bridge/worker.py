"""The compute worker: the only bridge between Qt views and torch.

Four lanes (daemon threads): "quick" for lookups that must feel instant (neighbours,
analogies, logits, search), "long" for projections and the benchmark, "models" for
opening a model or building its language model, and "layers" for the logit lens and
drift (every layer of a forward pass), so none of them waits behind another. The
language model itself runs in a child process per model (core.lm.process), started by
LoadLanguageModel and stopped when another model is installed: the lanes that ask it
only wait on a pipe, so no forward pass holds this process's interpreter lock.

The model and its generation change together, under one lock. Every request carries
the generation it was asked of and runs only on that model. Opening a model cancels
every job of the old one; of several loads only the last one asked for is installed.
A second model to compare with (LoadComparison) sits beside the first, with a generation
of its own under the same rule; opening a new first model drops it.
Every request ends with exactly one signal: finished, failed or cancelled (a queued
request replaced by a newer one, a stale one and a model-switch drop included).
Results come back as Qt signals, which Qt queues onto the GUI thread, and from there to
the `Reply` its asker gave `submit` (napari's thread_worker style): nothing routes
results by channel; a channel only says which newer request replaces an older one.
"""

from __future__ import annotations

import gc
import itertools
import threading
import traceback
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from PySide6.QtCore import QObject, Signal

from embviz.bridge import requests as rq
from embviz.core.errors import Cancelled, EmbvizError, first_line

if TYPE_CHECKING:  # the handlers import torch: the first job imports them, so the window shows first
    from embviz.core.model import EmbeddingModel
    from embviz.core.table.compare import ModelPair


@dataclass(frozen=True)
class Reply:
    """What the asker of one request wants called, on the GUI thread, as it runs and ends:
    `progress(id, fraction, stage, preview)`, then exactly one of `finished(id, result)`,
    `failed(id, message)` or `cancelled(id)`."""

    finished: Callable[[int, Any], None] | None = None
    failed: Callable[[int, str], None] | None = None
    cancelled: Callable[[int], None] | None = None
    progress: Callable[[int, float, str, object], None] | None = None


@dataclass(eq=False)
class _Job:
    request: rq.Request
    cancel: threading.Event = field(default_factory=threading.Event)


class _Lane(threading.Thread):
    """One job at a time; per channel only the newest queued request is kept."""

    def __init__(self, name: str, execute: Callable[[_Job], None]) -> None:
        super().__init__(name=f"embviz-{name}", daemon=True)
        self.execute = execute
        self.pending: OrderedDict[str, _Job] = OrderedDict()
        self.cond = threading.Condition()
        self.running: _Job | None = None
        self.stopping = False

    def submit(self, job: _Job) -> list[_Job]:
        """Queue `job`; return the queued job it replaces (it never runs)."""
        with self.cond:
            replaced = self.pending.pop(job.request.channel, None)
            self.pending[job.request.channel] = job
            if self.running is not None and self.running.request.channel == job.request.channel:
                self.running.cancel.set()
            self.cond.notify()
        return [replaced] if replaced is not None else []

    def cancel(self, channel: str | None = None) -> list[_Job]:
        """Stop the running job of `channel` (every channel when None); return the
        queued jobs taken off the queue, which never run."""
        with self.cond:
            if self.running is not None and channel in (None, self.running.request.channel):
                self.running.cancel.set()
            if channel is None:
                dropped = list(self.pending.values())
                self.pending.clear()
            else:
                dropped = [job] if (job := self.pending.pop(channel, None)) is not None else []
        for job in dropped:
            job.cancel.set()
        return dropped

    def stop(self) -> list[_Job]:
        dropped = self.cancel()
        with self.cond:
            self.stopping = True
            self.cond.notify()
        return dropped

    def run(self) -> None:
        capped = False
        while True:
            with self.cond:
                while not self.pending and not self.stopping:
                    self.cond.wait()
                if self.stopping:
                    return
                _, job = self.pending.popitem(last=False)
                self.running = job
            try:
                if not capped:  # here rather than at start: it imports torch, which the window waits for
                    from embviz.core.device import limit_compute_threads

                    limit_compute_threads()
                    capped = True
                self.execute(job)
            finally:
                with self.cond:
                    self.running = None


class ComputeWorker(QObject):
    """Owns the model and every tensor. Views call `submit` and listen."""

    started = Signal(str, int)  # channel, request id
    progressed = Signal(str, int, float, str, object)  # channel, id, fraction, stage, preview
    finished = Signal(str, int, object)  # channel, id, result
    failed = Signal(str, int, str)  # channel, id, message
    cancelled = Signal(str, int)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        from embviz.core.mapped_guard import install

        install()  # here, on the window's thread: models open on a lane, where no signal handler can be set
        self._model: EmbeddingModel | None = None
        self._generation = 0
        self._comparison: ModelPair | None = None
        self._comparison_generation = 0  # how many second models have been installed
        self._ids = itertools.count(1)
        # Re-entrant: a slot connected directly (in the lane's thread) may submit again.
        self._lock = threading.RLock()
        self._lanes = {name: _Lane(name, self._execute) for name in (rq.QUICK, rq.LONG, rq.MODELS, rq.LAYERS)}
        self._replies: dict[int, Reply] = {}  # touched on the GUI thread only
        self._closed = False
        self.progressed.connect(self._deliver_progress)
        self.finished.connect(self._deliver_finished)
        self.failed.connect(self._deliver_failed)
        self.cancelled.connect(self._deliver_cancelled)
        for lane in self._lanes.values():
            lane.start()

    @property
    def model(self) -> EmbeddingModel | None:
        return self._model

    @property
    def comparison(self) -> ModelPair | None:
        """The first model and the second beside it, once a LoadComparison has opened one."""
        return self._comparison

    @property
    def generation(self) -> int:
        """How many models have been installed; 0 before the first."""
        return self._generation

    def submit(self, request: rq.Request, reply: Reply | None = None) -> int:
        """Queue a request; its id comes back with exactly one end signal, and to `reply`."""
        with self._lock:
            request.request_id = next(self._ids)
            if reply is not None:
                self._replies[request.request_id] = reply
            if request.generation is None:
                request.generation = self._generation
            if request.comparison_generation is None:
                request.comparison_generation = self._comparison_generation
            dropped: list[_Job] = []
            if isinstance(request, rq.LoadModel):
                # Everything queued or running belongs to the old model (or to a load
                # that this one supersedes): stop it all, so the load starts at once.
                for lane in self._lanes.values():
                    dropped += lane.cancel()
            dropped += self._lanes[request.lane].submit(_Job(request))
        self._emit_cancelled(dropped)
        return request.request_id

    def cancel(self, channel: str) -> None:
        dropped: list[_Job] = []
        for lane in self._lanes.values():
            dropped += lane.cancel(channel)
        self._emit_cancelled(dropped)

    def shutdown(self, timeout: float = 2.0) -> None:
        """Cancel everything; lanes are daemon threads, so a job that cannot stop at
        once never keeps the process alive."""
        dropped: list[_Job] = []
        for lane in self._lanes.values():
            dropped += lane.stop()
        self._emit_cancelled(dropped)
        self._closed = True
        _close_language_model(self._model)
        for lane in self._lanes.values():
            lane.join(timeout)
        # The window's parts hold this worker through their connections and callbacks, in
        # cycles that may outlive the window (and the collector's frozen generation): the tables
        # go now, not with the last of them.
        with self._lock:
            self._model = self._comparison = None

    def lanes_alive(self) -> dict[str, bool]:
        return {name: lane.is_alive() for name, lane in self._lanes.items()}

    def _deliver_progress(self, _channel: str, rid: int, fraction: float, stage: str, preview: object) -> None:
        reply = self._replies.get(rid)
        if reply is not None and reply.progress is not None:
            reply.progress(rid, fraction, stage, preview)

    def _deliver_finished(self, _channel: str, rid: int, result: object) -> None:
        reply = self._replies.pop(rid, None)
        if reply is not None and reply.finished is not None:
            reply.finished(rid, result)

    def _deliver_failed(self, _channel: str, rid: int, message: str) -> None:
        reply = self._replies.pop(rid, None)
        if reply is not None and reply.failed is not None:
            reply.failed(rid, message)

    def _deliver_cancelled(self, _channel: str, rid: int) -> None:
        reply = self._replies.pop(rid, None)
        if reply is not None and reply.cancelled is not None:
            reply.cancelled(rid)

    def _emit_cancelled(self, jobs: list[_Job]) -> None:
        for job in jobs:
            self.cancelled.emit(job.request.channel, job.request.request_id)

    def _execute(self, job: _Job) -> None:
        try:
            self._run_job(job)
        except RuntimeError:
            # A job that could not stop at once ends after the window has closed and deleted
            # this object: its signal has no one to reach ("Signal source has been deleted").
            if not self._closed:
                raise

    def _run_job(self, job: _Job) -> None:
        # The handlers (and torch) are imported by the first request, on its lane, not by the window.
        from embviz.bridge.handlers import run_request, summarise, summarise_comparison

        request = job.request
        channel, rid = request.channel, request.request_id
        with self._lock:
            model, generation = self._model, self._generation
            pair, pairing = self._comparison, self._comparison_generation
            stale = (job.cancel.is_set() or (request.needs_model and request.generation != generation)
                     or (request.needs_comparison and request.comparison_generation != pairing))
        if stale:  # asked of a model (or a second model) that is gone, or cancelled while queued
            self.cancelled.emit(channel, rid)
            return
        self.started.emit(channel, rid)

        def progress(fraction: float, stage: str = "", preview: object = None) -> None:
            if job.cancel.is_set():
                raise Cancelled()
            self.progressed.emit(channel, rid, float(fraction), stage, preview)

        try:
            result = run_request(pair if request.needs_comparison else model, request, progress)
        except Cancelled:
            self.cancelled.emit(channel, rid)
            return
        except Exception as exc:  # noqa: BLE001 - a bug must not kill the lane; the user still gets a message
            if job.cancel.is_set():
                self.cancelled.emit(channel, rid)  # it failed because it was stopped
            else:
                self.failed.emit(channel, rid, _message(exc))
            return
        with self._lock:
            if job.cancel.is_set():
                self.cancelled.emit(channel, rid)
            elif isinstance(request, rq.LoadModel):
                _close_language_model(self._model)  # its child stops: a model switch never waits for it
                if result.lm_loader is not None:
                    from embviz.core.lm.process import LanguageModelHost

                    result.lm_host = LanguageModelHost(result)  # started by the first LoadLanguageModel
                self._model = result
                # What is alive once a model is open (its vocabulary, the window, the libraries)
                # stays alive: out of the cycle collector's full passes, which walked all of it
                # and stalled the window for seconds when a job (the benchmark) allocated much.
                # What the last model froze is thawed and collected first, so a cycle of a replaced
                # model is not kept for the rest of the session (one pass, at a switch, not mid-job).
                gc.unfreeze()
                gc.collect()
                gc.freeze()
                self._comparison = None  # it was compared with the model just replaced
                self._generation += 1
                self.finished.emit(channel, rid, summarise(result, self._generation))
            elif request.needs_model and generation != self._generation:
                self.cancelled.emit(channel, rid)  # computed on a model that has just been replaced
            elif isinstance(request, rq.LoadComparison):
                self._comparison = result
                self._comparison_generation += 1
                self.finished.emit(channel, rid, summarise_comparison(result))
            elif request.needs_comparison and pairing != self._comparison_generation:
                self.cancelled.emit(channel, rid)  # computed on a second model that has just been replaced
            else:
                self.finished.emit(channel, rid, result)


def _close_language_model(model: EmbeddingModel | None) -> None:
    if model is not None and model.lm_host is not None:
        model.lm_host.close()


def _message(exc: Exception) -> str:
    if isinstance(exc, EmbvizError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "Out of memory: try a smaller selection or a smaller model."
    if type(exc).__name__ == "OutOfMemoryError":  # torch's, without importing torch here
        return "The GPU ran out of memory: try a smaller selection, or --device cpu."
    traceback.print_exception(exc)
    return f"Unexpected error ({type(exc).__name__}: {first_line(exc)})."
