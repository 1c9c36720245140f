"""Word vectors: GloVe text (no header), word2vec / fastText text (a `V D` header),
word2vec binary (.bin, .bin.gz: recognised by content, since .bin is PyTorch's too), fastText's
native .bin (fasttext_bin), a .npy table (C or Fortran order) with its vocabulary beside it, and
gensim's saved KeyedVectors / Word2Vec files (read without running their pickle). Every format
but .npy is told by its content (sniff), so a name without a suffix, or with the wrong one, opens
too. They have no output layer, so no logits; every other panel works. A fastText model also
gives a vector for a word outside its vocabulary (the model's `subwords`).

Each format has its own module; this one picks it and caches the parsed table (keyed on the
file's content) as a .npy file that a later open maps instead of parsing or reading. An entry
whose files disagree (truncated, rewritten, another layout) is read again from the source,
with a note that says so.
"""

from __future__ import annotations

import gzip
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from embviz.core.seal import DamagedEntry
from embviz.core.cache import (MAPPED_TABLE, Entry, MappedFile, Source, cache_root, discard_damaged, entry_folder,
                               map_table)
from embviz.core.errors import EmbvizError, ProgressFn, first_line, no_progress
from embviz.core.model import EmbeddingModel
from embviz.core.readers.assemble import assemble
from embviz.core.readers.bounded import read_whole
from embviz.core.readers.cached_table import WORDS_FOLDER, WORDS_FORMAT as CACHE_FORMAT, read_words
from embviz.core.readers.fasttext_bin import Subwords, read_fasttext_bin
from embviz.core.readers.gensim_file import read_keyed_vectors
from embviz.core.readers.npy_table import read_npy_table
from embviz.core.readers.regular_file import file_size, npy_from_bytes, open_regular, shown
from embviz.core.readers.sniff import sniff
from embviz.core.seal import Sealed
from embviz.core.readers.word2vec_binary import Allocate, new_table, read_word2vec_binary
from embviz.core.readers.word_text import HEADER, read_text_vectors
from embviz.core.table.vocab import vocabulary_from_words

TEXT_SUFFIXES = (".txt", ".vec", ".txt.gz", ".vec.gz")
BINARY_SUFFIXES = (".bin", ".bin.gz")
NO_LOGITS = ("Next-token logits are off: word vectors have no output layer to score a next word. "
             "The map, neighbours and analogies work.")


def _suffix(path: Path) -> str:
    name = path.name.lower()
    return ".".join([""] + name.split(".")[-2:]) if name.endswith(".gz") else path.suffix.lower()


def is_word2vec_binary(path: Path) -> bool:
    """A `V D` text header followed by binary floats (PyTorch's .bin is a zip or a pickle)."""
    try:
        opener = gzip.open if path.name.lower().endswith(".gz") else open
        with opener(path, "rb") as f:
            head = f.read(64)
    except (OSError, EOFError):
        return False
    line = head.split(b"\n", 1)[0]
    return b"\n" in head and HEADER.match(line) is not None


def _read(path: Path, allocate: Allocate = new_table) -> tuple[list[str], np.ndarray, list[str]]:
    kind = sniff(path)
    suffix = _suffix(path)
    if kind == "gensim":
        return read_keyed_vectors(path)
    if kind == "fasttext" and suffix.endswith(".gz"):
        raise EmbvizError(f"{shown(path.name)} is a compressed fastText .bin: decompress it first "
                          "(embviz maps its matrix from the file rather than reading it all).")
    if kind == "fasttext":
        return read_fasttext_bin(path, allocate)
    if suffix == ".npy":
        return read_npy_table(path)
    binary = kind == "word2vec-binary" or (kind is None and suffix in BINARY_SUFFIXES)
    read = read_word2vec_binary if binary else read_text_vectors
    if not suffix.endswith(".gz"):  # read a piece at a time, straight into the table
        with open_regular(path) as f:
            return read(f, file_size(f), path.name, allocate)
    data = read_whole(path)
    return read(io.BytesIO(data), len(data), path.name, allocate)


@dataclass
class _Entry:
    words: list[str]
    table: np.ndarray
    notes: list[str]
    norms: np.ndarray | None = None  # each row's length, so that opening need not touch the table
    mapped: Path | None = None  # the cache file `table` maps


