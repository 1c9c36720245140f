"""What kind of piece each token is: the start of a word, the continuation of one, a
number, punctuation, a byte piece or a special token. The Map tab colours by it, so a
class sees at a glance how a BPE vocabulary is made."""

from __future__ import annotations

import numpy as np

from embviz.core.table.vocab import BYTE, CONTINUATION, NUMBER, PUNCTUATION, SPECIAL, WORD, Vocabulary

__all__ = ["BYTE", "CONTINUATION", "KIND_NAMES", "NUMBER", "PUNCTUATION", "SPECIAL", "UNREADABLE", "WORD", "token_kinds"]
KIND_NAMES = ("word start (␣…)", "continuation", "number", "punctuation, spaces", "byte piece", "special")
UNREADABLE = (BYTE, SPECIAL)  # never a cluster's name


def token_kinds(vocab: Vocabulary) -> np.ndarray:
    """The kind of every row (uint8, an index into KIND_NAMES), read-only. The rule lives with
    the vocabulary, whose "whole words only" filter keeps the word starts."""
    return vocab.kinds
