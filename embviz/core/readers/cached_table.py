"""Where the cache keeps the tables read from GGUF and word-vector files (gguf.py and
word_vectors.py write them), and what a look into an entry can tell without torch and without
reading the file itself: the table's shape and its tokens' labels, for the map drawn while the
model opens (maps.first_map). An entry is found only while the cache remembers the file's hash
under its present stamp: a changed file finds nothing here."""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from embviz.core.cache import DamagedEntry, cache_root, remembered_key
from embviz.core.readers.regular_file import npy_header

GGUF_FOLDER = "gguf"
# Bump when what is cached, or how it is made, changes: old entries are then never read.
GGUF_FORMAT = "gguf-table-2"  # 2: headers with duplicate names or mistyped tokenizer fields are refused
WORDS_FOLDER = "word-vectors"
# 2: ragged lines, BOMs and tabs are no longer read into the table; 3: the table is mapped, its size
# checked, its row norms kept beside it and its words one a line
WORDS_FORMAT = "word-vectors-3"
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


def read_words(folder: Path) -> list[str]:
    """A word-vector entry's words: words.txt (one a line: what every reader but gensim's
    gives) or words.json."""
    if (folder / "words.txt").exists():
        return (folder / "words.txt").read_bytes().decode("utf-8").split("\n")
    words = json.loads((folder / "words.json").read_text(encoding="utf-8"))
    if not isinstance(words, list) or not set(map(type, words)) <= {str}:
        raise DamagedEntry("its word list is not a list of words")
    return words


def cached_table(path: Path) -> CachedTable | None:
    """The shape and labels of this file's table as its cache entry holds them; None when
    there is no entry for the file as it is now, or the entry does not hold what it should
    (the reader then reads the file again, with a note)."""
    path = Path(path)
    try:
        for folder, format_, look in ((GGUF_FOLDER, GGUF_FORMAT, _gguf_entry), (WORDS_FOLDER, WORDS_FORMAT, _words_entry)):
            key = remembered_key(path, format_)
            if key is not None and (cache_root() / folder / key).is_dir():
                return look(cache_root() / folder / key)
    except (OSError, ValueError, UnicodeDecodeError):  # DamagedEntry is a ValueError
        return None
    return None


def _gguf_entry(folder: Path) -> CachedTable | None:
    from embviz.core.readers.gguf_file import vocabulary_from_gguf

    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    rows, dim = _safetensors_table_shape(folder / "table.safetensors")
    if not isinstance(meta, dict):
        return None
    tokens, types = meta.get("tokens") or [], meta.get("token_types") or []
    if not (isinstance(tokens, list) and isinstance(types, list) and set(map(type, tokens)) <= {str}
            and set(map(type, types)) <= {int}):
        return None
    return CachedTable(rows, dim, lambda: vocabulary_from_gguf(meta, rows).labels)


def _safetensors_table_shape(path: Path) -> tuple[int, int]:
    """(rows, columns) of the float32 tensor "table", as the file's header states it and its size
    allows; ValueError otherwise."""
    with path.open("rb") as f:
        size = f.seek(0, 2)
        f.seek(0)
        raw = f.read(8)
        if len(raw) != 8:
            raise ValueError("no safetensors header")
        (n,) = struct.unpack("<Q", raw)
        if n > min(_MAX_SAFETENSORS_HEADER, size - 8):
            raise ValueError("a safetensors header longer than the file allows")
        header = json.loads(f.read(n))
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


def _words_entry(folder: Path) -> CachedTable | None:
    with (folder / "table.npy").open("rb") as f:
        shape, fortran, dtype = npy_header(f)
    if dtype.str != "<f4" or fortran or len(shape) != 2 or shape[0] < 1 or shape[1] < 1:
        return None
    rows = int(shape[0])

    def labels() -> list[str]:
        """The words' labels ([] when the word list does not match the table: the open finds it damaged)."""
        from embviz.core.table.vocab import vocabulary_from_words

        try:
            words = read_words(folder)
        except (OSError, ValueError, UnicodeDecodeError):
            return []
        return vocabulary_from_words(words).labels if len(words) == rows else []

    return CachedTable(rows, int(shape[1]), labels)
