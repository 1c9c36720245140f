"""What each request computes on a loaded model (Qt-free, so it can be tested and
reused without a window). Results are plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from embviz import requests as rq
from embviz.core import EmbvizError, open_checkpoint
from embviz.core.clusters import MAX_K
from embviz.core.errors import ProgressFn
from embviz.core.fingerprint import check_same_model, model_fingerprint
from embviz.core.model import EmbeddingModel
from embviz.core.vocab import Vocabulary


@dataclass
class ModelSummary:
    info: dict[str, Any]
    labels: list[str]
    text_enabled: bool
    text_disabled_reason: str | None
    generation: int = 0  # which load of the worker this model is
    lm_needed: bool = False  # full-model logits need a LoadLanguageModel first
    fingerprint: dict[str, Any] = field(default_factory=dict)  # what a saved session checks against
    lens_reason: str | None = None  # why the lens and drift tabs cannot run here; None when they can
    max_clusters: int = 0  # the largest k that k-means accepts on this model
    word_rows: int = 0  # rows that Rows ▸ Whole words would keep


@dataclass
class NeighboursView:
    query_id: int
    query_label: str
    hits: list  # list[Hit], ranked by `by`
    centered: bool
    by: str = "cosine"
    cosines: list[float] = field(default_factory=list)  # of each hit, whichever ranked it
    dots: list[float] = field(default_factory=list)
    lengths: list[float] = field(default_factory=list)  # each hit's row length
    query_length: float = 0.0


@dataclass
class AnalogyView:
    input_ids: list[int]
    input_labels: list[str]
    result: Any  # AnalogyResult
    plane: Any = None  # AnalogyPlane of the inputs and the answer, when there is one


@dataclass
class StripsView:
    ids: list[int]
    labels: list[str]
    rows: np.ndarray  # (len(ids), D) raw rows, as the table holds them
    missing: list[str] = field(default_factory=list)  # words that are not one token here


@dataclass
class LessonNumbersView:
    rows: list[tuple[int, str, list[float]]] | None  # (id, label, the fetched row), in input order
    tokens: list[str]  # the text's tokens as the model sees them
    shapes: list[tuple[str, tuple[int, ...]]] | None  # ("ids", (B, T)), ("embeddings", (B, T, D)), ("logits", (B, T, V))
    tied: bool
    embedding_share: float | None
    head_share: float | None
    total_params: int | None
    table: list[tuple[int, str, list[float]]] | None = None  # every row, for a table small enough to show


@dataclass
class WordSetView:
    name: str
    ids: list[int]
    missing: list[str] = field(default_factory=list)


@dataclass
class PointValuesView:
    by: str  # "kind", "id" or "norm"
    ids: np.ndarray  # the map's row ids, as asked
    values: np.ndarray  # one per id: a kind's index into `names`, or a number for a gradient
    names: list[str] = field(default_factory=list)  # the kinds, for "kind"


@dataclass
class ClustersView:
    method: str
    k: int | None
    ids: np.ndarray  # the map's row ids, as asked
    codes: np.ndarray  # (len(ids),) int32 cluster of each, -1 for none (HDBSCAN's noise)
    clusters: list  # list[Cluster], numbered by size: cluster 0 is the largest


MAX_STRIPS = 40  # rows of colour strips: more would be too thin to read
SHOW_WHOLE_TABLE = 50  # a lesson's table this small is shown whole, the fetched rows marked
TEXT_ROW_NUMBERS = 3  # of a big table's rows, the first few numbers fit beside the tab


def resolve_typed(vocab: Vocabulary, word: str) -> int:
    """A word typed in the window: "␣" or a leading space means exactly that token;
    a bare word means the mid-sentence token (" king") when the vocabulary has one."""
    word = word.replace("␣", " ")
    if word.strip() == "":
        raise EmbvizError("Type a word first.")
    if not word.startswith(" ") and vocab.space_prefixed and (mid := vocab.id_of(" " + word)) is not None:
        return mid
    return vocab.resolve(word)


def run_request(model: EmbeddingModel | None, request: rq.Request, progress: ProgressFn) -> Any:
    """What one request computes on `model`. Runs on a worker lane, never the GUI thread."""
    if isinstance(request, rq.CacheSize):
        from embviz.core.cache import cache_size

        return cache_size()
    if isinstance(request, rq.ClearCache):
        from embviz.core.cache import clear_cache

        return clear_cache()
    if model is None:
        raise EmbvizError("No model is open yet.")
    vocab = model.vocab
    if isinstance(request, rq.LoadLanguageModel):
        model.load_language_model(progress)
        return None
    if isinstance(request, rq.Neighbours):
        from embviz.core.similarity import nearest_neighbours, scores_of

        if isinstance(request.query, (list, tuple)):
            return mean_neighbours(model, request)
        qid = request.query if isinstance(request.query, int) else resolve_typed(vocab, request.query)
        hits = nearest_neighbours(model, qid, request.k, centered=request.centered,
                                  keep=vocab.special_filter(request.hide_special), by=request.by)
        cosines, dots, lengths = scores_of(model, qid, [h.id for h in hits] + [qid], request.centered)
        return NeighboursView(qid, vocab.label(qid), hits, request.centered, request.by,
                              cosines[:-1], dots[:-1], lengths[:-1], lengths[-1])
    if isinstance(request, rq.Analogy):
        from embviz.core.analogy import analogy, analogy_plane

        ids = []
        for role, q in zip("ABC", (request.a, request.b, request.c)):
            if isinstance(q, str) and q.strip() == "":
                raise EmbvizError(f"Word {role} is empty: an analogy needs three words.")
            ids.append(q if isinstance(q, int) else resolve_typed(vocab, q))
        result = analogy(model, *ids, k=request.k, exclude_inputs=request.exclude_inputs, method=request.method,
                         keep=vocab.special_filter(request.hide_special), exclude_variants=request.exclude_variants)
        plane = None
        if result.results and len({*ids, result.results[0].id}) == 4:  # four distinct words make a plane
            try:
                plane = analogy_plane(model, *ids, result.results[0].id, keep=vocab.special_filter(request.hide_special))
            except EmbvizError:
                plane = None  # e.g. two inputs pointing the same way: the table still answers
        return AnalogyView(ids, [vocab.label(i) for i in ids], result, plane)
    if isinstance(request, rq.Logits):
        from embviz.core.logits import next_token_logits

        # Never load the full model here: that is a job of its own (LoadLanguageModel).
        return next_token_logits(model, request.text, request.k, request.temperature, request.direct, load_lm=False)
    if isinstance(request, rq.Lens):
        from embviz.core.lens import logit_lens

        return logit_lens(model, request.text, request.k, request.final_norm, load_lm=False, progress=progress)
    if isinstance(request, rq.Drift):
        from embviz.core.drift import contextual_drift

        return contextual_drift(model, request.word, request.sentences, request.layer, request.k, load_lm=False,
                                progress=progress)
    if isinstance(request, rq.Project):
        from embviz.core.projection import project, select_rows

        if request.subset == "words":
            ids = select_rows(model, keep=vocab.mask(words_only=True))
        elif request.subset == "first":
            ids = select_rows(model, limit=request.limit)
        else:
            ids = select_rows(model)

        def with_ids(fraction: float, stage: str = "", preview: object = None) -> None:
            # Previews travel with their row ids so the map can draw them as they come.
            progress(fraction, stage, (ids, preview) if isinstance(preview, np.ndarray) else None)

        if request.method == "axes":
            from embviz.core.projection import word_pair_axes_map

            words = [resolve_typed(vocab, w) for w in request.axes]
            return word_pair_axes_map(model, ids, (words[0], words[1]), (words[2], words[3]))
        return project(model, request.method, ids, progress=with_ids)
    if isinstance(request, rq.VectorStrips):
        ids, missing = [], []
        for word in request.words[:MAX_STRIPS]:
            try:
                ids.append(resolve_typed(vocab, word))
            except EmbvizError:
                missing.append(word)
        rows = model.rows(ids).float().cpu().numpy() if ids else np.zeros((0, model.dim), np.float32)
        return StripsView(ids, [vocab.label(i) for i in ids], rows, missing)
    if isinstance(request, rq.LessonNumbers):
        return lesson_numbers(model, request)
    if isinstance(request, rq.Faithfulness):
        from embviz.core.knn import neighbour_preservation

        return neighbour_preservation(model, request.ids, request.coords)
    if isinstance(request, rq.Clusters):
        return clusters_view(model, request, progress)
    if isinstance(request, rq.PointValues):
        return point_values(model, request)
    if isinstance(request, rq.Search):
        from embviz.core.search import search_tokens

        return search_tokens(vocab, request.pattern, request.regex, request.limit, progress=progress, substring=request.substring)
    if isinstance(request, rq.WordSet):
        ids, missing = [], []
        for word in request.words:
            try:
                ids.append(resolve_typed(vocab, word))
            except EmbvizError:
                missing.append(word)
        return WordSetView(request.name, ids, missing)
    if isinstance(request, rq.Benchmark):
        from embviz.core.analogy_benchmark import evaluate, read_questions

        return evaluate(model, read_questions(request.path), progress=progress)
    raise EmbvizError(f"Unknown request {type(request).__name__}.")


def mean_neighbours(model: EmbeddingModel, request: rq.Neighbours) -> NeighboursView:
    """Neighbours of the mean unit row of several tokens (a map selection), the tokens themselves left out."""
    from embviz.core.similarity import mean_query, mean_scores_of, top_k

    ids = [int(i) for i in request.query]
    scores, raw = mean_query(model, ids, request.centered, request.by)
    keep = model.vocab.special_filter(request.hide_special)
    hits = top_k(model, scores, request.k, exclude=ids, keep=keep)
    index = [h.id for h in hits]
    cosines, dots, lengths = mean_scores_of(model, ids, index, request.centered)
    label = f"the mean of {len(ids):,} selected tokens" if len(ids) > 1 else f"the selected token {model.vocab.label(ids[0])}"
    return NeighboursView(-1, label, hits, request.centered, request.by, cosines, dots, lengths, float(raw.norm()))


def clusters_view(model: EmbeddingModel, request: rq.Clusters, progress: ProgressFn) -> ClustersView:
    from embviz.core.clusters import METHODS, hdbscan_clusters, kmeans_clusters

    if request.method not in METHODS:
        raise EmbvizError(f"Cluster with {' or '.join(METHODS)}, not {request.method!r}.")
    ids = np.arange(model.vocab_size) if request.ids is None else np.asarray(request.ids, dtype=np.int64)
    if request.method == "kmeans":
        clustering = kmeans_clusters(model, request.k, progress)
    else:
        clustering = hdbscan_clusters(model, ids, request.coords, progress)
    return ClustersView(clustering.method, clustering.k, ids, clustering.codes_for(ids, model.vocab_size), clustering.clusters)


def point_values(model: EmbeddingModel, request: rq.PointValues) -> PointValuesView:
    ids = np.arange(model.vocab_size) if request.ids is None else np.asarray(request.ids, dtype=np.int64)
    if request.by == "kind":
        from embviz.core.token_kinds import KIND_NAMES, token_kinds

        kinds = model.derived("token_kinds", lambda: token_kinds(model.vocab))
        return PointValuesView("kind", ids, kinds[ids], list(KIND_NAMES))
    if request.by == "id":
        return PointValuesView("id", ids, ids.astype(np.float32))
    if request.by == "norm":
        from embviz.core.similarity import row_norms

        norms = model.derived("row_norms_cpu", lambda: row_norms(model).cpu().numpy())
        return PointValuesView("norm", ids, np.nan_to_num(norms[ids], nan=0.0, posinf=0.0))
    raise EmbvizError(f"Colour by kind, id or norm, not {request.by!r}.")


def lesson_numbers(model: EmbeddingModel, request: rq.LessonNumbers) -> LessonNumbersView:
    vocab = model.vocab
    rows = None
    if request.ids is not None:
        bad = [i for i in request.ids if not 0 <= i < model.vocab_size]
        if bad:
            raise EmbvizError(f"Id {bad[0]} is not a row of this table (0–{model.vocab_size - 1}).")
        matrix = model.rows(list(request.ids)).cpu().tolist()  # zero-based, in input order (seed 002)
        rows = [(i, vocab.label(i), row) for i, row in zip(request.ids, matrix)]
    tokens, shapes = [], None
    if request.text is not None:
        ids = vocab.encode_for_model(request.text)
        tokens = [vocab.label(i) for i in ids]
        shapes = [("ids", (1, len(ids))), ("embeddings", (1, len(ids), model.dim)), ("logits", (1, len(ids), model.vocab_size))]
        if rows is None and ids:  # the lookup of a big table: the typed text's rows, their first numbers
            fetched = model.rows(ids[:MAX_STRIPS])[:, :TEXT_ROW_NUMBERS].cpu().tolist()
            rows = [(i, vocab.label(i), row) for i, row in zip(ids, fetched)]
    table = None
    if request.ids is not None and model.vocab_size <= SHOW_WHOLE_TABLE:
        table = [(i, vocab.label(i), row) for i, row in enumerate(model.table.cpu().tolist())]
    return LessonNumbersView(rows, tokens, shapes, model.tied, model.embedding_share, model.head_share,
                             model.total_params, table)


def open_model(request: rq.LoadModel, progress: ProgressFn) -> EmbeddingModel:
    """The checkpoint; for a session, only if it still holds the table the session was
    saved with (else an error, and the model on screen stays)."""
    model = open_checkpoint(request.source, request.device, progress)
    if request.expect is not None:
        check_same_model(request.expect, model)
    return model


def summarise(model: EmbeddingModel, generation: int = 0) -> ModelSummary:
    reason = None
    if not model.vocab.has_text_encoder:
        reason = "Next-token logits are off: this model has no tokenizer, so typed text cannot become tokens."
    elif model.kind == "table":
        reason = model.lm_unavailable_reason
    return ModelSummary(
        info=model.info(),
        labels=list(model.vocab.labels),
        text_enabled=reason is None,
        text_disabled_reason=reason,
        generation=generation,
        lm_needed=model.kind == "transformer" and not model.lm_loaded,
        fingerprint=model_fingerprint(model),
        lens_reason=_lens_reason(model, reason),
        max_clusters=min(MAX_K, model.vocab_size),
        word_rows=int(model.vocab.mask(words_only=True).sum()),
    )


def _lens_reason(model: EmbeddingModel, text_reason: str | None) -> str | None:
    from embviz.core.lens import NO_LAYERS

    if model.kind in NO_LAYERS:
        return NO_LAYERS[model.kind]
    reason = text_reason or (None if model.lm_loader else model.lm_unavailable_reason or "This checkpoint has no full model to run.")
    return reason and reason.replace("Next-token logits are off", "The lens and drift are off")
