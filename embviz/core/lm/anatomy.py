"""Where a transformers causal LM keeps what the views read, found by structure.

One short pass of a few tokens with hooks (a "probe", once per loaded model) shows, by
following the values themselves rather than module names:
- the blocks (the module list the residual stream runs through) and each block's input
  and output;
- the readout: the modules between the last block and the output head (the final norm,
  OPT's `project_out`), what happens to their output before the head, and what happens
  to the head's output before it is the model's logits;
- each block's writes: the token mixer's (attention's) and the MLP's output, followed
  through any norm applied to that output alone (Gemma 2's and OLMo 2's post-norms),
  times the residual multiplier (Granite); a module handed the residual that returns
  residual + its write (BLOOM) writes the difference.

What no module shows is read from the config, in one table (`LOGIT_FACTS`), and only used
when the probe's own numbers confirm it. Anything that cannot be found leaves a sentence
naming the family and what is missing; the views refuse with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from embviz.core.lm.norms import close, first_output, sums_to, tolerance

PROBE_IDS = (1, 2, 3, 4)
MIXER_PATTERN = re.compile(r"attention|attn|mixer", re.IGNORECASE)
MLP_PATTERN = re.compile(r"mlp|moe|feed_?forward|ffn|experts", re.IGNORECASE)
HEAD_COUNT_NAMES = ("num_heads", "num_attention_heads", "n_heads", "num_v_heads", "n_head")


@dataclass(frozen=True)
class LogitMap:
    """What the model does to the head's output: × `scale`, then a soft cap (Gemma 2)."""

    scale: float = 1.0
    divide: bool = False  # the model divides by `scale` (Granite), rounding as it does
    softcap: float | None = None

    def linear(self, logits: torch.Tensor) -> torch.Tensor:
        if self.scale == 1.0:
            return logits
        return logits / self.scale if self.divide else logits * self.scale

    def __call__(self, logits: torch.Tensor) -> torch.Tensor:
        logits = self.linear(logits)
        if self.softcap is not None:
            logits = torch.tanh(logits / self.softcap) * self.softcap
        return logits

    @property
    def factor(self) -> float:
        return 1.0 / self.scale if self.divide else self.scale


# What a family does after its head (or just before it) that no module shows: the config's
# attribute, and how the model applies it. Used only when the probe's logits confirm it.
LOGIT_FACTS: tuple[tuple[str, Callable[[float], LogitMap]], ...] = (
    ("final_logit_softcapping", lambda v: LogitMap(softcap=v)),  # Gemma 2/3/4
    ("logit_scale", lambda v: LogitMap(scale=v)),  # Cohere, Cohere 2
    ("logits_scaling", lambda v: LogitMap(scale=v, divide=True)),  # Granite (and MiniCPM3's, before the head)
)
# Each block's writes are added × a number the config gives: Granite's residual_multiplier,
# MiniCPM's scale_depth / √(number of blocks).
WRITE_FACTS: tuple[Callable[[Any], Any], ...] = (
    lambda c: getattr(c, "residual_multiplier", None),
    lambda c: (c.scale_depth / c.num_hidden_layers ** 0.5
               if isinstance(getattr(c, "scale_depth", None), (int, float)) and getattr(c, "num_hidden_layers", None) else None),
)


@dataclass(frozen=True)
class BlockAnatomy:
    layer: torch.nn.Module
    mixer: torch.nn.Module | None  # attention, linear attention, …
    out_proj: torch.nn.Module | None  # the mixer's last projection: the heads' outputs go in side by side
    mixer_path: tuple[torch.nn.Module, ...]  # post-norms applied to the mixer's write alone
    mixer_from_proj: bool  # the write is the projection's output, not the mixer's
    mixer_minus_residual: bool  # the mixer returns residual + its write
    mlp: torch.nn.Module | None
    mlp_path: tuple[torch.nn.Module, ...]
    mlp_minus_residual: bool
    multiplier: float  # each write is added × this
    n_heads: int | None
    why_not: str | None  # why its writes cannot be split exactly


