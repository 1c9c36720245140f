"""Facebook fastText's native `.bin` (what `fasttext.save_model` and gensim's
`save_facebook_model` write, and gensim's `load_facebook_model` reads), versions 11 and 12:

    int32 magic 793712314, int32 version (11 or 12)
    args: int32 dim ws epoch minCount neg wordNgrams loss model bucket minn maxn lrUpdateRate, float64 t
    dictionary: int32 size nwords nlabels, int64 ntokens pruneidx_size,
                size × (word bytes, NUL, int64 count, int8 type), pruneidx_size × (int32, int32)
    bool quant_input, int64 rows cols, rows × cols float32: the input matrix, (nwords + bucket) × dim
    bool quant_output, int64 rows cols, rows × cols float32: the output matrix, nwords × dim

Version 11 differs only for supervised models (no character n-grams), which are refused anyway.
The old format, before the magic number (gensim's `_OLD_HEADER_FORMAT`), starts straight with
the args (dim and ws first), has no pruneidx_size in its dictionary and no quant flag before
either matrix. With no magic number to tell it, the sniffer calls a file old fastText only when
every header field is in range and both matrices' shapes sit exactly where the file's size puts
them (`is_old_fasttext_bin`).

Every count the header states is checked against the file's size before anything is allocated
for it, and the file must end exactly where the output matrix does. The dictionary is read a
bounded piece at a time; the input matrix is mapped, not read, and only the words' vectors
(each word's row and its n-grams' rows, averaged: fasttext_ngrams) become a table. Quantized
(`.ftz`), pruned and supervised models, and anything else that is not exactly this layout,
are refused in one sentence.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from embviz.core.device import ensure_fits_in_ram
from embviz.core.errors import EmbvizError
from embviz.core.readers.fasttext_ngrams import MAX_NGRAM, compose, ngram_buckets, oov_vector
from embviz.core.readers.regular_file import CHUNK_BYTES, file_size, open_regular, shown
from embviz.core.readers.word2vec_binary import UTF8_NOTE, Allocate, new_table
from embviz.core.readers.word_text import MAX_DIM, MAX_WORDS, WORD_OVERHEAD_BYTES, duplicate_notes

MAGIC = 793712314
VERSION = 12
VERSIONS = (11, 12)
SIGNATURE = struct.pack("<ii", MAGIC, VERSION)
_ARGS = struct.Struct("<12id")
_DICT = struct.Struct("<iiiqq")
_MATRIX = struct.Struct("<?qq")
HEADER_BYTES = 8 + _ARGS.size + _DICT.size
# The old format: the same args with no magic and version before them, a dictionary header
# without pruneidx_size, and matrices without the quant flag.
_OLD_DICT = struct.Struct("<iiiq")
_OLD_MATRIX = struct.Struct("<qq")
OLD_HEADER_BYTES = _ARGS.size + _OLD_DICT.size
# Bounds no real old model passes (fastText's defaults are ws 5, epoch 5, neg 5, lrUpdateRate 100).
_MAX_SMALL = 1 << 20
# A word is a whitespace-free token; fastText puts no bound on it, this keeps a piece bounded.
MAX_FT_WORD_BYTES = 1 << 16
MAX_BUCKETS = 1 << 31
_ENTRY_TAIL = 9  # int64 count, int8 type
_LOSSES = {1: "hs", 2: "ns", 3: "softmax", 4: "ova"}


@dataclass(frozen=True)
class FastTextLayout:
    """What the header says, checked, and where the input matrix lies in the file."""

    dim: int
    bucket: int
    minn: int
    maxn: int
    nwords: int
    input_offset: int  # of the first float of the input matrix
    size: int  # of the whole file
    words: list[bytes] = field(default_factory=list, repr=False)


def is_fasttext_bin(head: bytes) -> bool:
    """fastText's magic number (any version: a wrong one is refused by the reader, by name)."""
    return head[:4] == SIGNATURE[:4]


def _old_header(head: bytes) -> tuple[tuple[Any, ...], tuple[int, int, int, int]] | None:
    """The old format's (args, dictionary header) when every field is in a real model's range."""
    if len(head) < OLD_HEADER_BYTES or head[:4] == SIGNATURE[:4]:
        return None
    args = _ARGS.unpack_from(head, 0)
    dim, ws, epoch, min_count, neg, word_ngrams, loss, model, bucket, minn, maxn, lr_rate, t = args
    n_entries, nwords, nlabels, ntokens = _OLD_DICT.unpack_from(head, _ARGS.size)
    small = (ws, epoch, neg, word_ngrams, lr_rate)
    sane = (1 <= dim <= MAX_DIM and all(1 <= x <= _MAX_SMALL for x in small) and 0 <= min_count
            and loss in _LOSSES and model in (1, 2, 3) and 0 <= bucket < MAX_BUCKETS
            and 0 <= minn <= maxn <= MAX_NGRAM and 0.0 <= t <= 1.0
            and 1 <= nwords <= MAX_WORDS and 0 <= nlabels <= MAX_WORDS and n_entries == nwords + nlabels
            and ntokens >= 0)
    return (args, (n_entries, nwords, nlabels, ntokens)) if sane else None


