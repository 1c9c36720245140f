"""Direct logit attribution: which block, and which attention head, wrote a logit.

The residual stream that reaches the final norm is the sum of the embedding output and
every block's attention and MLP outputs. The final norm is not linear, but at the text's
actual final residual x it is one fixed map: RMSNorm(v) ≈ v · g / rms(x), with the scale
taken from the real residual (LayerNorm also subtracts v's mean, and adds its bias once).
Each write, through that map and the output head's row for the token, is its share of the
logit, and the shares add up to the model's own logit. Each head's share is its slice of
the attention output projection applied to that head's output.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import torch

from embviz.core.errors import EmbvizError
from embviz.core.lm.anatomy import Anatomy, BlockAnatomy, last_row, tensor_args
from embviz.core.lm.causal_lm import Hook
from embviz.core.lm.lens import MAX_LENS_CONTEXT, check_has_layers, exact_stream, layer_names
from embviz.core.lm.logits import Prompt, prompt_ids
from embviz.core.lm.norms import LinearNorm, close, linearise, sums_to, tolerance
from embviz.core.lm.norms import first_output as _first
from embviz.core.lm.results import AttentionResult, AttributionResult, HeadPart, Part, PinnedResult, PinnedToken
from embviz.core.model import EmbeddingModel

# What the hooks caught in one pass, keyed ("in", block), ("mlp", block), ("mixer path in", block, step) …
Rows = dict[tuple[Any, ...], torch.Tensor]

SUM_TOLERANCE = 10  # × the dtype's norm tolerance: parts add up to the model's logit to this, relative (absolute below 1)
MAX_ATTENTION_TOKENS = 512  # weights of one block are heads × T × T: 9 MB for SmolLM2 at 512 tokens
MAX_PINNED = 20

LAYER_NORM_NOTE = ("The final norm is a LayerNorm: each part's mean across the width is subtracted, as the norm "
                   "does to their sum, and the norm's bias is a part of its own.")


# --- the public calls -----------------------------------------------------------------------------

def attribute(model: EmbeddingModel, text: Prompt, token: str | int | None = None, position: int | None = None,
              load_lm: bool = True) -> AttributionResult:
    """Split the logit of `token` (default: the top guess) after `position` (default: the
    last) into the embedding's, each block's attention and MLP, and each head's parts."""
    check_has_layers(model)
    ids, _, notes = prompt_ids(model, text, "attribution splits the model's guess for the token after it")
    p = check_position(position, len(ids))
    lm = model.language_model(load=load_lm)
    anatomy = splittable(lm)
    rows: Rows = {}
    try:
        # Through the typing cache: at the last position only that token runs again (an earlier
        # position leaves the cache holding the text up to it, as a deletion would).
        logits = lm.run(ids[:p + 1], hooks=_trace_hooks(anatomy, rows)).logits
    except torch.OutOfMemoryError as exc:
        raise EmbvizError("The device ran out of memory running the model on this text; try shorter text.") from exc
    target = int(torch.argmax(torch.nan_to_num(logits, nan=-math.inf))) if token is None else resolve_token(model, token)
    logit = float(logits[target])
    if not math.isfinite(logit):
        raise EmbvizError("The model's logit for this token is not a finite number, so it cannot be split.")
    parts, heads, split_notes, uncapped = _split(anatomy, rows, target, logit)
    _check_sum(sum(x.value for x in parts), uncapped, anatomy)
    return AttributionResult(
        tokens=[(i, model.vocab.label(i)) for i in ids], token_texts=[model.vocab.texts[i] for i in ids], position=p,
        target_id=target, target=model.vocab.texts[target], logit=logit,
        prob=float(torch.softmax(torch.nan_to_num(logits, nan=-math.inf), -1)[target]),
        parts=parts, heads=heads, notes=notes + split_notes, uncapped_logit=uncapped if uncapped != logit else None,
    )


