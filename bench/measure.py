"""What every figure measures with: the record of its rows, timing, child processes, a busy core.

No figure imports bench/run.py: it hands each figure a `Recorder` (in the figure's Context)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import torch

ROOT = Path(__file__).resolve().parent.parent

# VmHWM, not ru_maxrss: the latter survives fork + exec, so a child would report the
# parent's peak (the parent writes the multi-GB synthetic checkpoint).
PEAK = ("import json\n"
        "def peak():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('VmHWM:'):\n"
        "            return int(line.split()[1]) * 1024\n")


# Children compute with the thread counts the app uses, as the parent does (run.main).
LIMIT = "from embviz.core.device import limit_compute_threads\nlimit_compute_threads()\n"


def _shown(v: float | None) -> str:
    return "—" if v is None else (f"{v:,.1f}" if abs(v) >= 10 else f"{v:.3g}")


class Recorder:
    """The rows of one run, in the order measured; each said on stderr as it comes."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def __call__(self, figure: int, name: str, value: float | None, unit: str, baseline: float | None = None,
                 baseline_name: str = "", target: str = "", note: str = "") -> None:
        ratio = (value / baseline) if value is not None and baseline else None
        self.rows.append({"figure": figure, "name": name, "value": value, "unit": unit, "baseline": baseline,
                          "baseline_name": baseline_name, "ratio": ratio, "target": target, "note": note})
        line = f"[{figure}] {name}: {_shown(value)} {unit}"
        if baseline is not None:
            line += f"   baseline ({baseline_name}) {_shown(baseline)} {unit}   ratio {_shown(ratio)}"
        if target:
            line += f"   target {target}"
        if note:
            line += f"   ({note})"
        print(line, file=sys.stderr, flush=True)


def median_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()  # GPU work is asynchronous: time it to the end
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def paired_times(ours: Callable[[], object], base: Callable[[], object], repeats: int) -> tuple[float, float]:
    """Median times of two calls run by turns, so that load coming and going on a shared
    machine falls on both alike."""
    a, b = [], []
    for _ in range(repeats):
        a.append(median_time(ours, 1))
        b.append(median_time(base, 1))
    return statistics.median(a), statistics.median(b)


class BusyCore:
    """A process spinning on one core for as long as the block runs: what a t-SNE child or
    another program does to the app's lookups."""

    def __enter__(self) -> BusyCore:
        self.proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        time.sleep(0.2)  # on its core before the clock starts
        return self

    def __exit__(self, *exc: object) -> None:
        self.proc.kill()
        self.proc.wait()


def run_child(code: str, env: dict[str, str] | None = None, timeout: float = 1800) -> dict[str, Any]:
    """Run Python code in a fresh process (for first-open times and peak RSS); it prints JSON last."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=full_env, cwd=ROOT)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "child failed")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def wait(app: Any, predicate: Callable[[], object], timeout: float) -> None:
    end = time.perf_counter() + timeout
    while not predicate():
        app.processEvents()
        if time.perf_counter() > end:
            raise TimeoutError("benchmark step timed out")
        time.sleep(0.0005)


def machine_load(seconds: float = 2.0) -> str:
    """"idle" when no core was more than half busy over `seconds` before the run (the app's own
    test, embviz.core.device.busy_cores), else "busy"."""
    from embviz.core.device import busy_cores

    return "idle" if busy_cores(seconds) == 0 else "busy"
