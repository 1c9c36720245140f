"""Names of clusters that a class can read as a topic.

A cluster of words is named by its most central whole words (see `dictionary`: " strugg" is a
piece of " struggle", not a word), never by stop words ("the", "in", "more" name no topic).
A cluster of pieces is named by what its pieces have in common ("line breaks and indents",
"single letters", "punctuation: ” ) ,") or, when they share nothing a class could read, says
that it is pieces and shows its most central ones ("pieces: strugg dismant advoc"). Every
cluster has a name, and no two the same."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from embviz.core.table.dictionary import dictionary, is_word, stop_words
from embviz.core.table.token_kinds import NUMBER, PUNCTUATION, UNREADABLE, WORD

__all__ = ["BYTE_PIECES", "FUNCTION_WORDS", "NAME_CHARS", "PIECES", "dictionary", "is_whole_word", "name_of", "readable", "told_apart", "trait_of"]
NAME_WORDS = 3
NAME_CHARS = 28  # a name's length, spaces included: fewer or shorter words are chosen to fit, never a cut one
NAME_CANDIDATES = 20  # a name's words come from this many most central ones: shorter, but still typical
# A cluster is named by words when at least this share of its most central readable tokens
# are words: the SmolLM2 cluster of " strugg", " dismant", " enthus" holds a few words too
# (" accreditation"), but naming it by them would hide what the cluster is.
WORD_SHARE = 0.25
# A cluster whose central words are at least this share stop words is the language's glue:
# naming it by its few other words ("more Pro high") would hide that.
STOP_SHARE = 0.5
FUNCTION_WORDS = "function words"
PIECES = "pieces"  # a cluster of word pieces that share nothing else, named with its central ones
BYTE_PIECES = "byte pieces"  # one of tokens that are no text of their own (bytes, special tokens)
# What pieces have in common counts when this share of the central ones have it.
TRAIT_SHARE = 0.8
PUNCTUATION_SIGNS = 3  # the commonest signs a punctuation cluster's name shows


def is_whole_word(kind: int, text: str, words: frozenset[str] | None = None) -> bool:
    """A word start that is a real word (" Monday"), not a piece of one (" strugg"), a
    letter, a number or a run of signs; with no dictionary, any word start of letters."""
    return kind == WORD and is_word(text, words)


def name_of(ranked: np.ndarray, kinds: np.ndarray, texts: list[str], labels: list[str],
            words: frozenset[str] | None = None) -> tuple[str, bool]:
    """(a cluster's name, whether it is named by words) from its members, most central first:
    up to NAME_WORDS of the most central whole words other than stop words that fit in
    NAME_CHARS together, without the same word twice in other capitals; FUNCTION_WORDS when
    stop words make up its centre. A cluster with no whole word, or whose centre is mostly
    pieces of words (under WORD_SHARE), is named by what its pieces share (`trait_of`), or,
    failing that, as pieces followed by its most central ones."""
    shown = readable(ranked, kinds, texts)
    central = (shown or ranked.tolist())[:NAME_CANDIDATES]
    whole = [texts[i].strip() for i in central if is_whole_word(kinds[i], texts[i], words)]
    if len(whole) >= WORD_SHARE * len(central):
        stop = stop_words()
        if sum(w.lower() in stop for w in whole) >= STOP_SHARE * len(whole):
            return FUNCTION_WORDS, True
        found = [texts[i].strip() for i in ranked
                 if is_whole_word(kinds[i], texts[i], words) and texts[i].strip().lower() not in stop]
        if found:
            return fit(found, NAME_CHARS), True
    trait = trait_of([texts[i] for i in central], [int(kinds[i]) for i in central])
    if trait:
        return trait, False
    if shown:
        return _examples_name(PIECES, [texts[i] for i in central]), False
    return _examples_name(BYTE_PIECES, [labels[i] for i in central]), False  # no text of their own: their labels


def _examples_name(kind: str, shown: list[str]) -> str:
    """"pieces: strugg dismant advoc": what the cluster is, then its most central members."""
    own = [text.strip() for text in shown if text.strip()]
    return f"{kind}: {fit(own, max(NAME_CHARS - len(kind) - 2, 1))}" if own else kind


def readable(ranked: np.ndarray, kinds: np.ndarray, texts: list[str]) -> list[int]:
    """The members worth showing: no special tokens, byte pieces or bare spaces."""
    return [int(i) for i in ranked
            if kinds[i] not in UNREADABLE and not (kinds[i] == PUNCTUATION and texts[i].strip() == "")]


def trait_of(texts: Sequence[str], kinds: Sequence[int]) -> str:
    """What most of these pieces (a cluster's central ones) have in common, as a name a class
    reads: spaces, line breaks, numbers, single letters or signs; "" when nothing is shared."""
    def share(test: Callable[[str, int], bool]) -> float:
        return sum(test(t, k) for t, k in zip(texts, kinds)) / max(len(texts), 1)

    if share(lambda t, k: t.strip() == "") >= TRAIT_SHARE:
        return "line breaks and indents" if share(lambda t, k: "\n" in t or "\r" in t) >= 0.5 else "runs of spaces"
    if share(lambda t, k: k == NUMBER) >= TRAIT_SHARE:
        return "numbers"
    if share(lambda t, k: len(t.strip()) == 1 and t.strip().isalpha()) >= TRAIT_SHARE:
        return "single letters"
    if share(lambda t, k: k == PUNCTUATION) >= TRAIT_SHARE:
        signs = Counter(ch for t in texts for ch in t.strip())
        if share(lambda t, k: set(t.strip()) == {signs.most_common(1)[0][0]}) >= TRAIT_SHARE:
            return f"runs of {signs.most_common(1)[0][0]}"
        return "punctuation: " + " ".join(ch for ch, _ in signs.most_common(PUNCTUATION_SIGNS))
    return ""


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


def told_apart(names: list[str], examples: list[list[str]]) -> list[str]:
    """The names, each one that more than one cluster was given followed by that cluster's own
    most central examples ("function words: the a", "function words: in on"): one name on two
    clusters reads as one topic drawn in two places. Names that are still alike (their examples
    were too, or they already show them) are numbered in order of size: "pieces: ab cd (2)".
    `examples`: each cluster's, most central first."""
    given = Counter(names)
    told: list[str] = []
    for name, shown in zip(names, examples):
        told.append(_examples_name(name, shown) if given[name] > 1 and ": " not in name else name)
    still = Counter(told)
    counted: Counter[str] = Counter()
    for c, name in enumerate(told):
        if still[name] > 1:
            counted[name] += 1
            told[c] = f"{name} ({counted[name]})"
    return told
