"""The full model's forward pass: next-token logits, the logit lens, contextual drift,
and which blocks and heads wrote a logit (attribution, attention, pinned tokens).

The window's lanes never build the language model here (`load_lm=False`): that is a job
of its own (LoadLanguageModel), so a lookup never waits seconds for it."""

from __future__ import annotations

from typing import Any

from embviz.bridge import requests as rq
from embviz.bridge.registry import handles
from embviz.core.errors import ProgressFn
from embviz.core.model import EmbeddingModel


@handles(rq.Logits)
def logits(model: EmbeddingModel, request: rq.Logits, _progress: ProgressFn) -> Any:
    from embviz.core.lm.logits import next_token_logits

    return next_token_logits(model, request.text, request.k, request.temperature, request.direct, load_lm=False)


@handles(rq.Lens)
def lens(model: EmbeddingModel, request: rq.Lens, progress: ProgressFn) -> Any:
    from embviz.core.lm.lens import logit_lens

    return logit_lens(model, request.text, request.k, request.final_norm, load_lm=False, progress=progress)


@handles(rq.Drift)
def drift(model: EmbeddingModel, request: rq.Drift, progress: ProgressFn) -> Any:
    from embviz.core.lm.drift import contextual_drift

    return contextual_drift(model, request.word, request.sentences, request.layer, request.k, load_lm=False,
                            progress=progress)


@handles(rq.Attribution)
def attribution(model: EmbeddingModel, request: rq.Attribution, _progress: ProgressFn) -> Any:
    from embviz.core.lm.attribution import attribute

    return attribute(model, request.text, request.token, request.position, load_lm=False)


@handles(rq.Attention)
def attention(model: EmbeddingModel, request: rq.Attention, _progress: ProgressFn) -> Any:
    from embviz.core.lm.attribution import attention_pattern

    return attention_pattern(model, request.text, request.block, request.head, request.token, request.position,
                             load_lm=False)


@handles(rq.PinnedTokens)
def pinned(model: EmbeddingModel, request: rq.PinnedTokens, _progress: ProgressFn) -> Any:
    from embviz.core.lm.attribution import pinned_tokens

    return pinned_tokens(model, request.text, request.tokens, request.position, load_lm=False)