@dataclass
class Anatomy:
    family: str
    layers: list[torch.nn.Module]
    head: torch.nn.Module
    final_norm: torch.nn.Module | None  # the first module of the readout, when it is a norm
    after_norm: list[torch.nn.Module]  # the rest of the readout before the head (OPT's project_out)
    pre_head: float  # the readout's output × this is the head's input (MiniCPM3)
    logit_map: LogitMap
    blocks: list[BlockAnatomy] = field(default_factory=list)
    lens_why_not: str | None = None  # why the lens cannot be exact
    dtype: torch.dtype = torch.float32
    runs_once: bool = True  # each block runs once a pass, in order (a looped model's cached pass is not its own)

    @property
    def family_name(self) -> str:
        return self.family or "this architecture"

    def blocks_why_not(self) -> str | None:
        return next((b.why_not for b in self.blocks if b.why_not), None)

    @torch.inference_mode()
    def readout(self, rows: torch.Tensor, final_norm: bool = True, cap: bool = True) -> torch.Tensor:
        """Residual rows (n, D) → the logits the model would give them (n, V), float32."""
        x = rows.to(self.dtype)
        if final_norm and self.final_norm is not None:
            x = first_output(self.final_norm(x))
        for module in self.after_norm:
            x = first_output(module(x))
        if self.pre_head != 1.0:
            x = x * self.pre_head if self.pre_head > 1 else x / (1 / self.pre_head)
        logits = head_logits(self.head, x).float()
        return self.logit_map(logits) if cap else self.logit_map.linear(logits)



def head_logits(head: torch.nn.Module, rows: torch.Tensor) -> torch.Tensor:
    """The output head on some rows; a float32 linear head on the CPU through numpy's BLAS,
    faster than torch's here (similarity.matmul): the lens's last column is waited for."""
    from embviz.core.table.similarity import matmul

    weight = getattr(head, "weight", None)
    if not (isinstance(head, torch.nn.Linear) and rows.device.type == "cpu" and weight is not None
            and weight.dtype == rows.dtype == torch.float32):
        return first_output(head(rows))
    logits = matmul(rows.contiguous(), weight.T)
    return logits if head.bias is None else logits + head.bias


def text_config(model: Any) -> Any:
    config = model.config
    getter = getattr(config, "get_text_config", None)
    return getter() if callable(getter) else config


def find_layers(model: torch.nn.Module) -> tuple[str, torch.nn.ModuleList] | None:
    """The module list the residual stream runs through: of the lists as long as the config's
    layer count, the one holding the most weights (a mixture of experts' list is smaller)."""
    n = getattr(text_config(model), "num_hidden_layers", None)
    getter = getattr(model, "get_output_embeddings", None)
    head = getter() if callable(getter) else None
    found = [(name, m) for name, m in model.named_modules()
             if isinstance(m, torch.nn.ModuleList) and len(m) > 0 and (not isinstance(n, int) or len(m) == n)
             and m is not head]
    if not found:
        return None
    return max(found, key=lambda item: sum(p.numel() for p in item[1].parameters()))


# --- the probe ------------------------------------------------------------------------------------

@dataclass(eq=False)
class _Call:
    module: torch.nn.Module
    name: str
    inp: torch.Tensor | None  # the last position's row of its first tensor input
    inp2: torch.Tensor | None  # ... of its second (a residual handed in)
    out: torch.Tensor | None  # ... of its output


def last_row(value: object) -> torch.Tensor | None:
    value = first_output(value)
    if not (isinstance(value, torch.Tensor) and value.is_floating_point() and value.dim() in (2, 3)):
        return None
    # (batch, T, D), or (T, D) where a model flattens its one text's tokens (OPT's MLP)
    return (value[0, -1] if value.dim() == 3 else value[-1]).detach().to(torch.float32, copy=True)


