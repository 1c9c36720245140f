"""A concept direction inside the running model: measured in its residual stream, layer by
layer, and added to it (steering, the "activation addition" of Turner et al. 2023 and repeng).

The direction is a unit vector of the embedding table's space (`core.table.directions`: he →
she is unit(unit(she) − unit(he))); the residual stream has the table's width in most
families, so the same vector can be read from it and written into it.

- Per layer: the residual at one position (the embedding output, then each block's output,
  as the lens reads them) dotted with the unit direction.
- Steering: α · scale · direction is added to the residual stream at every position of the
  text after layer L (layer 0: to the embedding output, before block 1), by a forward hook on
  the model's own block, so every later block computes on the steered stream with the model's
  own arithmetic. `scale` is the mean L2 norm of the unsteered residual at layer L over the
  text's positions, leaving out position 0 when there are others (its residual is an outlier
  in most models, many times the others' norm): α = 1 adds a vector as long as a typical
  residual there. The next-token logits before and after are both from uncached passes of
  the whole text, so α = 0 gives the unsteered logits bit for bit.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import torch

from embviz.core.errors import EmbvizError
from embviz.core.lm.attribution import check_position, resolve_token
from embviz.core.lm.causal_lm import Hook
from embviz.core.lm.lens import MAX_LENS_CONTEXT, check_has_layers, layer_names
from embviz.core.lm.logits import prompt_ids
from embviz.core.lm.results import DirectionLayersResult, SteerResult, TokenScore, WatchedToken
from embviz.core.model import EmbeddingModel, LanguageModel
from embviz.core.table.directions import two_word_direction
from embviz.core.table.similarity import check_k
from embviz.core.table.vocab import visible

MAX_WATCHED = 20
MAX_ALPHA = 1000.0  # × the residual's norm: far past where any output means anything


# --- the public calls -----------------------------------------------------------------------------

def direction_layers(model: EmbeddingModel, text: str, start: str, end: str, position: int | None = None,
                     load_lm: bool = True) -> DirectionLayersResult:
    """The projection of the residual stream at `position` (default: the last) on the unit
    direction start → end, at every layer."""
    check_has_layers(model)
    direction, described, _ = _direction(model, start, end)
    ids, notes = _text_ids(model, text, "the direction is read in the residual stream of its tokens")
    p = check_position(position, len(ids))
    lm = model.language_model(load=load_lm)
    blocks = steerable(lm)
    stream = lm.uncached_residual_stream(ids)  # (layers + 1, T, D)
    check_width(model, lm, stream.shape[-1])
    rows = stream[:, p].cpu().double()  # float64 on the CPU: MPS has none
    unit = torch.from_numpy(direction)
    return DirectionLayersResult(
        tokens=[(i, model.vocab.label(i)) for i in ids], token_texts=[model.vocab.texts[i] for i in ids],
        direction=described, position=p, layer_names=layer_names(len(blocks)), projections=(rows @ unit).tolist(),
        norms=rows.norm(dim=-1).tolist(), notes=notes,
    )


def steer(model: EmbeddingModel, text: str, start: str, end: str, layer: int, alpha: float, k: int = 10,
          watch: Sequence[str | int] | None = None, load_lm: bool = True) -> SteerResult:
    """The next-token guess after `text`, before and after α · scale · unit(start → end) is
    added to the residual stream at every position after `layer` (0 … blocks)."""
    check_has_layers(model)
    alpha = check_alpha(alpha)
    k = check_k(k, model.vocab_size)
    direction, described, own = _direction(model, start, end)
    watched = _watched(model, own, watch)
    ids, notes = _text_ids(model, text, "steering changes the model's guess for the token after it")
    lm = model.language_model(load=load_lm)
    blocks = steerable(lm)
    layer = check_layer(layer, len(blocks))
    before, stream = lm.uncached_pass(ids, residuals=True)
    assert stream is not None
    check_width(model, lm, stream.shape[-1])
    scale = typical_norm(stream[layer])
    vector = torch.from_numpy(direction * (alpha * scale)).float().to(stream.device)  # float32 first: MPS has no float64
    after, _ = lm.uncached_pass(ids, hooks=[steering_hook(blocks, layer, vector, lm.anatomy.family_name)])
    before, after = before.cpu(), after.cpu()  # a few numbers read one by one: no device sync each
    name = layer_names(len(blocks))[layer]
    units = f"the mean L2 norm of the unsteered residual at {name} over the text's positions"
    if len(ids) > 1:
        units += " (position 0 left out)"
    log_before, log_after = _log_probs(before), _log_probs(after)
    return SteerResult(
        tokens=[(i, model.vocab.label(i)) for i in ids], token_texts=[model.vocab.texts[i] for i in ids],
        direction=described, layer=layer, layer_name=name, alpha=alpha, alpha_units=units, scale=scale,
        added_norm=abs(alpha) * scale, before=_top(model, before, log_before, k), after=_top(model, after, log_after, k),
        watched=[WatchedToken(t, model.vocab.texts[t], model.vocab.label(t), math.exp(float(log_before[t])),
                              math.exp(float(log_after[t])), float(before[t]), float(after[t])) for t in watched],
        notes=notes,
    )


# --- inputs ---------------------------------------------------------------------------------------

def check_alpha(alpha: float) -> float:
    try:
        value = float(alpha)
    except (TypeError, ValueError) as exc:
        raise EmbvizError(f"α must be a number (got {alpha!r}).") from exc
    if not math.isfinite(value):
        raise EmbvizError(f"α must be a finite number (got {value}).")
    if abs(value) > MAX_ALPHA:
        raise EmbvizError(f"α is counted in residual norms; {value:g} is past ±{MAX_ALPHA:g}, where no output means "
                          "anything.")
    return value


def check_layer(layer: int, n_blocks: int) -> int:
    if isinstance(layer, bool) or not isinstance(layer, (int, np.integer)) or not 0 <= layer <= n_blocks:
        raise EmbvizError(f"Layer {layer} does not exist: this model has layers 0–{n_blocks} (0 is the embedding "
                          "output, L the output of block L).")
    return int(layer)


def _direction(model: EmbeddingModel, start: str, end: str) -> tuple[np.ndarray, str, list[int]]:
    """(the unit direction start → end, how it reads, the two words' tokens)."""
    direction, sets = two_word_direction(model, start, end)
    return direction, f"{visible(sets[0].kept[0].word)} → {visible(sets[1].kept[0].word)}", [s.ids[0] for s in sets]


def _text_ids(model: EmbeddingModel, text: str, why: str) -> tuple[list[int], list[str]]:
    ids, _, notes = prompt_ids(model, text, why)
    if len(ids) > MAX_LENS_CONTEXT:
        # Steering runs the whole text twice; cutting it would change the very logits compared.
        raise EmbvizError(f"The text is {len(ids):,} tokens; steering and the direction's layers read texts of up "
                          f"to {MAX_LENS_CONTEXT}.")
    return ids, notes


def _watched(model: EmbeddingModel, own: list[int], watch: Sequence[str | int] | None) -> list[int]:
    """The tokens whose probabilities are reported: those asked for, else the two words' own."""
    if not watch:
        return list(dict.fromkeys(own))
    if len(watch) > MAX_WATCHED:
        raise EmbvizError(f"Watch at most {MAX_WATCHED} tokens at a time (got {len(watch)}).")
    return list(dict.fromkeys(resolve_token(model, t) for t in watch))


# --- the model ------------------------------------------------------------------------------------

def steerable(lm: LanguageModel) -> list[torch.nn.Module]:
    """The model's blocks, when a vector added after one of them is added once, at one layer;
    else one sentence naming the family."""
    anatomy = lm.anatomy
    if not anatomy.layers:
        raise EmbvizError(anatomy.lens_why_not or f"embviz cannot find the blocks of {anatomy.family_name} models.")
    if not anatomy.runs_once:
        raise EmbvizError(f"{anatomy.family_name} models run their blocks other than once each in order, so a vector "
                          "added after one block would not be added once, at one layer.")
    layers: list[torch.nn.Module] = list(anatomy.layers)
    return layers


def check_width(model: EmbeddingModel, lm: LanguageModel, width: int) -> None:
    if width != model.dim:
        raise EmbvizError(f"The {lm.anatomy.family_name} model's {model.dim}-wide embedding is projected into its "
                          f"{width}-wide blocks, so a direction of its table is no direction of its residual stream.")


def typical_norm(residual: torch.Tensor) -> float:
    """The mean L2 norm of a layer's residual rows (T, D), leaving out row 0 when there are
    others: the first position's residual is an outlier in most models."""
    rows = residual[1:] if residual.shape[0] > 1 else residual
    return float(rows.double().norm(dim=-1).mean())


def steering_hook(blocks: list[torch.nn.Module], layer: int, vector: torch.Tensor, family: str) -> Hook:
    """A hook adding `vector` (D,) at every position to the residual stream after `layer`:
    to block `layer`'s output, or for layer 0 to block 1's input (the embedding output)."""
    def added(hidden: object) -> torch.Tensor:
        if not isinstance(hidden, torch.Tensor) or hidden.dim() != 3 or hidden.shape[-1] != vector.shape[0]:
            raise EmbvizError(f"The blocks of {family} models do not pass the residual stream on as one "
                              "(batch × tokens × width) tensor, so no vector can be added to it.")
        return hidden + vector.to(hidden.device, hidden.dtype)

    if layer == 0:
        def before(_module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
            if args:
                return (added(args[0]), *args[1:]), kwargs
            return args, {**kwargs, "hidden_states": added(kwargs.get("hidden_states"))}
        return blocks[0], "pre", before

    def after(_module: torch.nn.Module, _args: tuple[Any, ...], output: object) -> object:
        if isinstance(output, (tuple, list)):
            return type(output)([added(output[0]), *output[1:]])
        return added(output)
    return blocks[layer - 1], "post", after


def _log_probs(logits: torch.Tensor) -> torch.Tensor:
    """The softmax over the whole vocabulary, as logs; NaN and +inf logits count as absent."""
    clean = torch.nan_to_num(logits.double(), nan=-math.inf, posinf=-math.inf)
    return torch.log_softmax(clean, -1)


def _top(model: EmbeddingModel, logits: torch.Tensor, log_probs: torch.Tensor, k: int) -> list[TokenScore]:
    ids = torch.topk(log_probs, k).indices.tolist()
    return [TokenScore(i, model.vocab.label(i), float(logits[i]), math.exp(float(log_probs[i])), model.vocab.texts[i])
            for i in ids]
