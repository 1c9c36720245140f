"""The compiled loops of the exact neighbour sieve (embviz.core.table.neighbours): numba,
imported only when a comparison runs (numba takes a while to import), compiled once and
kept on disk. Every kernel releases the GIL, so two threads can run them side by side."""

from __future__ import annotations

import numpy as np
from numba import njit

CHUNK = 16  # scores checked at once before looking at each
FINISH_ROWS = 4096  # rows whose candidate pairs are scored together
PARTNER_SHIFT = 9  # …in the order of their partner's block of 512 rows
SLACK = 1e-6  # covers float32 rounding of thresholds (|τ| ≤ 2) and fp64 rounding in the bounds


@njit(nogil=True, cache=True)
def threshold(theta: float, bound: float, rel: float) -> float:
    """The lowest approximate score that can still be among a row's k best, when its k-th
    best approximate score is `theta`. An approximate score s̃ stands for a true one within
    bound + rel·|s̃|: the true k-th best is at least lo = θ − bound − rel·|θ|, and s̃ can reach
    lo only from s̃ ≥ (lo − bound) / (1 ± rel)."""
    lo = theta - bound - rel * abs(theta)
    gap = lo - bound
    return (gap / (1.0 + rel) if gap >= 0 else gap / (1.0 - rel)) - SLACK


@njit(nogil=True, cache=True)
def _compact(i, tau, count, scores, ids, bound, k, rel, overflow):
    """Row i's buffer is full: keep only what can still be among its k best."""
    c = count[i]
    theta = np.partition(scores[i, :c].copy(), c - k)[c - k]
    t = np.float32(threshold(theta, bound[i], rel))
    kept = 0
    for p in range(c):
        if scores[i, p] >= t:
            scores[i, kept] = scores[i, p]
            ids[i, kept] = ids[i, p]
            kept += 1
    count[i] = kept
    tau[i] = t
    if kept > scores.shape[1] - 16:  # too many near-ties to sieve: the row is done exactly at the end
        overflow[i] = 1
        tau[i] = np.inf
        count[i] = 0


@njit(nogil=True, cache=True)
def sieve_rows(tile, i0, j0, tau, count, scores, ids, bound, k, rel, overflow, widened):
    """One tile of bf16 products (raw uint16 bits), rows i0… by columns j0…: a score joins
    its row's buffer when it reaches the row's threshold `tau`, which rises as better ones
    come in. Row by row, so each row's buffer is touched in one stretch. `widened`: scratch."""
    rows, cols = tile.shape
    capacity = scores.shape[1]
    as_float = widened.view(np.float32)
    for r in range(rows):
        i = i0 + r
        t = tau[i]
        for c in range(cols):
            widened[c] = np.uint32(tile[r, c]) << 16  # bf16 → float32, exactly
        for c0 in range(0, cols, CHUNK):
            c1 = min(c0 + CHUNK, cols)
            top = np.float32(-np.inf)
            for c in range(c0, c1):
                top = max(top, as_float[c])
            if top < t:
                continue
            for c in range(c0, c1):
                s = as_float[c]
                if s >= t and j0 + c != i:
                    p = count[i]  # in line: a call with these many arrays costs more than the store
                    scores[i, p] = s
                    ids[i, p] = j0 + c
                    count[i] = p + 1
                    if p + 1 == capacity:
                        _compact(i, tau, count, scores, ids, bound, k, rel, overflow)
                        t = tau[i]


@njit(nogil=True, cache=True)
def sieve_columns(tile, i0, j0, tau, count, scores, ids, bound, k, rel, overflow, widened):
    """The same tile for its columns' rows j0…, without transposing it: strip by strip of
    CHUNK columns, whose rows' thresholds and buffers stay at hand while the strip is read."""
    rows, cols = tile.shape
    capacity = scores.shape[1]
    as_float = widened.view(np.float32)
    local = np.empty(CHUNK, np.float32)
    for c0 in range(0, cols, CHUNK):
        width = min(CHUNK, cols - c0)
        for c in range(width):
            local[c] = tau[j0 + c0 + c]
        for r in range(rows):
            hits = 0
            for c in range(width):
                widened[c] = np.uint32(tile[r, c0 + c]) << 16  # bf16 → float32, exactly
                hits += as_float[c] >= local[c]
            if hits == 0:
                continue
            for c in range(width):
                s = as_float[c]
                if s >= local[c]:
                    j = j0 + c0 + c
                    p = count[j]
                    scores[j, p] = s
                    ids[j, p] = i0 + r
                    count[j] = p + 1
                    if p + 1 == capacity:
                        _compact(j, tau, count, scores, ids, bound, k, rel, overflow)
                        local[c] = tau[j]


