"""Numbers as a class reads them: labels that tell different values apart."""

from __future__ import annotations

import re

_ZERO = re.compile(r"^-?0\.?0*$")


def distinct_labels(values: list[float], scale: float = 1.0, suffix: str = "", start: int = 1, most: int = 8) -> list[str]:
    """One number of decimals for all of `values` (times `scale`): the fewest, from
    `start`, at which different values read differently and no value other than zero
    reads as zero."""
    for decimals in range(start, most + 1):
        texts = [f"{v * scale:.{decimals}f}" for v in values]
        first_value: dict[str, float] = {}
        distinct = all(first_value.setdefault(t, v) == v for t, v in zip(texts, values))
        if distinct and not any(v != 0 and _ZERO.match(t) for t, v in zip(texts, values)):
            break
    return [t + suffix for t in texts]


def percent_labels(probabilities: list[float]) -> list[str]:
    """0.4213 → "42.1%", with more decimals only where bars would read the same."""
    return distinct_labels(probabilities, 100.0, "%")


def logit_labels(logits: list[float]) -> list[str]:
    return distinct_labels(logits, 1.0, "", start=2)
