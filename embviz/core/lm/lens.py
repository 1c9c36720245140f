"""The logit lens: the next-token prediction read out of every layer.

The residual stream after the embedding and after each block goes through the model's
final norm and its output head, as the last block's output does in the real forward
pass. Without the norm (the "raw" lens) early layers look meaningless: their vectors
have other scales than the ones the head was trained on.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import torch

from embviz.core.lm.causal_lm import common_prefix
from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.lm.logits import Prompt, TokenScore, prompt_ids
from embviz.core.model import EmbeddingModel
from embviz.core.table.similarity import check_k, matmul

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


@dataclass
class LensResult:
    tokens: list[tuple[int, str]]  # the positions read, (id, label)
    token_texts: list[str]
    layer_names: list[str]  # "embedding", "block 1", …
    top: list[list[list[TokenScore]]]  # [layer][position] → the top k, best first
    final_norm: bool
    truncated: int = 0  # positions before the ones read (context only)
    notes: list[str] = field(default_factory=list)

    def __reduce__(self) -> tuple:
        # Packed: unpickling thousands of TokenScore objects in one C call would hold the
        # window's interpreter lock for tens of milliseconds; rebuilt in Python, it yields.
        return (_unpack_result, (self.tokens, self.token_texts, self.layer_names, pack_cells(
            [cell for row in self.top for cell in row]), self.final_norm, self.truncated, self.notes))

    def top1_probs(self) -> np.ndarray:
        """(layers, positions): the probability of each cell's top token."""
        return np.array([[cell[0].prob for cell in row] for row in self.top], dtype=np.float32)

    def as_dict(self) -> dict:
        return {
            "tokens": list(self.token_texts),
            "token_ids": [i for i, _ in self.tokens],
            "final_norm": self.final_norm,
            "skipped_positions": self.truncated,
            "notes": list(self.notes),
            "layers": [
                {"layer": n, "name": name,
                 "top": [[{"id": s.id, "token": s.text, "label": s.token, "prob": s.prob, "logit": s.logit} for s in cell]
                         for cell in row]}
                for n, (name, row) in enumerate(zip(self.layer_names, self.top))
            ],
        }


@dataclass
class LensColumns:
    """Some columns of a lens still being read: the preview the window draws at once (the
    last position's column first, the model's own answer through every layer), then as
    the rest of the grid fills in."""

    tokens: list[tuple[int, str]]  # every position the lens reads: the grid's columns
    layer_names: list[str]
    final_norm: bool
    columns: dict[int, list[list[TokenScore]]]  # index into `tokens` → per layer, the top k

    def __reduce__(self) -> tuple:
        order = list(self.columns)
        return (_unpack_columns, (self.tokens, self.layer_names, self.final_norm, order,
                                  pack_cells([cell for p in order for cell in self.columns[p]])))


def pack_cells(cells: list[list[TokenScore]]) -> tuple:
    """Cells of top-k scores as flat lists of numbers, and each token's texts once."""
    texts = {s.id: (s.token, s.text) for cell in cells for s in cell}
    return ([len(cell) for cell in cells], [s.id for cell in cells for s in cell],
            [s.logit for cell in cells for s in cell], [s.prob for cell in cells for s in cell], texts)


def unpack_cells(packed: tuple) -> list[list[TokenScore]]:
    lengths, ids, logits, probs, texts = packed
    scores = [TokenScore(i, texts[i][0], v, p, texts[i][1]) for i, v, p in zip(ids, logits, probs)]
    cells, at = [], 0
    for n in lengths:
        cells.append(scores[at:at + n])
        at += n
    return cells


def _unpack_result(tokens, token_texts, names, packed, final_norm, truncated, notes) -> LensResult:
    cells, width = unpack_cells(packed), len(tokens)
    top = [cells[layer * width:(layer + 1) * width] for layer in range(len(names))]
    return LensResult(tokens, token_texts, names, top, final_norm, truncated, notes)


def _unpack_columns(tokens, names, final_norm, order, packed) -> LensColumns:
    cells, layers = unpack_cells(packed), len(names)
    return LensColumns(tokens, names, final_norm, {p: cells[n * layers:(n + 1) * layers] for n, p in enumerate(order)})


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
    stream = lm.residual_stream(ids)  # (layers + 1, T, D)
    progress(0.0, "Reading every layer", None)  # the forward pass is done; a cancel stops here
    first = max(0, len(ids) - MAX_LENS_POSITIONS)
    if first:
        notes.append(f"The lens reads the last {MAX_LENS_POSITIONS} of {len(ids):,} tokens; the earlier ones are context.")
    shown = ids[first:]
    tokens, names = [(i, model.vocab.label(i)) for i in shown], layer_names(stream.shape[0] - 1)

    def show(done: float, columns: dict[int, list[list[TokenScore]]]) -> None:
        progress(done, "Reading every layer", LensColumns(tokens, names, final_norm, columns))  # a cancel stops here

    columns = _lens_columns(model, lm, ids, stream, first, k, final_norm, show)
    top = [[columns[p][layer] for p in range(first, len(ids))] for layer in range(stream.shape[0])]
    return LensResult(tokens=tokens, token_texts=[model.vocab.texts[i] for i in shown], layer_names=names, top=top,
                      final_norm=final_norm, truncated=first, notes=notes)


def _lens_columns(model, lm, ids, stream, first, k, final_norm, show) -> dict[int, list[list[TokenScore]]]:
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
            ranked = [scores for job in jobs[n - 1] for scores in job.result()]
            for i, p in enumerate(todo):
                columns[p] = [ranked[layer * len(todo) + i] for layer in range(layers)]
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


def _head_logits(head: torch.nn.Module, rows: torch.Tensor) -> torch.Tensor:
    """The output head on some rows; a float32 linear head on the CPU through numpy's BLAS,
    faster than torch's here (similarity.matmul): the last column is waited for."""
    weight = getattr(head, "weight", None)
    if not (isinstance(head, torch.nn.Linear) and rows.device.type == "cpu" and weight.dtype == rows.dtype == torch.float32):
        return head(rows)
    logits = matmul(rows.contiguous(), weight.T)
    return logits if head.bias is None else logits + head.bias


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


def _ranked(model: EmbeddingModel, lm, rows: torch.Tensor, k: int, final_norm: bool) -> list[list[TokenScore]]:
    """The rows' (residual vectors') top k through the final norm (when asked) and the head,
    and their softmax probabilities."""
    with torch.inference_mode():
        if final_norm:
            rows = lm.final_norm(rows)
        values, top_ids, probs = top_k_softmax(_head_logits(lm.head, rows).float(), k)
    return [[TokenScore(i, model.vocab.label(i), v, p, model.vocab.texts[i]) for v, i, p in zip(vals, tids, ps)]
            for vals, tids, ps in zip(values.tolist(), top_ids.tolist(), probs.tolist())]