def tensor_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[torch.Tensor]:
    found = [a for a in args if isinstance(a, torch.Tensor)]
    if "hidden_states" in kwargs and isinstance(kwargs["hidden_states"], torch.Tensor):
        found.insert(0, kwargs["hidden_states"])
    found += [v for k, v in kwargs.items() if k in ("residual",) and isinstance(v, torch.Tensor)]
    return found


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[_Call] = []
        self.handles: list[Any] = []

    def watch(self, module: torch.nn.Module, name: str) -> None:
        def hook(m: torch.nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], output: object) -> None:
            tensors = tensor_args(args, kwargs)
            self.calls.append(_Call(m, name, last_row(tensors[0]) if tensors else None,
                                    last_row(tensors[1]) if len(tensors) > 1 else None, last_row(output)))
        self.handles.append(module.register_forward_hook(hook, with_kwargs=True))

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def _same(a: torch.Tensor | None, b: torch.Tensor | None, dtype: torch.dtype) -> bool:
    if a is None or b is None or a.shape != b.shape:
        return False
    return float((a - b).norm()) <= tolerance(dtype) * 0.01 * float(b.norm()) + 1e-7


@torch.inference_mode()
def probe(model: Any, call: Callable[[list[int]], Any]) -> Anatomy:
    """The anatomy of `model`, from one pass of a few tokens through `call(ids)`, which
    returns the model's output (with `.logits`)."""
    config = text_config(model)
    family = str(getattr(config, "model_type", "") or getattr(model.config, "model_type", "") or type(model).__name__)
    head = model.get_output_embeddings()
    dtype = next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)
    found = find_layers(model)
    if found is None or head is None:
        what = "its output head" if head is None else "its list of blocks"
        return Anatomy(family, [], head, None, [], 1.0, LogitMap(), [],
                       f"embviz cannot find {what} in {family} models, so no layer can be read.", dtype)
    path, layer_list = found
    layers = list(layer_list)
    rec = _Recorder()
    layer_ids = {id(layer) for layer in layers}
    outer = _outer_modules(model, path)
    try:
        for n, layer in enumerate(layers):
            rec.watch(layer, f"block {n + 1}")
            for child_name, child in layer.named_children():
                rec.watch(child, child_name)
                if MIXER_PATTERN.search(child_name) or MIXER_PATTERN.search(type(child).__name__):
                    for sub_name, sub in child.named_modules():
                        if sub is not child and _is_projection(sub):
                            rec.watch(sub, f"{child_name}.{sub_name}")
        for name, module in outer:
            rec.watch(module, name)
        if not any(module is head for _, module in outer):
            rec.watch(head, "head")
        ids = [i % int(model.get_input_embeddings().num_embeddings) for i in PROBE_IDS]
        logits = call(ids).logits[0, -1].float()
    finally:
        rec.remove()
    calls = rec.calls
    block_calls = [c for c in calls if id(c.module) in layer_ids]
    if [id(c.module) for c in block_calls] != [id(layer) for layer in layers]:
        return Anatomy(family, layers, head, None, [], 1.0, LogitMap(), [],
                       f"{family} models run their blocks other than once each in order, so no layer can be read "
                       "as one step of the residual stream.", dtype, runs_once=False)
    anatomy = _readout(family, model, config, layers, head, calls, block_calls[-1], logits, dtype)
    # A block's own calls come after the one before it ended and before it ends.
    ends = [next(n for n, c in enumerate(calls) if c is b) for b in block_calls]
    anatomy.blocks = [_block(config, block_calls[n], calls[(ends[n - 1] + 1 if n else 0):ends[n]], dtype)
                      for n in range(len(layers))]
    return anatomy


def _is_projection(module: torch.nn.Module) -> bool:
    weight = getattr(module, "weight", None)
    return isinstance(weight, torch.Tensor) and weight.dim() == 2 and not isinstance(module, torch.nn.Embedding) \
        and "norm" not in type(module).__name__.lower()