def _cached(folder: Path, source: Source) -> _Entry | None:
    """The entry's words, mapped table, notes and row norms, each checked against the entry's
    seal; None when there is none, DamagedEntry when anything in it is not as sealed."""
    if not folder.is_dir() and not folder.is_symlink():
        return None
    try:
        sealed = Sealed(folder, source.sha256)
        words = read_words(sealed)
        notes = sealed.json("notes.json")
        if not isinstance(notes, list) or not set(map(type, notes)) <= {str}:
            raise DamagedEntry("its notes are not a list of lines")
        norms = npy_from_bytes(sealed.read("norms.npy"), "norms.npy")
        if norms.dtype != np.float32 or norms.shape != (len(words),):
            raise DamagedEntry(f"its row norms are {norms.dtype} {list(norms.shape)}, not {len(words):,} float32")
        table = map_table(sealed.check("table.npy"), len(words))
    except DamagedEntry:
        raise
    except (OSError, ValueError, EmbvizError) as exc:
        raise DamagedEntry(first_line(exc).rstrip(".")) from exc
    if source.hashed_now:
        sealed.add_stamp(source.stamp)
    return _Entry(words, table, notes, norms.copy(), folder / "table.npy")


def _write_rest(entry: _Entry) -> Callable[[Path], None]:
    """The entry's files beside its table (written here unless the reader filled the entry's own)."""

    def write(scratch: Path) -> None:
        assert entry.table is not None and entry.norms is not None  # read whole by now
        # A table read into the entry's own map is in the file already (no msync: the OS writes it out).
        mapped = getattr(entry.table, "filename", None)
        if mapped is None or Path(mapped).resolve() != (scratch / "table.npy").resolve():
            np.save(scratch / "table.npy", entry.table)
        np.save(scratch / "norms.npy", entry.norms)
        try:  # one a line reads back in a tenth of JSON's time, for millions of words
            lines = None if any("\n" in w for w in entry.words) else "\n".join(entry.words).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate
            lines = None
        if lines is not None:
            (scratch / "words.txt").write_bytes(lines)
        else:  # a word with a newline or a lone surrogate in it
            (scratch / "words.json").write_text(json.dumps(entry.words), encoding="utf-8")
        (scratch / "notes.json").write_text(json.dumps(entry.notes), encoding="utf-8")

    return write


def _row_norms(table: np.ndarray) -> np.ndarray:
    # torch's, as assemble computes them for a table that has none
    norms: np.ndarray = torch.linalg.vector_norm(torch.from_numpy(np.asarray(table)), dim=1).numpy()
    return norms


def open_word_vectors(path: Path, device: torch.device, progress: ProgressFn = no_progress) -> EmbeddingModel:
    path = Path(path)
    folder, source = entry_folder(path, cache_root() / WORDS_FOLDER, CACHE_FORMAT)
    damage = None
    try:
        entry = _cached(folder, source)
    except DamagedEntry as exc:
        entry, damage = None, discard_damaged(folder, shown(path.name), exc)
    if entry is None and _suffix(path) == ".npy":  # a .npy is already as fast to open as the cache
        progress(0.1, "Reading the word vectors", None)
        entry = _Entry(*_read(path))
    elif entry is None:
        progress(0.1, "Reading the word vectors", None)
        with Entry(folder.parent, folder.name, source) as new:
            entry = _Entry(*_read(path, new.table))
            entry.norms = _row_norms(entry.table)
            progress(0.8, "Caching the table for the next open", None)
            if new.keep(_write_rest(entry)):
                try:
                    # The entry's map (copy-on-write) replaces the table read: the same numbers, in
                    # pages the OS shares with child processes rather than memory of this process's own.
                    entry.table = map_table(folder / "table.npy", len(entry.words))
                    entry.mapped = folder / "table.npy"
                except (DamagedEntry, OSError):
                    pass
        entry.notes = [*entry.notes, *([new.note] if new.note else [])]
    notes = [*entry.notes, *([damage] if damage else [])]
    progress(0.9, "Indexing the words", None)
    vocab = vocabulary_from_words(entry.words)
    norms = None if entry.norms is None else torch.from_numpy(entry.norms)
    model = assemble(name=path.name, source=str(path), table=torch.from_numpy(np.asarray(entry.table)), vocab=vocab,
                     device=device, kind="table", notes=notes, lm_unavailable_reason=NO_LOGITS, norms=norms)
    if sniff(path) == "fasttext":  # its header is read again only when an unknown word is first asked for
        model.subwords = Subwords(path)
    if entry.mapped is not None and model.table.device.type == "cpu" and model.table.data_ptr() == entry.table.ctypes.data:
        try:  # a child process maps this file rather than being sent a copy of the table
            model.cache[MAPPED_TABLE] = MappedFile.of(entry.mapped, entry.table)
        except OSError:
            pass
    return model
