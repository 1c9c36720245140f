"""Find tokens by text or by regular expression, within a time limit.

A pattern such as `(a+)+$` backtracks exponentially on a long token; the `regex`
package stops a match at a deadline, so one bad pattern can never block the lane
that answers lookups.
"""

from __future__ import annotations

import time

import regex

from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.table.vocab import SPACE_MARK, Vocabulary

SEARCH_SECONDS = 2.0
_PROGRESS_EVERY = 4096  # rows between cancel checks


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
        needle = pattern.lower()

        def match(text: str) -> bool:
            return needle in text.lower()
    else:
        needle = pattern.lower()
        exact_space = needle.startswith(" ")

        def match(text: str) -> bool:
            low = text.lower()
            return low == needle or (not exact_space and low.startswith(" ") and low[1:] == needle)

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
