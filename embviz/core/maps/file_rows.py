"""Unit rows that a child process makes from the cache's own table file, rather than a copy
of them pickled to it.

A word-vector table of two million rows is a map of a .npy file in the cache (cache.map_table).
A child that fits a t-SNE, a UMAP or k-means of its unit rows is then sent the file's path, the
rows wanted and each row's divisor (4 bytes a row, not D × 4); it maps the file read-only, in
pages the OS shares with the window's process, and scales the rows itself a chunk at a time,
exactly as `similarity.unit_table` does (float32 subtraction and division round the same in
numpy and torch). Nothing here imports torch at module level: the clustering child starts
without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from embviz.core.cache import MAPPED_TABLE, MappedFile, map_table

if TYPE_CHECKING:
    from embviz.core.model import EmbeddingModel

CHUNK_BYTES = 64 << 20  # rows scaled at a time in the child


@dataclass(frozen=True)
class FileRows:
    """The unit (or mean-centred unit) rows `ids` of the table in `path`, for a child to make."""

    path: str
    rows: int  # the file's rows, checked against its header and size before mapping
    ids: np.ndarray | None  # (n,) the rows wanted, in order; None: every row
    mean: np.ndarray | None  # (D,) subtracted first, for the centred rows
    divisors: np.ndarray  # (n,) float32, each wanted row's divisor
    odd: np.ndarray  # positions among the wanted rows whose unit rows are given
    odd_rows: np.ndarray  # (len(odd), D) float32

    def load(self) -> np.ndarray:
        """The (n, D) float32 rows, in this process's memory; the file only mapped."""
        table = map_table(Path(self.path), self.rows, read_only=True)
        n, d = len(self.divisors), table.shape[1]
        units = np.empty((n, d), dtype=np.float32)
        step = max(1, CHUNK_BYTES // (4 * d))
        for i in range(0, n, step):
            out = units[i : i + step]
            block = table[i : i + step] if self.ids is None else table[self.ids[i : i + step]]
            divisors = self.divisors[i : i + step, None]
            if self.mean is None:
                np.divide(block, divisors, out=out)
            else:
                np.divide(np.subtract(block, self.mean, out=out), divisors, out=out)
        units[self.odd] = self.odd_rows
        return units


def rows_in_child(rows: np.ndarray | FileRows | None) -> np.ndarray | None:
    """What a child function was sent, as rows: a FileRows made, anything else as it came."""
    return rows.load() if isinstance(rows, FileRows) else rows


def file_rows(model: EmbeddingModel, ids: np.ndarray | None, centered: bool = False) -> FileRows | None:
    """The unit rows `ids` (all for None) of the model's table as a child can make them from
    the cache file the table maps; None when it maps none (a checkpoint's table, a GPU, the
    file since removed or replaced): the caller sends the rows themselves."""
    mapped = model.cache.get(MAPPED_TABLE)
    table = model.table
    if not isinstance(mapped, MappedFile) or table.device.type != "cpu" or mapped.rows != table.shape[0] \
            or not mapped.holds(table.data_ptr()):
        return None
    from embviz.core.table.similarity import unit_recipe

    recipe = unit_recipe(model, centered)
    if recipe.odd.numel() > table.shape[0] // 8:  # the rows given would weigh nearly what the table does
        return None
    divisors = recipe.divisors.numpy()
    odd = recipe.odd.numpy()
    odd_rows = recipe.odd_rows.numpy()
    if ids is not None and not (ids.size == table.shape[0] and (ids == np.arange(ids.size)).all()):
        ids = np.asarray(ids, dtype=np.int64)
        divisors = divisors[ids]
        where = np.full(table.shape[0], -1, dtype=np.int64)
        where[odd] = np.arange(odd.size)
        at = where[ids]
        odd, odd_rows = np.flatnonzero(at >= 0), odd_rows[at[at >= 0]]
    else:
        ids = None
    mean = None if recipe.mean is None else recipe.mean.numpy()
    return FileRows(str(mapped.path), mapped.rows, ids, mean, np.ascontiguousarray(divisors), odd, odd_rows)
