"""word2vec's binary format: a `V D` text line, then per word its bytes, one space and D
little-endian float32, and (as word2vec.c writes, not gensim) a newline.

Nothing in the format marks where a vector ends, so a word with a space in it or a header
that names the wrong D shifts every byte after it. The reader holds the file to one layout
(a newline after every vector, or after none: whichever the first word shows), to an end that
falls exactly on the last vector and, where no newline marks each vector's end, to words of text
with no control characters; a file that breaks any of these is refused, never read shifted.
Where the newlines are all in place, a word may hold any bytes but a space (a newline, a NUL).

The file is read in bounded pieces straight into the table, so opening it costs the table's
own size: per piece, one Python step per word finds where its vector starts, and numpy copies
the piece's vectors and checks its newlines and words at once.
"""

from __future__ import annotations

import re
from typing import BinaryIO, Callable

import numpy as np

from embviz.core.device import ensure_fits_in_ram
from embviz.core.errors import EmbvizError
from embviz.core.readers.regular_file import shown
from embviz.core.readers.word_text import MAX_WORD_BYTES, WORD_OVERHEAD_BYTES, duplicate_notes, header_line

_CONTROL = re.compile(rb"[\x00-\x1f\x7f]")
UTF8_NOTE = "Some words are not valid UTF-8; their bad bytes are shown as �."
# Bytes read per piece: large enough that a read is a few per cent of the piece's work,
# small beside any table worth streaming.
PIECE_BYTES = 32 * 2**20
Allocate = Callable[[tuple[int, int]], np.ndarray]


def new_table(shape: tuple[int, int]) -> np.ndarray:
    return np.empty(shape, dtype=np.float32)


def read_word2vec_binary(f: BinaryIO, size: int, name: str, allocate: Allocate = new_table) -> tuple[list[str], np.ndarray, list[str]]:
    """(words, table, notes) of the word2vec binary file of `size` bytes open as `f`; the table
    is what `allocate` gives for its shape (a map of a cache file, say), once the header is checked."""
    head = f.read(129)
    header = header_line(head)
    if not header:
        raise EmbvizError(f"{shown(name)} does not start with a `words dimensions` header.")
    count, dim = int(header.group(1)), int(header.group(2))
    if dim < 1 or count < 1:
        raise EmbvizError(f"{shown(name)}: the header says {count} words of {dim} numbers.")
    pos = len(header.group(0)) + 1
    # Each entry takes at least a one-byte word, a space and 4·D bytes: refuse counts the file cannot hold.
    if count * (2 + 4 * dim) > size - pos:
        raise EmbvizError(f"{shown(name)} is truncated or its header lies: {count:,} words of {dim} numbers "
                          f"need more than the {max(size - pos, 0):,} bytes that follow.")
    ensure_fits_in_ram(count * (dim * 4 + WORD_OVERHEAD_BYTES), "The word vectors")
    table = allocate((count, dim))
    joined = _Pieces(f, size, head, pos, name, dim).read_into(table.view(np.dtype((np.void, 4 * dim))).reshape(count))
    text = joined.decode("utf-8", errors="replace")
    del joined
    # No word holds a space (each ends at its first), so the split gives back exactly the words.
    texts = text.split(" ")
    return texts, table, ([UTF8_NOTE] if "\ufffd" in text else []) + duplicate_notes(texts)


