"""Whole-file reads with a bound on what a compressed file may expand to.

A few kilobytes of gzip or deflate can claim (or expand to) gigabytes, so a compressed
stream is read in `CHUNK_BYTES` pieces and refused as soon as it passes its bound: a fixed
ceiling, or `MAX_EXPANSION` times the compressed size, whichever is smaller. Tables of
floats compress about 1.1:1 and their text about 3:1, so a file that expands a hundredfold
is not a table of word vectors.
"""

from __future__ import annotations

import gzip
import io
from typing import IO
import math
import zipfile
import zlib
from pathlib import Path

import numpy as np

from embviz.core.device import ensure_fits_in_ram
from embviz.core.errors import EmbvizError, first_line
from embviz.core.readers.regular_file import CHUNK_BYTES, MAX_DECOMPRESSED_BYTES, file_size, open_regular, read_exact, shown

MAX_EXPANSION = 100
# Below this, any expansion is allowed: small files compress unevenly and cost nothing.
MIN_EXPANSION_BOUND = 64 * 2**20


def expansion_bound(compressed: int) -> int:
    """The most bytes a compressed file of `compressed` bytes may expand to."""
    return min(MAX_DECOMPRESSED_BYTES, max(MIN_EXPANSION_BOUND, MAX_EXPANSION * compressed))


def _too_big(name: str, bound: int, compressed: int) -> EmbvizError:
    return EmbvizError(f"{shown(name)} expands past {bound:,} bytes when decompressed (from {compressed:,}); "
                       f"embviz stops there, as word vectors never compress more than {MAX_EXPANSION} to 1.")


def read_whole(path: Path) -> bytes:
    """Every byte of a regular file, decompressed when its name ends in .gz, within the bound."""
    with open_regular(path) as f:
        size = file_size(f)
        if not path.name.lower().endswith(".gz"):
            ensure_fits_in_ram(size, f"{shown(path.name)}")
            return read_exact(f, size, path.name, "its data")
        bound = expansion_bound(size)
        out = io.BytesIO()
        try:
            with gzip.GzipFile(fileobj=f, mode="rb") as stream:
                while chunk := stream.read(CHUNK_BYTES):
                    if out.tell() + len(chunk) > bound:
                        raise _too_big(path.name, bound, size)
                    out.write(chunk)
        except (OSError, EOFError, zlib.error) as exc:
            raise EmbvizError(f"{shown(path.name)} is not a readable gzip file: {first_line(exc)}.") from exc
        return out.getvalue()


def read_npz_array(path: Path, member: str) -> np.ndarray:
    """One array of a .npz archive, its declared sizes (zip entry and .npy header) checked
    against each other, the archive's size and memory before anything is read."""
    with open_regular(path) as f:
        size = file_size(f)
        try:
            archive = zipfile.ZipFile(f)
        except (zipfile.BadZipFile, OSError) as exc:
            raise EmbvizError(f"{shown(path.name)} is not a .npz archive (not a zip file).") from exc
        with archive:
            try:
                info = archive.getinfo(member)
            except KeyError:
                raise EmbvizError(f"{shown(path.name)} has no array '{member.removesuffix('.npy')}' in it.") from None
            bound = expansion_bound(size)
            if info.file_size > bound:
                raise _too_big(path.name, bound, size)
            try:
                with archive.open(info) as stream:
                    return _read_npy_stream(stream, info.file_size, path.name)
            # RuntimeError: an encrypted member; NotImplementedError: a compression zipfile lacks.
            except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError, RuntimeError) as exc:
                raise EmbvizError(f"{shown(path.name)} is a damaged .npz archive: {first_line(exc)}.") from exc


_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def _read_npy_stream(stream: IO[bytes], declared: int, name: str) -> np.ndarray:
    try:
        version = np.lib.format.read_magic(stream)
        if version not in _HEADER_READERS:
            raise ValueError(f".npy format version {version}")
        shape, fortran, dtype = _HEADER_READERS[version](stream)
    except ValueError as exc:
        raise EmbvizError(f"{shown(name)} holds an array that is not a .npy table: {first_line(exc)}.") from exc
    header = stream.tell()
    if dtype.hasobject:
        raise EmbvizError(f"{shown(name)} holds Python objects, not numbers; embviz never unpickles them.")
    nbytes = math.prod(shape) * dtype.itemsize  # Python's integers: a crafted shape cannot wrap around
    if header + nbytes != declared:
        raise EmbvizError(f"{shown(name)}: its array header says {list(shape)} × {dtype.itemsize} bytes, "
                          f"but the archive holds {declared - header:,} bytes for it.")
    ensure_fits_in_ram(nbytes, f"The table in {shown(name)}")
    data = read_exact(stream, nbytes, name, "its array")
    array = np.frombuffer(data, dtype=dtype)
    return array.reshape(shape, order="F" if fortran else "C")
