"""Opening a file a reader may trust: a regular file, read exactly, its claims checked first.

Every reader opens through `open_regular`, so a FIFO, a device or a folder is refused in one
sentence before anything blocks or streams forever, and checks a size the file claims with
`check_claim` before it allocates for it.
"""

from __future__ import annotations

import errno
import io
import json
import os
import stat
from pathlib import Path
from typing import IO, TYPE_CHECKING, BinaryIO, Callable

from embviz.core.errors import EmbvizError

if TYPE_CHECKING:
    import numpy as np

# What a compressed stream may expand to before a reader refuses it (stated in its message).
MAX_DECOMPRESSED_BYTES = 64 * 2**30
# The most bytes a reader reads in one call, so a lying length never becomes one huge buffer.
CHUNK_BYTES = 16 * 2**20


def shown(path: Path | str) -> str:
    """A path for a one-line message: control characters (a newline in a name) escaped."""
    text = str(path)
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def open_regular(path: Path | str, follow_links: bool = True) -> BinaryIO:
    """Open `path` for binary reading if it is a regular, readable file; one-line error otherwise.
    Without `follow_links`, a symbolic link is refused too (the cache writes none: one there is foreign)."""
    path = Path(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        # O_NONBLOCK: opening a FIFO for reading must not wait for a writer.
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise EmbvizError(f"No such file or folder: {shown(path)}") from None
    except PermissionError:
        raise EmbvizError(f"{shown(path.name)} cannot be read: permission denied.") from None
    except IsADirectoryError:
        raise EmbvizError(f"{shown(path.name)} is a folder, not a file.") from None
    except OSError as exc:
        if not follow_links and exc.errno == errno.ELOOP:
            raise EmbvizError(f"{shown(path.name)} is a symbolic link; embviz reads none here.") from None
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


def read_exact(f: IO[bytes], size: int, name: str, what: str) -> bytes:
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


# The numpy dtypes a reader accepts from a file: numbers and booleans, never objects.
PLAIN_KINDS = "fiub"


def plain_dtype(dtype: object, name: str) -> np.dtype:
    """`dtype` if it is a plain number or boolean type (no objects, fields or sub-arrays)."""
    import numpy as np

    if (not isinstance(dtype, np.dtype) or dtype.hasobject or dtype.fields is not None
            or dtype.subdtype is not None or dtype.kind not in PLAIN_KINDS):
        raise EmbvizError(f"{shown(name)} holds an array of {dtype}, not plain numbers; embviz refuses it.")
    return dtype


def npy_header(stream: BinaryIO) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, Fortran order, dtype) as the .npy header at the stream's position states them,
    leaving the stream at the data; ValueError for a header numpy cannot read."""
    from numpy.lib import format as npy

    try:
        version = npy.read_magic(stream)
        read_header = npy.read_array_header_1_0 if version == (1, 0) else npy.read_array_header_2_0
        return read_header(stream)
    except (ValueError, SyntaxError, TypeError, OverflowError) as exc:
        raise ValueError(type(exc).__name__) from None


def npy_from_bytes(data: bytes, name: str) -> np.ndarray:
    """A .npy file held in `data`, read exactly: its header's shape and type must account for
    every byte, checked before anything is allocated (numpy's own reader allocates first)."""
    import numpy as np

    stream = io.BytesIO(data)
    try:
        shape, fortran, dtype = npy_header(stream)
    except ValueError as exc:
        raise EmbvizError(f"{shown(name)} is not a readable .npy array ({exc}).") from None
    plain_dtype(dtype, name)
    count = 1
    for n in shape:
        count *= n
    check_claim(name, f"an array of shape {list(shape)}", count * dtype.itemsize, len(data) - stream.tell())
    if count * dtype.itemsize != len(data) - stream.tell():
        raise EmbvizError(f"{shown(name)} holds more bytes than its array of shape {list(shape)}; it is corrupt.")
    flat = np.frombuffer(data, dtype=dtype, count=count, offset=stream.tell())
    return flat.reshape(shape, order="F" if fortran else "C")


# Configs, vocabularies and shard indexes are text a person could read; more is not one of them.
MAX_JSON_BYTES = 256 * 2**20


def read_bounded(path: Path | str, limit: int, what: str, too_big: Callable[[int], str],
                 follow_links: bool = True) -> bytes:
    """Every byte of a regular file of at most `limit` bytes, read exactly; a larger one is
    refused before anything is read, with the sentence `too_big(size)`."""
    name = Path(path).name
    with open_regular(path, follow_links) as f:
        size = file_size(f)
        if size > limit:
            raise EmbvizError(too_big(size))
        return read_exact(f, size, name, what)


def read_text(path: Path | str, limit: int = MAX_JSON_BYTES) -> str:
    """A regular UTF-8 text file of at most `limit` bytes, read exactly; one-line error otherwise."""
    name = Path(path).name
    data = read_bounded(path, limit, "its text", lambda size: f"{shown(name)} is {size:,} bytes, more than the "
                                                               f"{limit:,} embviz reads from such a file.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EmbvizError(f"{shown(name)} is not UTF-8 text (byte {exc.start}).") from None


def read_json(path: Path | str, limit: int = MAX_JSON_BYTES) -> object:
    """The JSON value of a regular file; one line when it is not JSON or nests past Python's stack."""
    return parse_json(read_text(path, limit), Path(path).name)


def parse_json(text: str | bytes, name: str) -> object:
    """The JSON value of `text`; one line when it is not JSON or nests past Python's stack."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise EmbvizError(f"{shown(name)} is not valid JSON.") from None