class _Pieces:
    """The entries of one file, read a piece at a time."""

    def __init__(self, f: BinaryIO, size: int, head: bytes, pos: int, name: str, dim: int) -> None:
        self.f, self.size, self.name, self.dim = f, size, name, dim
        self.buf, self.base = head, 0  # the bytes at hand, and the file offset of their first
        self.pos = pos
        self.eof = len(head) >= size
        self.newline_after: bool | None = None

    def _more(self) -> None:
        """Keep the bytes not yet parsed and append the next piece."""
        piece = self.f.read(PIECE_BYTES)
        if not piece:
            self.eof = True
        self.base += self.pos
        self.buf = self.buf[self.pos:] + piece
        self.pos = 0

    def read_into(self, out: np.ndarray) -> bytes:
        """Fill `out` (count items of 4·D bytes) with the vectors; the words, joined by single spaces."""
        count, row_bytes = len(out), out.dtype.itemsize
        parts: list[bytes] = []
        done = 0
        while done < count:
            if self.newline_after is None:
                self._first_layout(row_bytes)
            words, starts = self._scan(count - done, row_bytes)
            if words:
                self._check(words, starts, done, row_bytes)
                # Every run of 4·D bytes of the piece, as one item each: numpy copies the rows wanted whole.
                runs = np.ndarray((len(self.buf) - row_bytes + 1,), dtype=out.dtype, buffer=self.buf, strides=(1,))
                out[done:done + len(starts)] = runs[np.asarray(starts, dtype=np.intp)]
                parts.append(b" ".join(words))
                done += len(words)
            if done < count:
                self._stuck(done, count, row_bytes)
        left = self.size - (self.base + self.pos)
        if left != 0:
            raise EmbvizError(f"{shown(self.name)}: {left:,} bytes follow the last of its {count:,} words; "
                              f"the header's {self.dim} numbers per word do not fit the file.")
        return b" ".join(parts)

    def _first_layout(self, row_bytes: int) -> None:
        """Whether a newline follows each vector, as it does (or not) the first."""
        while not self.eof and len(self.buf) - self.pos < MAX_WORD_BYTES + row_bytes + 3:
            self._more()
        space = self.buf.find(b" ", self.pos, self.pos + MAX_WORD_BYTES + 1)
        after = space + 1 + row_bytes
        self.newline_after = space >= 0 and self.buf[after:after + 1] == b"\n"

    def _scan(self, wanted: int, row_bytes: int) -> tuple[list[bytes], list[int]]:
        """The words and vector offsets of the whole entries at hand (at most `wanted`)."""
        buf, find, pos, end = self.buf, self.buf.find, self.pos, len(self.buf)
        step = row_bytes + 1 + (1 if self.newline_after else 0)
        words: list[bytes] = []
        starts: list[int] = []
        while len(words) < wanted:
            space = find(b" ", pos, pos + MAX_WORD_BYTES + 1)
            if space <= pos or space + step > end:  # no space, an empty word, or an entry not all at hand
                break
            words.append(buf[pos:space])
            starts.append(space + 1)
            pos = space + step
        self.pos = pos
        return words, starts

    def _check(self, words: list[bytes], starts: list[int], done: int, row_bytes: int) -> None:
        """Refuse the first entry (of those just scanned) that breaks the layout."""
        bad = len(words)
        if self.newline_after:
            ends = np.frombuffer(self.buf, dtype=np.uint8)[np.asarray(starts, dtype=np.intp) + row_bytes]
            wrong = np.flatnonzero(ends != 10)
            bad = int(wrong[0]) if wrong.size else bad
        joined = b" ".join(words)
        if not self.newline_after:
            # Nothing marks where a vector ends: a word must be text, and the first (which decides the
            # layout) any bytes but a newline; only the words after it could be shifted bytes.
            rest = joined[len(words[0]) + 1:] if done == 0 else joined
            if b"\n" in words[0] or not _is_text(rest):
                bad = min(bad, next(i for i, word in enumerate(words) if b"\n" in word or (
                    done + i > 0 and not _is_text(word))))
        if bad < len(words):
            raise _misaligned(self.name, done + bad, self.dim)

    def _stuck(self, done: int, count: int, row_bytes: int) -> None:
        """The next entry is not all at hand: read on, or refuse it if the file holds no more."""
        if not self.eof and len(self.buf) - self.pos < MAX_WORD_BYTES + row_bytes + 3:
            self._more()
            return
        buf, pos = self.buf, self.pos
        space = buf.find(b" ", pos, pos + MAX_WORD_BYTES + 1)
        if space < 0 or space + 1 + row_bytes > len(buf):
            raise EmbvizError(f"{shown(self.name)} is truncated or corrupt at word {done + 1:,} of {count:,}.")
        # The vector is there: the word is empty or holds a newline, or its own newline is missing.
        raise _misaligned(self.name, done, self.dim)


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
