"""The GGUF container: metadata and tensor directory, every count, offset and type
checked against the file before it is trusted; the vocabulary its tokenizer metadata gives.

A parser of our own for the header only: `gguf.GGUFReader` builds an object per array
element, which took 5.7 s for SmolLM2's 49,152 tokens and 48,900 merges here (this
takes ~0.2 s). The constants, block sizes and the de-quantisers are the gguf package's.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from embviz.core.errors import EmbvizError
from embviz.core.readers.regular_file import file_size, open_regular, read_exact, shown
from embviz.core.table.vocab import Vocabulary, decode_pieces

MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
_SCALARS = {  # GGUFValueType → struct format
    0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d",
}
_NUMPY = {0: "<u1", 1: "<i1", 2: "<u2", 3: "<i2", 4: "<u4", 5: "<i4", 6: "<f4", 7: "?", 10: "<u8", 11: "<i8", 12: "<f8"}
_STRING, _ARRAY = 8, 9
_LENGTH = struct.Struct("<Q")
# GGUF writers nest arrays at most once (merges as pairs); deeper is a hostile file, refused
# before the parser recurses into it.
MAX_NESTING = 8
# llama.cpp's token types: 1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte.
_SPECIAL_TYPES = (2, 3)
_VERBATIM_TYPES = (2, 3, 4)
_PIECE_STYLES = {"gpt2": "byte-level", "llama": "metaspace"}


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]  # as GGUF lists it: the fastest-moving axis first
    type_id: int
    offset: int  # absolute, in the file
    nbytes: int

    @property
    def n_elements(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass
class GGUFHeader:
    fields: dict[str, Any]
    tensors: dict[str, TensorInfo]
    file_size: int


_FIRST_READ = 16 << 20  # the header of a 256k-token vocabulary is ~10 MB


class _NeedMore(Exception):
    """The header goes on past the bytes read so far."""


class _Cursor:
    def __init__(self, buf: bytes, name: str, file_size: int) -> None:
        self.buf = buf
        self.pos = 0
        self.name = name
        self.file_size = file_size

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.file_size:
            raise EmbvizError(f"{self.name} is truncated or corrupt: {what} runs past the end of the file.")
        if self.pos + n > len(self.buf):
            raise _NeedMore

    def scalar(self, type_id: int, what: str) -> Any:
        fmt = _SCALARS[type_id]
        size = struct.calcsize(fmt)
        self.need(size, what)
        (value,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return value

    def string(self, what: str) -> str:
        n = self.scalar(10, what)
        self.need(n, what)
        raw = self.buf[self.pos : self.pos + n]
        self.pos += n
        return raw.decode("utf-8", errors="replace")

    def strings(self, count: int, what: str) -> list[str]:
        """An array of strings (a vocabulary: up to millions), in one loop of no calls but the
        slicing: `string` per item took 5 s for 1.5M tokens."""
        # Each string takes at least its 8-byte length: a count the file cannot hold is a lie.
        self.need(count * 8, what)
        buf, pos, end = self.buf, self.pos, min(len(self.buf), self.file_size)
        unpack = _LENGTH.unpack_from
        out: list[str] = []
        append = out.append
        for _ in range(count):
            if pos + 8 > end:
                break
            (n,) = unpack(buf, pos)
            if pos + 8 + n > end:
                break
            append(buf[pos + 8 : pos + 8 + n].decode("utf-8", errors="replace") if n else "")
            pos += 8 + n
        self.pos = pos
        while len(out) < count:  # past the bytes read so far, or the file's end: the checks of `string`
            append(self.string(what))
        return out

    def value(self, type_id: int, what: str, depth: int = 0) -> Any:
        if type_id in _SCALARS:
            return self.scalar(type_id, what)
        if type_id == _STRING:
            return self.string(what)
        if type_id == _ARRAY:
            if depth >= MAX_NESTING:
                raise EmbvizError(f"{self.name} is corrupt: {what} has nested arrays deeper than {MAX_NESTING}.")
            item_type = self.scalar(4, what)
            count = self.scalar(10, what)
            if item_type in _NUMPY:
                dtype = np.dtype(_NUMPY[item_type])
                self.need(count * dtype.itemsize, what)
                items = np.frombuffer(self.buf, dtype=dtype, count=count, offset=self.pos).tolist()
                self.pos += count * dtype.itemsize
                return items
            if item_type == _STRING:
                return self.strings(count, what)
            if item_type == _ARRAY:
                self.need(count * 12, what)
                return [self.value(_ARRAY, what, depth + 1) for _ in range(count)]
        raise EmbvizError(f"{self.name} is corrupt: {what} has an unknown value type {type_id}.")


def read_header(path: Path) -> GGUFHeader:
    """Metadata and tensor directory of a GGUF file (versions 2 and 3)."""
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    name = shown(Path(path).name)
    want = _FIRST_READ
    try:
        with open_regular(path) as f:
            size = file_size(f)
            while True:
                f.seek(0)
                buf = read_exact(f, min(want, size), name, "its header")
                try:
                    return _parse(buf, name, size, GGML_QUANT_SIZES, GGMLQuantizationType)
                except _NeedMore:
                    want *= 4  # a long header: read more of the file, never more than it holds
    except OSError as exc:
        raise EmbvizError(f"{name} could not be read as a GGUF file: {exc.strerror or exc}.") from exc


def _parse(buf: bytes, name: str, size: int, quant_sizes: dict[Any, tuple[int, int]],
           quant_types: Callable[[int], Any]) -> GGUFHeader:
    cur = _Cursor(buf, name, size)
    cur.need(4, "the magic number")
    if bytes(buf[:4]) != MAGIC:
        raise EmbvizError(f"{name} is not a GGUF file (it does not start with 'GGUF').")
    cur.pos = 4
    version = cur.scalar(4, "the version")
    if version not in (2, 3):
        raise EmbvizError(f"{name} is GGUF version {version}; embviz reads versions 2 and 3.")
    n_tensors = cur.scalar(10, "the tensor count")
    n_fields = cur.scalar(10, "the metadata count")
    # Every entry takes at least 12 bytes: counts the file cannot hold are lies, refused
    # before anything is allocated for them.
    cur.need((n_tensors + n_fields) * 12, "the tensor and metadata counts")
    fields: dict[str, Any] = {}
    for _ in range(n_fields):
        key = cur.string("a metadata key")
        shown_key = shown(key)[:80]
        if key in fields:
            raise EmbvizError(f"{name} is corrupt: it lists the metadata key {shown_key} twice.")
        type_id = cur.scalar(4, f"the type of {shown_key}")
        fields[key] = cur.value(type_id, f"the metadata value {shown_key}")
    infos = []
    for _ in range(n_tensors):
        tname = cur.string("a tensor name")
        shown_name = shown(tname)[:80]
        n_dims = cur.scalar(4, f"the rank of {shown_name}")
        if not 1 <= n_dims <= 8:
            raise EmbvizError(f"{name} is corrupt: the tensor {shown_name} claims {n_dims} dimensions.")
        shape = tuple(cur.scalar(10, f"the shape of {shown_name}") for _ in range(n_dims))
        type_id = cur.scalar(4, f"the type of {shown_name}")
        offset = cur.scalar(10, f"the offset of {shown_name}")
        infos.append((tname, shape, type_id, offset))
    alignment = fields.get("general.alignment", DEFAULT_ALIGNMENT)
    if not isinstance(alignment, int) or alignment < 1 or alignment & (alignment - 1):
        raise EmbvizError(f"{name} is corrupt: its alignment {alignment!r} is not a power of two.")
    data_start = -(-cur.pos // alignment) * alignment
    tensors: dict[str, TensorInfo] = {}
    for tname, shape, type_id, offset in infos:
        shown_name = shown(tname)[:80]
        if tname in tensors:
            raise EmbvizError(f"{name} is corrupt: it lists the tensor {shown_name} twice.")
        try:
            qtype = quant_types(type_id)
        except ValueError:
            raise EmbvizError(f"{name} is corrupt: the tensor {shown_name} has an unknown type {type_id}.") from None
        block, type_size = quant_sizes[qtype]
        n = int(np.prod(shape, dtype=np.float64))
        if shape[0] % block:
            raise EmbvizError(f"{name} is corrupt: the tensor {shown_name} ({qtype.name}) has rows of {shape[0]} values, "
                              f"not a multiple of its block of {block}.")
        nbytes = n // block * type_size
        start = data_start + offset
        if start + nbytes > size:
            raise EmbvizError(f"{name} is truncated or corrupt: the tensor {shown_name} ({nbytes:,} bytes at "
                              f"{start:,}) runs past the end of the {size:,}-byte file.")
        tensors[tname] = TensorInfo(tname, shape, type_id, start, nbytes)
    return GGUFHeader(fields, tensors, size)


def tensor_bytes(path: Path, info: TensorInfo) -> np.ndarray:
    """The tensor's raw bytes as a (rows, bytes per row) uint8 array, mapped, not read."""
    rows = info.n_elements // info.shape[0]
    return np.memmap(path, dtype=np.uint8, mode="r", offset=info.offset, shape=(rows, info.nbytes // rows))


def vocabulary_from_gguf(meta: dict[str, Any], size: int,
                         tokenizer_loader: Callable[[], Any] | None = None) -> Vocabulary:
    """Texts and labels from the file's own token list (no transformers needed)."""
    tokens: list[str] = meta.get("tokens") or []
    types: list[int] = meta.get("token_types") or [1] * len(tokens)
    special = frozenset(i for i, t in enumerate(types) if t in _SPECIAL_TYPES and i < size)
    verbatim = {i: tokens[i] for i, t in enumerate(types) if t in _VERBATIM_TYPES and i < len(tokens)}
    style = _PIECE_STYLES.get(str(meta.get("tokenizer_model")), "auto")
    texts, labels, partial = decode_pieces(tokens[:size], size, style, special, verbatim)
    return Vocabulary(texts=texts, labels=labels, special_ids=special, partial_ids=partial,
                      tokenizer_loader=tokenizer_loader if tokens else None)
