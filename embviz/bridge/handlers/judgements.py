"""People's similarity ratings and the odd one out: the table's cosines set against human
judgements (WordSim-353, SimLex-999 or a file), for the first model and the second."""

from __future__ import annotations

from pathlib import Path

from embviz.bridge import requests as rq
from embviz.bridge.registry import handles
from embviz.core.errors import ProgressFn
from embviz.core.model import EmbeddingModel
from embviz.core.table.compare import ModelPair
from embviz.core.table.results import OddOneOut, PairScores, WordPairCosine
from embviz.core.table.word_pairs import DATASETS, dataset_path, odd_one_out, pair_cosine, read_pairs, score_pairs


def _pair_scores(model: EmbeddingModel, request: rq.WordPairs) -> PairScores:
    if request.path:
        return score_pairs(model, read_pairs(request.path), Path(request.path).name)
    path = dataset_path(request.dataset)  # an unknown name is refused here
    return score_pairs(model, read_pairs(path), DATASETS[request.dataset][1])


@handles(rq.WordPairs)
def word_pairs(model: EmbeddingModel, request: rq.WordPairs, _progress: ProgressFn) -> PairScores:
    return _pair_scores(model, request)


@handles(rq.WordPairsB)
def word_pairs_b(pair: ModelPair, request: rq.WordPairsB, _progress: ProgressFn) -> PairScores:
    return _pair_scores(pair.b, request)


@handles(rq.OddOneOut)
def odd_one(model: EmbeddingModel, request: rq.OddOneOut, _progress: ProgressFn) -> OddOneOut:
    return odd_one_out(model, list(request.words))


@handles(rq.PairCosine)
def word_pair_cosine(model: EmbeddingModel, request: rq.PairCosine, _progress: ProgressFn) -> WordPairCosine:
    return pair_cosine(model, request.word1, request.word2)
