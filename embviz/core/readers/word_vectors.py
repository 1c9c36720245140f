"""Word vectors: GloVe text (no header), word2vec / fastText text (a `V D` header),
word2vec binary (.bin, .bin.gz: recognised by content, since .bin is PyTorch's too), a
.npy table (C or Fortran order) with its vocabulary beside it, and gensim's saved
KeyedVectors / Word2Vec files (read without running their pickle). They have no output layer,
so no logits; every other panel works.

Each format has its own module; this one picks it and caches the parsed table (keyed on the
file's content), so a later open skips the parse.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import torch

from embviz.core.cache import cache_root, content_key, keep_in_cache
from embviz.core.errors import ProgressFn, no_progress
from embviz.core.model import EmbeddingModel
from embviz.core.readers.assemble import assemble
from embviz.core.readers.bounded import read_whole
from embviz.core.readers.gensim_file import is_gensim_file, read_keyed_vectors
from embviz.core.readers.npy_table import read_npy_table
from embviz.core.readers.word2vec_binary import parse_word2vec_binary
from embviz.core.readers.word_text import HEADER, parse_text
from embviz.core.table.vocab import vocabulary_from_words

TEXT_SUFFIXES = (".txt", ".vec", ".txt.gz", ".vec.gz")
BINARY_SUFFIXES = (".bin", ".bin.gz")
CACHE_FORMAT = "word-vectors-2"  # 2: ragged lines, BOMs and tabs are no longer read into the table
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


def _read(path: Path) -> tuple[list[str], np.ndarray, list[str]]:
    if is_gensim_file(path):
        return read_keyed_vectors(path)
    suffix = _suffix(path)
    if suffix == ".npy":
        return read_npy_table(path)
    data = read_whole(path)
    if suffix in BINARY_SUFFIXES:
        return parse_word2vec_binary(data, path.name)
    return parse_text(data, path.name)


def open_word_vectors(path: Path, device: torch.device, progress: ProgressFn = no_progress) -> EmbeddingModel:
    path = Path(path)
    folder = cache_root() / "word-vectors" / content_key(path, CACHE_FORMAT)
    try:
        words = json.loads((folder / "words.json").read_text(encoding="utf-8"))
        table = np.load(folder / "table.npy", allow_pickle=False)
        notes = json.loads((folder / "notes.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        progress(0.1, "Reading the word vectors", None)
        words, table, notes = _read(path)
        if _suffix(path) != ".npy":  # a .npy is already as fast to open as the cache
            progress(0.7, "Caching the table for the next open", None)
            def write(scratch: Path) -> None:
                np.save(scratch / "table.npy", table)
                (scratch / "words.json").write_text(json.dumps(words), encoding="utf-8")
                (scratch / "notes.json").write_text(json.dumps(notes), encoding="utf-8")

            if cache_note := keep_in_cache(folder.parent, folder.name, write):
                notes = [*notes, cache_note]
    progress(0.9, "Indexing the words", None)
    vocab = vocabulary_from_words(words)
    return assemble(name=path.name, source=str(path), table=torch.from_numpy(table), vocab=vocab, device=device,
                    kind="table", notes=list(notes), lm_unavailable_reason=NO_LOGITS)
