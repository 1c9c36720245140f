"""3: PCA of the default model's rows, beside sklearn's full SVD."""

from __future__ import annotations

import numpy as np

from bench.figures import Context, Figure
from bench.measure import median_time


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    model = ctx.model()
    from sklearn.decomposition import PCA

    from embviz.core.maps.projection import pca
    from embviz.core.table.similarity import unit_table

    # Quick mode: a third of the rows (sklearn's full SVD of all of them took most of a minute
    # on a busy machine).
    rows = min(model.vocab_size, 16_384) if args.quick else model.vocab_size
    ids = np.arange(rows)
    x = unit_table(model).cpu().numpy()
    ours = median_time(lambda: pca(model, ids, 2), args.repeats)
    base = median_time(lambda: PCA(2, svd_solver="full").fit_transform(x[:rows]), max(1, args.repeats // 3))
    record(3, f"PCA of {'all ' if rows == model.vocab_size else 'the first '}{rows:,} × {model.dim} rows", ours, "s",
           base, "sklearn PCA(svd_solver='full')", "≤ 0.5 s")


FIGURE = Figure(3, run, order=100, model=True)
