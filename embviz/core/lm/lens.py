"""The logit lens: the next-token prediction read out of every layer.

The residual stream after the embedding and after each block goes through the model's
final norm and its output head, as the last block's output does in the real forward
pass. Without the norm (the "raw" lens) early layers look meaningless: their vectors
have other scales than the ones the head was trained on.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np
import torch

from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.lm.causal_lm import common_prefix
from embviz.core.lm.logits import Prompt, prompt_ids
from embviz.core.lm.norms import tolerance
from embviz.core.lm.results import LensCells, LensColumns, LensResult, TokenStrings
from embviz.core.model import EmbeddingModel, LanguageModel
from embviz.core.table.similarity import check_k

MAX_LENS_POSITIONS = 64  # the lens reads the last this many positions; earlier ones are context
# ...of at most this many tokens: the residual stream of every layer is kept for each of them
# (36 MB for SmolLM2), and a forward pass over a whole 8,192-token context would take a minute.
MAX_LENS_CONTEXT = 512
# (rows × V) logits at a time on the CPU: 50 MB for a 49,152-token vocabulary. Per row, a
# 256-row product with its top k takes 0.93× the time of a 128-row one, 0.75× a 62-row one.
ROWS_PER_PRODUCT = 256
GPU_ROWS_PER_PRODUCT = 2048  # on a GPU one product for a whole 64-position grid of SmolLM2 (400 MB)
PREVIEW_POSITIONS = 4  # columns per preview: the window draws each preview between two frames

NO_LAYERS = {
    "embedding+linear": "This model has no blocks: its embedding goes straight to the output head, so there is only "
                        "one layer to read, the Logits tab's answer.",
    "table": "This file holds only an embedding table: there are no layers to read.",
}


def layer_names(n_blocks: int) -> list[str]:
    return ["embedding"] + [f"block {i}" for i in range(1, n_blocks + 1)]


def check_has_layers(model: EmbeddingModel) -> None:
    if model.kind in NO_LAYERS:
        raise EmbvizError(NO_LAYERS[model.kind])


def logit_lens(
    model: EmbeddingModel, text: Prompt, k: int = 5, final_norm: bool = True, load_lm: bool = True,
    progress: ProgressFn = no_progress,
) -> LensResult:
    """Top-k next-token predictions of every layer at each of the text's last positions."""
    check_has_layers(model)
    k = check_k(k, model.vocab_size)
    ids, _, notes = prompt_ids(model, text, "the lens reads the model's guess for the token after each one")
    if len(ids) > MAX_LENS_CONTEXT:
        notes.append(f"The lens runs on the last {MAX_LENS_CONTEXT} of the text's {len(ids):,} tokens.")
        ids = ids[-MAX_LENS_CONTEXT:]
    lm = model.language_model(load=load_lm)
    stream = exact_stream(lm, ids)  # (layers + 1, T, D)
    progress(0.0, "Reading every layer", None)  # the forward pass is done; a cancel stops here
    first = max(0, len(ids) - MAX_LENS_POSITIONS)
    if first:
        notes.append(f"The lens reads the last {MAX_LENS_POSITIONS} of {len(ids):,} tokens; the earlier ones are context.")
    shown = ids[first:]
    tokens, names = [(i, model.vocab.label(i)) for i in shown], layer_names(stream.shape[0] - 1)

    def show(done: float, columns: dict[int, Column]) -> None:
        cells = _stacked(model, [columns[p] for p in columns])
        progress(done, "Reading every layer", LensColumns(tokens, names, final_norm, list(columns), cells, first))  # a cancel stops here

    columns = _lens_columns(model, lm, ids, stream, first, k, final_norm, show)
    return LensResult(tokens=tokens, token_texts=[model.vocab.texts[i] for i in shown], layer_names=names,
                      cells=_stacked(model, [columns[p] for p in range(first, len(ids))]),
                      final_norm=final_norm, truncated=first, notes=notes)


Column = tuple[np.ndarray, np.ndarray, np.ndarray]  # one position's (ids, logits, probs), each (layers, k)


def _stacked(model: EmbeddingModel, columns: list[Column]) -> LensCells:
    """Columns side by side as (layers, positions, k) cells, with their tokens' strings."""
    ids, logits, probs = (np.stack([column[n] for column in columns], axis=1) for n in range(3))
    return LensCells(ids, logits, probs, TokenStrings.of(model.vocab, ids))


