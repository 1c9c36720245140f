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
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch

from embviz.core.errors import EmbvizError
from embviz.core.lm.causal_lm import Hook
from embviz.core.lm.lens import MAX_LENS_CONTEXT, check_has_layers, layer_names
from embviz.core.lm.logits import Prompt, prompt_ids
from embviz.core.model import EmbeddingModel

SUM_TOLERANCE = 1e-3  # parts must add up to the model's logit to this, relative (absolute below 1)
WRITE_TOLERANCE = 1e-4  # relative: float32 rounding of a sum of a few dozen vectors stays far below
MAX_ATTENTION_TOKENS = 512  # weights of one block are heads × T × T: 9 MB for SmolLM2 at 512 tokens
MAX_PINNED = 20

LAYER_LISTS = ("layers", "h", "blocks")
ATTENTION_NAMES = ("self_attn", "attn", "attention")
OUT_PROJ_NAMES = ("o_proj", "c_proj", "out_proj", "dense")
MLP_NAMES = ("mlp", "feed_forward")
LAYER_NORM_NOTE = ("The final norm is a LayerNorm: each part's mean across the width is subtracted, as the norm "
                   "does to their sum, and the norm's bias is a part of its own.")


@dataclass(frozen=True)
class Part:
    block: int | None  # 0: the embedding, 1…N: a block; None: the final norm's or the head's bias
    kind: str  # "embedding", "attention", "mlp", "norm bias" or "head bias"
    value: float

    def as_dict(self) -> dict:
        return {"block": self.block, "kind": self.kind, "value": self.value}


@dataclass(frozen=True)
class HeadPart:
    block: int  # 1…N
    head: int | None  # 0-based; None: the attention output projection's bias, which no head wrote
    value: float


@dataclass
class AttributionResult:
    tokens: list[tuple[int, str]]  # the text's tokens, (id, label)
    token_texts: list[str]
    position: int  # the position whose next-token logit is split
    target_id: int
    target: str  # the target token's exact text
    logit: float  # the model's own logit for it
    prob: float
    parts: list[Part]  # they add up to `logit`
    heads: list[HeadPart]  # per block, they add up to its attention part
    notes: list[str] = field(default_factory=list)

    def ranked_heads(self, block: int | None = None) -> list[HeadPart]:
        """The heads (of one block, or all), largest part of the logit first."""
        chosen = [h for h in self.heads if h.head is not None and block in (None, h.block)]
        return sorted(chosen, key=lambda h: h.value, reverse=True)

    def as_dict(self) -> dict:
        return {
            "token": self.target, "token_id": self.target_id, "position": self.position,
            "logit": self.logit, "prob": self.prob,
            "tokens": list(self.token_texts), "token_ids": [i for i, _ in self.tokens],
            "parts": [p.as_dict() for p in self.parts],
            "heads": [{"block": h.block, "head": h.head, "value": h.value} for h in self.heads if h.head is not None],
            "attention_biases": [{"block": h.block, "value": h.value} for h in self.heads if h.head is None],
            "notes": list(self.notes),
        }


@dataclass
class AttentionResult:
    tokens: list[tuple[int, str]]  # the positions shown, (id, label)
    token_texts: list[str]
    block: int  # 1…N
    heads: list[int]  # 0-based, in the order of `weights`
    weights: np.ndarray  # (len(heads), T, T): row = the attending position, column = the one attended to
    ranking: list[HeadPart]  # the block's heads by their part of the attribution's logit, largest first
    target_id: int  # the token whose logit ranks them
    target: str
    position: int  # ...after this position of the text
    skipped: int = 0  # positions before the ones shown (not run)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "block": self.block, "heads": list(self.heads), "tokens": list(self.token_texts),
            "token_ids": [i for i, _ in self.tokens], "skipped_positions": self.skipped,
            "weights": [{"head": h, "weights": w.tolist()} for h, w in zip(self.heads, self.weights)],
            "ranking": [{"head": h.head, "value": h.value} for h in self.ranking],
            "token": self.target, "token_id": self.target_id, "position": self.position, "notes": list(self.notes),
        }


@dataclass(frozen=True)
class PinnedToken:
    id: int
    text: str
    label: str
    probs: list[float]  # per layer: the embedding, then each block
    ranks: list[int]  # 1 = that layer's top guess
    logits: list[float]


@dataclass
class PinnedResult:
    tokens: list[tuple[int, str]]
    token_texts: list[str]
    position: int
    layer_names: list[str]
    pinned: list[PinnedToken]
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "tokens": list(self.token_texts), "token_ids": [i for i, _ in self.tokens], "position": self.position,
            "layers": list(self.layer_names), "notes": list(self.notes),
            "pinned": [{"id": p.id, "token": p.text, "label": p.label, "probs": p.probs, "ranks": p.ranks,
                        "logits": p.logits} for p in self.pinned],
        }


