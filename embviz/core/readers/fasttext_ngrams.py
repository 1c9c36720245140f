"""fastText's character n-grams, as Facebook's fastText and gensim 4 compute them.

A word is wrapped as `<word>`; its n-grams are the runs of `minn`..`maxn` characters (UTF-8
characters: a byte `10xxxxxx` continues the one before), in order of their first character,
then of their length, leaving out a lone `<` or `>`. Each is hashed with 32-bit FNV-1a over
its bytes, each byte sign-extended first (fastText's `int8_t` cast, kept by gensim's
`ft_hash_bytes`), and taken modulo the bucket count. A word in the vocabulary is the mean of
its own row and its n-grams' rows; a word outside it, the mean of its n-grams' rows alone
(the zero vector when it has none). The sums run in float32 in that order, row after row, as
gensim's `adjust_vectors` and `get_vector` do, so the vectors here are gensim's to the bit.

Everything is vectorised over a batch of words: the hash of every n-gram starting at every
character grows one character (and that character one byte) at a time, so the work is the
batch's bytes times `maxn` numpy steps, never a Python step per n-gram.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

# fastText's n-grams are a few characters (3 to 6 by default); more is not a real model.
MAX_NGRAM = 64
FNV_OFFSET = np.uint32(2166136261)
FNV_PRIME = np.uint32(16777619)
# Words per batch: the batch's n-gram arrays (characters × maxn) stay a few tens of megabytes.
BATCH_WORDS = 32_768
# Rows gathered from the n-gram matrix per step, so a wide table never doubles in memory.
GATHER_ROWS = 16_384


def ngram_buckets(words: Sequence[bytes], minn: int, maxn: int, bucket: int) -> tuple[np.ndarray, np.ndarray]:
    """(word, bucket) of every n-gram of `words` (UTF-8 bytes, without `<` `>`), in gensim's
    order within each word: word indices ascending, each word's n-grams in the order summed."""
    if not words or bucket <= 0 or maxn <= 0:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    data = np.frombuffer(b"".join(b"<" + w + b">" for w in words), dtype=np.uint8)
    lengths = np.fromiter((len(w) + 2 for w in words), dtype=np.intp, count=len(words))
    starts = np.flatnonzero((data & 0xC0) != 0x80)  # every character's first byte (`<` always is one)
    ends = np.append(starts[1:], data.size)  # where each character ends: the next one's start
    byte_word = np.repeat(np.arange(len(words)), lengths)
    char_word = byte_word[starts]
    chars_per_word = np.bincount(char_word, minlength=len(words))
    first_char = np.cumsum(chars_per_word) - chars_per_word
    local = np.arange(starts.size) - first_char[char_word]  # each character's place in its word
    room = chars_per_word[char_word] - local  # characters from this one to its word's end
    signed = data.view(np.int8).astype(np.uint32)  # fastText's int8_t cast: bytes ≥ 0x80 sign-extend
    hashes = np.full(starts.size, FNV_OFFSET, dtype=np.uint32)
    found_word, found_hash = [], []
    for n in range(1, maxn + 1):
        # The n-gram of n characters from character k is the (n − 1)-gram plus character k + n − 1.
        alive = np.flatnonzero(room >= n)
        if alive.size == 0:
            break
        nxt = alive + (n - 1)  # only the characters with n characters left in their word grow
        at, first, width = alive, starts[nxt], ends[nxt] - starts[nxt]
        b = 0
        while at.size:  # byte b of each character that has one: the steps cost bytes, never characters × widest
            hashes[at] = (hashes[at] ^ signed[first + b]) * FNV_PRIME
            b += 1
            wider = width > b  # a character is 1 to 4 bytes (any number in broken UTF-8)
            at, first, width = at[wider], first[wider], width[wider]
        if n >= minn:
            keep = alive if n > 1 else alive[(local[alive] > 0) & (room[alive] > 1)]  # no lone `<`, `>`
            found_word.append(keep)
            found_hash.append(hashes[keep] % np.uint32(bucket))
    if not found_word:
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    # Put them in gensim's order: by starting character (characters run word by word), then length.
    position = np.concatenate(found_word)
    length = np.concatenate([np.full(k.size, i, dtype=np.intp) for i, k in enumerate(found_word)])
    order = np.lexsort((length, position))
    return char_word[position[order]].astype(np.intp), np.concatenate(found_hash)[order].astype(np.intp)


def compose(out: np.ndarray, vocab: np.ndarray, ngrams: np.ndarray, words: Sequence[bytes], minn: int, maxn: int) -> None:
    """Fill `out` (len(words) × dim float32) with the words' vectors: each word's row of `vocab`
    plus its n-grams' rows of `ngrams` (one a bucket), divided by their count."""
    nwords, bucket = len(words), len(ngrams)
    for begin in range(0, nwords, BATCH_WORDS):
        stop = min(begin + BATCH_WORDS, nwords)
        part = out[begin:stop]
        part[:] = vocab[begin:stop]
        owner, buckets = ngram_buckets(words[begin:stop], minn, maxn, bucket)
        counts = np.bincount(owner, minlength=stop - begin)
        _add_in_order(part, ngrams, owner, buckets, counts)
        part /= (counts + 1).astype(np.float32)[:, None]


def _add_in_order(out: np.ndarray, matrix: np.ndarray, owner: np.ndarray, rows: np.ndarray, counts: np.ndarray) -> None:
    """out[owner[i]] += matrix[rows[i]], each word's additions in the order given: the r-th
    addition of every word at once, so no word gets two rows in one step (and float32 sums
    keep gensim's order)."""
    if owner.size == 0:
        return
    first = np.cumsum(counts) - counts
    rank = np.arange(owner.size) - first[owner]  # `owner` is sorted: its runs are the words
    order = np.argsort(rank, kind="stable")
    steps = np.bincount(rank)
    done = 0
    for step in steps:
        picked = order[done:done + step]
        done += step
        for at in range(0, picked.size, GATHER_ROWS):
            chunk = picked[at:at + GATHER_ROWS]
            out[owner[chunk]] += matrix[rows[chunk]]


def oov_vector(ngram_rows: np.ndarray) -> np.ndarray:
    """The mean of an out-of-vocabulary word's n-gram rows (in its n-grams' order), summed in
    float32 one row after another as gensim's `get_vector` does; zeros when there are none."""
    dim = ngram_rows.shape[1]
    total = np.zeros(dim, dtype=np.float32)
    for row in ngram_rows:
        total += row
    return total if len(ngram_rows) == 0 else total / np.float32(len(ngram_rows))
