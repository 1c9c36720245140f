"""What the directions, WEAT and the random baseline answer: plain types (no torch), so a
window may import them as it does `results`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from embviz.core.table.results import Hit, SkippedWord


@dataclass(frozen=True)
class MatchedWord:
    """A listed word and its token under the matching rule."""

    word: str
    id: int
    label: str

    def as_dict(self) -> dict[str, Any]:
        return {"word": self.word, "id": self.id, "token": self.label}


@dataclass
class WordSet:
    """One list as given, split into the words kept and those dropped (with why)."""

    name: str
    kept: list[MatchedWord]
    dropped: list[SkippedWord]

    @property
    def ids(self) -> list[int]:
        return [w.id for w in self.kept]

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kept": [w.word for w in self.kept], "tokens": [w.label for w in self.kept],
                "dropped": [{"word": s.word, "reason": s.reason} for s in self.dropped]}


@dataclass(frozen=True)
class PlacedWord:
    """A chosen word's cosine with the direction, and its rank from the direction's far end."""

    word: str
    id: int
    label: str
    cosine: float
    rank: int | None  # 1 = most along the direction, among the rows ranked; None if not ranked

    def as_dict(self) -> dict[str, Any]:
        return {"word": self.word, "id": self.id, "token": self.label, "cosine": self.cosine, "rank": self.rank}


@dataclass
class DirectionResult:
    """A concept direction (a unit vector), the vocabulary ranked along it, chosen words placed."""

    kind: str  # "words", "pairs", "pca" or "sets"
    described: str  # e.g. "he → she"
    direction: list[float]  # the unit vector itself
    explained: float | None  # the first principal component's share of the centred pairs' variance (pca only)
    toward: list[Hit]  # the rows with the highest cosine (the "to" end)
    away: list[Hit]  # the rows with the lowest cosine (the "from" end), lowest first
    ranked: int  # how many rows were ranked (whole words only, by default, with a direction)
    words_only: bool
    placed: list[PlacedWord]
    sets: list[WordSet]  # what each input list kept and dropped
    direct_bias: float | None  # DirectBias (c = 1) of the placed words, None without any
    rule: str

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "described": self.described, "direction": self.direction,
                "explained": self.explained, "toward": [h.as_dict() for h in self.toward],
                "away": [h.as_dict() for h in self.away], "ranked": self.ranked, "words_only": self.words_only,
                "placed": [p.as_dict() for p in self.placed], "sets": [s.as_dict() for s in self.sets],
                "direct_bias": self.direct_bias, "rule": self.rule}


@dataclass
class Association:
    word: str
    label: str
    s: float  # s(w, A, B) = mean cos(w, a) − mean cos(w, b)

    def as_dict(self) -> dict[str, Any]:
        return {"word": self.word, "token": self.label, "s": self.s}


@dataclass
class WeatResult:
    """WEAT (Caliskan, Bryson and Narayanan 2017) on the words the vocabulary holds."""

    name: str
    x: WordSet
    y: WordSet
    a: WordSet
    b: WordSet
    statistic: float  # Σx s − Σy s
    effect_size: float | None  # None where every s is the same (std 0)
    p_value: float
    permutations: int  # partitions counted: all of them when exact, else the random draws
    exact: bool
    seed: int | None
    sampling: str  # "partitions" (Caliskan's) or "wefe" (WEFE 1.0.1's draws with replacement)
    associations_x: list[Association]
    associations_y: list[Association]
    rule: str
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        sets = {key: s.as_dict() for key, s in zip("xyab", (self.x, self.y, self.a, self.b))}
        return {"name": self.name, "statistic": self.statistic, "effect_size": self.effect_size,
                "p_value": self.p_value, "permutations": self.permutations, "exact": self.exact, "seed": self.seed,
                "sampling": self.sampling, "sets": sets,
                "kept": {key: s["kept"] for key, s in sets.items()},
                "dropped": {key: [d["word"] for d in s["dropped"]] for key, s in sets.items()},
                "associations": {"x": [a.as_dict() for a in self.associations_x],
                                 "y": [a.as_dict() for a in self.associations_y]},
                "rule": self.rule, "notes": self.notes}


@dataclass
class ScWeatResult:
    """SC-WEAT: one word against two attribute sets."""

    word: str
    id: int
    label: str
    a: WordSet
    b: WordSet
    s: float  # mean cos(w, A) − mean cos(w, B)
    effect_size: float | None
    p_value: float
    permutations: int
    exact: bool
    seed: int | None
    rule: str

    def as_dict(self) -> dict[str, Any]:
        return {"word": self.word, "id": self.id, "token": self.label, "s": self.s, "effect_size": self.effect_size,
                "p_value": self.p_value, "permutations": self.permutations, "exact": self.exact, "seed": self.seed,
                "sets": {"a": self.a.as_dict(), "b": self.b.as_dict()}, "rule": self.rule}


@dataclass(frozen=True)
class CosineBaseline:
    """The mean cosine over all pairs of distinct rows: what "similar" is measured against."""

    mean_cosine: float | None  # None with fewer than two rows that have a direction
    rows: int  # rows with a direction, counted in
    pairs: int  # rows × (rows − 1) / 2 pairs of distinct rows
    excluded: int  # rows left out: all zeros, NaN or Inf

    def as_dict(self) -> dict[str, Any]:
        return {"mean_cosine": self.mean_cosine, "rows": self.rows, "pairs": self.pairs, "excluded": self.excluded}
