"""PCA maps kept in embviz's cache folder, so that a model opened again (the default model at
every launch) draws its first map from the disk rather than computing it. Only for a model
read from one file whose content hash the cache already remembers (a GGUF or word-vector
file, whose table is cached by that hash): hashing a file just for a map would cost more
than the map."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from embviz.core.cache import cache_root, keep_in_cache, remembered_hash

if TYPE_CHECKING:
    from embviz.core.model import EmbeddingModel

FOLDER = "maps"
FORMAT = "pca-1"
# Smaller maps take a few milliseconds to compute: an entry for each of them, per subset
# and row limit tried, would only fill the folder.
KEEP_ROWS = 20_000


def kept_pca(model: EmbeddingModel, ids: np.ndarray, n_components: int, normalize: bool,
             compute: Callable[[], tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """(coords, explained variance ratio) read from the cache when kept there for this file
    and these rows, else computed and kept."""
    key = _key(model, ids, n_components, normalize) if len(ids) >= KEEP_ROWS else None
    if key is None:
        return compute()
    entry = cache_root() / FOLDER / key
    found = read_kept(key, len(ids), n_components)
    if found is not None:
        return found
    coords, ratio = compute()

    def write(scratch: Path) -> None:
        np.savez(scratch / "pca.npz", coords=coords.astype(np.float32), ratio=np.asarray(ratio, dtype=np.float64))

    keep_in_cache(entry.parent, entry.name, write)
    return coords, ratio


def _key(model: EmbeddingModel, ids: np.ndarray, n_components: int, normalize: bool) -> str | None:
    known = remembered_hash(Path(model.source))
    if known is None:
        return None
    return map_key(known, (model.vocab_size, model.dim), str(model.table.dtype), model.device.type, ids,
                   n_components, normalize)


def map_key(file_sha256: str, shape: tuple[int, int], dtype: str, device_type: str, ids: np.ndarray,
            n_components: int, normalize: bool) -> str:
    """The name of the kept map of these rows of the table read from the file with this hash."""
    rows = hashlib.sha256(np.ascontiguousarray(ids, dtype=np.int64).tobytes()).hexdigest()
    # The device and dtype too: a bfloat16 table on a GPU gives a slightly different map.
    what = f"{FORMAT}|{file_sha256}|{shape[0]}x{shape[1]}|{dtype}|{device_type}|{n_components}|{normalize}|{rows}"
    return hashlib.sha256(what.encode()).hexdigest()[:32]


def read_kept(key: str, rows: int, n_components: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The map kept under `key`, when it holds exactly `rows` × `n_components` finite coordinates."""
    return _read(cache_root() / FOLDER / key / "pca.npz", rows, n_components)


def _read(path: Path, rows: int, n_components: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The kept map, or None for anything but exactly the arrays written for these rows."""
    try:
        if not path.is_file() or path.stat().st_size > 64 + rows * n_components * 8 + (1 << 16):
            return None
        with np.load(path, allow_pickle=False) as kept:
            coords, ratio = kept["coords"], kept["ratio"]
    except (OSError, ValueError, KeyError):
        return None
    if coords.shape != (rows, n_components) or coords.dtype != np.float32 or ratio.shape != (n_components,):
        return None
    if not (np.isfinite(coords).all() and np.isfinite(ratio).all()):
        return None
    return coords, ratio.astype(np.float64)