@dataclass(frozen=True)
class Block:
    """One transformer block's modules whose outputs are written to the residual stream."""

    layer: torch.nn.Module
    attention: torch.nn.Module
    out_proj: torch.nn.Module  # its input: the heads' outputs side by side
    mlp: torch.nn.Module


# --- the public calls -----------------------------------------------------------------------------

def attribute(model: EmbeddingModel, text: Prompt, token: str | int | None = None, position: int | None = None,
              load_lm: bool = True) -> AttributionResult:
    """Split the logit of `token` (default: the top guess) after `position` (default: the
    last) into the embedding's, each block's attention and MLP, and each head's parts."""
    check_has_layers(model)
    ids, _, notes = prompt_ids(model, text, "attribution splits the model's guess for the token after it")
    p = check_position(position, len(ids))
    lm = model.language_model(load=load_lm)
    blocks = find_blocks(lm)
    rows: dict[tuple[str, int], torch.Tensor] = {}
    try:
        # Through the typing cache: at the last position only that token runs again (an earlier
        # position leaves the cache holding the text up to it, as a deletion would).
        logits = lm.run(ids[:p + 1], hooks=_trace_hooks(blocks, lm.final_norm, rows)).logits
    except torch.OutOfMemoryError as exc:
        raise EmbvizError("The device ran out of memory running the model on this text; try shorter text.") from exc
    target = int(torch.argmax(torch.nan_to_num(logits, nan=-math.inf))) if token is None else resolve_token(model, token)
    parts, heads, norm_note = _split(lm, blocks, rows, target)
    logit = float(logits[target])
    _check_sum(sum(x.value for x in parts), logit)
    return AttributionResult(
        tokens=[(i, model.vocab.label(i)) for i in ids], token_texts=[model.vocab.texts[i] for i in ids], position=p,
        target_id=target, target=model.vocab.texts[target], logit=logit,
        prob=float(torch.softmax(torch.nan_to_num(logits, nan=-math.inf), -1)[target]),
        parts=parts, heads=heads, notes=notes + ([norm_note] if norm_note else []),
    )


def attention_pattern(model: EmbeddingModel, text: Prompt, block: int, head: int | None = None,
                      token: str | int | None = None, position: int | None = None,
                      load_lm: bool = True) -> AttentionResult:
    """The attention weights of one block (every head, or one) over the text, with the
    block's heads ranked by their part of the attribution's logit."""
    check_has_layers(model)
    lm = model.language_model(load=load_lm)
    blocks = find_blocks(lm)
    block_ = blocks[_check_block(block, len(blocks)) - 1]
    n_heads = _n_heads(lm)
    if head is not None and not 0 <= head < n_heads:
        raise EmbvizError(f"Head {head} is out of range: block {block} has heads 0–{n_heads - 1}.")
    attribution = attribute(model, text, token, position, load_lm)
    ids = [i for i, _ in attribution.tokens]
    skipped = max(0, len(ids) - MAX_ATTENTION_TOKENS)
    notes = list(attribution.notes)
    if skipped:
        notes.append(f"The weights are of the last {MAX_ATTENTION_TOKENS} of the text's {len(ids):,} tokens.")
    weights = _attention_weights(lm, block_, ids[skipped:])
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
    with torch.inference_mode():
        logits = lm.head(lm.final_norm(lm.residual_stream(ids)[:, p])).float()  # (layers + 1, V)
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

def find_blocks(lm: object) -> list[Block]:
    """The blocks of a transformers causal LM, or an error naming what is missing."""
    hf = getattr(lm, "model", None)
    base = getattr(hf, "base_model", None)
    layers = next((m for name in LAYER_LISTS if isinstance(m := getattr(base, name, None), torch.nn.ModuleList)), None)
    if layers is None or getattr(lm, "final_norm", None) is None:
        raise EmbvizError("Attribution needs the model's blocks and final norm, and this architecture's were not found.")
    blocks = []
    for n, layer in enumerate(layers, 1):
        attention = _child(layer, ATTENTION_NAMES)
        out_proj = _child(attention, OUT_PROJ_NAMES) if attention is not None else None
        mlp = _child(layer, MLP_NAMES)
        if attention is None or out_proj is None or mlp is None:
            raise EmbvizError(f"Block {n} has no attention output projection or MLP that embviz recognises "
                              f"({type(layer).__name__}), so its writes cannot be split.")
        blocks.append(Block(layer, attention, out_proj, mlp))
    return blocks


def _child(module: torch.nn.Module, names: tuple[str, ...]) -> torch.nn.Module | None:
    return next((m for name in names if isinstance(m := getattr(module, name, None), torch.nn.Module)), None)


