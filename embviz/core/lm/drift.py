"""Contextual drift: one word in several sentences, followed through the layers.

At the embedding output a token's vector is its static row (plus a position vector in
models with learned positions, such as GPT-2), the same in every
sentence; each block mixes in its context. Per layer: how alike the contexts' vectors
still are (mean pairwise cosine) and how far each has moved from the static row.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import torch

from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.lm.lens import MAX_LENS_CONTEXT, check_has_layers, layer_names
from embviz.core.lm.logits import prompt_ids
from embviz.core.lm.results import DriftResult
from embviz.core.model import EmbeddingModel
from embviz.core.table.similarity import nearest_neighbours

MAX_SENTENCES = 8


def word_token_ids(model: EmbeddingModel, word: str) -> set[int]:
    """The single tokens `word` can be: as typed, and with a leading space ("bank" and
    " bank"), since mid-sentence words carry their space in most vocabularies."""
    word = word.replace("␣", " ")
    if not word.strip():
        raise EmbvizError("Type the word to follow first.")
    variants = {word, " " + word.lstrip(" ")} if not word.startswith(" ") else {word, word.lstrip(" ")}
    ids = {i for v in variants if (i := model.vocab.id_of(v)) is not None}
    if not ids:
        pieces = model.vocab.encode(" " + word.strip())
        shown = " ".join(model.vocab.label(i) for i in pieces)
        raise EmbvizError(f"'{word.strip()}' is {len(pieces)} tokens here ({shown}): drift follows one token, "
                          "so choose a word that is a single token.")
    return ids


def contextual_drift(
    model: EmbeddingModel, word: str, sentences: list[str], neighbours_layer: int | None = None, k: int = 8,
    load_lm: bool = True, progress: ProgressFn = no_progress,
) -> DriftResult:
    check_has_layers(model)
    sentences = [s for s in sentences if s.strip()]
    if not sentences:
        raise EmbvizError("Give at least one sentence that contains the word (two or more to compare them).")
    if len(sentences) > MAX_SENTENCES:
        raise EmbvizError(f"At most {MAX_SENTENCES} sentences at a time.")
    wanted = word_token_ids(model, word)
    lm = model.language_model(load=load_lm)
    vectors, token_ids, positions, others = [], [], [], []
    for n, sentence in enumerate(sentences, 1):
        progress((n - 1) / len(sentences), f"Sentence {n} of {len(sentences)}", None)  # a cancel stops here
        ids, _, _ = prompt_ids(model, sentence, "drift needs a sentence")
        if len(ids) > MAX_LENS_CONTEXT:
            raise EmbvizError(f"Sentence {n} is {len(ids):,} tokens; drift reads sentences of up to {MAX_LENS_CONTEXT}.")
        at = next((p for p, i in enumerate(ids) if i in wanted), None)
        if at is None:
            raise EmbvizError(f"'{word.strip()}' is not a token of sentence {n} (“{sentence.strip()[:60]}”): "
                              "a word glued to punctuation or capitalised may be another token.")
        stream = lm.uncached_residual_stream(ids)  # (layers + 1, T, D)
        vectors.append(stream[:, at])
        # Position 0 is left out: the first token's vector is an outlier in most models.
        others.append(stream[:, [p for p in range(1, len(ids)) if p != at]])
        token_ids.append(ids[at])
        positions.append(at)
    stack = torch.stack(vectors, dim=1).float()  # (layers + 1, S, D)
    if stack.shape[-1] != model.dim:
        raise EmbvizError(f"The {lm.anatomy.family_name} model's {model.dim}-wide embedding is projected into its "
                          f"{stack.shape[-1]}-wide blocks, so a word's vector in context cannot be compared with its "
                          "row of the table.")
    unit = torch.nn.functional.normalize(stack, dim=-1)
    static = torch.nn.functional.normalize(model.rows(token_ids).float().to(unit.device), dim=-1)  # (S, D)
    to_static = (unit * static.unsqueeze(0)).sum(-1).tolist()
    pairs = list(combinations(range(len(sentences)), 2))
    between = [float(np.mean([float(layer[i] @ layer[j]) for i, j in pairs])) if pairs else None for layer in unit]
    layers = stack.shape[0]
    baseline = _baseline(others, layers)
    at_layer = layers - 1 if neighbours_layer is None else int(neighbours_layer)
    if not 0 <= at_layer < layers:
        raise EmbvizError(f"Layer {at_layer} does not exist: this model has layers 0–{layers - 1}.")
    keep = model.vocab.special_filter(True)
    hits = [nearest_neighbours(model, stack[at_layer, s].to(model.device), k=k, keep=keep)
            for s in range(len(sentences))]
    return DriftResult(
        word=model.vocab.texts[token_ids[0]], token_ids=token_ids, positions=positions, sentences=sentences,
        layer_names=layer_names(layers - 1), between=between, to_static=to_static, baseline=baseline,
        neighbours_layer=at_layer, neighbours=hits,
    )


def _baseline(others: list[torch.Tensor], layers: int) -> list[float | None]:
    """Per layer, the mean cosine between other tokens of different sentences."""
    pairs = [(a, b) for a, b in combinations(range(len(others)), 2) if others[a].shape[1] and others[b].shape[1]]
    if not pairs:
        return [None] * layers
    units = [torch.nn.functional.normalize(o.float(), dim=-1) for o in others]
    return [float(np.mean([float((units[a][layer] @ units[b][layer].T).mean()) for a, b in pairs]))
            for layer in range(layers)]
