"""Lookups in the table: neighbours, analogies, similarity, rows as strips, word sets,
search and the analogy benchmark."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from embviz.bridge import requests as rq
from embviz.bridge.registry import handles
from embviz.bridge.views import AnalogyView, NeighboursView, StripsView, WordSetView
from embviz.core import EmbvizError
from embviz.core.errors import ProgressFn
from embviz.core.model import EmbeddingModel
from embviz.core.table.vocab import Vocabulary

if TYPE_CHECKING:
    pass

MAX_STRIPS = 40  # rows of colour strips: more would be too thin to read


def resolve_typed(vocab: Vocabulary, word: str) -> int:
    """A word typed in the window: "␣" or a leading space means exactly that token;
    a bare word means the mid-sentence token (" king") when the vocabulary has one."""
    word = word.replace("␣", " ")
    if word.strip() == "":
        raise EmbvizError("Type a word first.")
    if not word.startswith(" ") and vocab.space_prefixed and (mid := vocab.id_of(" " + word)) is not None:
        return mid
    return vocab.resolve(word)


def resolve_all(vocab: Vocabulary, words: list[str]) -> tuple[list[int], list[str]]:
    """(ids of the words that are one token here, the words that are not)."""
    ids, missing = [], []
    for word in words:
        try:
            ids.append(resolve_typed(vocab, word))
        except EmbvizError:
            missing.append(word)
    return ids, missing


@handles(rq.Neighbours)
def neighbours(model: EmbeddingModel, request: rq.Neighbours, _progress: ProgressFn) -> NeighboursView:
    from embviz.core.table.similarity import nearest_neighbours, scores_of

    if isinstance(request.query, (list, tuple)):
        return mean_neighbours(model, request)
    vocab = model.vocab
    qid = request.query if isinstance(request.query, int) else resolve_typed(vocab, request.query)
    hits = nearest_neighbours(model, qid, request.k, centered=request.centered,
                              keep=vocab.special_filter(request.hide_special), by=request.by)
    cosines, dots, lengths = scores_of(model, qid, [h.id for h in hits] + [qid], request.centered)
    return NeighboursView(qid, vocab.label(qid), hits, request.centered, request.by,
                          cosines[:-1], dots[:-1], lengths[:-1], lengths[-1])


def mean_neighbours(model: EmbeddingModel, request: rq.Neighbours) -> NeighboursView:
    """Neighbours of the mean unit row of several tokens (a map selection), the tokens themselves left out."""
    from embviz.core.table.similarity import mean_query, mean_scores_of, top_k

    ids = [int(i) for i in cast(list[int], request.query)]  # the caller sends a list here
    scores, raw = mean_query(model, ids, request.centered, request.by)
    keep = model.vocab.special_filter(request.hide_special)
    hits = top_k(model, scores, request.k, exclude=ids, keep=keep)
    index = [h.id for h in hits]
    cosines, dots, lengths = mean_scores_of(model, ids, index, request.centered)
    label = f"the mean of {len(ids):,} selected tokens" if len(ids) > 1 else f"the selected token {model.vocab.label(ids[0])}"
    return NeighboursView(-1, label, hits, request.centered, request.by, cosines, dots, lengths, float(raw.norm()))


@handles(rq.Similarity)
def similarity(model: EmbeddingModel, request: rq.Similarity, _progress: ProgressFn) -> float:
    from embviz.core.table.similarity import similarity

    return similarity(model, request.a, request.b, centered=request.centered)


@handles(rq.Analogy)
def analogy(model: EmbeddingModel, request: rq.Analogy, _progress: ProgressFn) -> AnalogyView:
    from embviz.core.table.analogy import analogy, analogy_plane

    vocab = model.vocab
    ids: list[int] = []
    for role, q in zip("ABC", (request.a, request.b, request.c)):
        if isinstance(q, str) and q.strip() == "":
            raise EmbvizError(f"Word {role} is empty: an analogy needs three words.")
        ids.append(q if isinstance(q, int) else resolve_typed(vocab, q))
    keep = vocab.special_filter(request.hide_special)
    a, b, c = ids
    result = analogy(model, a, b, c, k=request.k, exclude_inputs=request.exclude_inputs, method=request.method,
                     keep=keep, exclude_variants=request.exclude_variants)
    plane, no_plane = None, ""
    if request.plane and result.results:  # four distinct words make a plane
        answer = result.results[0].id
        if answer in ids:
            no_plane = (f"No plane: the answer {vocab.label(answer)} is one of the inputs, so there are not four "
                        "words to draw. Tick “Exclude the inputs” to see one.")
        elif len(set(ids)) < 3:
            no_plane = "No plane: two of the inputs are the same word, so there are not four words to draw."
        else:
            try:
                plane = analogy_plane(model, a, b, c, answer, keep=keep)
            except EmbvizError as exc:  # e.g. two inputs pointing the same way: the table still answers
                no_plane = f"No plane: {exc}"
    return AnalogyView(ids, [vocab.label(i) for i in ids], result, plane, no_plane)


@handles(rq.VectorStrips)
def vector_strips(model: EmbeddingModel, request: rq.VectorStrips, _progress: ProgressFn) -> StripsView:
    ids, missing = resolve_all(model.vocab, request.words[:MAX_STRIPS])
    rows = model.rows(ids).float().cpu().numpy() if ids else np.zeros((0, model.dim), np.float32)
    return StripsView(ids, [model.vocab.label(i) for i in ids], rows, missing)


@handles(rq.WordSet)
def word_set(model: EmbeddingModel, request: rq.WordSet, _progress: ProgressFn) -> WordSetView:
    # A vocabulary with no capitals (GloVe's) holds "monday", not "Monday".
    words = [w.lower() for w in request.words] if model.vocab.lowercased else request.words
    ids, missing = resolve_all(model.vocab, words)
    return WordSetView(request.name, ids, missing)


@handles(rq.Search)
def search(model: EmbeddingModel, request: rq.Search, progress: ProgressFn) -> Any:
    from embviz.core.table.search import search_tokens

    return search_tokens(model.vocab, request.pattern, request.regex, request.limit, progress=progress,
                         substring=request.substring)


@handles(rq.Benchmark)
def benchmark(model: EmbeddingModel, request: rq.Benchmark, progress: ProgressFn) -> Any:
    from embviz.core.table.analogy_benchmark import evaluate_in_child

    return evaluate_in_child(model, request.path, progress)
