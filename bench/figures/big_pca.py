"""3: PCA of a big synthetic table (the one figure 2 wrote), beside sklearn in a child process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np

from bench.measure import LIMIT, median_time, run_child
from bench.synthetic import FULL, QUICK, write_checkpoint

from bench.figures import Context, Figure


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    rows, dim = QUICK if args.quick else FULL
    folder = getattr(args, "synthetic", None) or write_checkpoint(Path(args.workdir) / f"synthetic-{rows}x{dim}", rows, dim)
    from embviz.core import open_checkpoint
    from embviz.core.maps.projection import pca

    model = open_checkpoint(folder, args.device)
    ids = np.arange(model.vocab_size)
    pca(model, ids, 2)  # unit table cached, as in the app after opening
    ours = median_time(lambda: pca(model, ids, 2), max(1, args.repeats // 2))
    code = LIMIT + f"""
import time, json, numpy as np
from sklearn.decomposition import PCA
from embviz.core.readers.safetensors_file import read_sharded_headers, load_tensor
from pathlib import Path
x = load_tensor(read_sharded_headers(Path({str(folder)!r}))['model.embed_tokens.weight']).numpy()
x /= np.linalg.norm(x, axis=1, keepdims=True)
t = time.perf_counter(); PCA(2, svd_solver='full').fit_transform(x); print(json.dumps({{'s': time.perf_counter() - t}}))
"""
    bound = args.baseline_bound or (120 if not args.quick else 60)
    try:
        base, note = run_child(code, timeout=bound + 60)["s"], ""
    except subprocess.TimeoutExpired:
        base, note = None, f"sklearn did not finish within the {bound} s bound (load included)"
    record(3, f"PCA of all {rows:,} × {dim:,} rows (synthetic)", ours, "s", base, "sklearn PCA(svd_solver='full')", note=note)


FIGURE = Figure(3, run, order=190)
