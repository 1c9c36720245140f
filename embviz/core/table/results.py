"""What the table's views answer: plain types (numpy, no torch), so the window may import them."""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Hit:
    id: int
    token: str  # readable label, e.g. "␣king"
    score: float
    text: str = ""  # the token's exact text, e.g. " king": what a script can feed back in

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "token": self.text, "label": self.token, "score": self.score}


@dataclass
class InputRank:
    role: str  # "A", "B" or "C"
    id: int | None  # None when the input was a vector matching no row
    token: str  # readable label
    rank: int | None  # 1-based rank among all rows had inputs not been excluded
    score: float | None
    text: str = ""  # the exact token text

    def as_dict(self) -> dict[str, Any]:
        return {"role": self.role, "id": self.id, "token": self.text, "label": self.token, "rank": self.rank, "score": self.score}


@dataclass
class AnalogyResult:
    results: list[Hit]
    exclude_inputs: bool
    method: str
    excluded_ids: list[int] = field(default_factory=list)
    input_ranks: list[InputRank] = field(default_factory=list)
    exclude_variants: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "results": [h.as_dict() for h in self.results],
            "exclude_inputs": self.exclude_inputs,
            "exclude_variants": self.exclude_variants,
            "method": self.method,
            "excluded_ids": self.excluded_ids,
            "input_ranks": [r.as_dict() for r in self.input_ranks],
        }


@dataclass
class AnalogyPlane:
    """The analogy's own 2-D view: axes from word pairs, as TF Projector's custom
    projection does (x = B→C, man→woman; y = B→A, man→king, made orthogonal to x), and
    the four words with their nearest neighbours on it."""

    ids: list[int]
    coords: np.ndarray  # (len(ids), 2)
    arrows: list[tuple[int, int]]  # B→A and C→D: the two that the analogy says are parallel
    parallel: float  # cosine of (A − B) and (D − C) in all of the table's dimensions
    axes: tuple[str, str]  # "man → woman", "man → king"


@dataclass
class SectionScore:
    name: str
    total: int
    kept: int
    correct_excluded: int
    correct_included: int
    correct_variants: int = 0  # with the inputs' case and space variants excluded too

    @property
    def accuracy_excluded(self) -> float | None:
        return self.correct_excluded / self.kept if self.kept else None

    @property
    def accuracy_included(self) -> float | None:
        return self.correct_included / self.kept if self.kept else None

    @property
    def accuracy_variants(self) -> float | None:
        return self.correct_variants / self.kept if self.kept else None


@dataclass
class Miss:
    """A question answered wrongly with the inputs excluded, and what came first instead."""

    section: str
    words: tuple[str, str, str, str]  # a is to b as c is to d, as the model's tokens
    predicted: str


@dataclass
class BenchmarkResult:
    total: int
    sections: list[SectionScore]
    lowercased: bool = False  # questions were lower-cased to match a lower-cased vocabulary
    misses: list[Miss] = field(default_factory=list)  # the first MAX_MISSES, in file order

    @property
    def kept(self) -> int:
        return sum(s.kept for s in self.sections)

    def _accuracy(self, attr: str) -> float | None:
        return sum(getattr(s, attr) for s in self.sections) / self.kept if self.kept else None

    @property
    def accuracy_excluded(self) -> float | None:
        return self._accuracy("correct_excluded")

    @property
    def accuracy_included(self) -> float | None:
        return self._accuracy("correct_included")

    @property
    def accuracy_variants(self) -> float | None:
        return self._accuracy("correct_variants")

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "kept": self.kept,
            "accuracy_excluded": self.accuracy_excluded,
            "accuracy_included": self.accuracy_included,
            "accuracy_excluded_variants": self.accuracy_variants,
            "lowercased": self.lowercased,
            "sections": [
                {"name": s.name, "total": s.total, "kept": s.kept,
                 "accuracy_excluded": s.accuracy_excluded, "accuracy_included": s.accuracy_included,
                 "accuracy_excluded_variants": s.accuracy_variants}
                for s in self.sections
            ],
            "misses": [{"section": m.section, "words": list(m.words), "predicted": m.predicted} for m in self.misses],
        }
