"""Plain-text search finds its tokens with str.find over the lowercased vocabulary joined once:
the same ids, in the same order, as checking every token in turn."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from embviz.core.table import search
from embviz.core.table.search import search_tokens
from embviz.core.table.vocab import vocabulary_from_words


def every_token(texts: list[str], pattern: str, substring: bool, limit: int) -> list[int]:
    needle = pattern.replace("␣", " ").lower()
    if substring:
        hits = [i for i, t in enumerate(texts) if needle in t.lower()]
    else:
        spaced = needle.startswith(" ")
        hits = [i for i, t in enumerate(texts)
                if t.lower() == needle or (not spaced and t.lower().startswith(" ") and t.lower()[1:] == needle)]
    return hits[:limit]


TEXTS = ["king", " King", "KING", "kingdom", " kingdom", "x\x1fking", "king\x1f", "ki", "ng", "", " ", "İstanbul",
         "ΣΑΣ", "σας", "a king", "  king", "king", "Königin", "🙂king"]


@pytest.mark.parametrize("pattern", ["king", "␣king", "KING", "ing", "i", "σας", "i̇stanbul", "g\x1f", "\x1f", "🙂"])
@pytest.mark.parametrize("substring", [False, True])
@pytest.mark.parametrize("limit", [1, 3, 500])
def test_the_same_ids_as_every_token_in_turn(pattern, substring, limit):
    vocab = vocabulary_from_words(TEXTS)
    assert search_tokens(vocab, pattern, substring=substring, limit=limit) == \
        every_token(vocab.texts, pattern, substring, limit)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("kK iI\x1fİΣσς,")), max_size=5), min_size=1, max_size=15),
       st.text(alphabet=st.sampled_from(list("kK iIİΣσς␣\x1f")), min_size=1, max_size=3), st.booleans(),
       st.integers(1, 6))
def test_any_vocabulary(texts, pattern, substring, limit):
    vocab = vocabulary_from_words(texts)
    assert search_tokens(vocab, pattern, substring=substring, limit=limit) == \
        every_token(vocab.texts, pattern, substring, limit)


def test_many_hits_on_a_big_vocabulary():
    words = [f"w{i}" for i in range(300_000)]
    vocab = vocabulary_from_words(words)
    hits = search_tokens(vocab, "w1", substring=True, limit=100_000)
    assert hits == every_token(vocab.texts, "w1", True, 100_000) and len(hits) == 100_000
    assert search_tokens(vocab, "W299999") == [299_999]
    assert search_tokens(vocab, "w", limit=10) == []
    lowered = search._lowered(vocab)
    assert search._lowered(vocab).joined is lowered.joined  # made once per vocabulary
    assert np.array_equal(lowered.starts[:3], [1, 4, 7]) and lowered.clean
    assert not search._lowered(vocabulary_from_words(TEXTS)).clean  # "x\x1fking": candidates are checked
