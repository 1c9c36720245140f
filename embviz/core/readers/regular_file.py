"""Opening a file a reader may trust: a regular file, read exactly, its claims checked first.

Every reader opens through `open_regular`, so a FIFO, a device or a folder is refused in one
sentence before anything blocks or streams forever, and checks a size the file claims with
`check_claim` before it allocates for it.
"""

from __future__ import annotations

import io
import os
import stat
from pathlib import Path
from typing import BinaryIO

from embviz.core.errors import EmbvizError

# What a compressed stream may expand to before a reader refuses it (stated in its message).
MAX_DECOMPRESSED_BYTES = 64 * 2**30
# The most bytes a reader reads in one call, so a lying length never becomes one huge buffer.
CHUNK_BYTES = 16 * 2**20


def shown(path: Path | str) -> str:
    """A path for a one-line message: control characters (a newline in a name) escaped."""
    text = str(path)
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def open_regular(path: Path | str) -> BinaryIO:
    """Open `path` for binary reading if it is a regular, readable file; one-line error otherwise."""
    path = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise EmbvizError(f"No such file or folder: {shown(path)}") from None
    except PermissionError:
        raise EmbvizError(f"{shown(path.name)} cannot be read: permission denied.") from None
    except IsADirectoryError:
        raise EmbvizError(f"{shown(path.name)} is a folder, not a file.") from None
    except OSError as exc:
        raise EmbvizError(f"{shown(path.name)} cannot be opened: {exc.strerror or exc}.") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a folder" if stat.S_ISDIR(mode) else "a pipe" if stat.S_ISFIFO(mode) else "not a regular file"
            raise EmbvizError(f"{shown(path.name)} is {kind}; embviz reads regular files only.")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def require_regular(path: Path | str) -> Path:
    """Refuse `path` unless it is a regular, readable file (for libraries that open it themselves)."""
    with open_regular(path):
        pass
    return Path(path)


def file_size(f: BinaryIO) -> int:
    return os.fstat(f.fileno()).st_size


def check_claim(name: str, what: str, claimed: int, available: int) -> None:
    """Refuse a file whose header claims more bytes than it holds, before anything is allocated."""
    if claimed < 0 or claimed > available:
        raise EmbvizError(
            f"{shown(name)} claims {what} of {claimed:,} bytes but only {max(available, 0):,} bytes remain; "
            "the file is truncated or corrupt."
        )


def read_exact(f: BinaryIO, size: int, name: str, what: str) -> bytes:
    """Exactly `size` bytes, read in bounded chunks; a one-line error if the file ends first."""
    parts = io.BytesIO()
    left = size
    while left > 0:
        chunk = f.read(min(left, CHUNK_BYTES))
        if not chunk:
            raise EmbvizError(f"{shown(name)} ends inside {what}; the file is truncated.")
        parts.write(chunk)
        left -= len(chunk)
    return parts.getvalue()
