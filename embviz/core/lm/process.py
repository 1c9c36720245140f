"""The language model in a process of its own, so that no forward pass, lens or drift
holds the window's interpreter lock: the window's event loop keeps every frame.

One long-lived child per opened model (`python -m embviz.core.lm.process`, like the
t-SNE child: no multiprocessing spawn, the parent's sys.path as PYTHONPATH). It opens the
same checkpoint by its path on the same device (the cache makes that cheap), checks that
its table is the parent's, builds the language model once, then answers calls: a
module-level core function run on its own copy of the model, e.g. `logit_lens(model, …)`.

Messages are length-prefixed pickles written only by this module, on the child's stdin
and stdout (the child's own prints go to its stderr). Parent → child: ("open", source,
device, fingerprint), ("call", id, fn, args, kwargs), ("cancel", id). Child → parent:
("ready",), ("progress", id, fraction, stage, preview), ("ok", id, result),
("error", id, message), ("cancelled", id). A cancel stops the call at its next progress
report; a call's later messages are dropped. A child that dies fails the calls it was
running with one sentence and is started again by the next call.
"""

from __future__ import annotations

import itertools
import os
import pickle
import queue
import struct
import subprocess
import sys
import tempfile
import threading
import weakref
from typing import IO, Any, Callable, TypeVar, cast

from embviz.core.errors import Cancelled, EmbvizError, ProgressFn, first_line, no_progress

POLL_SECONDS = 0.05  # how often a waiting call looks for a cancel
HEADER = struct.Struct("<Q")
LOADING = "Loading the language model"
T = TypeVar("T")  # what the function run answers


def run_lm(model: Any, fn: Callable[..., T], *args: Any, progress: ProgressFn = no_progress, **kwargs: Any) -> T:
    """fn(model, *args, **kwargs) where the model's language model lives: in its child
    process when the window gave it one (`model.lm_host`), else here (the command line)."""
    host = getattr(model, "lm_host", None)
    if host is None:
        return cast(T, _run(fn, model, args, kwargs, progress))
    return cast(T, host.call(fn, args, kwargs, progress))


def _run(fn: Callable[..., Any], model: Any, args: tuple[Any, ...], kwargs: dict[str, Any], progress: ProgressFn) -> Any:
    return fn(model, *args, progress=progress, **kwargs) if takes_progress(fn) else fn(model, *args, **kwargs)


# fn → whether it has a `progress` parameter. Weak: a closure passed once is not kept alive.
_TAKES_PROGRESS: weakref.WeakKeyDictionary[Callable[..., Any], bool] = weakref.WeakKeyDictionary()
_TAKES_PROGRESS_LOCK = threading.Lock()  # the lanes call at once; a WeakKeyDictionary is not thread-safe


def takes_progress(fn: Callable[..., Any]) -> bool:
    """Whether `fn` takes a `progress` argument, read from its signature once per function
    (the lookups of a typed word call the same few functions many times)."""
    with _TAKES_PROGRESS_LOCK:
        try:
            return _TAKES_PROGRESS[fn]
        except (KeyError, TypeError):  # TypeError: not weakly referable, so never kept
            pass
    import inspect

    try:
        takes = "progress" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        takes = False
    with _TAKES_PROGRESS_LOCK:
        try:
            _TAKES_PROGRESS[fn] = takes
        except TypeError:
            pass
    return takes


def forget_text(model: Any) -> None:
    """Drop the typing cache and the lens's kept columns: the next text runs from scratch."""
    if model.lm_loaded and model.lm_host is None:
        model.language_model().forget()
    model.cache.pop("lens_columns", None)


def describe(exc: BaseException) -> str:
    """One sentence for the user about an error of a call."""
    if isinstance(exc, EmbvizError):
        return str(exc)
    if isinstance(exc, MemoryError):
        return "Out of memory: try shorter text or a smaller model."
    if type(exc).__name__ == "OutOfMemoryError":
        return "The GPU ran out of memory: try shorter text, or --device cpu."
    return f"Unexpected error in the language model ({type(exc).__name__}: {first_line(exc)})."


def _send(stream: IO[bytes], message: tuple[Any, ...]) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> tuple[Any, ...] | None:
    """The next message, or None at the end of the stream. Only our own process writes it."""
    header = _read_exact(stream, HEADER.size)
    if header is None:
        return None
    data = _read_exact(stream, HEADER.unpack(header)[0])
    return None if data is None else pickle.loads(data)