def _outer_modules(model: torch.nn.Module, path: str) -> list[tuple[str, torch.nn.Module]]:
    """The children of every module on the way down to the block list, but for that way
    itself: where the embedding, the final norm and the head live."""
    found, node, prefix = [], model, ""
    for down in path.split(".") if path else []:
        found += [(prefix + name, child) for name, child in node.named_children() if name != down]
        node, prefix = getattr(node, down), prefix + down + "."
    return found


def _readout(family: str, model: Any, config: Any, layers: list[Any], head: torch.nn.Module, calls: list[_Call],
             last_block: _Call, logits: torch.Tensor, dtype: torch.dtype) -> Anatomy:
    after = calls[_at(calls, last_block) + 1:]
    layer_ids = {id(layer) for layer in layers}
    chain: list[torch.nn.Module] = []
    current = last_block.out
    head_call = next((c for c in after if c.module is head), None)
    for c in after:
        if c.module is head:
            break
        if id(c.module) not in layer_ids and _same(c.inp, current, dtype):
            chain.append(c.module)
            current = c.out
    broken = Anatomy(family, layers, head, None, [], 1.0, LogitMap(), [], None, dtype)
    if head_call is None or current is None or head_call.inp is None or head_call.out is None:
        broken.lens_why_not = (f"embviz cannot follow {family} models from their last block to their output head, "
                               "so the lens cannot read the layers.")
        return broken
    pre_head = _factor(head_call.inp, current, config, dtype)
    if pre_head is None:
        broken.lens_why_not = (f"{family} models change the last block's output on the way to the head in a way "
                               "embviz does not know, so the lens cannot read the layers exactly.")
        return broken
    logit_map = _logit_map(head_call.out, logits, config, dtype)
    final_norm = chain[0] if chain and not _is_projection(chain[0]) else None
    anatomy = Anatomy(family, layers, head, final_norm, chain[1:] if final_norm is not None else chain,
                      pre_head, logit_map or LogitMap(), [], None, dtype)
    if logit_map is None:
        anatomy.lens_why_not = (f"{family} models change their logits after the output head in a way embviz does "
                                "not know, so the lens cannot read the layers exactly.")
    return anatomy


def _factor(head_in: torch.Tensor, current: torch.Tensor, config: Any, dtype: torch.dtype) -> float | None:
    """1, or the config's factor between the readout and the head's input (MiniCPM3 divides
    by its `logits_scaling` there), when the probe shows it."""
    if close(head_in, current, dtype):
        return 1.0
    for name, make in LOGIT_FACTS:
        value = getattr(config, name, None)
        if isinstance(value, (int, float)) and value and not isinstance(value, bool):
            factor = make(float(value)).factor
            if close(head_in, current * factor, dtype):
                return factor
    return None


def _logit_map(head_out: torch.Tensor, logits: torch.Tensor, config: Any, dtype: torch.dtype) -> LogitMap | None:
    """What turns the head's output into the logits: the config's facts first (where they
    and doing nothing both fit the probe, the model does what its config says), then nothing."""
    head_out = head_out.float()
    maps = [make(float(v)) for name, make in LOGIT_FACTS
            if isinstance(v := getattr(config, name, None), (int, float)) and v and not isinstance(v, bool)]
    combined = [LogitMap(m.scale, m.divide, s.softcap) for m in maps for s in maps
                if s.softcap is not None and m.softcap is None]
    for candidate in combined + maps + [LogitMap()]:
        if close(candidate(head_out), logits, dtype):
            return candidate
    return None


def _n_heads(config: Any, mixer: torch.nn.Module) -> int | None:
    for source in (mixer, getattr(mixer, "config", None), config):
        for name in HEAD_COUNT_NAMES:
            value = getattr(source, name, None)
            if isinstance(value, int) and value > 0 and not isinstance(value, bool):
                return value
    return None