def _lens_columns(model: EmbeddingModel, lm: LanguageModel, ids: list[int], stream: torch.Tensor, first: int, k: int,
                  final_norm: bool, show: Callable[[float, dict[int, Column]], None]) -> dict[int, Column]:
    """Every layer's top k at positions first…, keeping the columns of the previous text's
    common prefix: a position's column depends only on the tokens up to it. The last
    position's column is read first and shown at once, then the others, a few at a time."""
    key = (final_norm, k)
    kept_key, kept_ids, kept = model.cache.get("lens_columns", (None, [], {}))
    same = common_prefix(kept_ids, ids) if kept_key == key else 0
    columns = {p: kept[p] for p in range(first, same) if p in kept}
    layers, last = stream.shape[0], len(ids) - 1
    per_product = _rows_per_product(stream.device)
    workers = _workers(stream.device)
    # On the CPU a group is at most one product per core; on a GPU, as many columns as one
    # product holds. Groups of even size: a small last one would be read at a worse rate.
    rest = list(range(first, last))
    n_groups = -(-len(rest) * layers // (per_product * workers))
    size = max(1, -(-len(rest) // max(1, n_groups)))
    groups = [[last]] + [rest[i:i + size] for i in range(0, len(rest), size)]
    todos = [[p for p in group if p not in columns] for group in groups]
    pool = ThreadPoolExecutor(workers, thread_name_prefix="embviz-lens")
    try:
        # Every product queued at once, in the order shown: a core never waits for a preview.
        jobs = []
        for todo in todos:
            rows = stream[:, todo].reshape(-1, stream.shape[-1])  # layer-major: row = layer × len(todo) + i
            step = min(per_product, -(-len(rows) // workers))  # the first column on every core too: it is waited for
            jobs.append([pool.submit(_ranked, model, lm, chunk, k, final_norm) for chunk in rows.split(step)] if todo else [])
        for n, (group, todo) in enumerate(zip(groups, todos), 1):
            if todo:
                # Rows are layer-major: (layers × len(todo), k) → per position, (layers, k).
                ranked = [np.concatenate(part).reshape(layers, len(todo), -1)
                          for part in zip(*(job.result() for job in jobs[n - 1]))]
                for i, p in enumerate(todo):
                    columns[p] = tuple(np.ascontiguousarray(part[:, i]) for part in ranked)
            for at in range(0, len(group), PREVIEW_POSITIONS):
                part = group[at:at + PREVIEW_POSITIONS]
                show(n / len(groups), {p - first: columns[p] for p in part})
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # a cancel (from show) drops the products not begun
    model.cache["lens_columns"] = (key, list(ids), columns)
    return columns


def _rows_per_product(device: torch.device) -> int:
    return ROWS_PER_PRODUCT if device.type == "cpu" else GPU_ROWS_PER_PRODUCT


def _workers(device: torch.device) -> int:
    """On the CPU the products run on every core: a lens is a short burst, and one core
    would take twice as long."""
    return (os.cpu_count() or 1) if device.type == "cpu" else 1


def top_k_softmax(logits: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The top k of each row of `logits` (n, V) and their softmax probabilities, as
    (values, ids, probs), with no probability array the size of the logits: the
    log-sum-exp is taken in place, so `logits` is overwritten. NaN and +inf logits rank
    as -inf, as if absent."""
    top = logits.amax(dim=-1, keepdim=True)  # NaN or +inf anywhere in a row shows here
    bad = ~torch.isfinite(top[:, 0])
    if bad.any():
        logits[bad] = torch.nan_to_num(logits[bad], nan=-torch.inf, posinf=-torch.inf)
        top = logits.amax(dim=-1, keepdim=True)
    values, ids = logits.topk(k, dim=-1)
    shift = torch.where(torch.isfinite(top), top, torch.zeros_like(top))  # a row of -inf: its sum is 0, its lse -inf
    lse = shift + logits.sub_(shift).exp_().sum(dim=-1, keepdim=True).log()
    return values, ids, torch.exp(values - lse)


def _ranked(model: EmbeddingModel, lm: LanguageModel, rows: torch.Tensor, k: int, final_norm: bool) -> Column:
    """The rows' (residual vectors') top k through the model's readout (its final norm when
    asked, the head, and what the model does to the logits) and their softmax probabilities."""
    with torch.inference_mode():
        values, top_ids, probs = top_k_softmax(lm.anatomy.readout(rows, final_norm), k)
    return (top_ids.to(torch.int32).cpu().numpy(), values.float().cpu().numpy(), probs.float().cpu().numpy())


def exact_stream(lm: LanguageModel, ids: list[int]) -> torch.Tensor:
    """The residual stream of `ids` (layers + 1, T, D), once the model's readout of its last
    row is checked to be the model's own next-token logits: a lens whose last row is not the
    model's answer is never drawn."""
    anatomy = lm.anatomy
    if anatomy.lens_why_not:
        raise EmbvizError(anatomy.lens_why_not)
    prefix = lm.run(ids, residuals=True)
    ours = anatomy.readout(prefix.residuals[-1, -1:])[0]
    theirs = prefix.logits.to(ours.device)
    finite = torch.isfinite(theirs)
    if not bool(torch.equal(finite, torch.isfinite(ours))) or float((ours[finite] - theirs[finite]).norm()) > \
            tolerance(anatomy.dtype) * float(theirs[finite].norm()) + 1e-5:
        raise EmbvizError(f"The lens's last row is not the {anatomy.family_name} model's own next-token logits here "
                          "(it does something on the way from its last block to its logits that embviz cannot "
                          "follow), so the lens is not drawn.")
    residuals: torch.Tensor = prefix.residuals
    return residuals
