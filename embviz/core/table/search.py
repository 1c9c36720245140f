"""Find tokens by text or by regular expression, within a time limit.

A pattern such as `(a+)+$` backtracks exponentially on a long token; the `regex`
package stops a match at a deadline, so one bad pattern can never block the lane
that answers lookups.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Callable

import numpy as np
import regex

from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.table.vocab import SPACE_MARK, Vocabulary

SEARCH_SECONDS = 2.0
_PROGRESS_EVERY = 4096  # rows between cancel checks
# Plain text is found in the vocabulary's lowercased texts joined by this character, by str.find
# (C, a few ms for two million tokens) rather than a step of Python per token (a second).
_SEPARATOR = "\x1f"
_SCAN_BATCH = 4096  # places found before they are turned into rows
_KEPT = 2  # vocabularies whose joined text is kept: the open model's and one more
_joined: list[tuple[weakref.ref, str, np.ndarray, bool]] = []
_joined_lock = threading.Lock()


def search_tokens(
    vocab: Vocabulary,
    pattern: str,
    use_regex: bool = False,
    limit: int = 500,
    seconds: float = SEARCH_SECONDS,
    progress: ProgressFn = no_progress,
    substring: bool = False,
) -> list[int]:
    """Ids of matching tokens in id order, at most `limit`; ␣ means a space everywhere.

    Plain text matches whole tokens, case-insensitively, with the leading space optional
    ("king" finds king, King, ␣king, ␣King; "␣king" only the last two); `substring`
    finds every token that contains it. A regex is searched for in each token's text."""
    if not pattern:
        return []
    deadline = time.monotonic() + seconds
    pattern = pattern.replace(SPACE_MARK, " ")
    if use_regex:
        try:
            compiled = regex.compile(pattern)
        except regex.error as exc:
            raise EmbvizError(f"Not a valid regular expression: {exc}.") from exc

        def match(text: str) -> bool:
            return compiled.search(text, timeout=max(deadline - time.monotonic(), 1e-3)) is not None
    elif substring:
        needle, exact_space = pattern.lower(), False

        def match(text: str) -> bool:
            return needle in text.lower()
    else:
        needle = pattern.lower()
        exact_space = needle.startswith(" ")

        def match(text: str) -> bool:
            low = text.lower()
            return low == needle or (not exact_space and low.startswith(" ") and low[1:] == needle)

    if not use_regex and _SEPARATOR not in pattern:
        progress(0.0, "Searching", None)
        return _scan(vocab, needle, substring, exact_space, match, limit)
    out: list[int] = []
    try:
        for i, text in enumerate(vocab.texts):
            if i % _PROGRESS_EVERY == 0:
                progress(i / max(vocab.size, 1), "Searching", None)
                if time.monotonic() > deadline:
                    raise TimeoutError
            if match(text):
                out.append(i)
                if len(out) >= limit:
                    break
    except TimeoutError as exc:
        raise EmbvizError(
            f"The pattern '{pattern}' took longer than {seconds:g} s to search the vocabulary, so the search stopped. "
            "Nested repeats such as (a+)+ can take exponential time: simplify the pattern."
        ) from exc
    return out


def _lowered(vocab: Vocabulary) -> tuple[str, np.ndarray, bool]:
    """(the texts lowercased, each preceded and the last followed by _SEPARATOR; where each
    text begins in it; whether no text holds _SEPARATOR), made once per vocabulary."""
    with _joined_lock:
        for ref, *kept in _joined:
            if ref() is vocab:
                return tuple(kept)
        lowered = list(map(str.lower, vocab.texts))
        joined = _SEPARATOR + _SEPARATOR.join(lowered) + _SEPARATOR
        lengths = np.fromiter(map(len, lowered), dtype=np.int64, count=len(lowered))
        starts = np.concatenate(([1], 1 + np.cumsum(lengths + 1)[:-1])) if len(lowered) else np.zeros(0, np.int64)
        clean = joined.count(_SEPARATOR) == len(lowered) + 1
        _joined[:] = [entry for entry in _joined[-(_KEPT - 1):] if entry[0]() is not None] + \
            [(weakref.ref(vocab), joined, starts, clean)]
        return joined, starts, clean


def _scan(vocab: Vocabulary, needle: str, substring: bool, exact_space: bool, match: Callable[[str], bool],
          limit: int) -> list[int]:
    """search_tokens' plain-text answer found with str.find, the loop's answer: where a text
    holds _SEPARATOR (and so could fake a hit) each candidate is checked with `match`."""
    joined, starts, clean = _lowered(vocab)
    texts = vocab.texts
    wholes = [needle] if exact_space else [needle, " " + needle]
    wanted = [needle] if substring else [_SEPARATOR + whole + _SEPARATOR for whole in wholes]
    out: list[int] = []
    for pattern in wanted:
        at = joined.find(pattern)
        while at >= 0 and (not substring or len(out) < limit):
            found = []  # a batch of places, turned into rows in one sorted lookup
            while at >= 0 and len(found) < _SCAN_BATCH:
                found.append(at)
                at = joined.find(pattern, at + 1)
            rows = np.unique(np.searchsorted(starts, np.asarray(found) + (0 if substring else 1), side="right") - 1)
            for row in rows.tolist():
                if (not out or row > out[-1] or not substring) and (clean or match(texts[row])):
                    out.append(row)
                    if substring and len(out) >= limit:
                        break
    return out if substring else sorted(set(out))[:limit]
