"""The compute worker: the only bridge between Qt views and torch.

Two lanes (daemon threads): a quick lane for lookups that must feel instant
(neighbours, analogies, logits, search) and a long lane for loading, projections
and the benchmark, so a running t-SNE never delays a neighbour lookup. Per
channel only the newest request matters: a queued older one is dropped, a running
one is cancelled at its next progress report. Results come back as Qt signals,
which Qt queues onto the GUI thread.
"""

from __future__ import annotations

import itertools
import threading
import traceback
from collections import OrderedDict
from typing import Any

from PySide6.QtCore import QObject, Signal

from embviz import requests as rq
from embviz.core.errors import Cancelled, EmbvizError, first_line
from embviz.jobs import Session


class _Lane(threading.Thread):
    def __init__(self, name: str, worker: "ComputeWorker") -> None:
        super().__init__(name=f"embviz-{name}", daemon=True)
        self.worker = worker
        self.pending: OrderedDict[str, rq.Request] = OrderedDict()
        self.cond = threading.Condition()
        self.running: rq.Request | None = None
        self.cancel_event = threading.Event()
        self.stopping = False

    def submit(self, request: rq.Request) -> None:
        with self.cond:
            self.pending.pop(request.channel, None)  # a queued older request is stale
            self.pending[request.channel] = request
            if self.running is not None and self.running.channel == request.channel:
                self.cancel_event.set()
            self.cond.notify()

    def cancel(self, channel: str) -> rq.Request | None:
        """Stop the channel's running job; return its queued request, which never runs."""
        with self.cond:
            if self.running is not None and self.running.channel == channel:
                self.cancel_event.set()
            return self.pending.pop(channel, None)

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.pending.clear()
            self.cancel_event.set()
            self.cond.notify()

    def run(self) -> None:
        from embviz.core.device import limit_compute_threads

        limit_compute_threads()
        while True:
            with self.cond:
                while not self.pending and not self.stopping:
                    self.cond.wait()
                if self.stopping:
                    return
                _, request = self.pending.popitem(last=False)
                self.running = request
                self.cancel_event.clear()
            self.worker._execute(request, self.cancel_event)
            with self.cond:
                self.running = None


class ComputeWorker(QObject):
    """Owns the session (the model and every tensor). Views call `submit` and listen."""

    started = Signal(str, int)  # channel, request id
    progressed = Signal(str, int, float, str, object)  # channel, id, fraction, stage, preview
    finished = Signal(str, int, object)  # channel, id, result
    failed = Signal(str, int, str)  # channel, id, message
    cancelled = Signal(str, int)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.session = Session()
        self.generation = 0
        self._ids = itertools.count(1)
        self._latest: dict[str, int] = {}
        self._lock = threading.Lock()
        self._quick = _Lane("quick", self)
        self._long = _Lane("long", self)
        self._quick.start()
        self._long.start()

    def submit(self, request: rq.Request) -> int:
        with self._lock:
            request.request_id = next(self._ids)
            request.generation = self.generation
            self._latest[request.channel] = request.request_id
        (self._long if request.long else self._quick).submit(request)
        return request.request_id

    def cancel(self, channel: str) -> None:
        for lane in (self._long, self._quick):
            dropped = lane.cancel(channel)
            if dropped is not None:
                self.cancelled.emit(channel, dropped.request_id)

    def is_current(self, channel: str, request_id: int) -> bool:
        return self._latest.get(channel) == request_id

    def shutdown(self, timeout: float = 2.0) -> None:
        """Cancel everything; lanes are daemon threads, so a job that cannot stop
        (e.g. inside UMAP) never keeps the process alive."""
        for lane in (self._quick, self._long):
            lane.stop()
        for lane in (self._quick, self._long):
            lane.join(timeout)

    def _execute(self, request: rq.Request, cancel: threading.Event) -> None:
        channel, rid = request.channel, request.request_id
        if not self.is_current(channel, rid) or (not isinstance(request, rq.LoadModel) and request.generation != self.generation):
            return  # stale: a newer request or another model came since
        self.started.emit(channel, rid)

        def progress(fraction: float, stage: str = "", preview: object = None) -> None:
            if cancel.is_set():
                raise Cancelled()
            self.progressed.emit(channel, rid, float(fraction), stage, preview)

        try:
            result = self.session.run(request, progress)
        except Cancelled:
            self.cancelled.emit(channel, rid)
            return
        except EmbvizError as exc:
            self.failed.emit(channel, rid, str(exc))
            return
        except MemoryError:
            self.failed.emit(channel, rid, "Out of memory: try a smaller selection or a smaller model.")
            return
        except Exception as exc:  # a bug must not kill the lane; the user still gets a message
            if type(exc).__name__ == "OutOfMemoryError":  # torch's, without importing torch here
                self.failed.emit(channel, rid, "The GPU ran out of memory: try a smaller selection, or --device cpu.")
                return
            traceback.print_exc()
            self.failed.emit(channel, rid, f"Unexpected error ({type(exc).__name__}: {first_line(exc)}).")
            return
        if isinstance(request, rq.LoadModel):
            with self._lock:
                self.generation += 1
        if cancel.is_set() and not isinstance(request, rq.LoadModel):
            self.cancelled.emit(channel, rid)
            return
        self.finished.emit(channel, rid, result)