def is_old_fasttext_bin(f: BinaryIO) -> bool:
    """Whether the file open as `f` is old-format fastText: its header in range, and both
    matrices' shapes exactly where the header's sizes, counted back from the file's end, put
    them (an old header has no magic number, so nothing less tells it from other bytes)."""
    size = file_size(f)
    f.seek(0)
    header = _old_header(f.read(OLD_HEADER_BYTES))
    if header is None:
        return False
    args, (n_entries, nwords, nlabels, _ntokens) = header
    dim, model, bucket = args[0], args[7], args[8]
    out_rows = nlabels if model == 3 else nwords
    out_at = size - _OLD_MATRIX.size - out_rows * dim * 4
    in_at = out_at - _OLD_MATRIX.size - (nwords + bucket) * dim * 4
    if in_at < OLD_HEADER_BYTES + n_entries * (2 + _ENTRY_TAIL):
        return False
    shapes = []
    for at in (in_at, out_at):
        f.seek(at)
        shapes.append(_OLD_MATRIX.unpack(f.read(_OLD_MATRIX.size)))
    return shapes == [(nwords + bucket, dim), (out_rows, dim)]


def read_fasttext_bin(path: Path, allocate: Allocate = new_table) -> tuple[list[str], np.ndarray, list[str]]:
    """(words, table, notes) of a fastText .bin; the table is what `allocate` gives for its shape."""
    with open_regular(path) as f:
        layout = read_layout(f, path.name)
        shape = (layout.nwords, layout.dim)
        ensure_fits_in_ram(layout.nwords * (layout.dim * 4 + WORD_OVERHEAD_BYTES), "The word vectors")
        # Mapped from the file already opened (and checked regular): the big matrix is never read whole.
        matrix = np.memmap(f, dtype="<f4", mode="r", offset=layout.input_offset,
                           shape=(layout.nwords + layout.bucket, layout.dim))
        table = allocate(shape)
        try:
            compose(table, matrix[:layout.nwords], matrix[layout.nwords:], layout.words, layout.minn, layout.maxn)
        finally:
            del matrix
    text = [w.decode("utf-8", errors="replace") for w in layout.words]
    notes = [f"Read from fastText's .bin: each word's vector is the mean of its own row and its "
             f"{layout.minn}–{layout.maxn}-character n-grams' rows, as fastText and gensim give it."]
    if layout.bucket == 0 or layout.maxn == 0:
        notes = ["Read from fastText's .bin, a model without character n-grams: each word is its own row."]
    if any("\ufffd" in w for w in text):
        notes.append(UTF8_NOTE)
    return text, table, notes + duplicate_notes(text)


