"""The map's points sorted by the cell of a grid over their bounds, so that what a view
needs (the points in a rectangle, how many there are, the one nearest the mouse) costs
in proportion to the points near it, not to the whole map: a pan step over a
2,000,000-point map must not pass over every point."""

from __future__ import annotations

import math

import numpy as np

# At most 256 × 256 cells: a cell's number fits 16 bits, which numpy sorts by radix, in
# time linear in the points (a comparison sort of 2,000,000 would take several times longer).
MAX_SIDE = 256
POINTS_PER_CELL = 16  # a small map gets fewer, fuller cells
# A point's cell is found in float32: one within this share of a cell of a cell's edge may be
# put on either side, so a query takes in the neighbouring cell whenever it comes this near.
EDGE = 1e-3


class GridIndex:
    """`coords` (n, 2) sorted by grid cell: `xs`, `ys` and `rows` (each sorted point's row
    in `coords`), with `starts[c]:starts[c + 1]` the sorted points of cell c (row-major,
    `side` cells a row). Within a cell the points keep their rows' order."""

    def __init__(self, coords: np.ndarray) -> None:
        coords = np.asarray(coords, dtype=np.float32).reshape(-1, 2)
        self.n = len(coords)
        x, y = coords[:, 0], coords[:, 1]
        if self.n:
            self.lo = np.array([x.min(), y.min()], dtype=np.float64)
            self.hi = np.array([x.max(), y.max()], dtype=np.float64)
        else:
            self.lo = self.hi = np.zeros(2)
        self.side = int(min(MAX_SIDE, max(1, math.isqrt(self.n // POINTS_PER_CELL))))
        # A span of zero (every point on one line) still gets cells of a positive width.
        self.span = np.maximum(self.hi - self.lo, 1e-12 * np.maximum(np.abs(self.hi), 1.0))
        self.cell = self.span / self.side
        cell = self._cell_of(y, 1)
        cell *= self.side
        cell += self._cell_of(x, 0)
        self.rows = np.argsort(cell, kind="stable")
        self.xs = x[self.rows]
        self.ys = y[self.rows]
        self.starts = np.zeros(self.side * self.side + 1, dtype=np.int64)
        np.cumsum(np.bincount(cell, minlength=self.side * self.side), out=self.starts[1:])

    def _cell_of(self, values: np.ndarray, axis: int) -> np.ndarray:
        """Each value's cell along `axis`, as uint16 (a cell's number, row × side + column, fits)."""
        scaled = (values - float(self.lo[axis])) * float(self.side / self.span[axis])
        np.clip(scaled, 0, self.side - 1, out=scaled)
        return scaled.astype(np.uint16)

    def _cell_range(self, a: float, b: float, axis: int) -> tuple[int, int] | None:
        """The first and last cell along `axis` that meet [a, b], or None if none does."""
        if not self.n or b < self.lo[axis] or a > self.hi[axis]:
            return None
        k = self.side / self.span[axis]
        first = int(min(max((a - self.lo[axis]) * k - EDGE, 0), self.side - 1))
        last = int(min(max((b - self.lo[axis]) * k + EDGE, 0), self.side - 1))
        return first, last

    def cells_rect(self, rect: tuple[float, float, float, float]) -> tuple[float, float, float, float] | None:
        """The data rectangle (x0, x1, y0, y1) of the cells that meet `rect`: every point
        of `block(rect)` lies in it."""
        cx, cy = self._cell_range(rect[0], rect[1], 0), self._cell_range(rect[2], rect[3], 1)
        if cx is None or cy is None:
            return None
        (wx, wy), (lx, ly) = self.cell, self.lo
        x0, x1 = max(lx + (cx[0] - EDGE) * wx, lx), min(lx + (cx[1] + 1 + EDGE) * wx, self.hi[0])
        y0, y1 = max(ly + (cy[0] - EDGE) * wy, ly), min(ly + (cy[1] + 1 + EDGE) * wy, self.hi[1])
        return x0, x1, y0, y1

    def block(self, rect: tuple[float, float, float, float]) -> np.ndarray | slice:
        """The sorted positions of the points in the cells that meet `rect` (a superset of
        those inside it): a slice when they are one run."""
        cx, cy = self._cell_range(rect[0], rect[1], 0), self._cell_range(rect[2], rect[3], 1)
        if cx is None or cy is None:
            return slice(0, 0)
        row_starts = np.arange(cy[0], cy[1] + 1) * self.side
        a, b = self.starts[row_starts + cx[0]], self.starts[row_starts + cx[1] + 1]
        if cx == (0, self.side - 1):
            return slice(int(a[0]), int(b[-1]))
        return _ranges(a, b)

    def _inside(self, block: np.ndarray | slice, rect: tuple[float, float, float, float]) -> np.ndarray:
        x, y = self.xs[block], self.ys[block]
        return (x >= rect[0]) & (x <= rect[1]) & (y >= rect[2]) & (y <= rect[3])

    def covers(self, rect: tuple[float, float, float, float]) -> bool:
        """Whether every point lies in `rect`."""
        return rect[0] <= self.lo[0] and self.hi[0] <= rect[1] and rect[2] <= self.lo[1] and self.hi[1] <= rect[3]

    def count(self, rect: tuple[float, float, float, float]) -> int:
        """How many points lie in `rect`: the cells wholly inside it are counted without
        looking at a point, only those on its edge point by point."""
        if self.covers(rect):
            return self.n
        cx, cy = self._cell_range(rect[0], rect[1], 0), self._cell_range(rect[2], rect[3], 1)
        if cx is None or cy is None:
            return 0
        ix0, ix1 = self._inner_range(rect[0], rect[1], 0, cx)
        iy0, iy1 = self._inner_range(rect[2], rect[3], 1, cy)
        if ix0 > ix1 or iy0 > iy1:
            return int(np.count_nonzero(self._inside(self.block(rect), rect)))
        side, starts = self.side, self.starts
        edge_rows = np.r_[cy[0]:iy0, iy1 + 1:cy[1] + 1] * side
        rows = np.arange(iy0, iy1 + 1) * side
        a = [starts[edge_rows + cx[0]], starts[rows + cx[0]], starts[rows + ix1 + 1]]
        b = [starts[edge_rows + cx[1] + 1], starts[rows + ix0], starts[rows + cx[1] + 1]]
        edge = _ranges(np.concatenate(a), np.concatenate(b))
        inner = int((starts[rows + ix1 + 1] - starts[rows + ix0]).sum())
        return inner + int(np.count_nonzero(self._inside(edge, rect)))

    def _inner_range(self, a: float, b: float, axis: int, meets: tuple[int, int]) -> tuple[int, int]:
        """The first and last of the cells `meets` along `axis` that lie wholly in [a, b],
        by a margin of EDGE (the end cells reach to the points' bounds)."""
        k, lo = self.side / self.span[axis], self.lo[axis]
        first = meets[0] if a <= lo else max(meets[0], math.ceil((a - lo) * k + EDGE))
        last = meets[1] if b >= self.hi[axis] else min(meets[1], math.floor((b - lo) * k - EDGE) - 1)
        return first, last

    def rows_in(self, rect: tuple[float, float, float, float]) -> np.ndarray:
        """The rows of the points in `rect`, ascending."""
        if self.covers(rect):
            return np.arange(self.n, dtype=np.int64)
        block = self.block(rect)
        return np.sort(self.rows[block][self._inside(block, rect)])

    def points_in(self, rect: tuple[float, float, float, float]) -> np.ndarray:
        """The coordinates (m, 2) of the points in `rect`, in no particular order."""
        block = slice(0, self.n) if self.covers(rect) else self.block(rect)
        x, y = self.xs[block], self.ys[block]
        if not self.covers(rect):
            keep = self._inside(block, rect)
            x, y = x[keep], y[keep]
        return np.column_stack([x, y])

    def nearest(self, x: float, y: float, radius: float) -> int:
        """The row of the point nearest (x, y) within `radius`, or -1 (ties: the lowest row
        of a cell)."""
        block = self.block((x - radius, x + radius, y - radius, y + radius))
        bx, by = self.xs[block].astype(np.float64), self.ys[block].astype(np.float64)
        if not len(bx):
            return -1
        d2 = (bx - x) ** 2 + (by - y) ** 2
        k = int(np.argmin(d2))
        if d2[k] > radius * radius:
            return -1
        return int(self.rows[block][k])


def _ranges(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The positions of the runs [a[k], b[k]), one after another, in one arange: each
    run's positions are its start plus a running count."""
    lengths = b - a
    offsets = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(a - offsets, lengths)
