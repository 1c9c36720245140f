"""What the table's views answer: plain types (numpy, no torch), so the window may import them."""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass, field

import numpy as np

# The tables a request, a tab or the command line may read: the input embedding, or an
# untied model's output head; and what a tied model answers when asked for its head.
TABLES = ("input", "output")
ONE_TABLE = "This model's output head is its input table (tied): one table."


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


@dataclass(frozen=True)
class ScoredPair:
    """One rated pair as the model scores it: its two words, their tokens, people's rating,
    the model's cosine, and how far the cosine is from the line fitted through all pairs."""

    word1: str
    word2: str
    ids: tuple[int, int]
    labels: tuple[str, str]  # the tokens as shown ("␣cup")
    rating: float
    cosine: float
    residual: float  # cosine − the least-squares line's cosine at this rating

    def as_dict(self) -> dict[str, Any]:
        return {"word1": self.word1, "word2": self.word2, "ids": list(self.ids), "tokens": list(self.labels),
                "rating": self.rating, "cosine": self.cosine, "residual": self.residual}


@dataclass(frozen=True)
class SkippedWord:
    word: str
    reason: str  # "is two tokens: ␣m + ug", "is not in the vocabulary", "has no direction (its row is all zeros)"


@dataclass
class PairScores:
    """A table scored against people's similarity ratings (gensim's evaluate_word_pairs):
    Pearson's r and Spearman's ρ between the ratings and the model's cosines over the pairs
    kept, the pairs skipped (a word that is not one token here) and the matching rule."""

    source: str  # "WordSim-353", "SimLex-999" or the file's name
    model: str  # the model's name
    total: int  # pairs read
    pairs: list[ScoredPair]  # kept, furthest from the line first
    skipped_pairs: int
    skipped_words: list[SkippedWord]  # each word once, in file order
    pearson: float | None  # None where undefined (every cosine or every rating the same)
    spearman: float | None
    line: tuple[float, float]  # cosine ≈ line[0] + line[1] × rating
    rule: str  # how words were matched to tokens, in one sentence
    notes: list[str] = field(default_factory=list)

    @property
    def kept(self) -> int:
        return len(self.pairs)

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "model": self.model, "total": self.total, "kept": self.kept,
                "skipped": self.skipped_pairs, "pearson": self.pearson, "spearman": self.spearman,
                "line": list(self.line), "rule": self.rule, "notes": self.notes,
                "skipped_words": [{"word": s.word, "reason": s.reason} for s in self.skipped_words],
                "pairs": [p.as_dict() for p in self.pairs]}


@dataclass
class OddOneOut:
    """N words, the one that does not belong (gensim's doesnt_match: the lowest cosine to the
    normalised mean of all the unit rows), and each word's cosine to the mean of the others."""

    words: list[str]  # as typed
    ids: list[int]
    labels: list[str]
    to_others: list[float]  # each word's cosine to the mean of the other words' unit rows
    to_mean: list[float]  # each word's cosine to the normalised mean of all (gensim's score)
    outsider: int  # index into words

    @property
    def others_agree(self) -> bool:
        """Whether the lowest cosine to the others' mean names the same word (it does unless
        the others nearly cancel out)."""
        return int(np.argmin(self.to_others)) == self.outsider

    def as_dict(self) -> dict[str, Any]:
        return {"words": self.words, "ids": self.ids, "tokens": self.labels, "outsider": self.words[self.outsider],
                "outsider_token": self.labels[self.outsider], "cosine_to_others": self.to_others,
                "cosine_to_mean": self.to_mean}


@dataclass(frozen=True)
class WordPairCosine:
    """Two words matched to their tokens as rated pairs are, and the cosine of their rows."""

    words: tuple[str, str]
    ids: tuple[int, int]
    labels: tuple[str, str]
    cosine: float
