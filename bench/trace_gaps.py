"""Where figure 9's long gaps go: figure 9 of bench/run.py (in the window the window figures
share) while every event the window's thread handles is timed, then, for each gap of a 5 ms
timer longer than --over, the events that ran in it (receiver, type, a paint's rectangle), and
the time per receiver and type over all such gaps.

    python bench/trace_gaps.py [--quick] [--over MS] [--top N]

Timing every event costs the window a little: the gaps come out somewhat longer than figure 9's.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def traced(run_figure) -> tuple[list, list, list]:
    """Run `run_figure(record)` with the window's events timed: (events, ticks, [start, end]) where
    an event is (start, seconds, depth, receiver, type) and start/end bound figure 9's loop
    (from the analogy benchmark's start to figure 9's first row given to `record`)."""
    from PySide6.QtCore import QEvent, QTimer
    from PySide6.QtWidgets import QApplication

    import embviz.ui.app as app_module
    from bench.measure import Recorder
    from embviz.ui.panels.analogies import AnalogyPanel

    events, ticks, phase, depth = [], [], [None, None], [0]

    def name(receiver, event) -> str:
        kind = type(receiver).__name__
        parent = receiver.parent() if hasattr(receiver, "parent") else None
        if kind == "QTimer":
            kind = f"QTimer/{type(parent).__name__ if parent is not None else '-'}/{receiver.interval()} ms"
        elif kind in ("QWidget", "QObject", "QWindow") and parent is not None:
            kind = f"{type(parent).__name__}'s {kind}"
        if event.type() == QEvent.Type.Paint:
            kind += f" {event.rect().width()}×{event.rect().height()}"
        return kind

    class TimedApplication(QApplication):
        def notify(self, receiver, event):  # noqa: N802 - Qt's name
            if phase[0] is None or phase[1] is not None:
                return super().notify(receiver, event)
            level, depth[0] = depth[0], depth[0] + 1
            began = time.perf_counter()
            try:
                return super().notify(receiver, event)
            finally:
                depth[0] = level
                took = time.perf_counter() - began
                if took > 0.001:
                    events.append((began, took, level, name(receiver, event), event.type().name))

    make_app = app_module.make_app

    def make_timed_app():
        app = make_app()
        tick = QTimer(app)
        tick.setInterval(5)
        tick.timeout.connect(lambda: ticks.append(time.perf_counter()))
        tick.start()
        return app

    run_benchmark = AnalogyPanel.run_benchmark

    class Figure9Ends(Recorder):
        def __call__(self, figure, *args, **kwargs):
            if figure == 9 and phase[1] is None:
                phase[1] = time.perf_counter()
            return super().__call__(figure, *args, **kwargs)

    def started(panel):
        if phase[0] is None:  # figure 9's loop starts with the benchmark
            phase[0] = time.perf_counter()
        return run_benchmark(panel)

    app_module.QApplication, app_module.make_app = TimedApplication, make_timed_app
    AnalogyPanel.run_benchmark = started
    try:
        run_figure(Figure9Ends())
    finally:
        AnalogyPanel.run_benchmark = run_benchmark
        app_module.QApplication, app_module.make_app = QApplication, make_app
    return events, ticks, phase


def report(events: list, ticks: list, phase: list, over_ms: float, top: int) -> str:
    """The long gaps, longest first, each with its events; then the time per receiver and type."""
    if phase[0] is None or phase[1] is None:
        return "figure 9 did not run"
    inside = [t for t in ticks if phase[0] <= t <= phase[1]]
    gaps = sorted(((b - a, a, b) for a, b in zip(inside, inside[1:]) if (b - a) * 1000 > over_ms), reverse=True)
    starts = [e[0] for e in events]
    lines = [f"{len(gaps)} gaps over {over_ms:g} ms among {len(inside)} ticks"]
    total: collections.Counter = collections.Counter()
    for n, (gap, a, b) in enumerate(gaps):
        ran = [e for e in events[bisect.bisect_left(starts, a - 0.1):bisect.bisect_right(starts, b)]
               if e[0] + e[1] >= a]
        for _began, took, level, receiver, kind in ran:
            if level == 0:
                total[(receiver, kind)] += took
        if n < top:
            lines.append(f"gap {gap * 1000:.1f} ms")
            lines += [f"  {(began - a) * 1000:6.1f} +{took * 1000:5.1f} ms {'  ' * level}{receiver} {kind}"
                      for began, took, level, receiver, kind in ran][:10]
    lines.append("time in those gaps, by receiver and event (outermost events only):")
    lines += [f"  {seconds * 1000:7.1f} ms  {receiver} {kind}" for (receiver, kind), seconds in total.most_common(top)]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="figure 9 as bench/run.py --quick runs it")
    parser.add_argument("--over", type=float, default=16.0, help="gaps longer than this many ms (default 16)")
    parser.add_argument("--top", type=int, default=12, help="how many gaps and receivers to list")
    args = parser.parse_args(argv)
    from bench.run import main as run_bench

    events, ticks, phase = traced(lambda record: run_bench((["--quick"] if args.quick else []) + ["--only", "9"], record))
    print(report(events, ticks, phase, args.over, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
