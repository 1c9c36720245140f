"""Where the cache keeps the tables read from GGUF and word-vector files (gguf.py and
word_vectors.py write them), and what a look into an entry can tell without torch and without
reading the file itself: the table's shape and its tokens' labels, for the map drawn while the
model opens (maps.first_map). An entry is found only while the cache remembers the file's hash
under its present stamp: a changed file finds nothing here."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from embviz.core.seal import DamagedEntry
from embviz.core.cache import cache_root, key_of, remembered_source
from embviz.core.errors import EmbvizError
from embviz.core.readers.regular_file import file_size, npy_header, open_regular, parse_json
from embviz.core.seal import Sealed, sealed_stamps

GGUF_FOLDER = "gguf"
# Bump when what is cached, or how it is made, changes: old entries are then never read.
GGUF_FORMAT = "gguf-table-3"  # 2: headers with duplicate names or mistyped tokenizer fields are refused; 3: sealed
WORDS_FOLDER = "word-vectors"
# 2: ragged lines, BOMs and tabs are no longer read into the table; 3: the table is mapped, its size
# checked, its row norms kept beside it and its words one a line; 4: sealed
WORDS_FORMAT = "word-vectors-4"
# A safetensors header of a one- or two-tensor entry is a few hundred bytes; more is not ours.
_MAX_SAFETENSORS_HEADER = 1 << 16


@dataclass
class CachedTable:
    rows: int
    dim: int
    _labels: Callable[[], list[str]]  # decoding 49,152 BPE pieces takes ~0.1 s: asked for, not done at once

    def labels(self) -> list[str]:
        """One label per row, as the open model's vocabulary gives them."""
        return self._labels()


def read_words(sealed: Sealed) -> list[str]:
    """A word-vector entry's words: words.txt (one a line: what every reader but gensim's
    gives) or words.json."""
    if "words.txt" in sealed:
        return sealed.read("words.txt").decode("utf-8").split("\n")
    words = sealed.json("words.json")
    if not isinstance(words, list) or not set(map(type, words)) <= {str}:
        raise DamagedEntry("its word list is not a list of words")
    return words


def cached_table(path: Path) -> CachedTable | None:
    """The shape and labels of this file's table as its cache entry holds them; None when
    there is no entry for the file as it is now (the index's hash confirmed by the entry's seal),
    or the entry does not hold what it should (the reader then reads the file again, with a note)."""
    path = Path(path)
    try:
        source = remembered_source(path)
        if source is None:
            return None
        for folder, format_, look in ((GGUF_FOLDER, GGUF_FORMAT, _gguf_entry), (WORDS_FOLDER, WORDS_FORMAT, _words_entry)):
            entry = cache_root() / folder / key_of(source.sha256, format_)
            if entry.is_dir() and source.stamp in sealed_stamps(entry):
                return look(Sealed(entry, source.sha256))
    except (OSError, ValueError, EmbvizError):  # DamagedEntry and UnicodeDecodeError are ValueErrors
        return None
    return None


def _gguf_entry(sealed: Sealed) -> CachedTable | None:
    from embviz.core.readers.gguf_file import vocabulary_from_gguf

    meta = sealed.json("meta.json")
    rows, dim = _safetensors_table_shape(sealed.folder / "table.safetensors", sealed.files.get("table.safetensors"))
    if not isinstance(meta, dict) or check_meta(meta) is not None:
        return None
    return CachedTable(rows, dim, lambda: vocabulary_from_gguf(meta, rows).labels)


# What each field of a GGUF entry's meta.json holds (None allowed for all but the lists).
_META_TYPES = {"name": str, "architecture": str, "context_length": int, "total_params": int, "storage_dtype": str,
               "tokenizer_model": str}


def check_meta(meta: dict[str, Any]) -> str | None:
    """Why a GGUF entry's metadata is not what read_gguf_table writes; None when it is."""
    for key, kind in _META_TYPES.items():
        value = meta.get(key)
        if value is not None and (type(value) is not kind):
            return f"its {key} is not {'a number' if kind is int else 'text'}"
    for key, kind in (("tokens", str), ("token_types", int)):
        items = meta.get(key, [])
        if not isinstance(items, list) or not all(type(v) is kind for v in items):
            return f"its {key} are not a list"
    return None


def _safetensors_table_shape(path: Path, sealed: dict[str, Any] | None) -> tuple[int, int]:
    """(rows, columns) of the float32 tensor "table", as the file's header states it and its
    sealed size allows; ValueError otherwise."""
    if sealed is None:
        raise ValueError("no table")
    with open_regular(path, follow_links=False) as f:
        size = file_size(f)
        if size != sealed["size"]:
            raise ValueError("not the sealed size")
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError("no safetensors header")
        (n,) = struct.unpack("<Q", raw)
        if n > min(_MAX_SAFETENSORS_HEADER, size - 8):
            raise ValueError("a safetensors header longer than the file allows")
        header = parse_json(f.read(n), path.name)
    table = header.get("table") if isinstance(header, dict) else None
    if not isinstance(table, dict):
        raise ValueError("no table")
    shape, offsets = table.get("shape"), table.get("data_offsets")
    if (table.get("dtype") != "F32" or not isinstance(shape, list) or len(shape) != 2
            or not all(isinstance(v, int) and v >= 1 for v in shape)
            or not isinstance(offsets, list) or len(offsets) != 2 or not all(isinstance(v, int) for v in offsets)
            or offsets[1] - offsets[0] != shape[0] * shape[1] * 4 or 8 + n + offsets[1] > size or offsets[0] < 0):
        raise ValueError("not a float32 table")
    return shape[0], shape[1]


def _words_entry(sealed: Sealed) -> CachedTable | None:
    with open_regular(sealed.folder / "table.npy", follow_links=False) as f:
        shape, fortran, dtype = npy_header(f)
    if dtype.str != "<f4" or fortran or len(shape) != 2 or shape[0] < 1 or shape[1] < 1:
        return None
    rows = int(shape[0])

    def labels() -> list[str]:
        """The words' labels, checked against the seal ([] when they are not the sealed ones:
        the open finds the entry damaged)."""
        from embviz.core.table.vocab import vocabulary_from_words

        try:
            words = read_words(sealed)
        except (OSError, ValueError):  # DamagedEntry and UnicodeDecodeError are ValueErrors
            return []
        return vocabulary_from_words(words).labels if len(words) == rows else []

    return CachedTable(rows, int(shape[1]), labels)
