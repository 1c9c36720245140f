"""5: t-SNE's first live picture (fresh, drawn again, in a later session) and its whole run beside sklearn."""

from __future__ import annotations

import subprocess
import time

import numpy as np

from bench.measure import LIMIT, run_child

from bench.figures import Context, Figure


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    model = ctx.model()
    from embviz.core.maps.projection import project, select_rows

    import shutil

    from embviz.core.maps import knn
    from embviz.core.cache import cache_root

    n = 1000 if args.quick else model.vocab_size
    ids = select_rows(model, limit=n)
    # A first t-SNE of these rows: no graph kept in memory or on disk from an earlier run.
    model.cache.pop(knn.KNN_CACHE, None)
    for entry in (cache_root() / "knn").glob(knn._disk_key(model, ids) + "-k*"):
        shutil.rmtree(entry, ignore_errors=True)
    first = []
    t = time.perf_counter()

    def progress(fraction, stage, preview):
        if isinstance(preview, np.ndarray) and stage.startswith("t-SNE: optimising") and not first:
            first.append(time.perf_counter() - t)

    project(model, "tsne", ids, progress=progress)
    total = time.perf_counter() - t
    record(5, f"t-SNE of {n:,} rows: first live picture", first[0] if first else None, "s", target="≤ 30 s",
           note="its neighbour graph from the full table (figure 12)")
    # Drawn again, as after a cancel or a change of perplexity: the graph is kept for the model.
    from embviz.core.errors import Cancelled

    again = []
    t = time.perf_counter()

    def stop_at_first(fraction, stage, preview):
        if isinstance(preview, np.ndarray) and stage.startswith("t-SNE: optimising"):
            again.append(time.perf_counter() - t)
            raise Cancelled()

    try:
        project(model, "tsne", ids, progress=stop_at_first)
    except Cancelled:
        pass
    record(5, f"t-SNE of {n:,} rows drawn again: first live picture", again[0] if again else None, "s",
           target="≤ 30 s", note="the same rows' graph is kept")
    from embviz.core import open_checkpoint

    later = open_checkpoint(None, args.device)  # another session: nothing in memory, the graph on disk
    again.clear()
    t = time.perf_counter()
    try:
        project(later, "tsne", ids, progress=stop_at_first)
    except Cancelled:
        pass
    record(5, f"t-SNE of {n:,} rows in a later session: first live picture", again[0] if again else None, "s",
           target="≤ 30 s", note="model opened before the clock starts; its graph read from the disk cache"
           if n >= knn.DISK_ROWS else "too few rows for the disk cache")
    del later
    bound = args.baseline_bound or (max(20.0, 2 * total) if args.quick else 300.0)
    code = LIMIT + f"""
import time, json
from embviz.core import open_checkpoint
from embviz.core.table.similarity import unit_table
from sklearn.manifold import TSNE
x = unit_table(open_checkpoint(None, 'cpu')).numpy()[:{n}]
t = time.perf_counter(); TSNE(2, init='pca', random_state=0).fit_transform(x); print(json.dumps({{'s': time.perf_counter() - t}}))
"""
    try:
        base, note = run_child(code, timeout=bound)["s"], ""
    except subprocess.TimeoutExpired:
        base, note = bound, f"sklearn TSNE stopped at the {bound:.0f} s bound: the ratio is at most this"
    record(5, f"t-SNE of {n:,} rows: whole run", total, "s", base, "sklearn TSNE (Barnes-Hut, 1,000 iterations)", "≤ 90 s", note)


FIGURE = Figure(5, run, order=120, model=True)
