"""What proves a cache entry is the one asked for, and whole, before anything in it is used.

An entry's seal.json, written last into its scratch folder (cache.Entry), records the sha256 of
the source file it was made from, the stamps (size, times, inode) under which that file was
hashed, and every file's size and xxh3-128 digest. A reader takes an entry's files only through
`Sealed`, which opens each as a user file is opened (a regular file, no link, the size sealed)
and checks the digest of the bytes it hands back: anything else is a DamagedEntry, which costs
a rebuild from the source with a note, never an answer. xxh3 reads a 2.4 GB table from the OS's
file cache in about 0.15 s (docs/benchmarks.md)."""

from __future__ import annotations

import io
import json
import mmap
import os
import zipfile
from pathlib import Path
from typing import Any, TYPE_CHECKING, BinaryIO

import xxhash

from embviz.core.errors import EmbvizError
from embviz.core.readers.regular_file import file_size, open_regular, parse_json, read_exact

if TYPE_CHECKING:
    import numpy as np

SEAL = "seal.json"
SEAL_FORMAT = "embviz-seal-1"
MAX_SEAL_BYTES = 1 << 20  # a few hundred bytes a file: more is not a seal
MAX_STAMPS = 16  # copies of one source file at other paths, each confirmed once by a full hash


class DamagedEntry(ValueError):
    """A cache entry whose files do not hold what their seal says (truncated, rewritten, foreign)."""


DIGEST_STEP = 64 << 20  # bytes hashed before their pages leave this process (a multiple of any page size)


def _digest_open(f: BinaryIO) -> str:
    """xxh3-128 of an open file's bytes, read through a map (no copy, no buffer of its size).
    Each step's pages are let go once hashed: they stay in the OS's file cache, but a table's
    every page left mapped here would count once more in this process's resident memory, beside
    the table's own map (twice the table at a first open)."""
    size = file_size(f)
    if size == 0:
        return xxhash.xxh3_128_hexdigest(b"")
    digest = xxhash.xxh3_128()
    with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        let_go = hasattr(mapped, "madvise") and hasattr(mmap, "MADV_DONTNEED")
        view = memoryview(mapped)
        try:
            for start in range(0, size, DIGEST_STEP):
                digest.update(view[start:start + DIGEST_STEP])
                if let_go:
                    mapped.madvise(mmap.MADV_DONTNEED, start, min(DIGEST_STEP, size - start))
        finally:
            view.release()
    return digest.hexdigest()


def write_seal(scratch: Path, source_sha256: str | None, stamps: list[str]) -> None:
    """Seal every file under `scratch` (its last write: what is not in it is not the entry's)."""
    files = {}
    for path in sorted(scratch.rglob("*")):
        if path.is_symlink() or (path.exists() and not (path.is_file() or path.is_dir())):
            raise ValueError(f"{path.name} is not a plain file")
        if path.is_file():
            with open_regular(path, follow_links=False) as f:
                files[path.relative_to(scratch).as_posix()] = {"size": file_size(f), "xxh3": _digest_open(f)}
    seal = {"format": SEAL_FORMAT, "source_sha256": source_sha256, "stamps": stamps[-MAX_STAMPS:], "files": files}
    (scratch / SEAL).write_text(json.dumps(seal), encoding="utf-8")


def _stamps(seal: object) -> list[str]:
    stamps = seal.get("stamps") if isinstance(seal, dict) else None
    return [s for s in stamps if isinstance(s, str)] if isinstance(stamps, list) else []


def _read_seal(folder: Path) -> dict[str, Any]:
    try:
        with open_regular(folder / SEAL, follow_links=False) as f:
            size = file_size(f)
            if size > MAX_SEAL_BYTES:
                raise DamagedEntry(f"its seal is {size:,} bytes")
            seal = parse_json(read_exact(f, size, SEAL, "its seal"), SEAL)
    except EmbvizError as exc:
        raise DamagedEntry(str(exc).rstrip(".")) from None
    files = seal.get("files") if isinstance(seal, dict) else None
    if (not isinstance(seal, dict) or seal.get("format") != SEAL_FORMAT or not isinstance(files, dict)
            or not all(isinstance(v, dict) and type(v.get("size")) is int and v["size"] >= 0
                       and isinstance(v.get("xxh3"), str) for v in files.values())):
        raise DamagedEntry("its seal does not list its files")
    return seal


