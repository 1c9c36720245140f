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
from embviz.core.table.similarity import check_k

MAX_LENS_POSITIONS = 64  # the lens reads the last this many positions; earlier ones are context
# ...of at most this many tokens: the residual stream of every layer is kept for each of them
# (36 MB for SmolLM2), and a forward pass over a whole 8,192-token context would take a minute.
MAX_LENS_CONTEXT = 512
ROWS_PER_PRODUCT = 128  # (rows × V) logits at a time: 25 MB for a 49,152-token vocabulary

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
    first = max(0, len(ids) - MAX_LENS_POSITIONS)
    if first:
        notes.append(f"The lens reads the last {MAX_LENS_POSITIONS} of {len(ids):,} tokens; the earlier ones are context.")
    columns = _lens_columns(model, lm, ids, stream, first, k, final_norm, progress)
    top = [[columns[p][layer] for p in range(first, len(ids))] for layer in range(stream.shape[0])]
    shown = ids[first:]
    return LensResult(
        tokens=[(i, model.vocab.label(i)) for i in shown], token_texts=[model.vocab.texts[i] for i in shown],
        layer_names=layer_names(stream.shape[0] - 1), top=top, final_norm=final_norm, truncated=first, notes=notes,
    )


def _lens_columns(model, lm, ids, stream, first, k, final_norm, progress) -> dict[int, list[list[TokenScore]]]:
    """Every layer's top k at positions first…, keeping the columns of the previous text's
    common prefix: a position's column depends only on the tokens up to it."""
    key = (final_norm, k)
    kept_key, kept_ids, kept = model.cache.get("lens_columns", (None, [], {}))
    same = common_prefix(kept_ids, ids) if kept_key == key else 0
    columns = {p: kept[p] for p in range(first, same) if p in kept}
    todo = [p for p in range(first, len(ids)) if p not in columns]
    if todo:
        layers = stream.shape[0]
        rows = stream[:, todo].reshape(-1, stream.shape[-1])  # layer-major: row = layer × len(todo) + i
        with torch.inference_mode():
            if final_norm:
                rows = lm.final_norm(rows)
            ranked = _ranked(model, lm.head, rows, k, progress)
        for i, p in enumerate(todo):
            columns[p] = [ranked[layer * len(todo) + i] for layer in range(layers)]
    model.cache["lens_columns"] = (key, list(ids), columns)
    return columns


def _ranked(model: EmbeddingModel, head: torch.nn.Module, rows: torch.Tensor, k: int,
            progress: ProgressFn) -> list[list[TokenScore]]:
    """Top k and their softmax probabilities for each row's logits, a few rows at a time.
    On the CPU the products run on every core: a lens is a short burst, and one core
    would take twice as long."""
    chunks = list(rows.split(ROWS_PER_PRODUCT))

    def rank(chunk: torch.Tensor) -> list[list[TokenScore]]:
        with torch.inference_mode():
            logits = head(chunk).float()
            logits = torch.nan_to_num(logits, nan=-torch.inf, posinf=-torch.inf)
            lse = torch.logsumexp(logits, dim=-1, keepdim=True)
            values, top_ids = logits.topk(k, dim=-1)
            probs = torch.exp(values - lse)
        return [[TokenScore(i, model.vocab.label(i), v, p, model.vocab.texts[i]) for v, i, p in zip(vals, tids, ps)]
                for vals, tids, ps in zip(values.tolist(), top_ids.tolist(), probs.tolist())]

    workers = min(len(chunks), os.cpu_count() or 1) if rows.device.type == "cpu" else 1
    results: list[list[TokenScore]] = []
    with ThreadPoolExecutor(workers, thread_name_prefix="embviz-lens") as pool:
        for n, part in enumerate(pool.map(rank, chunks), 1):
            results += part
            progress(n / len(chunks), "Reading every layer", None)  # a cancel stops here
    return results
