"""14: a pan step of a map coloured by 50 named clusters, beside the same map uncoloured."""

from __future__ import annotations


import numpy as np

from bench.measure import median_time
import gc

from bench.figures import Context, Figure


def run(ctx: Context) -> None:
    """A 400,000-point map coloured by 50 clusters (with their names) against the same map uncoloured."""
    args, record = ctx.args, ctx.record
    from PySide6.QtGui import QColor, QImage, QPainter

    from embviz.ui import style
    from embviz.ui.app import make_app
    from embviz.ui.plots.map_view import MapView

    app = make_app()
    n = 49_152 if args.quick else 400_000
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(n, 2)).astype(np.float32)
    centres = rng.normal(size=(50, 2)).astype(np.float32)
    codes = np.argmin(((pts[:, None, :] - centres[None]) ** 2).sum(-1), axis=1)  # 50 clusters of the plane
    table = [style.CLUSTER_COLORS[c % len(style.CLUSTER_COLORS)] for c in range(50)]
    img = QImage(1000, 700, QImage.Format.Format_ARGB32)
    times = {}
    for coloured in (False, True):
        view = MapView()
        view.resize(1000, 700)
        view.set_labels([f"#{i}" for i in range(n)])
        view.set_points(np.arange(n), pts)
        if coloured:
            view.set_colours(codes, table, [(table[0], "50 clusters, named on the map")])
            view.set_cluster_labels([(f"cluster {c}", float(x), float(y), QColor(table[c])) for c, (x, y) in enumerate(centres)])
        view.show()
        app.processEvents()

        def pan_step() -> None:
            view.vb.translateBy(x=0.01)
            view._place_labels()  # the names follow each step, as the timer would place them
            img.fill(0)
            painter = QPainter(img)
            view.render(painter)
            painter.end()

        pan_step()
        times[coloured] = median_time(pan_step, args.repeats * 4)
        view.close()
        view.deleteLater()
        view = None  # the big scene freed now, not during a later figure
        app.processEvents()
        gc.collect()
    record(14, f"map pan step, {n:,} points coloured by 50 clusters with their names (render to an image)",
           times[True] * 1000, "ms", times[False] * 1000, "the same map uncoloured", "≤ 33 ms")



FIGURE = Figure(14, run, order=210, gui=True)