def _read_exact(stream: IO[bytes], n: int) -> bytes | None:
    parts, left = [], n
    while left:
        part = stream.read(left)
        if not part:
            return None
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


class LanguageModelHost:
    """The parent's handle on one model's language-model child: started by `start`
    (the LoadLanguageModel job), used by `call` from any lane, ended by `close`."""

    def __init__(self, model: Any) -> None:
        # The parent's copy (where the child's checkpoint comes from, and what it must match),
        # weakly: the model holds its host, and a cycle would keep its table for the collector.
        self._model = weakref.ref(model)
        self._child: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None
        self._lock = threading.Lock()  # one writer at a time
        self._start_lock = threading.Lock()
        self._ids = itertools.count(1)
        self._waiting: dict[int, queue.Queue[Any]] = {}
        self._ready = threading.Event()
        self._started_once = False
        self._closed = False
        self.restarts = 0

    @property
    def ready(self) -> bool:
        return self._ready.is_set() and self._alive()

    def _alive(self) -> bool:
        return self._child is not None and self._child.poll() is None

    def start(self, progress: ProgressFn = no_progress) -> None:
        """Start the child and build its language model (seconds), unless it runs already.
        A cancel reported through `progress` stops the child."""
        with self._start_lock:
            if self.ready:
                return
            if self._closed:
                raise Cancelled()
            self._stop_child()
            progress(0.0, LOADING, None)
            self._stderr = tempfile.TemporaryFile(prefix="embviz-lm-")
            child = subprocess.Popen(
                [sys.executable, "-m", "embviz.core.lm.process"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._stderr, bufsize=0,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
            )
            self._child = child
            self._started_once = True
            replies: queue.Queue[Any] = queue.Queue()
            # Each child has its own table of waiting calls: a dying child's reader never
            # touches the calls of the one started after it.
            self._waiting = {0: replies}
            threading.Thread(target=self._read, args=(child, self._waiting), name="embviz-lm-reader",
                             daemon=True).start()
            try:
                from embviz.core.fingerprint import model_fingerprint

                model = self._model()
                if model is None:
                    raise Cancelled()  # the model is gone: nothing is waiting for its language model
                self._write(("open", model.source, str(model.device), model_fingerprint(model)))
                while True:
                    try:
                        message = replies.get(timeout=POLL_SECONDS)
                    except queue.Empty:
                        progress(0.0, LOADING, None)  # raises Cancelled when asked to stop
                        continue
                    if message[0] == "ready":
                        break
                    if message[0] == "died":
                        raise EmbvizError(f"The language model could not be built: {self._last_error()}")
                    raise EmbvizError(message[2])
                progress(1.0, "Language model loaded", None)
            except BaseException:
                self._stop_child()
                raise
            finally:
                self._waiting.pop(0, None)
            self._ready.set()

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], progress: ProgressFn = no_progress) -> Any:
        """fn(child's model, *args, **kwargs) in the child; its progress and previews come
        back through `progress`, whose raising (a cancel) stops the call there too."""
        if not self._started_once:
            from embviz.core.model import LanguageModelNotLoaded

            raise LanguageModelNotLoaded("The language model is not loaded yet.")
        if not self.ready:
            self.restarts += 1
            progress(0.0, "The language model's process stopped; starting it again", None)
            self.start(progress)
        rid = next(self._ids)
        replies: queue.Queue[Any] = queue.Queue()
        waiting = self._waiting
        waiting[rid] = replies
        done = False
        last = (0.0, "")
        try:
            self._write(("call", rid, fn, args, kwargs))
            while True:
                try:
                    message = replies.get(timeout=POLL_SECONDS)
                except queue.Empty:
                    progress(*last, None)  # raises Cancelled when asked to stop
                    continue
                kind = message[0]
                if kind == "progress":
                    last = (message[2], message[3])
                    progress(message[2], message[3], message[4])
                    continue
                done = True
                if kind == "ok":
                    return message[2]
                if kind == "error":
                    raise EmbvizError(message[2])
                if kind == "cancelled":
                    raise Cancelled()
                progress(*last, None)  # a child killed by a cancel or a model switch: cancelled
                raise EmbvizError(f"The language model's process stopped ({self._last_error()}); "
                                  "it starts again with the next request.")
        except BaseException:
            if not done:
                self._cancel(rid)
            raise
        finally:
            waiting.pop(rid, None)

    def close(self) -> None:
        """End the child (a model switch, the window closing); calls waiting on it end."""
        self._closed = True
        self._stop_child()

    def _cancel(self, rid: int) -> None:
        try:
            self._write(("cancel", rid))
        except EmbvizError:
            pass  # the child is gone: nothing to stop

    def _write(self, message: tuple[Any, ...]) -> None:
        child = self._child
        if child is None or child.stdin is None:
            raise EmbvizError("The language model's process is not running.")
        with self._lock:
            try:
                _send(child.stdin, message)
            except (BrokenPipeError, OSError, ValueError) as exc:
                raise EmbvizError(f"The language model's process stopped ({self._last_error()}); "
                                  "it starts again with the next request.") from exc

    def _read(self, child: subprocess.Popen[bytes], waiting: dict[int, queue.Queue[Any]]) -> None:
        """The reader thread: each message to the call that waits for it (a blocking read,
        so this thread holds the interpreter lock only while it unpickles)."""
        try:
            assert child.stdout is not None  # started with stdout=PIPE
            while (message := _receive(child.stdout)) is not None:
                target = 0 if message[0] == "ready" or (message[0] == "error" and message[1] == 0) else message[1]
                replies = waiting.get(target)
                if replies is not None:
                    replies.put(message)
        except (OSError, ValueError, EOFError, pickle.UnpicklingError):
            pass
        child.wait()
        if child is self._child:
            self._ready.clear()
        for replies in list(waiting.values()):
            replies.put(("died",))

    def _stop_child(self) -> None:
        child, self._child = self._child, None
        self._ready.clear()
        if child is not None:
            child.kill()
            child.wait()
            for stream in (child.stdin, child.stdout):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:
                    pass

    def _last_error(self) -> str:
        if self._stderr is None:
            return "no message"
        try:
            self._stderr.seek(0)
            lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        except (OSError, ValueError):
            lines = []
        code = self._child.returncode if self._child is not None else None
        return lines[-1][:200] if lines else f"exit code {code}" if code is not None else "it was stopped"