def read_layout(f: BinaryIO, name: str) -> FastTextLayout:
    """The checked header and dictionary of the fastText .bin open as `f` (at its start)."""
    size = file_size(f)
    head = f.read(HEADER_BYTES)
    flagged = head[:4] == SIGNATURE[:4]  # the new format: a quant flag before each matrix
    if flagged:
        version = struct.unpack_from("<i", head, 4)[0] if len(head) >= 8 else None
        if version not in VERSIONS:
            raise EmbvizError(f"{shown(name)} is a fastText .bin of version {version}; embviz reads versions 11 and 12."
                              if version is not None else f"{shown(name)} ends inside its fastText header; the file is truncated.")
        if len(head) < HEADER_BYTES:
            raise EmbvizError(f"{shown(name)} ends inside its fastText header ({size:,} bytes); the file is truncated.")
        args = _ARGS.unpack_from(head, 8)
        n_entries, nwords, nlabels, ntokens, pruned = _DICT.unpack_from(head, 8 + _ARGS.size)
        dict_at = HEADER_BYTES
    else:
        old = _old_header(head)
        if old is None:
            raise EmbvizError(f"{shown(name)} has neither fastText's magic number nor an old fastText header; "
                              "it is not a fastText .bin.")
        args, (n_entries, nwords, nlabels, ntokens) = old
        pruned, dict_at = -1, OLD_HEADER_BYTES
    dim, _ws, _epoch, _min_count, _neg, _word_ngrams, loss, model, bucket, minn, maxn, _lr, _t = args
    if nlabels > 0 or model == 3:
        raise EmbvizError(f"{shown(name)} is a supervised fastText model (it has {nlabels:,} labels); "
                          "embviz reads word vectors, not classifiers.")
    _check_args(name, dim, bucket, minn, maxn, loss, model, (n_entries, nwords, nlabels), ntokens, pruned)
    matrix_head = (_MATRIX if flagged else _OLD_MATRIX).size
    # The least the dictionary needs (each word a byte, its NUL and tail), before it is read; the
    # matrices are measured once the flag before them shows whether they are floats at all (.ftz).
    least = dict_at + nwords * (2 + _ENTRY_TAIL) + max(pruned, 0) * 8 + matrix_head
    if least > size:
        raise EmbvizError(f"{shown(name)} is truncated or its header lies: {nwords:,} words need at least "
                          f"{least:,} bytes; the file has {size:,}.")
    words, pos = _read_words(f, nwords, dict_at, size, name)
    f.seek(pos + max(pruned, 0) * 8)  # the pruned index's pairs: within the file, as `least` showed
    input_offset = _matrix_header(f, name, "input", (nwords + bucket, dim), pos + max(pruned, 0) * 8, size, flagged)
    if pruned != -1:  # only quantizing prunes a model, and a quantized one is refused above
        raise EmbvizError(f"{shown(name)} is a pruned fastText model ({pruned:,} n-grams kept); embviz reads unpruned ones.")
    output_at = input_offset + (nwords + bucket) * dim * 4
    f.seek(output_at)
    output_offset = _matrix_header(f, name, "output", (nwords, dim), output_at, size, flagged)
    end = output_offset + nwords * dim * 4
    if end != size:
        raise EmbvizError(f"{shown(name)} has {size - end:,} bytes after its output matrix; it is not exactly a fastText .bin."
                          if end < size else f"{shown(name)} ends inside its output matrix; the file is truncated.")
    return FastTextLayout(dim, bucket, minn, maxn, nwords, input_offset, size, words)


def _check_args(name: str, dim: int, bucket: int, minn: int, maxn: int, loss: int, model: int,
                counts: tuple[int, int, int], ntokens: int, pruned: int) -> None:
    """Refuse a header whose numbers no fastText model has, by the first that is off."""
    n_entries, nwords, nlabels = counts
    problems = [
        (not 1 <= dim <= MAX_DIM, f"{dim:,} numbers per vector"),
        (not 1 <= nwords <= MAX_WORDS, f"{nwords:,} words"),
        (n_entries != nwords, f"{n_entries:,} dictionary entries for {nwords:,} words"),
        (not 0 <= bucket < MAX_BUCKETS, f"{bucket:,} n-gram buckets"),
        (not (0 <= minn <= MAX_NGRAM and 0 <= maxn <= MAX_NGRAM), f"n-grams of {minn} to {maxn} characters"),
        (loss not in _LOSSES or model not in (1, 2), f"loss {loss} and model {model}"),
        (nlabels < 0, f"{nlabels:,} labels"),
        (ntokens < 0 or pruned < -1, f"{ntokens:,} tokens and a pruned index of {pruned:,}"),
    ]
    for bad, what in problems:
        if bad:
            raise EmbvizError(f"{shown(name)}: its fastText header says {what}; the file is corrupt.")


def _read_words(f: BinaryIO, nwords: int, pos: int, size: int, name: str) -> tuple[list[bytes], int]:
    """The dictionary's words, read a bounded piece at a time; and the offset just after them."""
    f.seek(pos)
    buf, base, at = b"", pos, 0  # the bytes at hand, the file offset of buf[0], the next entry in buf
    words: list[bytes] = []
    tails: list[int] = []  # where each entry's count and type start, in the file
    while len(words) < nwords:
        end = buf.find(b"\0", at, at + MAX_FT_WORD_BYTES + 1)
        if end < 0 or end + 1 + _ENTRY_TAIL > len(buf):
            if len(buf) - at > MAX_FT_WORD_BYTES + _ENTRY_TAIL:
                raise EmbvizError(f"{shown(name)}: word {len(words) + 1:,} of its dictionary runs past "
                                  f"{MAX_FT_WORD_BYTES:,} bytes; the file is corrupt.")
            piece = f.read(max(0, min(CHUNK_BYTES, size - base - len(buf))))
            if not piece:
                raise EmbvizError(f"{shown(name)} ends inside its dictionary, at word {len(words) + 1:,} of {nwords:,}; "
                                  "the file is truncated.")
            _check_tails(buf, base, tails, name)  # before the bytes they are in are dropped
            base, buf, at, tails = base + at, buf[at:] + piece, 0, []
            continue
        words.append(buf[at:end])
        tails.append(base + end + 1)
        at = end + 1 + _ENTRY_TAIL
    _check_tails(buf, base, tails, name)
    return words, base + at