def attention_pattern(model: EmbeddingModel, text: Prompt, block: int, head: int | None = None,
                      token: str | int | None = None, position: int | None = None,
                      load_lm: bool = True) -> AttentionResult:
    """The attention weights of one block (every head, or one) over the text, with the
    block's heads ranked by their part of the attribution's logit."""
    check_has_layers(model)
    lm = model.language_model(load=load_lm)
    anatomy = splittable(lm)
    block_ = anatomy.blocks[_check_block(block, len(anatomy.blocks)) - 1]
    n_heads = block_.n_heads
    if not n_heads:
        raise EmbvizError(f"The {anatomy.family_name} model's configuration does not say how many attention heads "
                          "it has.")
    if head is not None and not 0 <= head < n_heads:
        raise EmbvizError(f"Head {head} is out of range: block {block} has heads 0–{n_heads - 1}.")
    attribution = attribute(model, text, token, position, load_lm)
    ids = [i for i, _ in attribution.tokens]
    skipped = max(0, len(ids) - MAX_ATTENTION_TOKENS)
    notes = list(attribution.notes)
    if skipped:
        notes.append(f"The weights are of the last {MAX_ATTENTION_TOKENS} of the text's {len(ids):,} tokens.")
    weights = _attention_weights(lm, block_, ids[skipped:], anatomy.family_name)
    if weights.shape[0] != n_heads:
        raise EmbvizError(f"The {anatomy.family_name} model's attention returns {weights.shape[0]} patterns for its "
                          f"{n_heads} heads, so they cannot be shown head by head.")
    shown = list(range(n_heads)) if head is None else [head]
    return AttentionResult(
        tokens=attribution.tokens[skipped:], token_texts=attribution.token_texts[skipped:], block=block, heads=shown,
        weights=weights[shown], ranking=attribution.ranked_heads(block), target_id=attribution.target_id,
        target=attribution.target, position=attribution.position, skipped=skipped, notes=notes,
    )


def pinned_tokens(model: EmbeddingModel, text: Prompt, tokens: list[str | int], position: int | None = None,
                  load_lm: bool = True) -> PinnedResult:
    """Each pinned token's probability and rank at every layer (the logit lens, with the
    final norm) after `position` (default: the last)."""
    check_has_layers(model)
    if not tokens:
        raise EmbvizError("Pin at least one token to follow through the layers.")
    if len(tokens) > MAX_PINNED:
        raise EmbvizError(f"Pin at most {MAX_PINNED} tokens at a time (got {len(tokens)}).")
    pinned = [resolve_token(model, t) for t in tokens]
    ids, _, notes = prompt_ids(model, text, "the lens reads the model's guess for the token after each one")
    if len(ids) > MAX_LENS_CONTEXT:
        notes.append(f"The lens runs on the last {MAX_LENS_CONTEXT} of the text's {len(ids):,} tokens.")
        ids = ids[-MAX_LENS_CONTEXT:]
    p = check_position(position, len(ids))
    lm = model.language_model(load=load_lm)
    stream = exact_stream(lm, ids)
    with torch.inference_mode():
        logits = lm.anatomy.readout(stream[:, p])  # (layers + 1, V)
        logits = torch.nan_to_num(logits, nan=-math.inf, posinf=-math.inf)
        log_probs = torch.log_softmax(logits, -1)
    columns = torch.tensor(pinned, device=logits.device)
    chosen = logits[:, columns]  # (layers + 1, pinned)
    ranks = (logits.unsqueeze(1) > chosen.unsqueeze(-1)).sum(-1) + 1
    probs = log_probs[:, columns].exp()
    return PinnedResult(
        tokens=[(i, model.vocab.label(i)) for i in ids], token_texts=[model.vocab.texts[i] for i in ids], position=p,
        layer_names=layer_names(logits.shape[0] - 1), notes=notes,
        pinned=[PinnedToken(t, model.vocab.texts[t], model.vocab.label(t), probs[:, n].tolist(), ranks[:, n].tolist(),
                            chosen[:, n].tolist()) for n, t in enumerate(pinned)],
    )


# --- inputs ---------------------------------------------------------------------------------------

def check_position(position: int | None, n_tokens: int) -> int:
    """0-based; negative counts from the end, as in Python; None is the last token."""
    if position is None:
        return n_tokens - 1
    if not -n_tokens <= position < n_tokens:
        raise EmbvizError(f"Position {position} is outside the text's {n_tokens} tokens (0–{n_tokens - 1}).")
    return position % n_tokens


def resolve_token(model: EmbeddingModel, token: str | int) -> int:
    """A token id, or one token's exact text (␣ for a leading space, as labels show it)."""
    if isinstance(token, int):
        if not 0 <= token < model.vocab_size:
            raise EmbvizError(f"Token id {token} is outside the vocabulary (0–{model.vocab_size - 1}).")
        return token
    exact = model.vocab.id_of(token)
    if exact is not None:
        return exact
    return model.vocab.resolve(token.replace("␣", " "))  # several tokens: an error naming the pieces


def _check_block(block: int, n_blocks: int) -> int:
    if not 1 <= block <= n_blocks:
        raise EmbvizError(f"Block {block} is out of range: this model has blocks 1–{n_blocks}.")
    return block


