"""What a file holds, told by its first bytes, for a name with no suffix or a misleading one.

fastText's magic number (or an old fastText header, told by every size in it matching the
file's), GGUF's, a pickle that names gensim, a zip or another pickle (PyTorch),
or text: a `V D` header line then either a line of D numbers (word2vec / fastText text) or
binary floats (word2vec binary), or a first line of a word and numbers (GloVe). None: the
first bytes say nothing, and the suffix decides.
"""

from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path
from typing import Literal

from embviz.core.errors import EmbvizError
from embviz.core.readers.fasttext_bin import is_fasttext_bin, is_old_fasttext_bin
from embviz.core.readers.gensim_file import is_gensim_pickle
from embviz.core.readers.regular_file import open_regular
from embviz.core.readers.word_text import BOM, HEADER

Kind = Literal["fasttext", "gguf", "gensim", "torch", "word2vec-binary", "word-text"]
WORD_VECTOR_KINDS = ("fasttext", "gensim", "word2vec-binary", "word-text")
HEAD_BYTES = 4096
_NUMBER = re.compile(rb"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|[-+]?(nan|inf)", re.IGNORECASE)


def sniff(path: Path) -> Kind | None:
    """The kind of the regular file at `path` by its first bytes (decompressed for a .gz name);
    None when they say nothing, or the file cannot be read (its reader then says why)."""
    try:
        with open_regular(path) as f:
            if path.name.lower().endswith(".gz"):
                try:
                    with gzip.GzipFile(fileobj=f, mode="rb") as stream:
                        head = stream.read(HEAD_BYTES)  # a few kilobytes: no bomb expands in them
                except (OSError, EOFError, zlib.error):
                    return None
            elif is_old_fasttext_bin(f):  # first: its dim can be any first byte, a pickle's \x80 too
                return "fasttext"
            else:
                f.seek(0)
                head = f.read(HEAD_BYTES)
    except EmbvizError:
        return None
    return sniff_bytes(head)


def sniff_bytes(head: bytes) -> Kind | None:
    if is_fasttext_bin(head):
        return "fasttext"
    if head[:4] == b"GGUF":
        return "gguf"
    if is_gensim_pickle(head):
        return "gensim"
    if head[:4] == b"PK\x03\x04" or head[:1] == b"\x80":
        return "torch"
    line, newline, rest = head.partition(b"\n")
    header = HEADER.match(line) if newline else None
    if header:  # a count of numbers other than the header's is the text reader's to refuse, by line
        return "word-text" if _numbers_line(rest, len(head) < HEAD_BYTES) else "word2vec-binary"
    return "word-text" if _numbers_line(head.removeprefix(BOM), len(head) < HEAD_BYTES) else None


def _numbers_line(data: bytes, whole: bool) -> bool:
    """Whether `data` starts with a line of text: a word, then numbers, separated by spaces or
    tabs (the floats of word2vec binary are never all digits, signs and points)."""
    line, newline, _ = data.partition(b"\n")
    complete = bool(newline) or whole
    fields = line.replace(b"\t", b" ").rstrip(b"\r ").split(b" ")
    fields = [x for x in fields if x]
    numbers = fields[1:] if complete else fields[1:-1]  # a line cut short ends in part of a number
    try:
        fields[0].decode("utf-8") if fields else None
    except UnicodeDecodeError:
        return False
    return len(fields) >= 2 and bool(numbers) and all(_NUMBER.fullmatch(x) for x in numbers)