def _n_heads(lm: object) -> int:
    config = lm.model.config  # type: ignore[attr-defined]
    n = getattr(config, "num_attention_heads", None) or getattr(config, "n_head", None)
    if not n:
        raise EmbvizError("The model's configuration does not say how many attention heads it has.")
    return int(n)


# --- one forward pass, hooked ---------------------------------------------------------------------

def _first(output: object) -> torch.Tensor:
    return output[0] if isinstance(output, tuple) else output  # type: ignore[return-value]


def _keep(rows: dict, key: tuple[str, int], pick: Callable[[tuple, object], torch.Tensor]) -> Callable[..., None]:
    """A hook that keeps the last position's row of what `pick` takes from the call. A copy:
    the model may add to its tensors in place after the hook."""
    def hook(_module: torch.nn.Module, args: tuple, extra: object) -> None:
        rows[key] = pick(args, extra)[0, -1].detach().to(torch.float32, copy=True)
    return hook


def _input(args: tuple, kwargs: object) -> torch.Tensor:
    return args[0] if args else kwargs["hidden_states"]  # type: ignore[index]


def _output(_args: tuple, output: object) -> torch.Tensor:
    return _first(output)


def _trace_hooks(blocks: list[Block], final_norm: torch.nn.Module, rows: dict) -> list[Hook]:
    hooks: list[Hook] = [(final_norm, "pre", _keep(rows, ("final", 0), _input))]
    for n, b in enumerate(blocks):
        hooks += [
            (b.layer, "pre", _keep(rows, ("in", n), _input)),
            (b.layer, "post", _keep(rows, ("out", n), _output)),
            (b.attention, "post", _keep(rows, ("attention", n), _output)),
            (b.out_proj, "pre", _keep(rows, ("heads", n), _input)),
            (b.mlp, "post", _keep(rows, ("mlp", n), _output)),
        ]
    return hooks


def _attention_weights(lm: object, block: Block, ids: list[int]) -> np.ndarray:
    kept: list[torch.Tensor | None] = []

    def hook(_module: torch.nn.Module, _args: tuple, output: object) -> None:
        weights = output[1] if isinstance(output, tuple) and len(output) > 1 else None
        kept.append(None if weights is None else weights[0].float().cpu())

    try:
        lm.eager_forward(ids, [(block.attention, "post", hook)])  # type: ignore[attr-defined]
    except torch.OutOfMemoryError as exc:
        raise EmbvizError("The device ran out of memory running the model on this text; try shorter text.") from exc
    if not kept or kept[-1] is None:
        raise EmbvizError("This architecture's attention does not return its weights, even computed eagerly.")
    return kept[-1].numpy()


# --- the split ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _LinearNorm:
    """The final norm with its scale fixed at the real final residual: linear in its input."""

    scale: torch.Tensor  # (D,): the gain over the residual's rms (LayerNorm: its standard deviation)
    centred: bool  # LayerNorm subtracts the mean first
    bias: torch.Tensor | None

    def __call__(self, v: torch.Tensor) -> torch.Tensor:
        if self.centred:
            v = v - v.mean(-1, keepdim=True)
        return v * self.scale


def linearise_norm(norm: torch.nn.Module, final: torch.Tensor) -> _LinearNorm:
    """RMSNorm or LayerNorm at the residual `final`, checked against the module itself."""
    name = type(norm).__name__
    eps = getattr(norm, "variance_epsilon", getattr(norm, "eps", None))
    if eps is None or not ("RMSNorm" in name or "LayerNorm" in name):
        raise EmbvizError(f"The final norm ({name}) is neither an RMSNorm nor a LayerNorm, so attribution "
                          "cannot make it linear exactly.")
    with torch.inference_mode():
        if "LayerNorm" in name:
            gain = norm.weight.float() if getattr(norm, "weight", None) is not None else torch.ones_like(final)
            bias = norm.bias.float() if getattr(norm, "bias", None) is not None else None
            linear = _LinearNorm(gain / torch.sqrt(final.var(unbiased=False) + eps), True, bias)
        else:
            # The gain read through the module: some store g, others 1 + g (Gemma).
            gain = _first(norm(torch.ones_like(final))).float() * math.sqrt(1 + eps)
            linear = _LinearNorm(gain / torch.sqrt(final.square().mean() + eps), False, None)
        expected = _first(norm(final)).float()
        got = linear(final) + (linear.bias if linear.bias is not None else 0)
    if not _close(got, expected):
        raise EmbvizError(f"The final norm ({name}) does not compute what an RMSNorm or LayerNorm would, so "
                          "attribution cannot make it linear exactly.")
    return linear


def _close(a: torch.Tensor, b: torch.Tensor, scale: float | None = None) -> bool:
    bound = WRITE_TOLERANCE * (scale if scale is not None else float(b.norm()))
    return float((a - b).norm()) <= bound + 1e-6