# --- the model's modules --------------------------------------------------------------------------

def splittable(lm: Any) -> Anatomy:
    """The model's anatomy, when every block's writes and the readout are known; else an
    error naming the family and what is missing."""
    anatomy: Anatomy = lm.anatomy
    why = anatomy.lens_why_not or anatomy.blocks_why_not()
    if why:
        raise EmbvizError(why)
    return anatomy


# --- one forward pass, hooked ---------------------------------------------------------------------

def _keep(rows: Rows, key: tuple[Any, ...], which: str) -> Callable[..., None]:
    """A hook that keeps the last position's row of a call's input ("in"), its second input
    ("in2": a residual handed in) or its output ("out"). A copy: the model may add to its
    tensors in place after the hook."""
    def hook(_module: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], output: object = None) -> None:
        if which == "out":
            row = last_row(output)
        else:
            tensors = tensor_args(args, kwargs)
            n = 0 if which == "in" else 1
            row = last_row(tensors[n]) if len(tensors) > n else None
        if row is not None:
            rows[key] = row
    return hook


def _post(rows: Rows, key: tuple[Any, ...]) -> Callable[..., None]:
    keep = _keep(rows, key, "out")
    return lambda module, args, output: keep(module, args, {}, output)


def _trace_hooks(anatomy: Anatomy, rows: Rows) -> list[Hook]:
    hooks: list[Hook] = []
    for n, b in enumerate(anatomy.blocks):
        hooks += [(b.layer, "pre", _keep(rows, ("in", n), "in")), (b.layer, "post", _post(rows, ("out", n)))]
        for kind, module, path, minus in (("mixer", b.mixer, b.mixer_path, b.mixer_minus_residual),
                                          ("mlp", b.mlp, b.mlp_path, b.mlp_minus_residual)):
            assert module is not None  # a block whose writes are known (splittable)
            hooks.append((module, "post", _post(rows, (kind, n))))
            if minus:
                hooks.append((module, "pre", _keep(rows, (kind + " residual", n), "in2")))
            for i, norm in enumerate(path):
                hooks += [(norm, "pre", _keep(rows, (kind + " path in", n, i), "in")),
                          (norm, "post", _post(rows, (kind + " path out", n, i)))]
        if b.out_proj is not None:
            hooks += [(b.out_proj, "pre", _keep(rows, ("heads", n), "in")), (b.out_proj, "post", _post(rows, ("proj", n)))]
    return hooks


def _attention_weights(lm: Any, block: BlockAnatomy, ids: list[int], family: str) -> np.ndarray:
    kept: list[torch.Tensor | None] = []

    def hook(_module: torch.nn.Module, _args: tuple[Any, ...], output: object) -> None:
        weights = output[1] if isinstance(output, tuple) and len(output) > 1 else None
        kept.append(weights[0].float().cpu() if isinstance(weights, torch.Tensor) and weights.dim() == 4 else None)

    try:
        lm.eager_forward(ids, [(block.mixer, "post", hook)])
    except torch.OutOfMemoryError as exc:
        raise EmbvizError("The device ran out of memory running the model on this text; try shorter text.") from exc
    except (ValueError, NotImplementedError, AttributeError) as exc:
        raise EmbvizError(f"The {family} model cannot compute its attention eagerly, so its weights cannot be "
                          "shown.") from exc
    if not kept or kept[-1] is None:
        raise EmbvizError(f"The {family} model's attention does not return its weights, even computed eagerly.")
    return kept[-1].numpy()


# --- the split ------------------------------------------------------------------------------------

