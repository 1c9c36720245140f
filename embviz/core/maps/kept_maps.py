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

from embviz.core.cache import Source, cache_root, keep_in_cache, remembered_source, remove_entry
from embviz.core.seal import Sealed

if TYPE_CHECKING:
    from embviz.core.model import EmbeddingModel

FOLDER = "maps"
FORMAT = "pca-2"  # 2: sealed
MAP_FILE = "pca.npz"
# Smaller maps take a few milliseconds to compute: an entry for each of them, per subset
# and row limit tried, would only fill the folder.
KEEP_ROWS = 20_000


def kept_pca(model: EmbeddingModel, ids: np.ndarray, n_components: int, normalize: bool,
             compute: Callable[[], tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """(coords, explained variance ratio) read from the cache when kept there for this file
    and these rows, else computed and kept."""
    source = remembered_source(Path(model.source)) if len(ids) >= KEEP_ROWS else None
    if source is None:
        return compute()
    key = map_key(source.sha256, (model.vocab_size, model.dim), str(model.table.dtype), model.device.type, ids,
                  n_components, normalize)
    found = read_kept(key, len(ids), n_components, source)
    if found is not None:
        return found
    coords, ratio = compute()

    def write(scratch: Path) -> None:
        np.savez(scratch / MAP_FILE, coords=coords.astype(np.float32), ratio=np.asarray(ratio, dtype=np.float64))

    entry = cache_root() / FOLDER / key
    remove_entry(entry)  # one kept under another stamp of the file, or damaged
    keep_in_cache(entry.parent, entry.name, write, source)
    return coords, ratio


def map_key(file_sha256: str, shape: tuple[int, int], dtype: str, device_type: str, ids: np.ndarray,
            n_components: int, normalize: bool) -> str:
    """The name of the kept map of these rows of the table read from the file with this hash."""
    rows = hashlib.sha256(np.ascontiguousarray(ids, dtype=np.int64).tobytes()).hexdigest()
    # The device and dtype too: a bfloat16 table on a GPU gives a slightly different map.
    what = f"{FORMAT}|{file_sha256}|{shape[0]}x{shape[1]}|{dtype}|{device_type}|{n_components}|{normalize}|{rows}"
    return hashlib.sha256(what.encode()).hexdigest()[:32]


def read_kept(key: str, rows: int, n_components: int, source: Source) -> tuple[np.ndarray, np.ndarray] | None:
    """The map kept under `key` for the source file as it is now (its seal names the file's stamp
    and hash, and every byte is as sealed), when it holds exactly `rows` × `n_components` finite
    coordinates; None for anything else."""
    entry = cache_root() / FOLDER / key
    try:
        sealed = Sealed(entry, source.sha256)
        if source.stamp not in sealed.stamps:
            return None
        kept = sealed.arrays(MAP_FILE, rows * n_components * 4 + n_components * 8 + (1 << 16))
        coords, ratio = kept["coords"], kept["ratio"]
    except (OSError, ValueError, KeyError):  # DamagedEntry is a ValueError
        return None
    if coords.shape != (rows, n_components) or coords.dtype != np.float32 or ratio.shape != (n_components,) \
            or ratio.dtype != np.float64:
        return None
    if not (np.isfinite(coords).all() and np.isfinite(ratio).all()):
        return None
    return coords, ratio
