"""embviz's cache folder: tables read from GGUF and word-vector files, the language models and
tokenizers built from GGUF files, and big maps' neighbour graphs, each keyed on its source's content.

A file is hashed once; its size, modification and change times and inode are remembered
beside the hash, so an unchanged file is not read again to find its entry, and a touched or
replaced one is hashed anew (and finds its old entry if its bytes did not change). That index
is only a hint: an entry is sealed (embviz.core.seal) with its source's hash, the stamps it was
hashed under and every file's digest, and is used only when all of them hold; anything else
costs a hash or a rebuild, never an answer."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TYPE_CHECKING, Callable

from embviz.core.errors import first_line
from embviz.core.seal import DamagedEntry, sealed_stamps, write_seal

if TYPE_CHECKING:
    import numpy as np

_INDEX = "hashes.json"
_CHUNK = 1 << 22


def cache_root() -> Path:
    override = os.environ.get("EMBVIZ_CACHE_DIR")
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("embviz"))


def _stamp(path: Path) -> str:
    # ctime too: a write in place that keeps the size and puts the old mtime back still moves it.
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


# Paths, stamps and hashes of the files hashed here: a few hundred bytes each.
_MAX_INDEX_BYTES = 64 * 2**20


def _hash_index() -> dict[str, Any]:
    """The index of hashes: a hint that saves hashing a file again, never trusted for an answer
    (entry_folder confirms it); anything unreadable is an empty index."""
    from embviz.core.errors import EmbvizError
    from embviz.core.readers.regular_file import parse_json, read_bounded

    try:
        raw = read_bounded(cache_root() / _INDEX, _MAX_INDEX_BYTES, "its text", lambda size: "too big",
                           follow_links=False)
        index = parse_json(raw, _INDEX)
    except (OSError, EmbvizError):
        return {}
    return index if isinstance(index, dict) else {}


def _known(index: dict[str, Any], path: Path, stamp: str) -> str | None:
    known = index.get(str(path))
    if isinstance(known, dict) and known.get("stamp") == stamp and isinstance(known.get("sha256"), str):
        return str(known["sha256"])
    return None


@dataclass(frozen=True)
class Source:
    """A source file's sha256 and the stamp it was found under; `hashed_now`: read in full by this
    call rather than taken from the index."""

    sha256: str
    stamp: str
    hashed_now: bool


def remembered_source(path: Path) -> Source | None:
    """The hash the index remembers for this file under its present stamp, or None (never hashed
    here, or changed since): for what is only worth doing when the hash comes free."""
    try:
        path = Path(path).resolve()
        if not path.is_file():
            return None
        stamp = _stamp(path)
        known = _known(_hash_index(), path, stamp)
    except OSError:
        return None
    return None if known is None else Source(known, stamp, False)


def source_of(path: Path, trust_index: bool = True) -> Source:
    """The file's sha256: remembered by size, mtime, ctime and inode, or (without `trust_index`,
    or when the index has none) read in full and remembered."""
    path = Path(path).resolve()
    index_path = cache_root() / _INDEX
    index = _hash_index()
    stamp = _stamp(path)
    if trust_index and (known := _known(index, path, stamp)) is not None:
        return Source(known, stamp, False)
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    index[str(path)] = {"stamp": stamp, "sha256": digest.hexdigest()}
    try:
        index_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = index_path.with_name(f".{_INDEX}.{os.getpid()}")
        tmp.write_text(json.dumps(index), encoding="utf-8")
        os.replace(tmp, index_path)
    except OSError:
        pass  # without a writable cache the file is simply hashed again next time
    return Source(digest.hexdigest(), stamp, True)


def file_hash(path: Path) -> str:
    """sha256 of the file's bytes, remembered by size, mtime, ctime and inode."""
    return source_of(path).sha256


def content_key(path: Path, producer: str) -> str:
    """The cache key of what `producer` makes of this file: its content, the producer's
    format, and the versions of the libraries that read it."""
    return key_of(file_hash(path), producer)


