"""12: how many of each row's nearest rows a map keeps, beside openTSNE and umap-learn; the full-table graph's price."""

from __future__ import annotations

import time

import numpy as np
import torch


from bench.figures import Context, Figure


def run(ctx: Context) -> None:
    """How many of each row's 10 nearest rows in the full table a map keeps, counted over
    every row of the first N, beside openTSNE and umap-learn run by cosine on the same
    full rows; and what the full-table graph costs against the PCA-50 graph it replaced."""
    args, record = ctx.args, ctx.record
    model = ctx.model()
    import openTSNE

    from embviz.core.maps.knn import neighbour_preservation, table_knn
    from embviz.core.maps.projection import pca, project, select_rows
    from embviz.core.table.similarity import unit_table

    n = 1000 if args.quick else 10_000
    ids = select_rows(model, limit=n)
    unit = unit_table(model).numpy()[:n]
    # Quick mode leaves UMAP out: compiling umap-learn's numba code, in the child and here,
    # took most of the quick run; its maps are tested in the test suite.
    methods = ("pca", "tsne") if args.quick else ("pca", "tsne", "umap")

    def kept(coords) -> float:
        return neighbour_preservation(model, ids, coords, sample=n).share

    timed = {}
    for method in methods:
        t = time.perf_counter()
        coords = project(model, method, ids).coords
        timed[method] = (kept(coords), time.perf_counter() - t)
    t = time.perf_counter()
    open_tsne = kept(np.asarray(openTSNE.TSNE(metric="cosine", n_jobs=1, random_state=0).fit(unit)))
    open_tsne_s = time.perf_counter() - t
    rows = f"{n:,} rows"
    record(12, f"10-NN kept: t-SNE of the first {rows}", timed["tsne"][0], "share", open_tsne,
           "openTSNE, metric=cosine, on the full rows", "≥ openTSNE (0.229 measured before)",
           f"{timed['tsne'][1]:.1f} s against openTSNE's {open_tsne_s:.1f} s")
    if "umap" in timed:
        import umap

        t = time.perf_counter()
        umap_learn = kept(umap.UMAP(metric="cosine", random_state=0, n_jobs=1).fit_transform(unit))
        umap_learn_s = time.perf_counter() - t
        record(12, f"10-NN kept: UMAP of the first {rows}", timed["umap"][0], "share", umap_learn,
               "umap-learn, metric=cosine, on the full rows", "", f"{timed['umap'][1]:.1f} s against umap-learn's {umap_learn_s:.1f} s")
    record(12, f"10-NN kept: PCA of the first {rows}", timed["pca"][0], "share", note="two components hold little of 576 dimensions")
    # The price of the full table: its exact graph against the PCA-50 graph t-SNE used before.
    every = select_rows(model, limit=2000 if args.quick else model.vocab_size)
    model.cache.pop("table_knn", None)
    t = time.perf_counter()
    table_knn(model, every, 90)
    full = time.perf_counter() - t
    x50 = torch.from_numpy(pca(model, every, 50)[0])
    t = time.perf_counter()
    for start in range(0, len(every), 2048):  # the same chunked exact search, on 50 columns
        torch.topk(x50[start : start + 2048] @ x50.T, 91)
    reduced = time.perf_counter() - t
    record(12, f"90-NN graph of {len(every):,} rows from all {model.dim} dimensions", full, "s", reduced,
           "the same exact search on PCA-50 (the graph before)")



FIGURE = Figure(12, run, order=130, model=True)
