"""The full model's forward pass: next-token logits, the logit lens, contextual drift,
which blocks and heads wrote a logit (attribution, attention, pinned tokens), and a concept
direction read from and added to the residual stream (direction layers, steering).

The window's lanes never build the language model here (`load_lm=False`): that is a job
of its own (LoadLanguageModel), so a lookup never waits seconds for it. `run_lm` runs each
core function where the language model lives: in the window, its child process (so that
no forward pass holds the window's interpreter lock); on the command line, here."""

from __future__ import annotations


from embviz.bridge import requests as rq
from embviz.bridge.registry import handles
from embviz.core.errors import ProgressFn
from embviz.core.lm.process import run_lm
from embviz.core.lm.results import (AttentionResult, AttributionResult, DirectionLayersResult, DriftResult, LensResult,
                                     LogitsResult, PinnedResult, SteerResult)
from embviz.core.model import EmbeddingModel


@handles(rq.Logits)
def logits(model: EmbeddingModel, request: rq.Logits, progress: ProgressFn) -> LogitsResult:
    from embviz.core.lm.logits import next_token_logits

    if request.samples:
        return _sample(model, request, progress)
    if request.direct or model.kind != "transformer":  # the output head alone: no forward pass to send away
        return next_token_logits(model, request.text, request.k, request.temperature, request.direct, load_lm=False)
    return run_lm(model, next_token_logits, request.text, request.k, request.temperature, request.direct,
                  load_lm=False, progress=progress)


def _sample(model: EmbeddingModel, request: rq.Logits, progress: ProgressFn) -> LogitsResult:
    from embviz.core.lm.sampling import sample_text

    args = (request.text, request.k, request.temperature, request.top_k, request.top_p, request.seed, request.steps,
            request.direct)
    kwargs = {"load_lm": False, "list_kept": request.list_kept}
    if request.direct or model.kind != "transformer":
        return sample_text(model, *args, progress=progress, **kwargs)  # type: ignore[arg-type]
    return run_lm(model, sample_text, *args, progress=progress, **kwargs)


@handles(rq.Lens)
def lens(model: EmbeddingModel, request: rq.Lens, progress: ProgressFn) -> LensResult:
    from embviz.core.lm.lens import logit_lens

    return run_lm(model, logit_lens, request.text, request.k, request.final_norm, load_lm=False, progress=progress)


@handles(rq.Drift)
def drift(model: EmbeddingModel, request: rq.Drift, progress: ProgressFn) -> DriftResult:
    from embviz.core.lm.drift import contextual_drift

    return run_lm(model, contextual_drift, request.word, request.sentences, request.layer, request.k, load_lm=False,
                  progress=progress)


@handles(rq.Attribution)
def attribution(model: EmbeddingModel, request: rq.Attribution, progress: ProgressFn) -> AttributionResult:
    from embviz.core.lm.attribution import attribute

    return run_lm(model, attribute, request.text, request.token, request.position, load_lm=False, progress=progress)


@handles(rq.Attention)
def attention(model: EmbeddingModel, request: rq.Attention, progress: ProgressFn) -> AttentionResult:
    from embviz.core.lm.attribution import attention_pattern

    return run_lm(model, attention_pattern, request.text, request.block, request.head, request.token, request.position,
                  load_lm=False, progress=progress)


@handles(rq.PinnedTokens)
def pinned(model: EmbeddingModel, request: rq.PinnedTokens, progress: ProgressFn) -> PinnedResult:
    from embviz.core.lm.attribution import pinned_tokens

    return run_lm(model, pinned_tokens, request.text, request.tokens, request.position, load_lm=False,
                  progress=progress)


@handles(rq.Steer)
def steer(model: EmbeddingModel, request: rq.Steer, progress: ProgressFn) -> SteerResult:
    from embviz.core.lm.steering import steer as steer_

    return run_lm(model, steer_, request.text, request.start, request.end, request.layer, request.alpha, request.k,
                  request.watch, load_lm=False, progress=progress)


@handles(rq.DirectionLayers)
def direction_layers(model: EmbeddingModel, request: rq.DirectionLayers, progress: ProgressFn) -> DirectionLayersResult:
    from embviz.core.lm.steering import direction_layers as layers_

    return run_lm(model, layers_, request.text, request.start, request.end, request.position, load_lm=False,
                  progress=progress)
