"""The one place an asker's stale answers are dropped: a `Latest` is one kind of request of
one panel. `ask` submits it; only the newest one's progress and end reach the callbacks, so a
panel never compares request ids (an older one, replaced on its channel or still on its way,
is dropped here)."""

from __future__ import annotations

from typing import Any, Callable

from embviz.bridge.requests import Request
from embviz.bridge.worker import Reply

Submit = Callable[[Request, Reply], int]


class Latest:
    def __init__(self, submit: Submit, finished: Callable[[Any], None] | None = None,
                 failed: Callable[[str], None] | None = None, cancelled: Callable[[], None] | None = None,
                 progress: Callable[[float, str, object], None] | None = None) -> None:
        self._submit = submit
        self.finished, self.failed, self.cancelled, self.progress = finished, failed, cancelled, progress
        self.id = 0  # the newest request's; 0 before the first and once forgotten
        self.waiting = False  # whether it is still on its way

    def ask(self, request: Request) -> int:
        """Submit `request`; the one before it, if still on its way, is heard of no more."""
        self.forget()  # the one it replaces on its channel is cancelled while it is submitted
        self.id = self._submit(request, Reply(self._finished, self._failed, self._cancelled, self._progress))
        self.waiting = True
        return self.id

    def forget(self) -> None:
        """Drop the request on its way (a new model: it was asked of the old one)."""
        self.id = 0
        self.waiting = False

    def _ended(self, rid: int) -> bool:
        if rid != self.id or not self.waiting:
            return False
        self.waiting = False
        return True

    def _finished(self, rid: int, result: Any) -> None:
        if self._ended(rid) and self.finished is not None:
            self.finished(result)

    def _failed(self, rid: int, message: str) -> None:
        if self._ended(rid) and self.failed is not None:
            self.failed(message)

    def _cancelled(self, rid: int) -> None:
        if self._ended(rid) and self.cancelled is not None:
            self.cancelled()

    def _progress(self, rid: int, fraction: float, stage: str, preview: object) -> None:
        if rid == self.id and self.waiting and self.progress is not None:
            self.progress(fraction, stage, preview)
