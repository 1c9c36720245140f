"""Numbers as a class reads them: labels that tell different values apart."""

from __future__ import annotations

import re
import unicodedata

_ZERO = re.compile(r"^-?0\.?0*$")
PERCENT_DECIMALS = 5  # enough for T = 5 (0.07230 % against 0.07180 %); more tells a class nothing
BOUND_DECIMALS = 2  # past that, the extremes read "< 0.01%" and "> 99.99%"
# Marks, format and control characters, separators, unassigned: nothing of them shows on its own.
_INVISIBLE = ("Mn", "Me", "Cf", "Cc", "Co", "Cn", "Zs", "Zl", "Zp")


def _reads_apart(values: list[float], scale: float, decimals: int, ceiling: float | None) -> bool:
    """Whether, at `decimals`, different values read differently, no value other than zero
    reads as zero and (with a `ceiling`) none below it reads as it."""
    texts = [f"{v * scale:.{decimals}f}" for v in values]
    first_value: dict[str, float] = {}
    if not all(first_value.setdefault(t, v) == v for t, v in zip(texts, values)):
        return False
    if any(v != 0 and _ZERO.match(t) for t, v in zip(texts, values)):
        return False
    return ceiling is None or not any(v * scale < ceiling and float(t) >= ceiling for t, v in zip(texts, values))


def _decimals(values: list[float], scale: float, start: int, most: int, ceiling: float | None = None) -> int | None:
    """The fewest decimals, from `start` to `most`, at which `values` read apart; None if none do."""
    return next((d for d in range(start, most + 1) if _reads_apart(values, scale, d, ceiling)), None)


def distinct_labels(values: list[float], scale: float = 1.0, suffix: str = "", start: int = 1, most: int = 8) -> list[str]:
    """One number of decimals for all of `values` (times `scale`): the fewest, from
    `start`, at which different values read differently and no value other than zero
    reads as zero."""
    decimals = _decimals(values, scale, start, most)
    return [f"{v * scale:.{most if decimals is None else decimals}f}{suffix}" for v in values]


def percent_labels(probabilities: list[float]) -> list[str]:
    """0.4213 → "42.1%", with more decimals only where bars would read the same. At a low
    temperature the top token holds all but 1e-13 of the mass: it reads "> 99.99%" and the
    rest "< 0.01%", not "100.00000000%" and a row of zeros."""
    decimals = _decimals(probabilities, 100.0, 1, PERCENT_DECIMALS, ceiling=100.0)
    if decimals is not None:
        return [f"{100 * p:.{decimals}f}%" for p in probabilities]
    floor = 10.0 ** -BOUND_DECIMALS
    inside = [p for p in probabilities if not _beyond(100 * p, floor)]
    decimals = _decimals(inside, 100.0, BOUND_DECIMALS, PERCENT_DECIMALS, ceiling=100.0) or BOUND_DECIMALS
    return [_bound(100 * p, floor) if _beyond(100 * p, floor) else f"{100 * p:.{decimals}f}%" for p in probabilities]


def _beyond(percent: float, floor: float) -> bool:
    return 0 < percent < floor or 100 - floor < percent < 100


def _bound(percent: float, floor: float) -> str:
    return f"< {floor:.{BOUND_DECIMALS}f}%" if percent < floor else f"> {100 - floor:.{BOUND_DECIMALS}f}%"


def logit_labels(logits: list[float]) -> list[str]:
    return distinct_labels(logits, 1.0, "", start=2)


def visible_token(label: str) -> str:
    """A token's label as it can be seen: one made only of invisible characters (the
    variation selector U+FE0F, a zero-width joiner) reads as its code points."""
    if label and all(unicodedata.category(c) in _INVISIBLE for c in label):
        return " ".join(f"U+{ord(c):04X}" for c in label)
    return label
