"""Every row's k nearest other rows by cosine, exact, on the CPU: bf16 products sieve the
candidates, float64 products of the float32 rows decide among them.

Why it is exact. A bf16 product s̃ of rows x, y (unit float32 rows, rounded to bf16 as x̃, ỹ)
is within `bound(x) + rel·|s̃|` of the true x·y:
  |x·y − x̃·ỹ| ≤ ‖x̃‖‖δy‖ + ‖δx‖‖ỹ‖ + ‖δx‖‖δy‖      (δ the rounding, measured row by row)
  float32 sums of the exact bf16 products, any order:  ≤ γ(2d)·‖x̃‖‖ỹ‖
  the product rounded to bf16 (to nearest):          ≤ 2⁻⁸/(1 − 2⁻⁸)·|s̃|.
So a row's true k-th best score is at least its k-th best s̃ less that margin, and a score
whose s̃ plus the margin falls below that is not among the k best, ties included. The
survivors (about 1.5–2·k per row) are scored in float64; ties go to the lower position.
Rows with too many near-equal scores for the buffer are scored in full, also exactly.

The Gram matrix is symmetric: each tile of products j ≥ i serves both its rows and its
columns, so half the products are computed. Tiles run on `threads` threads of their own,
in rounds whose tiles share no rows (a round-robin tournament of the row blocks).
"""

from __future__ import annotations

from types import ModuleType

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from embviz.core.device import ensure_fits_in_ram
from embviz.core.errors import ProgressFn, no_progress

BLOCK = 512  # rows per tile: a 512 × 512 bf16 tile (0.5 MB) stays in a core's L2 while it is sieved
CROWDED = 256  # rows the buffer could not narrow down, done together
REL = 2.0**-8 / (1 - 2.0**-8)  # bf16 rounding of each product, to nearest even (oneDNN and torch alike)


def _kernels() -> ModuleType:
    # numba: a second to import, so only when needed; the first run on a machine also
    # compiles the kernels (10–15 s on two cores), kept on disk for every later one
    from embviz.core.table import sieve_kernels

    return sieve_kernels


def _bounds(x: np.ndarray, rounded: np.ndarray) -> np.ndarray:
    """Each row's margin (before the relative part) against any other row, in float64."""
    n, d = x.shape
    err, size = np.empty(n), np.empty(n)
    for start in range(0, n, 8192):  # float64 copies of a few rows at a time, not of the table
        wide = rounded[start : start + 8192].astype(np.float64)
        err[start : start + 8192] = np.linalg.norm(x[start : start + 8192] - wide, axis=1)
        size[start : start + 8192] = np.linalg.norm(wide, axis=1)
    gamma = 2 * d * 2.0**-24 / (1 - 2 * d * 2.0**-24)
    bound = size * err.max() + err * size.max() + err * err.max() + gamma * size * size.max()
    margin: np.ndarray = bound * (1 + 1e-6) + 1e-9  # the fp64 arithmetic of the bound and of the final scores
    return margin


