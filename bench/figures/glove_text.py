"""11: the GloVe example in GloVe's own text format, first and cached open to a map, beside gensim's open."""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path

import numpy as np

from bench.measure import LIMIT, PEAK, run_child

from bench.figures import Context, Figure


def glove_text(workdir: Path) -> Path:
    """The GloVe example written out in GloVe's own text format (as Stanford ships it)."""
    path = workdir / "glove.6B.50d.txt"
    if path.is_file():
        return path
    from embviz.core.lessons import example_path
    from embviz.core.readers.npy_table import npy_vocabulary

    npy = example_path("glove-6b-50d")
    table = np.load(npy, allow_pickle=False)
    words = npy_vocabulary(npy, table.shape[0])
    workdir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for word, row in zip(words, table):
            f.write(word + " " + " ".join(f"{x:.6g}" for x in row) + "\n")
    tmp.replace(path)
    return path


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    try:
        path = glove_text(Path(args.workdir))
    except Exception as exc:  # noqa: BLE001 - the example package is an extra
        record(11, "GloVe 6B 50d text open", None, "s", note=f"skipped: {exc}")
        return
    code = PEAK + LIMIT + f"""
import time, os
os.environ['QT_QPA_PLATFORM'] = 'offscreen'
from embviz.core import open_checkpoint
from embviz.core.maps.projection import project
from embviz.ui.app import make_app
from embviz.ui.plots.map_view import MapView
from PySide6.QtGui import QImage, QPainter
app = make_app()
t1 = time.perf_counter()
m = open_checkpoint({str(path)!r}, {args.device!r})
t2 = time.perf_counter()
p = project(m, 'pca')
view = MapView(); view.resize(1000, 700); view.set_labels(m.vocab.labels); view.set_points(p.ids, p.coords)
img = QImage(1000, 700, QImage.Format.Format_ARGB32); painter = QPainter(img); view.render(painter); painter.end()
t3 = time.perf_counter()
print(json.dumps({{'open': t2 - t1, 'to_map': t3 - t1, 'rss': peak()}}))
"""
    baseline_code = f"""
import json, time
from gensim.models import KeyedVectors
t = time.perf_counter()
KeyedVectors.load_word2vec_format({str(path)!r}, binary=False, no_header=True)
print(json.dumps({{'open': time.perf_counter() - t}}))
"""
    try:
        gensim_open = run_child(LIMIT + baseline_code)["open"]
    except RuntimeError:
        gensim_open = None
    size = path.stat().st_size / 1e6
    with tempfile.TemporaryDirectory() as cache:
        first = run_child(code, {"EMBVIZ_CACHE_DIR": cache})
        record(11, f"GloVe 6B 50d text ({size:,.0f} MB, 400,000 × 50), first open → PCA map drawn", first["to_map"], "s",
               gensim_open, "gensim KeyedVectors.load_word2vec_format, the open alone", "≤ 6 s",
               note=f"open alone {first['open']:.2f} s; peak RSS {first['rss'] / 2**20:,.0f} MiB")
        cached = [run_child(code, {"EMBVIZ_CACHE_DIR": cache}) for _ in range(args.repeats_child)]
    record(11, "GloVe 6B 50d text, cached open → PCA map drawn", statistics.median(c["to_map"] for c in cached), "s",
           target="≤ 1.5 s", note=f"open alone {statistics.median(c['open'] for c in cached):.2f} s")



FIGURE = Figure(11, run, order=400, gui=True, full_only=True)
