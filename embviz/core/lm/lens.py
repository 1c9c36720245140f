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
from functools import cached_property

import numpy as np
import torch

from embviz.core.lm.causal_lm import common_prefix
from embviz.core.lm.norms import tolerance
from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.lm.logits import Prompt, TokenScore, prompt_ids
from embviz.core.model import EmbeddingModel
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


class TokenStrings:
    """The labels and exact texts of some vocabulary ids, each kind as one joined string
    with its end offsets: a handful of objects on the pipe, however many tokens, and a
    label is cut out only when it is shown."""

    def __init__(self, ids: np.ndarray, labels: list[str], texts: list[str]) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)  # sorted, unique
        self._labels, self._label_ends = _joined(labels)
        self._texts, self._text_ends = _joined(texts)

    @classmethod
    def of(cls, vocab, ids: np.ndarray) -> "TokenStrings":
        """The strings of every id in `ids`, from the vocabulary."""
        unique = np.unique(ids).tolist()
        return cls(np.array(unique, dtype=np.int64), [vocab.label(i) for i in unique], [vocab.texts[i] for i in unique])

    def _slot(self, token_id: int) -> int:
        slot = int(np.searchsorted(self.ids, token_id))
        if slot >= len(self.ids) or self.ids[slot] != token_id:
            raise KeyError(token_id)
        return slot

    def label(self, token_id: int) -> str:
        slot = self._slot(token_id)
        return self._labels[self._label_ends[slot - 1] if slot else 0:self._label_ends[slot]]

    def text(self, token_id: int) -> str:
        slot = self._slot(token_id)
        return self._texts[self._text_ends[slot - 1] if slot else 0:self._text_ends[slot]]

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TokenStrings) and np.array_equal(self.ids, other.ids)
                and self._labels == other._labels and np.array_equal(self._label_ends, other._label_ends)
                and self._texts == other._texts and np.array_equal(self._text_ends, other._text_ends))


def _joined(strings: list[str]) -> tuple[str, np.ndarray]:
    return "".join(strings), np.cumsum([len(s) for s in strings], dtype=np.int64)


@dataclass(eq=False)
class LensCells:
    """Top-k cells as (layers, positions, k) arrays, best first, and the strings of the ids
    they hold: thousands of cells cross the pipe as three arrays, and the window reads only
    the cells it draws."""

    ids: np.ndarray  # int32
    logits: np.ndarray  # float32
    probs: np.ndarray  # float32: softmax over the whole vocabulary
    strings: TokenStrings

    @classmethod
    def of_scores(cls, top: list[list[list[TokenScore]]]) -> "LensCells":
        """From nested [layer][position] → top-k scores (tests and hand-made grids)."""
        scores = [s for row in top for cell in row for s in cell]
        shape = (len(top), len(top[0]) if top else 0, len(top[0][0]) if top and top[0] else 0)
        texts = {s.id: (s.token, s.text) for s in scores}
        ids = sorted(texts)
        return cls(np.array([s.id for s in scores], dtype=np.int32).reshape(shape),
                   np.array([s.logit for s in scores], dtype=np.float32).reshape(shape),
                   np.array([s.prob for s in scores], dtype=np.float32).reshape(shape),
                   TokenStrings(np.array(ids, dtype=np.int64), [texts[i][0] for i in ids], [texts[i][1] for i in ids]))

    def cell(self, layer: int, position: int) -> list[TokenScore]:
        strings = self.strings
        return [TokenScore(i, strings.label(i), v, p, strings.text(i)) for i, v, p in zip(
            self.ids[layer, position].tolist(), self.logits[layer, position].tolist(), self.probs[layer, position].tolist())]

    def top_label(self, layer: int, position: int) -> str:
        return self.strings.label(int(self.ids[layer, position, 0]))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, LensCells) and np.array_equal(self.ids, other.ids)
                and np.array_equal(self.logits, other.logits) and np.array_equal(self.probs, other.probs)
                and self.strings == other.strings)


@dataclass
class LensResult:
    tokens: list[tuple[int, str]]  # the positions read, (id, label)
    token_texts: list[str]
    layer_names: list[str]  # "embedding", "block 1", …
    cells: LensCells  # (layers, positions, k)
    final_norm: bool
    truncated: int = 0  # positions before the ones read (context only)
    notes: list[str] = field(default_factory=list)

    def __getstate__(self) -> dict:
        return {name: value for name, value in self.__dict__.items() if name != "top"}  # `top` is rebuilt on demand

    @cached_property
    def top(self) -> list[list[list[TokenScore]]]:
        """[layer][position] → the top k, best first, as scores (the command line, JSON)."""
        layers, positions = self.cells.ids.shape[:2]
        return [[self.cells.cell(layer, p) for p in range(positions)] for layer in range(layers)]

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
    positions: list[int]  # indices into `tokens`, one per column of `cells`
    cells: LensCells  # (layers, len(positions), k)
    truncated: int = 0  # positions before the ones read (context only), as in LensResult

    @property
    def columns(self) -> dict[int, list[list[TokenScore]]]:
        """Position → per layer, the top k (tests; the window reads `cells`)."""
        return {p: [self.cells.cell(layer, i) for layer in range(len(self.layer_names))]
                for i, p in enumerate(self.positions)}


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


def _lens_columns(model, lm, ids, stream, first, k, final_norm, show) -> dict[int, Column]:
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


def _ranked(model: EmbeddingModel, lm, rows: torch.Tensor, k: int, final_norm: bool) -> Column:
    """The rows' (residual vectors') top k through the model's readout (its final norm when
    asked, the head, and what the model does to the logits) and their softmax probabilities."""
    with torch.inference_mode():
        values, top_ids, probs = top_k_softmax(lm.anatomy.readout(rows, final_norm), k)
    return (top_ids.to(torch.int32).cpu().numpy(), values.float().cpu().numpy(), probs.float().cpu().numpy())


def exact_stream(lm, ids: list[int]) -> torch.Tensor:
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
    return prefix.residuals