def _rounds(blocks: int) -> list[list[tuple[int, int]]]:
    """All pairs of blocks i ≤ j, in rounds whose pairs share no block: the diagonal, then
    the circle method's matchings."""
    rounds = [[(b, b) for b in range(blocks)]]
    players: list[int | None] = list(range(blocks)) + ([None] if blocks % 2 else [])
    for _ in range(len(players) - 1):
        met = [(players[p], players[-1 - p]) for p in range(len(players) // 2)]
        pairs = [(min(a, b), max(a, b)) for a, b in met if a is not None and b is not None]
        if pairs:
            rounds.append(pairs)
        players = [players[0], players[-1], *players[1:-1]]
    return rounds


def self_neighbours(rows: torch.Tensor, k: int, progress: ProgressFn = no_progress,
                    span: tuple[float, float] = (0.0, 1.0), stage: str = "neighbours",
                    threads: int | None = None) -> np.ndarray:
    """(n, k) positions of each row's k nearest other rows by cosine, best first, exact
    (ties to the lower position). `rows` are unit float32 rows on the CPU. Progress is
    reported, and a cancel honoured, after each round of tiles."""
    n, d = rows.shape
    if not 0 < k < n:
        raise ValueError(f"k = {k} needs 1 ≤ k < {n}")
    lo, hi = span
    progress(lo, stage, None)  # a cancel before the kernels load (their first compile takes seconds)
    kernels = _kernels()
    threads = max(1, threads or os.cpu_count() or 1)
    capacity = min(n, 3 * k + 192)
    ensure_fits_in_ram(n * (capacity * 8 + d * 2 + 16 + threads * CROWDED * 6), "Finding every token's neighbours")
    x = np.ascontiguousarray(rows.detach().to(torch.float32).numpy())
    low = torch.from_numpy(x).to(torch.bfloat16)
    bound = _bounds(x, low.to(torch.float32).numpy())
    tau = np.full(n, -np.inf, dtype=np.float32)
    count = np.zeros(n, dtype=np.int64)
    scores = np.empty((n, capacity), dtype=np.float32)
    ids = np.empty((n, capacity), dtype=np.int32)
    overflow = np.zeros(n, dtype=np.uint8)
    starts = list(range(0, n, BLOCK))
    local = threading.local()  # each thread's scratch row

    def tile(pair: tuple[int, int]) -> None:
        i0, j0 = starts[pair[0]], starts[pair[1]]
        products = torch.mm(low[i0 : i0 + BLOCK], low[j0 : j0 + BLOCK].T)
        if not hasattr(local, "widened"):
            local.widened = np.empty(BLOCK, dtype=np.uint32)
        bits = products.view(torch.uint16).numpy()
        kernels.sieve_rows(bits, i0, j0, tau, count, scores, ids, bound, k, REL, overflow, local.widened)
        if i0 != j0:
            kernels.sieve_columns(bits, i0, j0, tau, count, scores, ids, bound, k, REL, overflow, local.widened)

    def crowd(part: np.ndarray, out: np.ndarray) -> None:
        approx = torch.mm(low[torch.from_numpy(part)], low.T).to(torch.float32)
        approx[torch.arange(part.size), torch.from_numpy(part)] = -torch.inf  # not its own neighbour
        kernels.crowded_rows(x, part, approx.numpy(), bound, k, REL, out)

    rounds = _rounds(len(starts))
    previous = torch.get_num_threads()
    torch.set_num_threads(1)  # the parallelism is the tiles': one thread per product
    try:
        with ThreadPoolExecutor(threads, initializer=torch.set_num_threads, initargs=(1,)) as pool:
            for done, pairs in enumerate(rounds, 1):
                list(pool.map(tile, pairs))
                progress(lo + (hi - lo) * 0.9 * done / len(rounds), stage, None)
            out = np.empty((n, k), dtype=np.int64)
            edges = np.linspace(0, n, threads + 1).astype(int)
            list(pool.map(lambda p: kernels.finish_rows(x, edges[p], edges[p + 1], count, scores, ids, bound, k,
                                                        REL, overflow, out), range(threads)))
            progress(lo + (hi - lo) * 0.95, stage, None)
            crowded = np.flatnonzero(overflow)
            parts = [crowded[start : start + CROWDED] for start in range(0, crowded.size, CROWDED)]
            for done in range(0, len(parts), threads):
                list(pool.map(lambda part: crowd(part, out), parts[done : done + threads]))
                progress(lo + (hi - lo) * (0.95 + 0.05 * min(1.0, (done + threads) / len(parts))), stage, None)
    finally:
        torch.set_num_threads(previous)
    progress(hi, stage, None)
    return out


def nearest_exact(rows: torch.Tensor, index: int, k: int) -> np.ndarray:
    """Positions of row `index`'s k nearest other rows, exactly as `self_neighbours` ranks them."""
    x = np.ascontiguousarray(rows.detach().to(torch.float32).cpu().numpy())
    out = np.empty(k, dtype=np.int64)
    _kernels().exact_row(x, int(index), k, out)
    return out
