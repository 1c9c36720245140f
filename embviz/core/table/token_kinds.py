"""What kind of piece each token is: the start of a word, the continuation of one, a
number, punctuation, a byte piece or a special token. The Map tab colours by it, so a
class sees at a glance how a BPE vocabulary is made."""

from __future__ import annotations

import unicodedata

import numpy as np

from embviz.core.table.vocab import Vocabulary

WORD, CONTINUATION, NUMBER, PUNCTUATION, BYTE, SPECIAL = range(6)
KIND_NAMES = ("word start (␣…)", "continuation", "number", "punctuation, spaces", "byte piece", "special")
UNREADABLE = (BYTE, SPECIAL)  # never a cluster's name


def _kind_of_text(text: str, space_prefixed: bool) -> int:
    core = text.strip()
    if core == "":
        return PUNCTUATION  # spaces, newlines, tabs
    if any(unicodedata.category(ch)[0] == "C" for ch in core):
        return BYTE  # a control character: one of the 256 raw bytes, not text
    if core.replace(",", "").replace(".", "").isnumeric():
        return NUMBER
    if all(unicodedata.category(ch)[0] in "PS" for ch in core):
        return PUNCTUATION
    # Word-level vocabularies (the lessons, GloVe) hold whole words only.
    if not space_prefixed or text[0].isspace():
        return WORD
    return CONTINUATION


def token_kinds(vocab: Vocabulary) -> np.ndarray:
    """The kind of every row (uint8, an index into KIND_NAMES)."""
    space_prefixed = vocab.space_prefixed and not vocab.word_level
    kinds = np.fromiter((_kind_of_text(t, space_prefixed) for t in vocab.texts), dtype=np.uint8, count=vocab.size)
    if vocab.partial_ids:
        kinds[list(vocab.partial_ids)] = BYTE
    if vocab.special_ids:
        kinds[list(vocab.special_ids)] = SPECIAL
    return kinds