@njit(nogil=True, cache=True, fastmath={"reassoc", "contract"})
def dot64(a, b):
    """a · b in float64 from float32 rows. One fixed order for a given width, so equal rows
    score exactly equal and dot64(a, b) == dot64(b, a)."""
    total = 0.0
    for d in range(a.shape[0]):
        total += np.float64(a[d]) * np.float64(b[d])
    return total


@njit(nogil=True, cache=True)
def best_of(candidates, exact, k, out):
    """The k best of `candidates` by exact score, ties to the lower position, best first."""
    by_id = np.argsort(candidates)
    ids = candidates[by_id]
    order = np.argsort(-exact[by_id], kind="mergesort")  # stable: equal scores keep id order
    for q in range(k):
        out[q] = ids[order[q]]


@njit(nogil=True, cache=True)
def finish_rows(x, lo, hi, count, scores, ids, bound, k, rel, overflow, out):
    """Rows lo…hi: the candidates left in each buffer, scored exactly, the k best kept."""
    for start in range(lo, hi, FINISH_ROWS):
        _finish_block(x, start, min(start + FINISH_ROWS, hi), count, scores, ids, bound, k, rel, overflow, out)


@njit(nogil=True, cache=True)
def _finish_block(x, lo, hi, count, scores, ids, bound, k, rel, overflow, out):
    """The pairs of a block of rows are scored in the order of their partner's block, so
    both rows of a product are in cache (in row order, every partner was a fetch from memory)."""
    rows = hi - lo
    starts = np.zeros(rows + 1, np.int64)
    size = 0
    for i in range(lo, hi):
        size += count[i]
    owner = np.empty(size, np.int64)
    partner = np.empty(size, np.int64)
    m = 0
    for i in range(lo, hi):
        starts[i - lo] = m
        c = count[i]
        if overflow[i] or c == 0:
            continue
        theta = np.partition(scores[i, :c].copy(), c - k)[c - k]
        t = np.float32(threshold(theta, bound[i], rel))
        for p in range(c):
            if scores[i, p] >= t:
                owner[m] = i
                partner[m] = ids[i, p]
                m += 1
    starts[rows] = m
    buckets = (x.shape[0] >> PARTNER_SHIFT) + 2
    at = np.zeros(buckets, np.int64)
    for q in range(m):
        at[(partner[q] >> PARTNER_SHIFT) + 1] += 1
    for b in range(1, buckets):
        at[b] += at[b - 1]
    order = np.empty(m, np.int64)
    for q in range(m):
        b = partner[q] >> PARTNER_SHIFT
        order[at[b]] = q
        at[b] += 1
    exact = np.empty(m, np.float64)
    for pair in order:
        exact[pair] = dot64(x[owner[pair]], x[partner[pair]])
    for i in range(lo, hi):
        a, b = starts[i - lo], starts[i - lo + 1]
        if b > a:
            best_of(partner[a:b], exact[a:b], k, out[i])


@njit(nogil=True, cache=True)
def exact_row(x, i, k, out):
    """Row i's k best among all rows of x (itself left out), by exact score: the path for a
    row the sieve could not narrow down, and for one token alone."""
    n = x.shape[0]
    exact = np.empty(n, np.float64)
    for j in range(n):
        exact[j] = dot64(x[i], x[j])
    exact[i] = -np.inf
    kth = np.partition(-exact, k - 1)[k - 1]
    candidates = np.nonzero(-exact <= kth)[0]
    best_of(candidates, exact[candidates], k, out)


@njit(nogil=True, cache=True)
def crowded_rows(x, rows, approx, bound, k, rel, out):
    """Rows the buffer could not narrow down, with their bf16 products against every row
    (`approx`, float32, each row's own product already -inf): the same sieve without a
    buffer's limit, then the exact verdict."""
    for r in range(rows.shape[0]):
        i = rows[r]
        line = approx[r]
        theta = np.partition(line.copy(), line.shape[0] - k)[line.shape[0] - k]
        t = np.float32(threshold(theta, bound[i], rel))
        candidates = np.nonzero(line >= t)[0]
        exact = np.empty(candidates.shape[0], np.float64)
        for q in range(candidates.shape[0]):
            exact[q] = dot64(x[i], x[candidates[q]])
        best_of(candidates, exact, k, out[i])
