"""The first map of a model being opened, drawn before the model is: the PCA kept in the cache
(kept_maps) for the file as it is now, with the labels of the table the cache holds
(readers.cached_table), read with numpy alone while torch and the model open on the worker.
It is exactly the map the open model's first PCA reads back (the same key), so the window's
first picture does not change when the model takes over; a file changed since it was hashed,
a map not kept, or an entry that does not hold what it should gives no first map at all."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from embviz.core.cache import remembered_source
from embviz.core.errors import EmbvizError
from embviz.core.maps import kept_maps
from embviz.core.readers.cached_table import cached_table

# Every table is float32 on its device once opened (readers.assemble), so its map's key names that type.
TABLE_DTYPE = "torch.float32"
# Where "auto" may put the table (core.device.pick_device): its map is found under one of these.
AUTO_DEVICES = ("cuda", "mps", "cpu")


@dataclass
class FirstMap:
    source: Path  # the file the model is opened from
    ids: np.ndarray  # (n,) int64 true row ids
    coords: np.ndarray  # (n, 2) float32
    labels: Callable[[], list[str]]  # one per row of the table, as the open model's vocabulary gives them
    explained: list[float] = field(default_factory=list)
    rows: int = 0  # of the whole table


def first_map(source: str | None, device: str = "auto", limit: int | None = None) -> FirstMap | None:
    """The kept PCA (unit rows, two components) of the first `limit` rows (all when None) of the
    model `source` names (None: the default model), as the open model on `device` will read it;
    None when the cache cannot give exactly that without the model."""
    path = _file(source)
    if path is None:
        return None
    table = cached_table(path)
    if table is None:
        return None
    ids = np.arange(table.rows if limit is None else min(max(limit, 0), table.rows), dtype=np.int64)
    if ids.size < max(kept_maps.KEEP_ROWS, 1):
        return None  # a map this small is computed, not kept
    known = remembered_source(path)
    if known is None:
        return None
    kind = (device or "auto").strip().lower().split(":")[0]
    found = []
    for device_type in AUTO_DEVICES if kind == "auto" else (kind,):
        key = kept_maps.map_key(known.sha256, (table.rows, table.dim), TABLE_DTYPE, device_type, ids, 2, True)
        if (kept := kept_maps.read_kept(key, ids.size, 2, known)) is not None:
            found.append(kept)
    if len(found) != 1:  # none, or maps of two devices and no torch here to say which "auto" picks
        return None
    coords, ratio = found[0]
    return FirstMap(path, ids, coords, table.labels, [float(r) for r in ratio], table.rows)


def _file(source: str | None) -> Path | None:
    """The file `source` names, as open_checkpoint finds it; None for anything else (a folder,
    a hub id, a lesson model, which opens in a moment anyway)."""
    from embviz.core.default_model import default_model_path
    from embviz.core.lessons import example_path, lesson_path

    text = "" if source is None else str(source).strip()
    try:
        if not text:
            path = default_model_path()
        elif lesson_path(text) is not None:
            return None
        else:
            path = example_path(text) or Path(text).expanduser()
        return path if path.is_file() else None
    except (EmbvizError, OSError, ValueError):
        return None
