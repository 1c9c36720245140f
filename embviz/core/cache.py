"""embviz's cache folder: tables read from GGUF and word-vector files, the language models and
tokenizers built from GGUF files, and big maps' neighbour graphs, each keyed on its source's content.

A file is hashed once; its size, modification time and inode are remembered beside
the hash, so an unchanged file is not read again to find its entry, and a touched or
replaced one is hashed anew (and finds its old entry if its bytes did not change)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from embviz.core.errors import first_line

_INDEX = "hashes.json"
_CHUNK = 1 << 22


def cache_root() -> Path:
    override = os.environ.get("EMBVIZ_CACHE_DIR")
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("embviz"))


def _stamp(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def file_hash(path: Path) -> str:
    """sha256 of the file's bytes, remembered by size, mtime and inode."""
    path = Path(path).resolve()
    index_path = cache_root() / _INDEX
    try:
        index = json.loads(index_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        index = {}
    stamp = _stamp(path)
    known = index.get(str(path))
    if isinstance(known, dict) and known.get("stamp") == stamp and isinstance(known.get("sha256"), str):
        return known["sha256"]
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    index[str(path)] = {"stamp": stamp, "sha256": digest.hexdigest()}
    try:
        index_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = index_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(index), encoding="utf-8")
        os.replace(tmp, index_path)
    except OSError:
        pass  # without a writable cache the file is simply hashed again next time
    return index[str(path)]["sha256"]


def content_key(path: Path, producer: str) -> str:
    """The cache key of what `producer` makes of this file: its content, the producer's
    format, and the versions of the libraries that read it."""
    from importlib.metadata import PackageNotFoundError, version

    versions = []
    for package in ("embviz", "gguf"):
        try:
            versions.append(f"{package}={version(package)}")
        except PackageNotFoundError:
            versions.append(f"{package}=?")
    return hashlib.sha256(f"{file_hash(path)}|{producer}|{'|'.join(versions)}".encode()).hexdigest()[:32]


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


def keep_in_cache(parent: Path, name: str, write: Callable[[Path], None]) -> str | None:
    """Write parent/name through a scratch folder and a rename, so a crash mid-write never
    leaves a half entry. A cache that cannot be written only makes the next open slower:
    the first failure returns a one-line note saying so, later ones nothing."""
    global _write_failed
    scratch = None
    try:
        parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=parent))
        write(scratch)
        scratch.rename(parent / name)
    except (OSError, ValueError, RuntimeError) as exc:
        if _write_failed or (parent / name).exists():  # said already, or another process wrote it first
            return None
        _write_failed = True
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else first_line(exc)
        return f"The cache folder {parent} cannot be written ({reason}): the next open reads the file again."
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    return None