def _check_tails(buf: bytes, base: int, tails: list[int], name: str) -> None:
    """Every entry's count is not negative and its type is a word (0), checked a piece at a time."""
    if not tails:
        return
    offsets = np.asarray(tails, dtype=np.intp) - base
    entry = np.frombuffer(buf, dtype=np.uint8)[offsets[:, None] + np.arange(_ENTRY_TAIL)]
    kinds = entry[:, 8]
    counts = entry[:, :8].copy().view("<i8")[:, 0]
    if np.any(kinds != 0):
        first = int(np.flatnonzero(kinds != 0)[0])
        what = "a label (a supervised model)" if kinds[first] == 1 else f"of type {kinds[first]}"
        raise EmbvizError(f"{shown(name)}: a dictionary entry is {what}, not a word; embviz reads word vectors only.")
    if np.any(counts < 0):
        raise EmbvizError(f"{shown(name)}: a word of its dictionary has a negative count; the file is corrupt.")


def _matrix_header(f: BinaryIO, name: str, which: str, shape: tuple[int, int], at: int, size: int,
                   flagged: bool) -> int:
    """Check the quantized flag (`flagged`: the new format has one) and shape before the `which`
    matrix; the offset of its first float."""
    layout = _MATRIX if flagged else _OLD_MATRIX
    head = f.read(layout.size)
    if len(head) < layout.size:
        raise EmbvizError(f"{shown(name)} ends before its {which} matrix; the file is truncated.")
    if flagged and head[0] not in (0, 1):
        raise EmbvizError(f"{shown(name)}: the flag before its {which} matrix is {head[0]}, not 0 or 1; the file is corrupt.")
    quantized, m, n = _MATRIX.unpack(head) if flagged else (False, *_OLD_MATRIX.unpack(head))
    if quantized:
        raise EmbvizError(f"{shown(name)} is a quantized fastText model (.ftz); embviz reads unquantized .bin files only.")
    rows, dim = shape
    if (m, n) != (rows, dim):
        raise EmbvizError(f"{shown(name)}: its {which} matrix is {m:,} × {n:,}, but the header needs {rows:,} × {dim:,}; "
                          "the file is corrupt.")
    start = at + layout.size
    if start + rows * dim * 4 > size:
        raise EmbvizError(f"{shown(name)} ends inside its {which} matrix; the file is truncated.")
    return start


class Subwords:
    """Out-of-vocabulary vectors of one fastText .bin, as gensim's `wv[word]` gives them: the
    mean of the word's n-gram rows. The file's header is read on the first call (a cached open
    never read it), and each call reads only the rows it needs with `pread`: no map is kept
    that a file truncated later could turn into a crash."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._layout: FastTextLayout | None = None

    def layout(self) -> FastTextLayout:
        if self._layout is None:
            with open_regular(self.path) as f:
                self._layout = replace(read_layout(f, self.path.name), words=[])  # the table has the words
        return self._layout

    def vector(self, word: str) -> np.ndarray:
        """(dim,) float32: `word`'s n-grams averaged, whether or not it is in the vocabulary (for
        one that is, its vector is its table row: this leaves out the word's own row)."""
        layout = self.layout()
        if layout.bucket == 0 or layout.maxn == 0:
            raise EmbvizError(f"{shown(self.path.name)} has no character n-grams, so a word outside its vocabulary "
                              "has no vector.")
        _, buckets = ngram_buckets([word.encode("utf-8", errors="surrogatepass")], layout.minn, layout.maxn,
                                   layout.bucket)
        return oov_vector(self._rows(layout, buckets))

    def _rows(self, layout: FastTextLayout, buckets: np.ndarray) -> np.ndarray:
        row_bytes = layout.dim * 4
        out = np.empty((buckets.size, layout.dim), dtype="<f4")
        with open_regular(self.path) as f:
            if file_size(f) != layout.size:
                raise EmbvizError(f"{shown(self.path.name)} has changed since it was opened; open it again.")
            fd = f.fileno()
            for i, b in enumerate(buckets.tolist()):
                data = os.pread(fd, row_bytes, layout.input_offset + (layout.nwords + b) * row_bytes)
                if len(data) != row_bytes:
                    raise EmbvizError(f"{shown(self.path.name)} has changed since it was opened; open it again.")
                out[i] = np.frombuffer(data, dtype="<f4")
        return out
