"""13: k-means of every row (named) beside MiniBatchKMeans, and HDBSCAN of the PCA map's points."""

from __future__ import annotations



from bench.measure import median_time

from bench.figures import Context, Figure


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    model = ctx.model()
    from sklearn.cluster import MiniBatchKMeans

    from embviz.core.maps.clusters import _kmeans, hdbscan_clusters
    from embviz.core.errors import no_progress
    from embviz.core.maps.projection import project, select_rows
    from embviz.core.table.similarity import unit_table

    units = unit_table(model, centered=True).cpu().numpy()  # built once per model, as in the window
    repeats = 1 if args.quick else 3
    ours = median_time(lambda: _kmeans(model, 50, no_progress, 0), repeats)
    base = median_time(lambda: MiniBatchKMeans(50, random_state=0).fit(units), repeats)
    record(13, f"k-means of all {model.vocab_size:,} × {model.dim} rows, k = 50 (MiniBatchKMeans defaults, named)", ours, "s",
           base, "sklearn MiniBatchKMeans.fit alone, not named", "≤ 2 s")
    rows = 3000 if args.quick else model.vocab_size
    pca = project(model, "pca", select_rows(model, rows))
    ours = median_time(lambda: hdbscan_clusters(model, pca.ids, pca.coords), 1)  # once: a second would be cached
    record(13, f"HDBSCAN of the PCA map's {rows:,} points", ours, "s", note="min_cluster_size = n / 500; fitted in a child process")



FIGURE = Figure(13, run, order=150, model=True)
