"""Analogies A − B + C on unit vectors (3CosAdd, or 3CosMul), with word2vec's
exclude-inputs search rule switchable (and a stricter one that also excludes the inputs'
case and space variants: Paris − France + Italy otherwise answers "Paris"), and where
each input ranks without it."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from embviz.core.errors import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.table.results import AnalogyPlane, AnalogyResult, InputRank
from embviz.core.table.similarity import Query, check_k, matmul, query_vector, top_k, unit_table

METHODS = ("add", "mul")
MUL_EPSILON = 1e-3  # Levy & Goldberg (2014)
SAME_DIRECTION = 1 - 1e-5


def _variant_key(text: str) -> str:
    return text.strip().casefold()


def variants_of(model: EmbeddingModel, token_id: int) -> list[int]:
    """The token and its case and space variants: for " Paris", also "Paris", " paris",
    "paris", "PARIS"… (the same text once leading and trailing spaces are stripped and
    case is folded). A token that is only spaces has no variants but itself."""
    def compute() -> dict[str, list[int]]:
        groups: dict[str, list[int]] = {}
        for i, text in enumerate(model.vocab.texts):
            if (key := _variant_key(text)):
                groups.setdefault(key, []).append(i)
        return groups

    key = _variant_key(model.vocab.texts[int(token_id)])
    return model.derived("variant_groups", compute).get(key, [int(token_id)]) if key else [int(token_id)]


def analogy_scores(
    model: EmbeddingModel, a: Query, b: Query, c: Query, method: str = "add", centered: bool = False
) -> torch.Tensor:
    """Score of every row as the answer to A − B + C: (V,)."""
    if method not in METHODS:
        raise EmbvizError(f"Unknown analogy method '{method}': use add (3CosAdd) or mul (3CosMul).")
    units = unit_table(model, centered)
    va, vb, vc = (query_vector(model, q, centered) for q in (a, b, c))
    if method == "add":
        target = va - vb + vc
        norm = target.norm()
        if float(norm) == 0.0:
            # e.g. king − king + king would be fine, but a − a + 0 is not; say so plainly.
            raise EmbvizError("A − B + C is the zero vector here, so it points nowhere.")
        return matmul(units, target / norm)
    # 3CosMul: cosines shifted to [0, 1] so that the product is meaningful.
    ca, cb, cc = ((matmul(units, v) + 1) / 2 for v in (va, vb, vc))
    return ca * cc / (cb + MUL_EPSILON)


def _input_rows(model: EmbeddingModel, q: Query, centered: bool) -> list[int]:
    """Row ids an input stands for: its own id, or rows pointing the same way as its vector."""
    if isinstance(q, (int, np.integer)):
        return [int(q)]
    cos = matmul(unit_table(model, centered), query_vector(model, q, centered))
    return (cos >= SAME_DIRECTION).nonzero().flatten().tolist()


def analogy(
    model: EmbeddingModel,
    a: Query,
    b: Query,
    c: Query,
    k: int = 10,
    exclude_inputs: bool = True,
    method: str = "add",
    centered: bool = False,
    keep: np.ndarray | None = None,
    exclude_variants: bool = False,
) -> AnalogyResult:
    """A − B + C (king − man + woman): the k best rows, inputs excluded or not; with
    `exclude_variants`, also every case and space variant of the inputs."""
    check_k(k, model.vocab_size)
    scores = analogy_scores(model, a, b, c, method, centered)
    input_ids: list[tuple[str, list[int]]] = [(role, _input_rows(model, q, centered)) for role, q in zip("ABC", (a, b, c))]
    excluded = sorted({i for _, ids in input_ids for i in ids}) if exclude_inputs else []
    if exclude_inputs and exclude_variants:
        excluded = sorted({v for i in excluded for v in variants_of(model, i)})
    results = top_k(model, scores, k, exclude=excluded, keep=keep)
    ranked = scores.clone()
    if keep is not None:
        ranked[torch.as_tensor(~keep, device=ranked.device)] = -torch.inf
    ranks = []
    for role, ids in input_ids:
        if not ids:
            ranks.append(InputRank(role, None, "(vector)", None, None))
            continue
        i = ids[0]
        s = ranked[i]
        rank = int((ranked > s).sum()) + 1 if bool(torch.isfinite(s)) else None
        ranks.append(InputRank(role, i, model.vocab.label(i), rank, float(scores[i]), model.vocab.texts[i]))
    return AnalogyResult(results, exclude_inputs, method, excluded, ranks, exclude_inputs and exclude_variants)


def parse_inputs(model: EmbeddingModel, words: Sequence[str]) -> list[int]:
    """Token ids for the three words, with clear messages for empty ones."""
    if len(words) != 3:
        raise EmbvizError("An analogy needs three words: A − B + C.")
    ids = []
    for role, word in zip("ABC", words):
        if word is None or word == "":
            raise EmbvizError(f"Word {role} is empty: an analogy needs three words.")
        ids.append(model.vocab.resolve(word))
    return ids


def pair_axes(model: EmbeddingModel, x: tuple[int, int], y: tuple[int, int]) -> torch.Tensor:
    """Two orthonormal directions (2, D) from word pairs of unit rows: x = to − from of
    the first pair, y the second pair's direction with its x part taken out."""
    units = unit_table(model)
    dx = units[x[1]] - units[x[0]]
    dy = units[y[1]] - units[y[0]]
    if float(dx.norm()) < 1e-6:
        raise EmbvizError("The x pair's two words have the same direction: they make no axis.")
    dx = dx / dx.norm()
    dy = dy - (dy @ dx) * dx
    if float(dy.norm()) < 1e-6:
        raise EmbvizError("The y pair points the same way as the x pair: they make no plane.")
    return torch.stack([dx, dy / dy.norm()])


def analogy_plane(model: EmbeddingModel, a: int, b: int, c: int, d: int, neighbours: int = 4,
                  keep: np.ndarray | None = None) -> AnalogyPlane:
    """A − B + C = D on axes B→C and B→A, with each word's `neighbours` nearest rows."""
    from embviz.core.table.similarity import nearest_neighbours

    words = [a, b, c, d]
    ids = list(dict.fromkeys(words + [h.id for w in words for h in nearest_neighbours(model, w, neighbours, keep=keep)]))
    axes = pair_axes(model, (b, c), (b, a))
    units = unit_table(model)
    index = torch.as_tensor(ids, device=units.device)
    coords = ((units.index_select(0, index) - units[b]) @ axes.T).cpu().numpy().astype(np.float32)
    king, queen = units[a] - units[b], units[d] - units[c]
    parallel = float(king @ queen / (king.norm() * queen.norm()).clamp_min(1e-12))
    label = model.vocab.label
    return AnalogyPlane(ids, coords, [(b, a), (c, d)], parallel, (f"{label(b)} → {label(c)}", f"{label(b)} → {label(a)}"))