def entry_folder(path: Path, parent: Path, producer: str) -> tuple[Path, Source]:
    """The folder of the entry `producer` makes of this file, and the file's hash. The index's
    hash is taken only when that entry's seal names the file's present stamp (it was hashed in
    full under it); otherwise the file is hashed again, so a wrong index costs a hash, never
    another file's entry."""
    source = source_of(path)
    folder = parent / key_of(source.sha256, producer)
    if not source.hashed_now and source.stamp not in sealed_stamps(folder):
        source = source_of(path, trust_index=False)
        folder = parent / key_of(source.sha256, producer)
    return folder, source


def key_of(sha256: str, producer: str) -> str:
    """The cache key of what `producer` makes of a file with this sha256."""
    from importlib.metadata import PackageNotFoundError, version

    versions = []
    for package in ("embviz", "gguf"):
        try:
            versions.append(f"{package}={version(package)}")
        except PackageNotFoundError:
            versions.append(f"{package}=?")
    return hashlib.sha256(f"{sha256}|{producer}|{'|'.join(versions)}".encode()).hexdigest()[:32]


def cache_size() -> int:
    root = cache_root()
    return sum(f.stat().st_size for f in root.rglob("*") if f.is_file()) if root.is_dir() else 0


def clear_cache() -> int:
    """Delete everything in the cache folder; returns the bytes freed."""
    size = cache_size()
    root = cache_root()
    if root.is_dir():
        for child in root.iterdir():
            if child.is_dir():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
    return size


_write_failed = False  # said once per process: every later write would fail the same way


class Entry:
    """A cache entry written in a scratch folder beside its place and renamed into place whole,
    so a crash mid-write never leaves half an entry. A cache that cannot be written only makes
    the next open slower: the first failure leaves a one-line `note` saying so, later ones none.
    Used as a context manager, which removes the scratch folder whatever happened."""

    def __init__(self, parent: Path, name: str, source: Source | None = None) -> None:
        self.parent, self.name, self.source = parent, name, source
        self.note: str | None = None
        self.scratch: Path | None = None
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self.scratch = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=parent))
        except OSError as exc:
            self._failed(exc)

    def __enter__(self) -> Entry:
        return self

    def __exit__(self, *exc: object) -> None:
        self._drop()

    def _drop(self) -> None:
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None

    def _failed(self, exc: BaseException) -> None:
        global _write_failed
        self._drop()
        if _write_failed or (self.parent / self.name).exists():  # said already, or another process wrote it first
            return
        _write_failed = True
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else first_line(exc)
        self.note = f"The cache folder {self.parent} cannot be written ({reason}): the next open reads the file again."

    def table(self, shape: tuple[int, int]) -> np.ndarray:
        """A float32 table of `shape` to fill: a map of the entry's table.npy, so that what a
        reader writes into it is the cache file itself (the OS writes it out in the background);
        plain memory when the cache cannot hold it."""
        import numpy as np

        if self.scratch is not None:
            path = self.scratch / "table.npy"
            try:
                table = np.lib.format.open_memmap(path, mode="w+", dtype="<f4", shape=shape)
                if hasattr(os, "posix_fallocate"):
                    # Its blocks reserved now: a full disk is an OSError here, not a SIGBUS at a write into the map.
                    fd = os.open(path, os.O_RDWR)
                    try:
                        os.posix_fallocate(fd, 0, os.fstat(fd).st_size)
                    finally:
                        os.close(fd)
                return table
            except (OSError, ValueError) as exc:
                self._failed(exc)
        return np.empty(shape, dtype=np.float32)

    def keep(self, write: Callable[[Path], None]) -> bool:
        """Write the rest of the entry and move it into place; whether it is there now."""
        if self.scratch is None:
            return (self.parent / self.name).is_dir()
        try:
            write(self.scratch)
            write_seal(self.scratch, *((self.source.sha256, [self.source.stamp]) if self.source else (None, [])))
            self.scratch.rename(self.parent / self.name)
            self.scratch = None
        except (OSError, ValueError, RuntimeError) as exc:
            self._failed(exc)
        return (self.parent / self.name).is_dir()


