"""Find tokens by text or by regular expression, within a time limit.

A pattern such as `(a+)+$` backtracks exponentially on a long token; the `regex`
package stops a match at a deadline, so one bad pattern can never block the lane
that answers lookups.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any, Callable

import numpy as np
import regex

from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.table.joined_text import SEPARATOR, JoinedTexts, join_texts
from embviz.core.table.vocab import SPACE_MARK, Vocabulary

SEARCH_SECONDS = 2.0
_PROGRESS_EVERY = 4096  # rows between cancel checks
# Plain text is found in the vocabulary's lowercased texts joined (joined_text), by str.find
# (C, a few ms for two million tokens) rather than a step of Python per token (a second).
_SCAN_BATCH = 4096  # places found before they are turned into rows
_KEPT = 2  # vocabularies whose joined text is kept: the open model's and one more
_joined: list[tuple[weakref.ref[Any], JoinedTexts]] = []
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

    if not use_regex and SEPARATOR not in pattern:
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


def _lowered(vocab: Vocabulary) -> JoinedTexts:
    """The vocabulary's texts lowercased and joined, made once per vocabulary."""
    with _joined_lock:
        for ref, kept in _joined:
            if ref() is vocab:
                return kept
        lowered = join_texts(list(map(str.lower, vocab.texts)))
        _joined[:] = [entry for entry in _joined[-(_KEPT - 1):] if entry[0]() is not None] + [(weakref.ref(vocab), lowered)]
        return lowered


def _scan(vocab: Vocabulary, needle: str, substring: bool, exact_space: bool, match: Callable[[str], bool],
          limit: int) -> list[int]:
    """search_tokens' plain-text answer found with str.find, the loop's answer: where a text
    holds the separator (and so could fake a hit) each candidate is checked with `match`."""
    lowered = _lowered(vocab)
    joined = lowered.joined
    texts = vocab.texts
    wholes = [needle] if exact_space else [needle, " " + needle]
    wanted = [needle] if substring else [SEPARATOR + whole + SEPARATOR for whole in wholes]
    out: list[int] = []
    for pattern in wanted:
        at = joined.find(pattern)
        while at >= 0 and (not substring or len(out) < limit):
            found: list[int] = []  # a batch of places, turned into rows in one sorted lookup
            while at >= 0 and len(found) < _SCAN_BATCH:
                found.append(at)
                at = joined.find(pattern, at + 1)
            rows = lowered.texts_at(np.asarray(found) + (0 if substring else 1))
            for row in rows.tolist():
                if (not out or row > out[-1] or not substring) and (lowered.clean or match(texts[row])):
                    out.append(row)
                    if substring and len(out) >= limit:
                        break
    return out if substring else sorted(set(out))[:limit]