def _head_mask(width: int, n_heads: int, device: torch.device) -> torch.Tensor:
    """(H, width): row h keeps head h's slice of the heads' outputs side by side."""
    mask: torch.Tensor = torch.block_diag(*[torch.ones(1, width // n_heads, device=device)] * n_heads)
    return mask


def _head_writes(out_proj: torch.nn.Module, z: torch.Tensor, mask: torch.Tensor,
                 dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """(each head's write (H, D), the projection's bias (D,)): the projection of the heads'
    outputs with all but one zeroed, less the bias, which no head wrote."""
    with torch.inference_mode():
        if isinstance(out_proj, torch.nn.Linear):  # in float32 from the stored weights, whatever they are stored in
            written = (z * mask) @ out_proj.weight.float().T + (0 if out_proj.bias is None else out_proj.bias.float())
        else:
            written = _first(out_proj((z * mask).to(dtype))).float()
        bias = getattr(out_proj, "bias", None)
        if not isinstance(bias, torch.Tensor):
            bias = _first(out_proj(torch.zeros_like(z[None]).to(dtype)))[0]  # a projection of no known kind
    return written - bias.float(), bias.float()


def _through(path_norms: list[LinearNorm | None], vectors: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Head writes and their bias through a write's post-norms (each linear at its real
    input); each norm's own bias joins the bias, which no head wrote."""
    for norm in path_norms:
        assert norm is not None
        vectors, bias = norm(vectors), norm(bias) + (norm.bias if norm.bias is not None else 0)
    return vectors, bias


@dataclass
class _Writes:
    stream: torch.Tensor  # (2N + 1, D): the embedding, then each block's attention and MLP write
    heads: list[torch.Tensor | None]  # per block (H, D), or None where its heads cannot be split
    biases: list[torch.Tensor | None]  # per block, what no head wrote (D,)
    notes: list[str]


def _writes(anatomy: Anatomy, rows: Rows) -> _Writes:
    """Every write to the residual stream, each checked against what its block wrote."""
    dtype, family = anatomy.dtype, anatomy.family_name
    writes, heads, biases, notes = [rows[("in", 0)]], [], [], []
    for n, b in enumerate(anatomy.blocks):
        ends = {}
        for kind, path, minus in (("mixer", b.mixer_path, b.mixer_minus_residual), ("mlp", b.mlp_path, b.mlp_minus_residual)):
            raw = rows[("proj", n)] if kind == "mixer" and b.mixer_from_proj else rows[(kind, n)]
            if minus:
                raw = raw - rows[(kind + " residual", n)]
            ends[kind] = rows[(kind + " path out", n, len(path) - 1)] if path else raw
        attention, mlp = ends["mixer"] * b.multiplier, ends["mlp"] * b.multiplier
        written = rows[("out", n)] - rows[("in", n)]
        if not sums_to(attention + mlp, written, dtype, float(rows[("in", n)].norm() + rows[("out", n)].norm())):
            raise EmbvizError(f"Block {n + 1}'s attention and MLP outputs do not add up to what it writes to the "
                              f"residual stream (the {family} model changes them on the way), so it cannot be split.")
        writes += [attention, mlp]
        per_head, bias, why = _block_heads(anatomy, b, n, rows, attention)
        heads.append(per_head)
        biases.append(bias)
        if why and why not in notes:
            notes.append(why)
    stream = torch.stack(writes)
    final = rows[("out", len(anatomy.blocks) - 1)]
    if not close(stream.sum(0), final, dtype, float(stream.norm(dim=-1).sum())):
        raise EmbvizError(f"The {family} model's residual stream is not the sum of the embedding and the blocks' "
                          "writes, so attribution cannot split it exactly.")
    return _Writes(stream, heads, biases, notes)


def _block_heads(anatomy: Anatomy, b: BlockAnatomy, n: int, rows: Rows,
                 attention: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None, str | None]:
    """Block n's heads' writes (H, D) and what no head wrote, checked to add up to its
    attention write; or a sentence saying why they cannot be split."""
    family = anatomy.family_name
    z = rows.get(("heads", n))
    if b.out_proj is None or z is None or not b.n_heads or z.shape[-1] % b.n_heads:
        return None, None, (f"The {family} model's attention output is not its heads' outputs side by side, so its "
                            "blocks are split into attention and MLP but not by head.")
    path_norms = [linearise(norm, rows[("mixer path in", n, i)].to(anatomy.dtype)) for i, norm in enumerate(b.mixer_path)]
    if any(norm is None for norm in path_norms):
        return None, None, (f"The {family} model's norm after its attention is neither an RMSNorm nor a LayerNorm, "
                            "so its blocks are not split by head.")
    per_head, bias = _head_writes(b.out_proj, z, _head_mask(z.shape[-1], b.n_heads, z.device), anatomy.dtype)
    per_head, bias = _through(path_norms, per_head, bias)
    per_head, bias = per_head * b.multiplier, bias * b.multiplier
    if not close(per_head.sum(0) + bias, attention, anatomy.dtype, float(per_head.norm(dim=-1).sum() + bias.norm())):
        return None, None, (f"The heads of the {family} model do not add up to its attention's write (it changes "
                            "their sum after its output projection), so its blocks are not split by head.")
    return per_head, bias, None


@torch.inference_mode()
def _split(anatomy: Anatomy, rows: Rows, target: int, logit: float) -> tuple[list[Part], list[HeadPart], list[str], float]:
    """(parts, heads, notes, the logit they add up to: the model's, or its logit before a soft cap)."""
    family, dtype = anatomy.family_name, anatomy.dtype
    final = rows[("out", len(anatomy.blocks) - 1)]
    if anatomy.final_norm is not None:
        norm = linearise(anatomy.final_norm, final.to(dtype))
        if norm is None:
            raise EmbvizError(f"The final norm ({type(anatomy.final_norm).__name__}) is neither an RMSNorm nor a "
                              "LayerNorm, so attribution cannot make it linear exactly.")
    else:
        norm = LinearNorm(torch.ones_like(final), False, None)
    # The head's row for the target, carried back through the projections after the norm.
    head = anatomy.head
    weight = getattr(head, "weight", None)
    if not isinstance(weight, torch.Tensor) or weight.dim() != 2:
        raise EmbvizError(f"The {family} model's output head is not a plain (vocabulary × width) matrix, so its "
                          "logits cannot be split.")
    factor = anatomy.logit_map.factor
    row = weight[target].float() * factor * anatomy.pre_head
    extra: list[Part] = []
    for module in reversed(anatomy.after_norm):
        if not isinstance(module, torch.nn.Linear):
            raise EmbvizError(f"The {family} model's {type(module).__name__} after its final norm is not a linear map "
                              f"that embviz knows, so its logits cannot be split.")
        if module.bias is not None:
            extra.append(Part(None, "projection bias", float(module.bias.float() @ row)))
        row = module.weight.float().T @ row
    if row.shape[0] != final.shape[0]:
        raise EmbvizError(f"The {family} model's output head does not read the residual stream's width, so its "
                          "logits cannot be split.")
    writes = _writes(anatomy, rows)
    split = [(n, h, bias) for n, (h, bias) in enumerate(zip(writes.heads, writes.biases)) if h is not None and bias is not None]
    split_heads = [n for n, _, _ in split]
    vectors = [writes.stream] + [h for _, h, _ in split] + [bias[None] for _, _, bias in split]
    values = (norm(torch.cat(vectors)) @ row).tolist()
    n = len(anatomy.blocks)
    parts = [Part(0, "embedding", values[0])]
    parts += [Part(b + 1, kind, values[1 + 2 * b + k]) for b in range(n) for k, kind in enumerate(("attention", "mlp"))]
    if norm.bias is not None:
        parts.append(Part(None, "norm bias", float(norm.bias @ row)))
    parts += extra
    head_bias = getattr(head, "bias", None)
    if isinstance(head_bias, torch.Tensor):
        parts.append(Part(None, "head bias", float(head_bias[target].float()) * factor))
    at = len(writes.stream)
    head_parts: list[HeadPart] = []
    for b, h, _ in split:
        count = h.shape[0]
        head_parts += [HeadPart(b + 1, k, values[at + k]) for k in range(count)]
        at += count
    for b in split_heads:
        if any(getattr(block.out_proj, "bias", None) is not None or block.mixer_path for block in anatomy.blocks):
            head_parts.append(HeadPart(b + 1, None, values[at]))
        at += 1
    notes = list(writes.notes)
    if norm.centred:
        notes.append(LAYER_NORM_NOTE)
    uncapped = float(anatomy.readout(final[None], cap=False)[0, target])
    if anatomy.logit_map.softcap is not None:
        notes.append(f"The {family} model caps its logits softly (cap × tanh(logit / cap), cap "
                     f"{anatomy.logit_map.softcap:g}): the parts add up to its logit before the cap, {uncapped:.2f}; "
                     f"after the cap it is {logit:.2f}.")
        if abs(float(anatomy.logit_map(torch.tensor([uncapped]))[0]) - logit) > 1e-3 * max(1.0, abs(logit)):
            raise EmbvizError(f"The {family} model's logit is not its capped readout here, so it cannot be split.")
    elif not close(torch.tensor([uncapped]), torch.tensor([logit]), dtype, max(1.0, abs(logit))):
        raise EmbvizError(f"The parts add up to {uncapped:.4f}, not the model's logit {logit:.4f}: the {family} model "
                          "changes the logits after the output head in a way embviz does not know, so they cannot be "
                          "split.")
    return parts, head_parts, notes, uncapped


def _check_sum(total: float, logit: float, anatomy: Anatomy) -> None:
    if abs(total - logit) > SUM_TOLERANCE * tolerance(anatomy.dtype) * max(1.0, abs(logit)):
        raise EmbvizError(f"The parts add up to {total:.4f}, not the model's logit {logit:.4f}: the "
                          f"{anatomy.family_name} model changes the logits after the output head (e.g. scaling or "
                          "soft-capping them) in a way embviz does not know, so they cannot be split.")