def keep_in_cache(parent: Path, name: str, write: Callable[[Path], None], source: Source | None = None) -> str | None:
    """Write parent/name whole and sealed (see Entry); a one-line note when the cache cannot be written."""
    with Entry(parent, name, source) as entry:
        entry.keep(write)
    return entry.note


def remove_entry(folder: Path) -> None:
    """Remove an entry (a link in its place included), whatever is in it."""
    if folder.is_symlink():
        folder.unlink(missing_ok=True)
    else:
        shutil.rmtree(folder, ignore_errors=True)


def discard_damaged(folder: Path, source: str, damage: DamagedEntry) -> str:
    """Remove a damaged entry (a process that maps its files keeps them until it lets go) and
    say so in one line, for the model's notes."""
    remove_entry(folder)
    return f"The cached copy of {source} was damaged ({damage}); it was read again from the file."


def map_table(path: Path, rows: int, read_only: bool = False) -> np.ndarray:
    """The float32 (rows, D) table of a .npy file in the cache, mapped copy-on-write rather than
    read: pages come from the OS's file cache, shared with every process that maps the file,
    and a write (none is meant) would go to a private copy, never into the file. `read_only`
    (a child process that only reads it): a write raises instead.
    The header and the file's size must agree exactly with `rows` float32 rows: a DamagedEntry
    otherwise, before anything is mapped."""
    import numpy as np

    from embviz.core.errors import EmbvizError
    from embviz.core.mapped_guard import guard
    from embviz.core.readers.regular_file import npy_header, open_regular

    try:
        f = open_regular(path, follow_links=False)
    except EmbvizError as exc:
        raise DamagedEntry(str(exc).rstrip(".")) from None
    with f:
        try:
            shape, fortran, dtype = npy_header(f)
        except ValueError as exc:
            raise DamagedEntry(f"{path.name} has no readable .npy header") from exc
        offset = f.tell()
        size = os.fstat(f.fileno()).st_size
        if dtype != np.dtype("<f4") or fortran or len(shape) != 2 or shape[0] != rows or shape[1] < 1:
            raise DamagedEntry(f"{path.name} holds {dtype} {list(shape)}, not {rows:,} float32 rows")
        if size != offset + rows * shape[1] * 4:
            raise DamagedEntry(f"{path.name} is {size:,} bytes, not the {offset + rows * shape[1] * 4:,} its header says")
        mapped = np.memmap(f, dtype="<f4", mode="r" if read_only else "c", offset=offset, shape=tuple(shape))
        guard(f.fileno(), mapped._mmap, read_only)  # type: ignore[attr-defined]  # numpy keeps its mmap there  # cut short by another process, the map keeps its numbers
    return mapped.view(np.ndarray)  # a plain array; the map stays open as long as it is used


MAPPED_TABLE = "mapped_table"  # model.cache key: the cache file a CPU table is a map of (MappedFile)


@dataclass(frozen=True)
class MappedFile:
    """The cache's .npy file that a model's table maps, so that a child process can map it
    too rather than be sent a copy; `inode`, `size` and `address` tell whether it still is."""

    path: Path
    rows: int
    inode: int
    size: int
    address: int  # the first byte of the parent's map: a table replaced since is not this file

    @classmethod
    def of(cls, path: Path, table: np.ndarray) -> MappedFile:
        st = os.stat(path)
        return cls(Path(path), int(table.shape[0]), st.st_ino, st.st_size, int(table.ctypes.data))

    def holds(self, address: int) -> bool:
        """Whether the file is still the one mapped at `address` (not removed or replaced)."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        return address == self.address and (st.st_ino, st.st_size) == (self.inode, self.size)
