"""GloVe text (no header) and word2vec / fastText text (a `V D` header line).

Each line is a word, then its numbers. A word ends at the first space or tab; numbers are
separated by spaces or tabs (a tab is whitespace like a space, everywhere, so no word ever
ends in one). Every line must hold exactly the same count of numbers: a ragged line is
refused by its line number, never re-flowed into the table.

A first pass over the file counts its lines; the second reads a few tens of megabytes of whole
lines at a time and parses their numbers at C speed in one call, straight into the table:
pyarrow's CSV reader, which checks every row's column count itself, or numpy's, after each
line's numbers are counted. A file with several faults is refused at the first that its piece shows.
"""

from __future__ import annotations

import io
import re
from typing import BinaryIO, Callable, Iterator

import numpy as np

from embviz.core.device import ensure_fits_in_ram
from embviz.core.errors import EmbvizError
from embviz.core.readers.regular_file import CHUNK_BYTES, shown

HEADER = re.compile(rb"^\s*(\d+)\s+(\d+)\s*$")
BOM = b"\xef\xbb\xbf"
# Bounds that no real file of word vectors reaches (the largest hold a few million words of
# at most a few thousand numbers), so a lying or runaway file is refused before it is split.
MAX_WORDS = 10_000_000
MAX_DIM = 65_536
MAX_WORD_BYTES = 4_096
MAX_NUMBER_BYTES = 32  # "-1.2345678901234567e-308" is 24
# Python's cost of one word while parsing (its bytes, its string, list slots), beside its row.
WORD_OVERHEAD_BYTES = 200


# Text read per piece: whole lines, a few tens of megabytes, parsed straight into the table.
TEXT_PIECE_BYTES = 8 * 2**20


def parse_text(data: bytes, name: str) -> tuple[list[str], np.ndarray, list[str]]:
    """(words, table, notes) from `word v1 … vD` lines held in memory (see read_text_vectors)."""
    return read_text_vectors(io.BytesIO(data), len(data), name)


def read_text_vectors(f: BinaryIO, size: int, name: str, allocate: Callable[[tuple[int, int]], np.ndarray] | None = None,
                      ) -> tuple[list[str], np.ndarray, list[str]]:
    """(words, table, notes) from the `word v1 … vD` lines, with or without a `V D` header, of
    the seekable file of `size` bytes open as `f`. A first pass counts the lines (and finds the
    header, the first line and where the last non-blank line ends); the second parses a piece
    of whole lines at a time into the table that `allocate` gives for its shape."""
    shape = _Shape.scan(f, size)
    data_size = size - shape.start
    if shape.newlines > MAX_WORDS + 1:
        raise EmbvizError(f"{shown(name)} has more than {MAX_WORDS:,} lines; embviz reads at most {MAX_WORDS:,} words.")
    header = header_line(shape.head)
    declared = _declared(header, name, data_size) if header else None
    start_line = 2 if header else 1
    rows = shape.kept_lines - (1 if header else 0)
    if rows < 1:
        raise EmbvizError(f"{shown(name)} has a header but no vectors." if header else f"{shown(name)} is empty: no word vectors in it.")
    first = shape.line_span(start_line - 1, size)
    if declared:
        dim = declared[1]
    else:
        f.seek(first[0])
        dim = _first_dim(_first_line(f, first, name), name)
    if declared and declared[0] != rows:
        raise EmbvizError(f"{shown(name)}: the header says {declared[0]:,} words, but the file has {rows:,} lines of vectors"
                          + (" (is it truncated?)" if rows < declared[0] else "") + ".")
    ensure_fits_in_ram(rows * (dim * 4 + WORD_OVERHEAD_BYTES), "The word vectors")
    table = (allocate or (lambda s: np.empty(s, dtype=np.float32)))((rows, dim))
    f.seek(first[0])
    words: list[bytes] = []
    for lines, line_no in _line_pieces(f, rows, dim, name, start_line):
        piece_words, rests = _split_words(lines, dim, name, line_no)
        del lines
        _parse_into(table[len(words):len(words) + len(rests)], rests, dim, name, line_no)
        words += piece_words
    return _result(words, table, dim)


class _Shape:
    """What one pass over a text file finds: its newlines, the header's bytes, and how many
    lines it has up to the last one that is not blank."""

    def __init__(self) -> None:
        self.start = 0  # after a BOM
        self.newlines = 0
        self.kept_lines = 0
        self.first_newlines: list[int] = []  # file offsets of the first two
        self.head = b""

    @classmethod
    def scan(cls, f: BinaryIO, size: int) -> _Shape:
        shape = cls()
        f.seek(0)
        offset = 0
        while piece := f.read(TEXT_PIECE_BYTES):
            if offset == 0 and piece.startswith(BOM):
                shape.start = len(BOM)
            begin = shape.start if offset == 0 else 0
            if len(shape.head) < 129:
                shape.head += piece[begin:begin + 129 - len(shape.head)].replace(b"\t", b" ")
            at = begin - 1
            while len(shape.first_newlines) < 2 and (at := piece.find(b"\n", at + 1)) >= 0:
                shape.first_newlines.append(offset + at)
            content = len(piece.rstrip(b" \t\n\r\x0b\x0c"))  # bytes.strip()'s whitespace
            if content > begin:
                shape.kept_lines = shape.newlines + piece.count(b"\n", begin, content) + 1
            shape.newlines += piece.count(b"\n", begin)
            offset += len(piece)
        return shape

    def line_span(self, index: int, size: int) -> tuple[int, int]:
        """File offsets of line `index` (0 or 1), its newline excluded."""
        ends = [*self.first_newlines, size, size]
        begin = self.start if index == 0 else ends[0] + 1
        return begin, ends[index]


