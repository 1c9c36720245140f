"""20: a frame of the 3-D map while it turns, beside a plain GLScatterPlotItem of the same points.

OpenGL needs a display: the frames are drawn in a child process on an Xvfb of its own (Mesa's
software OpenGL, llvmpipe), as a projector-less classroom machine draws them. A frame is one turn
step (orbit by 1°), drawn and OpenGL finished; the 3-D map draws its moving sample
of MOVING_POINTS points, the plain item every point, as the 3-D map does once the camera rests.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from bench.figures import Context, Figure
from bench.measure import ROOT

SIZES = (49_152, 400_000, 2_000_000)


def run(ctx: Context) -> None:
    from bench.figures.open_window import start_xvfb

    args, record = ctx.args, ctx.record
    sizes = SIZES[:1] if args.quick else SIZES
    repeats = 3 if args.quick else max(5, args.repeats)
    started = start_xvfb()
    if started is None:
        raise RuntimeError("Xvfb did not start: the 3-D map's frames need a display")
    xvfb, display = started
    try:
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb"}
        proc = subprocess.run([sys.executable, "-m", "bench.figures.orbit3d", str(repeats), *map(str, sizes)],
                              capture_output=True, text=True, timeout=1800, env=env, cwd=ROOT)
    finally:
        xvfb.kill()
        xvfb.wait()
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "the frames' child failed")
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    for n in sizes:
        ours, plain, rest = seen[str(n)]
        record(20, f"3-D map: a frame while it turns, {n:,} points (software OpenGL, 1024 × 700)", ours, "ms", plain,
               "a plain GLScatterPlotItem of every point", "≤ 33 ms at 400,000" if n == 400_000 else "",
               f"{seen['renderer']}; at rest every point is drawn once: {rest:.0f} ms")


def frames(repeats: int, sizes: list[int]) -> dict:
    """Run in the child: median milliseconds of a turning frame of the 3-D map and of a plain
    item, and of the 3-D map's frame at rest, for each size."""
    import statistics
    import time

    import numpy as np
    import pyqtgraph.opengl as gl
    from OpenGL import GL

    from embviz.ui.app import make_app
    from embviz.ui.plots.map_view import MapView
    from embviz.ui.plots.map_view3d import MapView3D

    app = make_app()
    flat = MapView()
    ours = MapView3D(flat)
    plain = gl.GLViewWidget()
    for view in (ours, plain):
        view.resize(1024, 700)
        view.show()
    app.processEvents()

    def frame(view, step: bool = True) -> float:
        """One frame drawn into the widget's framebuffer, OpenGL's work finished (Qt's
        compositing of the finished frame onto the screen is left out, the same for both)."""
        view.makeCurrent()
        start = time.perf_counter()
        if step:
            view.orbit(1, 0)
        view.paintGL()
        GL.glFinish()
        return (time.perf_counter() - start) * 1000

    out: dict = {"renderer": GL.glGetString(GL.GL_RENDERER).decode()}
    for n in sizes:
        coords = np.random.default_rng(0).normal(size=(n, 3)).astype(np.float32)
        ids = np.arange(n, dtype=np.int64)
        flat.set_points(ids, coords[:, :2])
        ours.set_points(ids, coords)
        item = gl.GLScatterPlotItem(pos=coords, size=4, color=(0.55, 0.6, 0.7, 1.0), pxMode=True, glOptions="opaque")
        plain.addItem(item)
        plain.setCameraPosition(distance=ours.opts["distance"])
        for view in (ours, plain):
            frame(view)  # the points' first upload is not a frame of the turn
        turning = statistics.median(frame(ours) for _ in range(repeats))
        flat_out = statistics.median(frame(plain) for _ in range(repeats))
        ours._rest()  # the camera came to rest: the next frame draws every point
        resting = statistics.median(frame(ours, step=False) for _ in range(max(1, repeats // 2)))
        out[str(n)] = (turning, flat_out, resting)
        plain.removeItem(item)
    return out


if __name__ == "__main__":
    print(json.dumps(frames(int(sys.argv[1]), [int(n) for n in sys.argv[2:]])))


FIGURE = Figure(20, run, order=220, gui=True)
