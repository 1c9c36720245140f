"""Opening a model, building its language model, its summary for the window, the cache,
and the numbers a lesson step shows beside the tabs."""

from __future__ import annotations

from typing import Any

from embviz.bridge import requests as rq
from embviz.bridge.registry import handles
from embviz.bridge.views import LessonNumbersView, ModelSummary
from embviz.core import EmbvizError, open_checkpoint
from embviz.core.errors import ProgressFn
from embviz.core.fingerprint import check_same_model, model_fingerprint
from embviz.core.maps.clusters import MAX_K
from embviz.core.model import EmbeddingModel

MAX_TEXT_ROWS = 40  # rows of a typed text's lookup shown beside a lesson step
SHOW_WHOLE_TABLE = 50  # a lesson's table this small is shown whole, the fetched rows marked
TEXT_ROW_NUMBERS = 3  # of a big table's rows, the first few numbers fit beside the tab


@handles(rq.LoadModel)
def open_model(_model: None, request: rq.LoadModel, progress: ProgressFn) -> EmbeddingModel:
    """The checkpoint; for a session, only if it still holds the table the session was
    saved with (else an error, and the model on screen stays)."""
    model: EmbeddingModel = open_checkpoint(request.source, request.device, progress)
    if request.expect is not None:
        check_same_model(request.expect, model)
    return model


@handles(rq.LoadLanguageModel)
def load_language_model(model: EmbeddingModel, _request: rq.LoadLanguageModel, progress: ProgressFn) -> None:
    model.load_language_model(progress)


@handles(rq.Info)
def info(model: EmbeddingModel, _request: rq.Info, _progress: ProgressFn) -> dict[str, Any]:
    return model.info()


@handles(rq.CacheSize)
def cache_size(_model: None, _request: rq.CacheSize, _progress: ProgressFn) -> int:
    from embviz.core.cache import cache_size

    return cache_size()


@handles(rq.ClearCache)
def clear_cache(_model: None, _request: rq.ClearCache, _progress: ProgressFn) -> Any:
    from embviz.core.cache import clear_cache

    return clear_cache()


@handles(rq.LessonNumbers)
def lesson_numbers(model: EmbeddingModel, request: rq.LessonNumbers, _progress: ProgressFn) -> LessonNumbersView:
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
            fetched = model.rows(ids[:MAX_TEXT_ROWS])[:, :TEXT_ROW_NUMBERS].cpu().tolist()
            rows = [(i, vocab.label(i), row) for i, row in zip(ids, fetched)]
    table = None
    if request.ids is not None and model.vocab_size <= SHOW_WHOLE_TABLE:
        table = [(i, vocab.label(i), row) for i, row in enumerate(model.table.cpu().tolist())]
    return LessonNumbersView(rows, tokens, shapes, model.tied, model.embedding_share, model.head_share,
                             model.total_params, table)


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
    from embviz.core.lm.lens import NO_LAYERS

    if model.kind in NO_LAYERS:
        return NO_LAYERS[model.kind]
    reason = text_reason or (None if model.lm_loader else model.lm_unavailable_reason or "This checkpoint has no full model to run.")
    return reason and reason.replace("Next-token logits are off", "The lens and drift are off")