def _first_line(f: BinaryIO, span: tuple[int, int], name: str) -> bytes:
    """The first line of vectors, refused by its length before it is read if no row could be that long."""
    length = span[1] - span[0]
    if length > MAX_WORD_BYTES + MAX_DIM * MAX_NUMBER_BYTES:
        raise EmbvizError(f"{shown(name)}, line 1 is {length:,} bytes long, longer than any row of "
                          f"{MAX_DIM:,} numbers; it is not word vectors.")
    return f.read(length).replace(b"\t", b" ")


def _line_pieces(f: BinaryIO, rows: int, dim: int, name: str, start_line: int) -> Iterator[tuple[list[bytes], int]]:
    """(lines, number of the first) a piece at a time, `rows` lines in all, tabs made spaces;
    a line longer than any row of `dim` numbers is refused by its length as soon as it is seen."""
    longest = MAX_WORD_BYTES + dim * MAX_NUMBER_BYTES
    carry = b""
    done = 0
    while done < rows:
        piece = f.read(TEXT_PIECE_BYTES)
        buf = carry + piece
        cut = buf.rfind(b"\n") if piece else len(buf)
        if cut < 0:
            if len(buf) > longest:
                length = len(buf) + _rest_of_line(f)
                raise EmbvizError(f"{shown(name)}, line {start_line + done} is {length:,} bytes long, "
                                  f"more than a word and {dim:,} numbers can take.")
            carry = buf
            continue
        lines = buf[:cut].replace(b"\t", b" ").split(b"\n")[:rows - done]
        carry = buf[cut + 1:]
        yield lines, start_line + done
        done += len(lines)


def _rest_of_line(f: BinaryIO) -> int:
    length = 0
    while piece := f.read(TEXT_PIECE_BYTES):
        end = piece.find(b"\n")
        if end >= 0:
            return length + end
        length += len(piece)
    return length


def _parse_into(out: np.ndarray, rests: list[bytes], dim: int, name: str, start_line: int) -> None:
    """The numbers of `rests` into `out`; a line that is not `dim` numbers refused by its number."""
    flat = _floats_by_pyarrow(rests, dim)
    if flat is not None:
        out[:] = flat
        return
    bad = _first_ragged_line(rests, dim)
    flat = _floats(b" ".join(rests)) if bad is None else None
    if flat is None or flat.size != len(rests) * dim:
        bad = bad if bad is not None else _first_bad_line(rests, dim)
        raise EmbvizError(f"{shown(name)}, line {bad + start_line}: expected {dim} numbers after the word, "
                          f"found {_describe(rests[bad])}.")
    out[:] = flat.reshape(len(rests), dim)


def _result(words: list[bytes], table: np.ndarray, dim: int) -> tuple[list[str], np.ndarray, list[str]]:
    texts = [w.decode("utf-8", errors="replace") for w in words]
    notes: list[str] = []
    if any("\ufffd" in t for t in texts):
        notes.append("Some words are not valid UTF-8; their bad bytes are shown as �.")
    return texts, table, notes + duplicate_notes(texts)


def duplicate_notes(words: list[str]) -> list[str]:
    """The note every word-vector reader gives for words listed more than once."""
    duplicates = len(words) - len(set(words))
    return [f"{duplicates:,} words appear more than once; a search by name finds the first of each."] if duplicates else []


def header_line(data: bytes) -> re.Match[bytes] | None:
    """The `V D` header of a word2vec / fastText file; None for a file that starts with a word."""
    end = data.find(b"\n", 0, 128)
    return HEADER.match(data[:end]) if end >= 0 else HEADER.match(data) if len(data) <= 128 else None


def _declared(header: re.Match[bytes], name: str, size: int) -> tuple[int, int]:
    """A `V D` header's claim, checked against the file's size before anything is split."""
    count, dim = int(header.group(1)), int(header.group(2))
    if count < 1 or dim < 1:
        raise EmbvizError(f"{shown(name)}: the header says {count:,} words of {dim:,} numbers; there is nothing to read.")
    body = size - len(header.group(0)) - 1
    # The shortest possible row is a one-byte word and D one-digit numbers, each after a space.
    least = count * (2 * dim + 2) - 1
    if least > body:
        raise EmbvizError(f"{shown(name)}: the header says {count:,} word{'s' * (count != 1)} of {dim:,} numbers, which take at least "
                          f"{least:,} bytes, but only {max(body, 0):,} follow; the file is truncated or its header lies.")
    if dim > MAX_DIM:
        raise EmbvizError(f"{shown(name)}: the header says {dim:,} numbers per word; embviz reads at most {MAX_DIM:,}.")
    return count, dim


