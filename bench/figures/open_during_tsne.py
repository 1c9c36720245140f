"""10: opening a model while a t-SNE runs stops it and draws the new map, beside the same open idle."""

from __future__ import annotations

import statistics
import time

from bench.figures import Context, Figure
from bench.measure import wait


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    session = ctx.window()
    app, window = session.app, session.window
    # 10: opening a model while a t-SNE runs stops it and draws the new map.
    def open_default() -> float:
        before = window.generation
        t = time.perf_counter()
        window.open_model(None)
        wait(app, lambda: window.generation > before and window.map_panel.status.text().startswith("PCA of"), 300)
        return time.perf_counter() - t

    rows = 3000 if args.quick else 20000
    busy = []
    for _ in range(1 if args.quick else 3):
        window.map_panel.subset.setCurrentIndex(1)
        window.map_panel.limit.setValue(rows)
        window.map_panel.method.setCurrentIndex(1)
        window.map_panel.run_projection()
        wait(app, lambda: "optimising" in window.map_panel.status.text(), 300)
        busy.append(open_default())
    idle = open_default()
    record(10, f"open the default model (cached) during a {rows:,}-row t-SNE → its PCA map", statistics.median(busy),
           "s", idle, "the same open with nothing running", "≤ 10 s", note=f"median of {len(busy)}")


FIGURE = Figure(10, run, order=330, window=True)
