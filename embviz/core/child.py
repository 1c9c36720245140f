"""Run a function that reports no progress (UMAP) in a child process, so that a cancel
can stop it at once: the child is killed and its scratch folder removed.

A plain `python -m embviz.core.child` rather than multiprocessing's spawn: spawn
re-imports the caller's main script, which breaks any script without a
`__main__` guard. Arguments and the result travel as pickles in a private scratch
folder that only this process and its child write.

Every child of the app runs at a lower priority than the window (`lower_priority`), so that
on a machine with few cores the window's thread gets a core the moment it wakes, however
much the children compute; against other programs' work the niceness costs the children
nothing where the system schedules each session or cgroup as a group (Linux's autogroups).
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from embviz.core.errors import EmbvizError, ProgressFn, first_line

POLL_SECONDS = 0.25
# A niceness of 10 weighs a tenth of the window's thread (Linux's weights 110 : 1024). With a
# t-SNE and the language model in children at niceness 0 beside an analogy benchmark, the window
# waited up to 160 ms for a core on a busy 2-core machine, and its event loop stalled over 16 ms
# some 190 times in 19 s; at 10, 12 times in 11 s, and its longest wait was 24 ms.
CHILD_NICENESS = 10


def lower_priority() -> None:
    """Called first thing in each child of the app: see the module's docstring."""
    try:
        os.nice(CHILD_NICENESS)
    except OSError:
        pass  # a system that refuses: the child still computes, at the window's priority


def run_in_child(
    fn: Callable[..., Any], args: tuple[Any, ...], progress: ProgressFn, stage: str, fraction: float = 0.1,
    measure: Callable[[], tuple[float, str] | tuple[float, str, Any]] | None = None,
) -> Any:
    """fn(*args) in a fresh interpreter; `fn` must be a module-level function. `progress`
    is called every POLL_SECONDS with the elapsed time, or with what `measure` reports
    (fraction, stage, and optionally a preview); when it raises (a cancel), the child is killed and the exception
    goes on."""
    with tempfile.TemporaryDirectory(prefix="embviz-child-") as scratch:
        inp, out, err = (Path(scratch) / name for name in ("in.pickle", "out.pickle", "stderr.txt"))
        with inp.open("wb") as f:
            pickle.dump((fn, args), f, protocol=pickle.HIGHEST_PROTOCOL)
        with err.open("wb") as err_file:
            child = subprocess.Popen(
                [sys.executable, "-m", "embviz.core.child", str(inp), str(out)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err_file,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
            )
            began = time.monotonic()
            try:
                while child.poll() is None:
                    if measure is None:
                        progress(fraction, f"{stage} ({time.monotonic() - began:.0f} s)", None)
                    else:
                        done, now, *preview = measure()
                        progress(done, now, preview[0] if preview else None)
                    try:
                        child.wait(POLL_SECONDS)
                    except subprocess.TimeoutExpired:
                        pass
            except BaseException:
                child.kill()
                child.wait()
                raise
        if child.returncode != 0 or not out.is_file():
            lines = err.read_text(errors="replace").strip().splitlines()
            raise EmbvizError(f"{stage} failed: {lines[-1] if lines else f'exit code {child.returncode}'}")
        with out.open("rb") as f:
            status, payload = pickle.load(f)  # written by our own child just now
    if status == "error":
        raise EmbvizError(f"{stage} failed: {payload}")
    return payload


class ProgressFile:
    """How far a child has got, in a file the child replaces whole (`progress_writer`) and the
    parent reads whenever it changes: `measure` is run_in_child's. A preview is handed on once."""

    def __init__(self, folder: str | Path, first: tuple[float, str]) -> None:
        self.path = str(Path(folder) / "progress.npz")
        self._stamp = 0.0
        self._seen: tuple[float, str, Any] = (*first, None)

    def measure(self) -> tuple[float, str, Any]:
        import numpy as np

        try:
            stamp = os.stat(self.path).st_mtime
        except FileNotFoundError:
            stamp = self._stamp
        if stamp != self._stamp:
            try:
                with np.load(self.path, allow_pickle=False) as data:  # written by our own child
                    preview = data["preview"] if data["preview"].size else None
                    self._seen = (float(data["fraction"]), str(data["stage"]), preview)
                self._stamp = stamp
            except (OSError, ValueError, KeyError):
                pass  # renamed in just as it was read: the next poll has it
        fraction, stage, preview = self._seen
        self._seen = (fraction, stage, None)
        return fraction, stage, preview


def progress_writer(path: str, every_s: float) -> Callable[..., None]:
    """The child's side of a ProgressFile: report(fraction, stage, preview array or None), written
    at most every `every_s` seconds unless it carries a preview or the end."""
    import numpy as np

    last = [0.0]

    def report(fraction: float, stage: str = "", preview: Any = None) -> None:
        now = time.monotonic()
        if preview is None and fraction < 1.0 and now - last[0] < every_s:
            return
        last[0] = now
        tmp = path + ".tmp.npz"
        np.savez(tmp, fraction=np.float64(fraction), stage=np.str_(stage),
                 preview=np.zeros((0, 2), np.float32) if preview is None else np.asarray(preview, dtype=np.float32))
        os.replace(tmp, path)

    return report


def _main(inp: str, out: str) -> None:
    from embviz.core.device import limit_compute_threads

    lower_priority()
    with open(inp, "rb") as f:
        fn, args = pickle.load(f)  # written by the parent process, never by a user
    # After the load, which imports fn's module: torch only if that module uses it (the
    # clustering fits do not, and start faster without it), and the BLAS libraries it loaded.
    limit_compute_threads(torch_too=False)
    try:
        result = ("ok", fn(*args))
    except EmbvizError as exc:
        result = ("error", str(exc))
    except Exception as exc:  # noqa: BLE001 - it reaches the parent as a message
        result = ("error", f"{type(exc).__name__}: {first_line(exc)}")
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        pickle.dump(result, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, out)


if __name__ == "__main__":
    _main(sys.argv[1], sys.argv[2])