def _first_dim(line: bytes, name: str) -> int:
    """The count of numbers on the first line of a file without a header."""
    if len(line) > MAX_WORD_BYTES + MAX_DIM * MAX_NUMBER_BYTES:
        raise EmbvizError(f"{shown(name)}, line 1 is {len(line):,} bytes long, longer than any row of "
                          f"{MAX_DIM:,} numbers; it is not word vectors.")
    dim = len(line.partition(b" ")[2].split())
    if dim < 1:
        raise EmbvizError(f"{shown(name)}, line 1: a word with no numbers after it.")
    if dim > MAX_DIM:
        raise EmbvizError(f"{shown(name)}, line 1 holds {dim:,} numbers; embviz reads at most {MAX_DIM:,} per word.")
    return dim


def _split_words(lines: list[bytes], dim: int, name: str, start_line: int) -> tuple[list[bytes], list[bytes]]:
    """Each line's word and the text of its numbers; a line too long for `dim` numbers is refused
    here, before its numbers are split."""
    longest = MAX_WORD_BYTES + dim * MAX_NUMBER_BYTES
    words: list[bytes] = []
    rests: list[bytes] = []
    for i, line in enumerate(lines):
        if len(line) > longest:
            raise EmbvizError(f"{shown(name)}, line {i + start_line} is {len(line):,} bytes long, "
                              f"more than a word and {dim:,} numbers can take.")
        word, _, rest = line.partition(b" ")
        words.append(word)
        rests.append(rest)
    return words, rests


def _floats_by_pyarrow(rests: list[bytes], dim: int) -> np.ndarray | None:
    """The numbers of every line through pyarrow's CSV reader (3× numpy's), when
    pyarrow is installed; None when it is not, or when a line is not exactly `dim` numbers
    apart by single spaces (then the count per line and numpy decide).

    One thread: pyarrow's thread pool next to torch's aborted the process at exit
    ("terminate called without an active exception") in about half the runs."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:
        return None
    names = [f"c{i}" for i in range(dim)]
    try:
        table = pcsv.read_csv(
            pa.py_buffer(b"\n".join(r.strip() for r in rests)),
            read_options=pcsv.ReadOptions(column_names=names, use_threads=False),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False, escape_char=False,
                                            ignore_empty_lines=False),
            convert_options=pcsv.ConvertOptions(column_types={n: pa.float32() for n in names}),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, ValueError):
        return None
    if table.num_rows != len(rests) or table.num_columns != dim or any(c.null_count for c in table.columns):
        return None
    out = np.empty((len(rests), dim), dtype=np.float32)
    for i, column in enumerate(table.columns):
        out[:, i] = column.to_numpy()
    return out


def _floats(buffer: bytes) -> np.ndarray | None:
    """Every number in the buffer, parsed by numpy's C reader in one call; None when a
    token is not a number."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy only warns when it stops at a bad token
        try:
            return np.fromstring(buffer, dtype=np.float32, sep=" ")
        except (ValueError, DeprecationWarning):
            return None


def _first_ragged_line(rests: list[bytes], dim: int) -> int | None:
    """The index of the first line without exactly `dim` tokens, None when every line has them:
    tokens are counted by numpy over the bytes, a few megabytes of lines at a time, since one
    Python object per number would cost more than the parse."""
    start = 0
    while start < len(rests):
        end, size = start, 0
        while end < len(rests) and size < CHUNK_BYTES:
            size += len(rests[end]) + 1
            end += 1
        counts = _token_counts(rests[start:end])
        ragged = np.flatnonzero(counts != dim)
        if ragged.size:
            return start + int(ragged[0])
        start = end
    return None


def _token_counts(rests: list[bytes]) -> np.ndarray:
    text = np.frombuffer(b"\n".join(rests) + b"\n", dtype=np.uint8)
    # Spaces and control bytes: a control byte that numpy does not take as whitespace fails its parse anyway.
    blank = text <= 32
    starts = ~blank
    starts[1:] &= blank[:-1]
    # Each line's bytes run up to and including its newline, so no segment is empty.
    lines = np.concatenate(([0], np.flatnonzero(text == 10)[:-1] + 1))
    return np.add.reduceat(starts, lines, dtype=np.int64)


def _first_bad_line(rests: list[bytes], dim: int) -> int:
    """The index of the first line that is not `dim` numbers (its text is known to hold a bad one)."""
    for i, rest in enumerate(rests):
        tokens = rest.split()
        if len(tokens) != dim:
            return i
        try:
            [float(t) for t in tokens]
        except ValueError:
            return i
    return len(rests) - 1


def _describe(rest: bytes) -> str:
    tokens = rest.split()
    for t in tokens:
        try:
            float(t)
        except ValueError:
            return f"'{t.decode('utf-8', errors='replace')[:20]}', which is not a number"
    return f"{len(tokens)}"
