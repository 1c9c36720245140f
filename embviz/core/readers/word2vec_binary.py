"""word2vec's binary format: a `V D` text line, then per word its bytes, one space and D
little-endian float32, and (as word2vec.c writes, not gensim) a newline.

Nothing in the format marks where a vector ends, so a word with a space in it or a header
that names the wrong D shifts every byte after it. The reader holds the file to one layout
(a newline after every vector, or after none: whichever the first word shows), to words that
hold no newline, and to an end that falls exactly on the last vector; a file that breaks any
of these is refused, never read shifted.
"""

from __future__ import annotations

import re

import numpy as np

from embviz.core.device import ensure_fits_in_ram
from embviz.core.errors import EmbvizError
from embviz.core.readers.regular_file import shown
from embviz.core.readers.word_text import MAX_WORD_BYTES, WORD_OVERHEAD_BYTES, header_line

_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")
UTF8_NOTE = "Some words are not valid UTF-8; their bad bytes are shown as �."


def parse_word2vec_binary(data: bytes, name: str) -> tuple[list[str], np.ndarray, list[str]]:
    """(words, table, notes) of a word2vec binary file."""
    header = header_line(data)
    if not header:
        raise EmbvizError(f"{shown(name)} does not start with a `words dimensions` header.")
    count, dim = int(header.group(1)), int(header.group(2))
    if dim < 1 or count < 1:
        raise EmbvizError(f"{shown(name)}: the header says {count} words of {dim} numbers.")
    pos = len(header.group(0)) + 1
    # Each entry takes at least a one-byte word, a space and 4·D bytes: refuse counts the file cannot hold.
    if count * (2 + 4 * dim) > len(data) - pos:
        raise EmbvizError(f"{shown(name)} is truncated or its header lies: {count:,} words of {dim} numbers "
                          f"need more than the {len(data) - pos:,} bytes that follow.")
    ensure_fits_in_ram(count * (dim * 4 + WORD_OVERHEAD_BYTES), "The word vectors")
    table = np.empty((count, dim), dtype=np.float32)
    words: list[bytes] = []
    row_bytes = 4 * dim
    newline_after = False
    for i in range(count):
        space = data.find(b" ", pos, pos + MAX_WORD_BYTES + 1)
        if space < 0 or space + 1 + row_bytes > len(data):
            raise EmbvizError(f"{shown(name)} is truncated or corrupt at word {i + 1:,} of {count:,}.")
        word = data[pos:space]
        if not word or b"\n" in word or (not newline_after and i > 0 and not _is_text(word)):
            raise _misaligned(name, i, dim)
        words.append(word)
        table[i] = np.frombuffer(data, dtype="<f4", count=dim, offset=space + 1)
        pos = space + 1 + row_bytes
        if i == 0:
            newline_after = data[pos:pos + 1] == b"\n"
        if newline_after:
            if data[pos:pos + 1] != b"\n":
                raise _misaligned(name, i, dim)
            pos += 1
    if pos != len(data):
        raise EmbvizError(f"{shown(name)}: {len(data) - pos:,} bytes follow the last of its {count:,} words; "
                          f"the header's {dim} numbers per word do not fit the file.")
    texts = [w.decode("utf-8", errors="replace") for w in words]
    return texts, table, [UTF8_NOTE] if any("\ufffd" in t for t in texts) else []


def _is_text(word: bytes) -> bool:
    """UTF-8 without control characters: what gensim (the writer without newlines) always writes,
    and what the float bytes of a shifted vector rarely are."""
    try:
        word.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return _CONTROL.search(word) is None


def _misaligned(name: str, index: int, dim: int) -> EmbvizError:
    return EmbvizError(f"{shown(name)}: the bytes after word {index + 1:,} do not line up with {dim} numbers per word "
                       "(a word with a space in it, or a header with the wrong count of numbers); it is not read shifted.")
