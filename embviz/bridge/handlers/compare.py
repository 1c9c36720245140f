"""Comparing two models: opening the second, every shared token's neighbourhood likeness,
and one token's dominoes (neighbours common to both, only in A, only in B)."""

from __future__ import annotations

import numpy as np

from embviz.bridge import requests as rq
from embviz.bridge.registry import handles
from embviz.bridge.views import CompareView, ComparisonSummary, DominoesView, TokenScore
from embviz.core import EmbvizError, open_checkpoint
from embviz.core.errors import ProgressFn, first_line
from embviz.core.model import EmbeddingModel
from embviz.core.table.compare import (
    CKA_UNDEFINED,
    Comparison,
    Dominoes,
    ModelPair,
    dominoes,
    find_shared,
    heads_of,
    own_tables,
    pair_models,
    token_dominoes,
)

EXTREMES = 20  # least and most similar tokens listed


@handles(rq.LoadComparison)
def open_comparison(model: EmbeddingModel, request: rq.LoadComparison, progress: ProgressFn) -> ModelPair:
    if request.against == "output":
        return own_tables(model)
    if request.against != "model":
        raise EmbvizError(f"A model is compared with another model or its own output table, not {request.against!r}.")
    try:
        other = open_checkpoint(request.source, request.device, progress)
    except EmbvizError as exc:
        raise EmbvizError(f"The model to compare with did not open, so the first stays alone: {first_line(exc)}") from exc
    return heads_of(model, other) if request.tables == "output" else pair_models(model, other)


def summarise_comparison(pair: ModelPair) -> ComparisonSummary:
    shared = pair.shared
    return ComparisonSummary(pair.b.info(), pair.names, shared.count, shared.only_a, shared.only_b, shared.rule, list(shared.notes))


@handles(rq.Compare)
def compare_models(pair: ModelPair, request: rq.Compare, progress: ProgressFn) -> CompareView:
    # Typos fail before the seconds of work, not after.
    shared = pair.shared
    asked = [find_shared(pair.a, pair.b, shared, token) for token in request.tokens]
    result = pair.comparison(request.k, progress)
    order = np.lexsort((shared.ids_a, result.jaccard))  # ties: the lower id (a more frequent token) first
    most = np.lexsort((shared.ids_a, -result.jaccard))
    return CompareView(
        names=pair.names, shared=shared.count, only_a=shared.only_a, only_b=shared.only_b,
        k=result.k, mean_jaccard=result.mean_jaccard, cka=result.cka,
        procrustes_mean=None if result.procrustes is None else float(result.procrustes.mean()),
        rule=shared.rule, notes=[*shared.notes, *([CKA_UNDEFINED] if result.cka is None else [])],
        least_similar=[_score(pair, result, int(i)) for i in order[:EXTREMES]],
        most_similar=[_score(pair, result, int(i)) for i in most[:EXTREMES]],
        tokens=[_dominoes_view(pair, dominoes(i, result.neighbours_a[i], result.neighbours_b[i])) for i in asked],
        ids_a=shared.ids_a, ids_b=shared.ids_b, jaccard=result.jaccard, procrustes=result.procrustes,
        words=list(shared.words), neighbours_a=result.neighbours_a, neighbours_b=result.neighbours_b,
        whole_a=pair.a.vocab.whole_words[shared.ids_a],
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
