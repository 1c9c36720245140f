"""Comparing two models: opening the second, every shared token's neighbourhood likeness,
and one token's dominoes (neighbours common to both, only in A, only in B)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from embviz.bridge import requests as rq
from embviz.bridge.registry import handles
from embviz.core import EmbvizError, open_checkpoint
from embviz.core.table.compare import (CKA_UNDEFINED, Comparison, Dominoes, ModelPair, dominoes, find_shared, pair_models,
                                        token_dominoes)
from embviz.core.errors import ProgressFn, first_line
from embviz.core.model import EmbeddingModel

EXTREMES = 20  # least and most similar tokens listed


@dataclass
class ComparisonSummary:
    """What opening the second model tells the window: the model, and what the two share."""

    info: dict[str, Any]
    shared: int
    only_a: int
    only_b: int
    rule: str
    notes: list[str]


@dataclass(frozen=True)
class TokenScore:
    token: str  # A's exact text
    label: str
    jaccard: float

    def as_dict(self) -> dict[str, Any]:
        return {"token": self.token, "label": self.label, "jaccard": self.jaccard}


@dataclass(frozen=True)
class DominoesView:
    token: str
    label: str
    jaccard: float
    common: list[tuple[str, str]]  # (text, label), nearest first in A
    only_a: list[tuple[str, str]]
    only_b: list[tuple[str, str]]  # nearest first in B

    def as_dict(self) -> dict[str, Any]:
        def texts(words: list[tuple[str, str]]) -> list[str]:
            return [text for text, _ in words]

        return {"token": self.token, "label": self.label, "jaccard": self.jaccard,
                "common": texts(self.common), "only_a": texts(self.only_a), "only_b": texts(self.only_b)}


@dataclass
class CompareView:
    names: tuple[str, str]
    shared: int
    only_a: int
    only_b: int
    k: int
    mean_jaccard: float
    cka: float | None  # None: undefined, and a note says why
    procrustes_mean: float | None  # mean cosine distance after rotating A onto B; None for unequal widths
    rule: str
    notes: list[str]
    least_similar: list[TokenScore]
    most_similar: list[TokenScore]
    tokens: list[DominoesView]
    ids_a: np.ndarray  # every shared token, for a view of all of them
    ids_b: np.ndarray
    jaccard: np.ndarray
    procrustes: np.ndarray | None
    words: list[str]  # each shared token as matched ("march"): what CompareToken accepts for any of them
    neighbours_a: np.ndarray  # (n, k) positions into the shared tokens, nearest first: the window exports them
    neighbours_b: np.ndarray

    def as_dict(self) -> dict[str, Any]:
        return {"shared": self.shared, "only_a": self.only_a, "only_b": self.only_b, "k": self.k,
                "mean_jaccard": self.mean_jaccard, "cka": self.cka,
                "least_similar": [t.as_dict() for t in self.least_similar],
                "most_similar": [t.as_dict() for t in self.most_similar],
                "tokens": [t.as_dict() for t in self.tokens]}


@handles(rq.LoadComparison)
def open_comparison(model: EmbeddingModel, request: rq.LoadComparison, progress: ProgressFn) -> ModelPair:
    try:
        other = open_checkpoint(request.source, request.device, progress)
    except EmbvizError as exc:
        raise EmbvizError(f"The model to compare with did not open, so the first stays alone: {first_line(exc)}") from exc
    return pair_models(model, other)


def summarise_comparison(pair: ModelPair) -> ComparisonSummary:
    shared = pair.shared
    return ComparisonSummary(pair.b.info(), shared.count, shared.only_a, shared.only_b, shared.rule, list(shared.notes))


@handles(rq.Compare)
def compare_models(pair: ModelPair, request: rq.Compare, progress: ProgressFn) -> CompareView:
    # Typos fail before the seconds of work, not after.
    shared = pair.shared
    asked = [find_shared(pair.a, pair.b, shared, token) for token in request.tokens]
    result = pair.comparison(request.k, progress)
    order = np.lexsort((shared.ids_a, result.jaccard))  # ties: the lower id (a more frequent token) first
    most = np.lexsort((shared.ids_a, -result.jaccard))
    return CompareView(
        names=(pair.a.name, pair.b.name), shared=shared.count, only_a=shared.only_a, only_b=shared.only_b,
        k=result.k, mean_jaccard=result.mean_jaccard, cka=result.cka,
        procrustes_mean=None if result.procrustes is None else float(result.procrustes.mean()),
        rule=shared.rule, notes=[*shared.notes, *([CKA_UNDEFINED] if result.cka is None else [])],
        least_similar=[_score(pair, result, int(i)) for i in order[:EXTREMES]],
        most_similar=[_score(pair, result, int(i)) for i in most[:EXTREMES]],
        tokens=[_dominoes_view(pair, dominoes(i, result.neighbours_a[i], result.neighbours_b[i])) for i in asked],
        ids_a=shared.ids_a, ids_b=shared.ids_b, jaccard=result.jaccard, procrustes=result.procrustes,
        words=list(shared.words), neighbours_a=result.neighbours_a, neighbours_b=result.neighbours_b,
    )


@handles(rq.CompareToken)
def compare_token(pair: ModelPair, request: rq.CompareToken, _progress: ProgressFn) -> DominoesView:
    index = find_shared(pair.a, pair.b, pair.shared, request.token)
    return _dominoes_view(pair, token_dominoes(pair.a, pair.b, pair.shared, index, request.k))


def _word(pair: ModelPair, index: int) -> tuple[str, str]:
    token_id = int(pair.shared.ids_a[index])
    return pair.a.vocab.texts[token_id], pair.a.vocab.label(token_id)


def _score(pair: ModelPair, result: Comparison, index: int) -> TokenScore:
    return TokenScore(*_word(pair, index), float(result.jaccard[index]))


def _dominoes_view(pair: ModelPair, found: Dominoes) -> DominoesView:
    def words(positions: list[int]) -> list[tuple[str, str]]:
        return [_word(pair, p) for p in positions]

    return DominoesView(*_word(pair, found.index), found.jaccard, words(found.common), words(found.only_a),
                        words(found.only_b))
