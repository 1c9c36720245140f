"""6: a pan step of the map, up to 2,000,000 points (and its zoom and jump), beside a plain pyqtgraph scatter."""

from __future__ import annotations


import numpy as np

from bench.measure import median_time
import gc

from bench.figures import Context, Figure


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    import pyqtgraph as pg
    from PySide6.QtGui import QImage, QPainter

    from embviz.ui.app import make_app
    from embviz.ui.plots.map_view import MapView

    app = make_app()
    # 400,000: the GloVe example's vocabulary; 2,000,000: the big word2vec file of figures 16-17.
    for n in (49_152,) if args.quick else (49_152, 262_144, 400_000, 2_000_000):
        pts = np.random.default_rng(0).normal(size=(n, 2)).astype(np.float32)
        labels = [f"#{i}" for i in range(n)]
        img = QImage(1000, 700, QImage.Format.Format_ARGB32)

        def pan_step(widget, vb):
            vb.translateBy(x=0.01)
            img.fill(0)
            painter = QPainter(img)
            widget.render(painter)
            painter.end()

        ours = MapView()
        ours.resize(1000, 700)
        ours.set_labels(labels)
        ours.set_points(np.arange(n), pts)
        ours.show()
        app.processEvents()
        plain = pg.PlotWidget()
        plain.resize(1000, 700)
        scatter = pg.ScatterPlotItem(size=4, pen=None, brush=pg.mkBrush(90, 110, 140, 110), pxMode=True)
        scatter.setData(pos=pts)
        plain.addItem(scatter)
        plain.getPlotItem().getViewBox().setAspectLocked(True)
        plain.show()
        app.processEvents()
        pan_step(ours, ours.vb)
        pan_step(plain, plain.getPlotItem().getViewBox())
        o = median_time(lambda: pan_step(ours, ours.vb), args.repeats * 4)
        # A plain scatter of 2,000,000 points takes ~2 s a frame: fewer of those.
        b = median_time(lambda: pan_step(plain, plain.getPlotItem().getViewBox()), args.repeats * (4 if n <= 400_000 else 1))
        record(6, f"map pan step, {n:,} points (render to an image)", o * 1000, "ms", b * 1000,
               "plain ScatterPlotItem, one brush", "≤ 33 ms")
        if n == 2_000_000:
            # Wheel-sized zoom steps in and out; then, zoomed in 4×, jumps of one and a half views
            # between two sides of the middle (~0.5 M points in view), each to where no image
            # was made: a new image each step, binned from a sample until the view settles.
            zooms = iter([0.8, 1.25] * args.repeats * 4)
            o = median_time(lambda: (ours.vb.scaleBy((s := next(zooms), s)), pan_step(ours, ours.vb)), args.repeats * 4)
            ours.vb.scaleBy((0.25, 0.25))
            ours.vb.translateBy(x=-0.75 * np.ptp(ours.vb.viewRange()[0]))  # jumps between two sides of the middle
            far = iter([1, -1] * args.repeats * 4)
            o2 = median_time(lambda: (ours.vb.translateBy(x=next(far) * 1.5 * np.ptp(ours.vb.viewRange()[0])),
                                      pan_step(ours, ours.vb)), args.repeats * 4)
            record(6, f"map zoom step (×1.25 in or out), {n:,} points (render to an image)", o * 1000, "ms", b * 1000,
                   "plain ScatterPlotItem pan step, one brush", "≤ 33 ms")
            record(6, f"map jump of 1.5 views zoomed in 4×, {n:,} points (render to an image)", o2 * 1000, "ms", b * 1000,
                   "plain ScatterPlotItem pan step, one brush", "≤ 33 ms")
        # Free the big scenes now, not during figure 9's stall measurement.
        for widget in (ours, plain):
            widget.close()
            widget.deleteLater()
        ours = plain = scatter = None
        app.processEvents()
        gc.collect()



FIGURE = Figure(6, run, order=200, gui=True)
