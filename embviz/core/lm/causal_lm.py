"""A transformers causal LM as embviz runs it: last-position logits and the residual
stream (the input of every block and of the final norm), both through a prefix cache.

Typing appends to the text, so the key/value cache of the previous text is kept and
only the tokens after the common prefix are run: one keystroke on a 500-token text
costs one token's forward pass instead of 500. Hidden states of earlier positions do
not change when tokens are appended (causal attention), so they are kept too.
"""

from __future__ import annotations

import functools
import inspect
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import torch

from embviz.core.errors import EmbvizError
from embviz.core.lm.anatomy import Anatomy, probe, text_config

STREAM_TOKENS = 1024  # longest text whose residual stream is kept without the lens asking (73 MB for SmolLM2)

# A hook on one module for one forward pass: "pre" hooks are called as fn(module, args, kwargs),
# "post" hooks as fn(module, args, output), the way torch calls them; what one returns replaces
# the block's inputs or output, as in torch (steering's do).
Hook = tuple[torch.nn.Module, str, Callable[..., Any]]


@dataclass
class _Prefix:
    ids: list[int]
    cache: Any  # transformers' DynamicCache for `ids`
    residuals: torch.Tensor | None  # (layers + 1, len(ids), D): embedding output, then each block's output
    logits: torch.Tensor  # (V,) after the last of `ids`


@contextmanager
def quiet_loading() -> Iterator[None]:
    """transformers' progress bars and load reports off while the full model is built:
    the tab shows its own busy bar, and the terminal the app was started from stays clean."""
    from transformers import modeling_gguf_pytorch_utils as gguf
    from transformers.utils import logging as hf_logging

    bars_on, verbosity = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    # GGUF's de-quantizing calls tqdm directly, past the switch above.
    gguf_tqdm = getattr(gguf, "tqdm", None)
    if gguf_tqdm is not None:
        gguf.tqdm = functools.partial(gguf_tqdm, disable=True)
    try:
        yield
    finally:
        if gguf_tqdm is not None:
            gguf.tqdm = gguf_tqdm
        hf_logging.set_verbosity(verbosity)
        if bars_on:
            hf_logging.enable_progress_bar()


def common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


