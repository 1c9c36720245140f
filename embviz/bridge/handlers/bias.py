"""Directions and bias: a concept direction ranked over the vocabulary, WEAT and SC-WEAT, and
the random baseline that cosines are read against."""

from __future__ import annotations

from embviz.bridge import requests as rq
from embviz.bridge.registry import handles
from embviz.core.errors import ProgressFn
from embviz.core.model import EmbeddingModel
from embviz.core.table.baseline import cosine_baseline
from embviz.core.table.bias_results import CosineBaseline, DirectionResult, ScWeatResult, WeatResult
from embviz.core.table.directions import concept_direction
from embviz.core.table.weat import paper_test, sc_weat, weat


@handles(rq.Direction)
def direction(model: EmbeddingModel, request: rq.Direction, _progress: ProgressFn) -> DirectionResult:
    return concept_direction(model, start=request.start, end=request.end, pairs=list(request.pairs),
                             a_set=list(request.a_set), b_set=list(request.b_set), pca=request.pca, top=request.top,
                             words=list(request.words), words_only=request.words_only)


@handles(rq.Weat)
def weat_test(model: EmbeddingModel, request: rq.Weat, _progress: ProgressFn) -> WeatResult:
    if request.test is not None:
        name, (x, y, a, b) = paper_test(request.test)
    else:
        name, (x, y, a, b) = "WEAT", (request.x, request.y, request.a, request.b)
    return weat(model, x, y, a, b, name=name, permutations=request.permutations, seed=request.seed,
                sampling=request.sampling)


@handles(rq.ScWeat)
def single_category(model: EmbeddingModel, request: rq.ScWeat, _progress: ProgressFn) -> ScWeatResult:
    return sc_weat(model, request.word, request.a, request.b, permutations=request.permutations, seed=request.seed)


@handles(rq.CosineBaseline)
def baseline(model: EmbeddingModel, _request: rq.CosineBaseline, _progress: ProgressFn) -> CosineBaseline:
    return cosine_baseline(model)
