"""1: the first and the cached open of the default model to its map, and a launch of the window."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


from bench.measure import LIMIT, PEAK, ROOT, run_child

from bench.figures import Context, Figure


def launch_window(args) -> tuple[float, float, float, str]:
    """(window exposed, map painted, model open) in seconds after launching embviz with no
    arguments (fresh settings, the user's warm cache), and which display it ran on: an Xvfb
    started here when there is one and no display, else Qt's offscreen platform."""
    import shutil

    env = {"EMBVIZ_CONFIG_DIR": tempfile.mkdtemp(prefix="embviz-bench-config-")}
    xvfb = None
    if os.environ.get("DISPLAY"):
        env["QT_QPA_PLATFORM"], where = "xcb", f"display {os.environ['DISPLAY']}"
    elif shutil.which("Xvfb") and (started := start_xvfb()) is not None:
        xvfb, display = started
        env.update(DISPLAY=display, QT_QPA_PLATFORM="xcb")
        where = "under Xvfb"
    else:
        env["QT_QPA_PLATFORM"], where = "offscreen", "Qt's offscreen platform (no Xvfb here)"
    try:
        full_env = {**os.environ, **env, "EMBVIZ_BENCH_LAUNCH": repr(time.time())}
        proc = subprocess.run([sys.executable, str(ROOT / "bench" / "startup.py")], capture_output=True, text=True,
                              timeout=300, env=full_env, cwd=ROOT)
    finally:
        if xvfb is not None:
            xvfb.kill()
            xvfb.wait()
        shutil.rmtree(env["EMBVIZ_CONFIG_DIR"], ignore_errors=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "startup.py failed")
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    return seen["window"], seen["map"], seen["model"], where



def start_xvfb() -> tuple[subprocess.Popen, str] | None:
    """An Xvfb on a display number it picks itself (-displayfd: other programs may hold
    the usual ones), and that display; None when it does not start within 10 s."""
    import select

    read, write = os.pipe()
    try:
        xvfb = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0", "1024x700x24"], pass_fds=(write,),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError:
        os.close(read)
        os.close(write)
        return None
    os.close(write)
    got = b""
    try:  # to the end of its line: closing the pipe before Xvfb has written all of it kills Xvfb
        deadline = time.monotonic() + 10
        while not got.endswith(b"\n") and (left := deadline - time.monotonic()) > 0:
            if not select.select([read], [], [], left)[0] or not (chunk := os.read(read, 32)):
                break
            got += chunk
    finally:
        os.close(read)
    number = got.decode().strip()
    if not number.isdigit():
        xvfb.kill()
        xvfb.wait()
        return None
    return xvfb, f":{number}"



def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    code = PEAK + LIMIT + f"""
import time, os
os.environ['QT_QPA_PLATFORM'] = 'offscreen'
t0 = time.perf_counter()
from embviz.core import open_checkpoint
from embviz.core.maps.projection import project
from embviz.ui.app import make_app
from embviz.ui.plots.map_view import MapView
from PySide6.QtGui import QImage, QPainter
app = make_app()
t1 = time.perf_counter()
m = open_checkpoint(None, {args.device!r})
t2 = time.perf_counter()
p = project(m, 'pca')
view = MapView(); view.resize(1000, 700); view.set_labels(m.vocab.labels); view.set_points(p.ids, p.coords)
img = QImage(1000, 700, QImage.Format.Format_ARGB32); painter = QPainter(img); view.render(painter); painter.end()
t3 = time.perf_counter()
print(json.dumps({{'imports': t1 - t0, 'open': t2 - t1, 'to_map': t3 - t1, 'rss': peak()}}))
"""
    if not args.quick:
        with tempfile.TemporaryDirectory() as cache:
            first = run_child(code, {"EMBVIZ_CACHE_DIR": cache})
            record(1, "first open of the default model (empty cache) → PCA map drawn", first["to_map"], "s",
                   target="≤ 5 s after launch",
                   note=f"imports {first['imports']:.1f} s not included; peak RSS {first['rss'] / 2**20:,.0f} MiB")
    if not args.quick:  # a quick run's launch may find a cold cache: only slower, and it warms it
        run_child(code)  # make sure the user cache is warm
    launches = [launch_window(args) for _ in range(args.repeats_child)]
    window = statistics.median(w for w, _, _, _ in launches)
    record(1, "launch (warm cache) → the window on screen", window, "s", target="≤ 1 s",
           note=f"python bench/startup.py: the real command line, no arguments; {launches[0][3]}")
    record(1, "window on screen → the default model's PCA map drawn", statistics.median(m - w for w, m, _, _ in launches), "s",
           target="≤ 0.6 s", note="the map the cache keeps, read with numpy; the model (torch) opens after it, in "
                                  f"{statistics.median(o - m for _, m, o, _ in launches):.1f} s more")
    cached = [run_child(code) for _ in range(args.repeats_child)]
    to_map = statistics.median(c["to_map"] for c in cached)
    record(1, "cached open → PCA map drawn", to_map, "s", target="≤ 1.5 s",
           note=f"open alone {statistics.median(c['open'] for c in cached):.2f} s; imports {cached[0]['imports']:.1f} s not included; "
                f"peak RSS {max(c['rss'] for c in cached) / 2**20:,.0f} MiB")



FIGURE = Figure(1, run, order=10, gui=True)