def _head_mask(width: int, n_heads: int, device: torch.device) -> torch.Tensor:
    """(H, width): row h keeps head h's slice of the heads' outputs side by side."""
    if width % n_heads:
        raise EmbvizError(f"The attention output's width {width} is not a whole number of its {n_heads} heads.")
    return torch.block_diag(*[torch.ones(1, width // n_heads, device=device)] * n_heads)


def _head_writes(out_proj: torch.nn.Module, z: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(each head's write (H, D), the projection's bias (D,)): the projection of the heads'
    outputs with all but one zeroed, less the bias, which no head wrote."""
    written = _first(out_proj(z * mask)).float()
    bias = getattr(out_proj, "bias", None)
    if not isinstance(bias, torch.Tensor):
        bias = _first(out_proj(torch.zeros_like(z[None])))[0].float()  # a projection of no known kind
    return written - bias.float(), bias.float()


def _writes(blocks: list[Block], rows: dict, n_heads: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(embedding, then attention and MLP of each block (2N + 1, D); heads (N, H, D);
    attention biases (N, D)), each checked to add up to what the block wrote."""
    writes, heads, biases = [rows[("in", 0)]], [], []
    mask = _head_mask(rows[("heads", 0)].shape[-1], n_heads, rows[("heads", 0)].device)
    for n in range(len(blocks)):
        attention, mlp = rows[("attention", n)], rows[("mlp", n)]
        written = rows[("out", n)] - rows[("in", n)]
        if not _close(attention + mlp, written, float(rows[("in", n)].norm() + rows[("out", n)].norm())):
            raise EmbvizError(f"Block {n + 1}'s attention and MLP outputs do not add up to what it writes to the "
                              "residual stream (this architecture changes them on the way), so it cannot be split.")
        per_head, bias = _head_writes(blocks[n].out_proj, rows[("heads", n)], mask)
        if not _close(per_head.sum(0) + bias, attention, float(attention.norm())):
            raise EmbvizError(f"The heads of block {n + 1} do not add up to its attention output, so it cannot be "
                              "split by head.")
        writes += [attention, mlp]
        heads.append(per_head)
        biases.append(bias)
    stream = torch.stack(writes)
    if not _close(stream.sum(0), rows[("final", 0)], float(stream.norm(dim=-1).sum())):
        raise EmbvizError("The residual stream is not the sum of the embedding and the blocks' writes in this "
                          "architecture, so attribution cannot split it exactly.")
    return stream, torch.stack(heads), torch.stack(biases)


@torch.inference_mode()
def _split(lm: object, blocks: list[Block], rows: dict, target: int) -> tuple[list[Part], list[HeadPart], str | None]:
    head = lm.head  # type: ignore[attr-defined]
    weight = getattr(head, "weight", None)
    if weight is None or weight.dim() != 2 or weight.shape[1] != rows[("final", 0)].shape[0]:
        raise EmbvizError("The output head is not a plain (vocabulary × width) matrix, so it cannot be split.")
    stream, heads, biases = _writes(blocks, rows, _n_heads(lm))
    norm = linearise_norm(lm.final_norm, rows[("final", 0)])  # type: ignore[attr-defined]
    row = weight[target].float()
    n, h = heads.shape[:2]
    values = (norm(torch.cat([stream, heads.reshape(n * h, -1), biases])) @ row).tolist()
    parts = [Part(0, "embedding", values[0])]
    parts += [Part(b + 1, kind, values[1 + 2 * b + k]) for b in range(n) for k, kind in enumerate(("attention", "mlp"))]
    if norm.bias is not None:
        parts.append(Part(None, "norm bias", float(norm.bias @ row)))
    if getattr(head, "bias", None) is not None:
        parts.append(Part(None, "head bias", float(head.bias[target])))
    head_values = values[len(stream):]
    head_parts = [HeadPart(b + 1, k, head_values[b * h + k]) for b in range(n) for k in range(h)]
    bias_values = head_values[n * h:]
    if any(getattr(b.out_proj, "bias", None) is not None for b in blocks):
        head_parts += [HeadPart(b + 1, None, bias_values[b]) for b in range(n)]
    return parts, head_parts, LAYER_NORM_NOTE if norm.centred else None


def _check_sum(total: float, logit: float) -> None:
    if not math.isfinite(logit):
        raise EmbvizError("The model's logit for this token is not a finite number, so it cannot be split.")
    if abs(total - logit) > SUM_TOLERANCE * max(1.0, abs(logit)):
        raise EmbvizError(f"The parts add up to {total:.4f}, not the model's logit {logit:.4f}: this architecture "
                          "changes the logits after the output head (e.g. scaling or soft-capping them), so they "
                          "cannot be split.")
