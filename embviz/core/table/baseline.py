"""The random baseline: the mean cosine over all pairs of distinct rows, what a cosine of two
words is to be read against (in many tables it is well above 0: the rows share a direction).

Exact in one pass, without the n × n matrix: with unit rows u_i,
Σ_{i≠j} u_i·u_j = |Σ_i u_i|² − Σ_i |u_i|², and Σ_i |u_i|² = n (up to rounding, which is why it
is summed rather than assumed), so the mean is (|Σu|² − n) / (n(n − 1)). Rows of zeros, NaN or
Inf have no direction: they are left out and counted."""

from __future__ import annotations

import torch

from embviz.core.model import EmbeddingModel
from embviz.core.table.bias_results import CosineBaseline

_CHUNK_BYTES = 32 << 20  # float64 rows unit-scaled at a time


def cosine_baseline(model: EmbeddingModel) -> CosineBaseline:
    """The mean cosine of all pairs of distinct rows with a direction, in float64."""
    table = model.table
    n_rows, dim = table.shape
    step = max(1, _CHUNK_BYTES // (8 * max(dim, 1)))
    total = torch.zeros(dim, dtype=torch.float64, device=table.device)
    squares = torch.zeros((), dtype=torch.float64, device=table.device)
    kept = 0
    for at in range(0, n_rows, step):
        rows = table[at:at + step].to(torch.float64)
        norms = torch.linalg.vector_norm(rows, dim=1)
        good = torch.isfinite(rows).all(dim=1) & (norms > 0) & torch.isfinite(norms)
        units = rows[good] / norms[good, None]
        total += units.sum(dim=0)
        squares += (units * units).sum()
        kept += int(good.sum())
    excluded = n_rows - kept
    if kept < 2:
        return CosineBaseline(None, kept, 0, excluded)
    mean = (float(total @ total) - float(squares)) / (kept * (kept - 1))
    return CosineBaseline(mean, kept, kept * (kept - 1) // 2, excluded)
