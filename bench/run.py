"""embviz benchmark: every figure of docs/benchmarks.md, each beside a baseline run in
the same process (or the same kind of subprocess), so that ratios survive a noisy machine.

    python bench/run.py [--quick] [--json] [--device cpu|cuda] [--only N,N] [--workdir DIR]
                        [--no-gui] [--baseline-bound SECONDS]

--no-gui skips the figures that need a window (1, 6, 9, 10, 11, 14) and times figure 7's core call alone:
for a GPU machine without Qt. Each figure is a module of bench/figures/ (see its __init__).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from bench.figures import Context, Figure, figures  # noqa: E402
from bench.measure import Recorder, machine_load  # noqa: E402


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats (a CI smoke test)")
    parser.add_argument("--json", action="store_true", help="print all figures as one JSON object on stdout")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--only", default="", help="comma-separated figure numbers")
    parser.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "embviz-bench"))
    parser.add_argument("--no-gui", action="store_true", help="skip figures 1, 6, 9, 10, 11 and 14; figure 7 times the core call")
    parser.add_argument("--baseline-bound", type=float, default=None, help="seconds before a slow sklearn baseline is stopped")
    args = parser.parse_args(argv)
    args.repeats = 2 if args.quick else 7
    args.repeats_child = 1 if args.quick else 3
    args.only_figures = {int(x) for x in args.only.split(",") if x}
    return args


def timed(figure: Figure, ctx: Context) -> None:
    """Run one figure and say on stderr how long it took: what a quick run's length is made of."""
    t = time.perf_counter()
    figure.run(ctx)
    print(f"[time] {figure.run.__module__.rsplit('.', 1)[-1]} ({figure.number}): {time.perf_counter() - t:.1f} s",
          file=sys.stderr, flush=True)


def main(argv: list[str] | None = None, record: Recorder | None = None) -> int:
    args = parse(argv)
    from embviz.core.device import limit_compute_threads

    limit_compute_threads()
    load = machine_load()
    started = time.time()
    ctx = Context(args, record or Recorder())
    for figure in [f for f in figures() if f.wanted(args)]:
        ctx.release(keep_model=figure.model, keep_window=figure.window)
        timed(figure, ctx)
    ctx.release(keep_model=False, keep_window=False)
    summary = {
        "date": time.strftime("%Y-%m-%d", time.gmtime(started)),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}, torch {torch.__version__}"
                   + (f", {torch.cuda.get_device_name()}" if args.device.startswith("cuda") else ""),
        "device": args.device, "quick": args.quick, "load": load, "figures": ctx.record.rows,
    }
    if args.json:
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