class HFLanguageModel:
    """The full forward pass of a transformers causal LM, one text at a time."""

    def __init__(self, model: Any, device: torch.device) -> None:
        self.model = model
        self.device = device
        self._prefix: _Prefix | None = None
        self._lock = threading.RLock()  # the cache belongs to one forward pass at a time (the probe runs inside one)
        self._anatomy: Anatomy | None = None
        self.n_layers = int(getattr(text_config(model), "num_hidden_layers", 0) or 0)
        # transformers 5 renamed the argument; 4.x knows only the old name; recurrent models
        # (RWKV, RecurrentGemma) take neither and are run whole each time.
        params = inspect.signature(model.forward).parameters
        self._cache_arg = next((name for name in ("cache", "past_key_values") if name in params), None)
        self._keep_arg = "logits_to_keep" in params
        self.tokens_run = 0  # tokens through the blocks so far: what the cache saves shows here

    @property
    def anatomy(self) -> Anatomy:
        """Where this model keeps its blocks, readout and writes (one probe pass, once). A
        model that loops through its blocks is run whole each time: its cached pass (Dory's)
        is not the same arithmetic as its uncached one."""
        if self._anatomy is None:
            with self._lock:
                if self._anatomy is None:
                    self._anatomy = probe(self.model, self._probe_call)
                    if not self._anatomy.runs_once:
                        self._cache_arg = None
        return self._anatomy

    def _probe_call(self, ids: list[int]) -> Any:
        return self.model(input_ids=torch.tensor([ids], dtype=torch.long, device=self.device), use_cache=False)

    @property
    def head(self) -> torch.nn.Module:
        head: torch.nn.Module = self.model.get_output_embeddings()
        return head

    @property
    def final_norm(self) -> torch.nn.Module | None:
        return self.anatomy.final_norm

    def last_logits(self, ids: list[int]) -> torch.Tensor:
        """Logits (V,) for the token after the last of `ids`."""
        return self.run(ids).logits

    def residual_stream(self, ids: list[int]) -> torch.Tensor:
        """(layers + 1, T, D): the first block's input and every block's output."""
        if not self.anatomy.layers:
            raise EmbvizError(self.anatomy.lens_why_not or "This model's blocks were not found.")
        residuals = self.run(ids, residuals=True).residuals
        assert residuals is not None
        return residuals

    def uncached_residual_stream(self, ids: list[int]) -> torch.Tensor:
        """The same, for text that should not replace the typing cache (drift's sentences)."""
        if not self.anatomy.layers:
            raise EmbvizError(self.anatomy.lens_why_not or "This model's blocks were not found.")
        with self._lock:
            residuals = self._forward(ids, None, True)[1]
        assert residuals is not None
        return residuals

    def uncached_pass(self, ids: list[int], hooks: Sequence[Hook] = (),
                      residuals: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(last-position logits, the residual stream when asked) of one pass of `ids` from
        nothing, hooked, that leaves the typing cache as it was: a hook that changes the
        residual stream (steering) must see every position, and its pass must not be kept."""
        if not ids:
            raise EmbvizError("The text produced no tokens.")
        self.anatomy  # noqa: B018 - probed first: a looped model is then run without its cache
        with self._lock:
            _, stream, logits = self._forward(ids, None, residuals, hooks)
        return logits, stream

    def run(self, ids: list[int], residuals: bool = False, hooks: Sequence[Hook] = ()) -> _Prefix:
        """The prefix for `ids`, running only what the kept one lacks. The residual
        stream is kept while the lens asks for it; the logits tab alone never pays for it.
        With hooks, at least the last token runs again, so that they see it."""
        if not ids:
            raise EmbvizError("The text produced no tokens.")
        self.anatomy  # noqa: B018 - probed before the first pass, which may not use the cache
        with self._lock:
            old = self._prefix
            if old is not None and residuals and old.residuals is None:
                old = None
            keep = common_prefix(old.ids, ids) if old is not None else 0
            if old is not None and keep == len(ids) == len(old.ids) and not hooks:
                return old
            # Shorter than the old text (a deletion): run its last token again for its logits.
            keep = min(keep, len(ids) - 1)
            self._prefix = None  # from here the old cache is being changed: never half-kept
            if old is None or keep == 0 or not _can_crop(old.cache):
                cache, stream, logits = self._forward(ids, None, residuals, hooks)
            else:
                if len(old.ids) > keep:
                    old.cache.crop(keep - len(old.ids))  # negative: drop that many (transformers 4 and 5)
                # Kept while the lens may ask again, but not for a long text of the logits tab alone.
                with_stream = old.residuals is not None and (residuals or len(ids) <= STREAM_TOKENS)
                cache, new_stream, logits = self._forward(ids[keep:], old.cache, with_stream, hooks)
                stream = None
                if with_stream and old.residuals is not None and new_stream is not None:
                    stream = torch.cat([old.residuals[:, :keep], new_stream], dim=1)
            self._prefix = _Prefix(list(ids), cache, stream, logits)
            return self._prefix

    def forget(self) -> None:
        with self._lock:
            self._prefix = None

    @torch.inference_mode()
    def eager_forward(self, ids: list[int], hooks: Sequence[Hook]) -> None:
        """One uncached pass of `ids` with eager attention, whose modules return their
        attention weights (the fused kernels never form them); the typing cache is kept."""
        with self._lock:
            before = self.model.config._attn_implementation
            self.model.set_attn_implementation("eager")
            try:
                with _hooked(hooks):
                    # output_attentions: some families (Falcon, Jamba) return their weights only when asked.
                    self.model(input_ids=torch.tensor([ids], dtype=torch.long, device=self.device), use_cache=False,
                               output_attentions=True, **({"logits_to_keep": 1} if self._keep_arg else {}))
            finally:
                self.model.set_attn_implementation(before)

    @torch.inference_mode()
    def _forward(self, ids: list[int], cache: Any, residuals: bool,
                 hooks: Sequence[Hook] = ()) -> tuple[Any, torch.Tensor | None, torch.Tensor]:
        captured: list[torch.Tensor] = []
        if residuals:
            layers = self.anatomy.layers
            hooks = [*hooks, (layers[0], "pre", lambda _m, args, kw: captured.append(_hidden(args, kw)[0].float()))]
            hooks += [(layer, "post", lambda _m, _args, out: captured.append(_hidden((out,), {})[0].float()))
                      for layer in layers]
        extra: dict[str, Any] = {"use_cache": self._cache_arg is not None}
        if self._cache_arg is not None:
            extra[self._cache_arg] = cache
        if self._keep_arg:
            extra["logits_to_keep"] = 1
        input_ids = torch.tensor([ids], dtype=torch.long, device=self.device)
        try:
            with _hooked(hooks):
                out = self.model(input_ids=input_ids, **extra)
        except (ValueError, RuntimeError, AttributeError, TypeError):
            if self._cache_arg is None or cache is not None:
                raise
            # Some hybrid and recurrent families fail with a cache of their own kind (transformers'
            # get_seq_length on linear-attention layers); they run whole, every time, from here on.
            self._cache_arg = None
            captured.clear()
            extra = {k: v for k, v in extra.items() if k not in ("cache", "past_key_values")} | {"use_cache": False}
            with _hooked(hooks):
                out = self.model(input_ids=input_ids, **extra)
        self.tokens_run += len(ids)
        stream = torch.stack(captured) if residuals else None
        kept = getattr(out, self._cache_arg, None) if self._cache_arg else None
        return kept if kept is not None else getattr(out, "past_key_values", None), stream, out.logits[0, -1].float()


def _hidden(args: tuple[Any, ...], kwargs: dict[str, Any]) -> torch.Tensor:
    """A block's hidden states, given as its first argument or by name, or returned first."""
    value = args[0] if args else kwargs["hidden_states"]
    tensor: torch.Tensor = value[0] if isinstance(value, (tuple, list)) else value
    return tensor


def _can_crop(cache: Any) -> bool:
    """Whether the kept cache can be cut back to a prefix exactly: full attention's keys and
    values can; a sliding window that has dropped old ones, or a recurrent state, cannot."""
    from transformers.cache_utils import DynamicLayer, DynamicSlidingWindowLayer

    layers = getattr(cache, "layers", None)
    if not isinstance(layers, list) or not layers or not callable(getattr(cache, "crop", None)):
        return False
    return all(type(layer) is DynamicLayer
               or (type(layer) is DynamicSlidingWindowLayer and layer.get_seq_length() < layer.sliding_window - 1)
               for layer in layers)


@contextmanager
def _hooked(hooks: Sequence[Hook]) -> Iterator[None]:
    """Hooks registered for the length of a `with`, removed even when the pass fails."""
    handles = [module.register_forward_pre_hook(fn, with_kwargs=True) if when == "pre" else module.register_forward_hook(fn)
               for module, when, fn in hooks]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()