# --- the child ----------------------------------------------------------------------------------

def _child_main() -> None:
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)  # prints of the libraries go to stderr, never into the messages
    inp = os.fdopen(0, "rb", buffering=0)
    from embviz.core.child import lower_priority
    from embviz.core.device import limit_compute_threads

    lower_priority()
    limit_compute_threads()
    write_lock = threading.Lock()

    def send(message: tuple[Any, ...]) -> None:
        with write_lock:
            _send(out, message)

    opening = _receive(inp)
    if opening is None or opening[0] != "open":
        return
    _, source, device, fingerprint = opening
    try:
        from embviz.core import open_checkpoint
        from embviz.core.fingerprint import model_fingerprint, same_model

        model = open_checkpoint(source, device)
        if not same_model(fingerprint, model_fingerprint(model)):
            raise EmbvizError(f"{source} no longer holds the model on screen: open it again to run its language model.")
        model.load_language_model()
    except BaseException as exc:  # noqa: BLE001 - it reaches the parent as a sentence
        send(("error", 0, describe(exc)))
        return
    send(("ready",))
    calls: queue.Queue[Any] = queue.Queue()
    cancelled: set[int] = set()

    def read() -> None:
        while (message := _receive(inp)) is not None:
            if message[0] == "cancel":
                cancelled.add(message[1])
            else:
                calls.put(message)
        calls.put(None)  # the parent is gone

    threading.Thread(target=read, name="embviz-lm-requests", daemon=True).start()
    while (message := calls.get()) is not None:
        _, rid, fn, args, kwargs = message
        if rid in cancelled:
            send(("cancelled", rid))
            continue

        def progress(fraction: float, stage: str = "", preview: object = None, rid: int = rid) -> None:
            if rid in cancelled:
                raise Cancelled()
            send(("progress", rid, float(fraction), stage, preview))

        try:
            send(("ok", rid, _run(fn, model, args, kwargs, progress)))
        except Cancelled:
            send(("cancelled", rid))
        except BaseException as exc:  # noqa: BLE001 - the parent gets it as a sentence
            send(("error", rid, describe(exc)))
        cancelled.discard(rid)


if __name__ == "__main__":
    _child_main()