def sealed_stamps(folder: Path) -> list[str]:
    """The stamps under which the entry's source was hashed; [] for no entry or no readable seal."""
    try:
        return _stamps(_read_seal(folder))
    except (DamagedEntry, OSError):
        return []


class Sealed:
    """An entry's files as its seal lists them, each checked as it is taken."""

    def __init__(self, folder: Path, source_sha256: str | None) -> None:
        """DamagedEntry unless the entry's seal is whole and names `source_sha256` (None: any)."""
        self.folder = folder
        self.seal = _read_seal(folder)
        if source_sha256 is not None and self.seal.get("source_sha256") != source_sha256:
            raise DamagedEntry("it was made from another file")
        self.files: dict[str, dict[str, Any]] = self.seal["files"]

    @property
    def stamps(self) -> list[str]:
        return _stamps(self.seal)

    def __contains__(self, name: str) -> bool:
        return name in self.files

    def _open(self, name: str) -> BinaryIO:
        if name not in self.files:
            raise DamagedEntry(f"its seal does not list {name}")
        try:
            f = open_regular(self.folder / name, follow_links=False)
        except EmbvizError as exc:
            raise DamagedEntry(str(exc).rstrip(".")) from None
        size = file_size(f)
        if size != self.files[name]["size"]:
            f.close()
            raise DamagedEntry(f"{name} is {size:,} bytes, not the {self.files[name]['size']:,} sealed")
        return f

    def _check(self, name: str, digest: str) -> None:
        if digest != self.files[name]["xxh3"]:
            raise DamagedEntry(f"{name} does not hold the bytes it was written with")

    def read(self, name: str) -> bytes:
        """The file's bytes, exactly the sealed ones."""
        with self._open(name) as f:
            try:
                data = read_exact(f, self.files[name]["size"], name, "its data")
            except EmbvizError as exc:
                raise DamagedEntry(str(exc).rstrip(".")) from None
        self._check(name, xxhash.xxh3_128_hexdigest(data))
        return data

    def arrays(self, name: str, limit: int) -> dict[str, np.ndarray]:
        """The arrays of a .npz file the entry wrote, exactly the sealed bytes, refused unread
        when the seal gives it more than `limit` bytes (the arrays it should hold, and their headers)."""
        import numpy as np

        if name in self.files and self.files[name]["size"] > limit:
            raise DamagedEntry(f"{name} is {self.files[name]['size']:,} bytes, more than its arrays take")
        try:
            with np.load(io.BytesIO(self.read(name)), allow_pickle=False) as kept:
                return {key: kept[key] for key in kept.files}
        except (OSError, ValueError, zipfile.BadZipFile) as exc:
            raise DamagedEntry(f"{name} is not a .npz archive") from exc

    def json(self, name: str) -> object:
        try:
            return parse_json(self.read(name), name)
        except EmbvizError as exc:
            raise DamagedEntry(str(exc).rstrip(".")) from None

    def check(self, name: str) -> Path:
        """The file's path once its bytes are checked in place (for a file a library maps itself)."""
        with self._open(name) as f:
            self._check(name, _digest_open(f))
        return self.folder / name

    def check_all(self) -> Path:
        """The entry's folder once every file the seal lists is checked (for a library that reads
        the folder itself)."""
        for name in self.files:
            self.check(name)
        return self.folder

    def add_stamp(self, stamp: str) -> None:
        """Remember that the source under `stamp` was hashed in full and matched (best effort)."""
        stamps = self.stamps
        if stamp in stamps:
            return
        self.seal["stamps"] = [*stamps, stamp][-MAX_STAMPS:]
        tmp = self.folder / f".{SEAL}.{os.getpid()}"
        try:
            tmp.write_text(json.dumps(self.seal), encoding="utf-8")
            os.replace(tmp, self.folder / SEAL)
        except OSError:
            tmp.unlink(missing_ok=True)