def _block(config: Any, block: _Call, calls: list[_Call], dtype: torch.dtype) -> BlockAnatomy:
    """What one block writes, from its own calls (`calls`: those made while it ran)."""
    layer = block.module
    children = {id(m) for m in layer.children()}
    inside = [c for c in calls if id(c.module) in children]
    family = str(getattr(config, "model_type", "") or "this")

    def refuse(why: str) -> BlockAnatomy:
        return BlockAnatomy(layer, None, None, (), False, False, None, (), False, 1.0, None, why)

    parts = [c for c in inside if "norm" not in type(c.module).__name__.lower()]
    mixer_call = next((c for c in parts if MIXER_PATTERN.search(c.name) or MIXER_PATTERN.search(type(c.module).__name__)), None)
    mlp_call = next((c for c in parts if c is not mixer_call
                     and (MLP_PATTERN.search(c.name) or MLP_PATTERN.search(type(c.module).__name__))), None)
    if mlp_call is None:
        # No MLP module (OPT, XGLM): its write is the block's last projection outside the mixer.
        mlp_call = next((c for c in reversed(parts) if c is not mixer_call and _is_projection(c.module)), None)
    if mixer_call is None or mlp_call is None:
        missing = "attention" if mixer_call is None else "MLP"
        return refuse(f"The blocks of {family} models have no {missing} that embviz recognises "
                      f"({type(layer).__name__}), so their writes cannot be split.")
    if block.inp is None or block.out is None:
        return refuse(f"embviz cannot read the residual stream around the blocks of {family} models.")
    mixer = mixer_call.module
    projections = [c for c in calls[:_at(calls, mixer_call)] if c.name.startswith(mixer_call.name + ".")]
    proj_call = projections[-1] if projections else None
    written = block.out - block.inp
    multiplier = next((float(v) for fact in WRITE_FACTS if isinstance(v := fact(config), (int, float))
                       and not isinstance(v, bool)), 1.0)

    def paths(start: _Call, raw: torch.Tensor) -> tuple[tuple[torch.nn.Module, ...], torch.Tensor]:
        """The modules applied to this write alone after `start`, and the write at their end."""
        chain, current = [], raw
        for c in inside[_at(inside, start) + 1:]:
            if c is mixer_call or c is mlp_call:
                continue
            # A module that changes the write alone (a post-norm); an identity (dropout at
            # inference) is left out: the same one may serve both writes (Phi's resid_dropout).
            if _same(c.inp, current, dtype) and c.out is not None and not _same(c.out, current, dtype):
                chain.append(c.module)
                current = c.out
        return tuple(chain), current

    mixer_options = []
    if mixer_call.out is not None:
        mixer_options.append((mixer_call.out, False, False))
        if mixer_call.inp2 is not None:
            mixer_options.append((mixer_call.out - mixer_call.inp2, False, True))
    if proj_call is not None and proj_call.out is not None and proj_call.out.shape == block.inp.shape:
        mixer_options.append((proj_call.out, True, False))
    mlp_options = []
    if mlp_call.out is not None:
        mlp_options.append((mlp_call.out, False))
        if mlp_call.inp2 is not None:
            mlp_options.append((mlp_call.out - mlp_call.inp2, True))
    scale = float(block.inp.norm() + block.out.norm())
    for raw_a, from_proj, minus_a in mixer_options:
        path_a, a = paths(mixer_call, raw_a)
        for raw_m, minus_m in mlp_options:
            path_m, m = paths(mlp_call, raw_m)
            for mult in dict.fromkeys((multiplier, 1.0)):
                if sums_to((a + m) * mult, written, dtype, scale):
                    return BlockAnatomy(layer, mixer, proj_call.module if proj_call else None, path_a, from_proj,
                                        minus_a, mlp_call.module, path_m, minus_m, mult, _n_heads(config, mixer), None)
    return refuse(f"The attention and MLP outputs of {family} blocks do not add up to what the block writes to "
                  "the residual stream (it changes them on the way in a way embviz does not know), so they "
                  "cannot be split.")


def _at(calls: list[_Call], call: _Call) -> int:
    return next(n for n, c in enumerate(calls) if c is call)
