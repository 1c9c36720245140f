"""Cosine similarity over the whole vocabulary, exact, on the table's device."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import torch

from embviz.core.errors import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.table.results import Hit

Query = int | torch.Tensor | np.ndarray | Sequence[float]


ROW_NORMS = "row_norms"  # model.cache key: float32 norm of every row
UNIT_TABLE = "unit"  # model.cache key: the unit-normalised table
ROW_CHECKS = "row_checks"  # model.cache key: (finite, zero) row masks
_ROW_FLAGS_CPU = "row_flags_cpu"
# Rows whose float32 norm lies in this range are divided by it directly; others (NaN, Inf,
# zero, or values so large or small that the squares overflow or underflow) take the
# careful path. Real tables have none, so the common case is two passes over the table.
_PLAIN_NORMS = (1e-15, 1e15)


def row_checks(table: torch.Tensor, norms: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(finite, zero): rows without NaN/Inf, and rows of zeros. The norms decide almost
    every row; only rows with a non-finite or zero norm are inspected entry by entry."""
    finite = torch.ones(table.shape[0], dtype=torch.bool, device=table.device)
    zero = torch.zeros(table.shape[0], dtype=torch.bool, device=table.device)
    unsure = (~(torch.isfinite(norms) & (norms > 0))).nonzero().flatten()
    if unsure.numel():
        rows = table[unsure]
        finite[unsure] = torch.isfinite(rows).all(dim=1)
        zero[unsure] = (rows == 0).all(dim=1)
    return finite, zero


def row_norms(model: EmbeddingModel) -> torch.Tensor:
    """‖row‖ of the raw table, one pass, cached: the row checks, the unit table and PCA's
    row scales all start from it."""
    norms: torch.Tensor = model.derived(ROW_NORMS, lambda: torch.linalg.vector_norm(model.table, dim=1))
    return norms


def _row_checks(model: EmbeddingModel) -> tuple[torch.Tensor, torch.Tensor]:
    return model.derived(ROW_CHECKS, lambda: row_checks(model.table, row_norms(model)))


def _finite_rows(model: EmbeddingModel) -> torch.Tensor:
    return _row_checks(model)[0]


def _row_flags_cpu(model: EmbeddingModel) -> tuple[np.ndarray, np.ndarray]:
    """(finite, zero) as numpy: checking one query row then costs no GPU round trip."""
    def flags() -> tuple[np.ndarray, np.ndarray]:
        finite, zero = _row_checks(model)
        return finite.cpu().numpy(), zero.cpu().numpy()
    return model.derived(_ROW_FLAGS_CPU, flags)


def _careful_unit_rows(rows: torch.Tensor, finite: torch.Tensor) -> torch.Tensor:
    rows = torch.where(finite[:, None], rows, torch.zeros((), device=rows.device))
    # Scale by the largest entry first, so rows of huge values do not overflow the norm.
    peak = rows.abs().amax(dim=1, keepdim=True)
    rows = torch.where(peak > 0, rows / peak.clamp_min(1e-30), torch.zeros((), device=rows.device))
    norms = rows.norm(dim=1, keepdim=True)
    return torch.where(norms > 0, rows / norms.clamp_min(1e-30), torch.zeros((), device=rows.device))


@dataclass(frozen=True)
class UnitRecipe:
    """How `unit_table` makes its rows: (row − mean) / divisor, except the `odd` rows (NaN,
    Inf, zero, or norms beyond _PLAIN_NORMS), whose unit rows are given. A child process
    that maps the table's file makes the same rows from it, bit for bit."""

    mean: torch.Tensor | None  # subtracted first, for the centred table
    divisors: torch.Tensor  # (V,) each row's norm (clamped)
    odd: torch.Tensor  # (m,) ids of the rows that take the careful path
    odd_rows: torch.Tensor  # (m, D) their unit rows


def unit_recipe(model: EmbeddingModel, centered: bool = False) -> UnitRecipe:
    """The divisors and careful rows of `unit_table(model, centered)`, cached; the centred
    norms are taken a chunk at a time, so no centred copy of the table is held for them."""

    def compute() -> UnitRecipe:
        table = model.table
        mean = mean_row(model) if centered else None
        norms = _centred_norms(table, mean) if mean is not None else row_norms(model)
        plain = (norms > _PLAIN_NORMS[0]) & (norms < _PLAIN_NORMS[1])
        odd = (~plain).nonzero().flatten()
        rows = table[odd] if mean is None else table[odd] - mean
        odd_rows = _careful_unit_rows(rows, _finite_rows(model)[odd]) if odd.numel() else rows
        return UnitRecipe(mean, norms.clamp(*_PLAIN_NORMS), odd, odd_rows)

    return model.derived(f"unit_recipe{':centred' if centered else ''}", compute)


_NORM_CHUNK_BYTES = 64 << 20


def _centred_norms(table: torch.Tensor, mean: torch.Tensor) -> torch.Tensor:
    n, d = table.shape
    step = max(1, _NORM_CHUNK_BYTES // (4 * d))
    norms = torch.empty(n, dtype=table.dtype, device=table.device)
    buffer = torch.empty((min(step, n), d), dtype=table.dtype, device=table.device)
    for i in range(0, n, step):
        chunk = buffer[: min(step, n - i)]
        torch.sub(table[i : i + step], mean, out=chunk)
        torch.linalg.vector_norm(chunk, dim=1, out=norms[i : i + step])
    return norms


def unit_table(model: EmbeddingModel, centered: bool = False) -> torch.Tensor:
    """Rows scaled to length 1 (optionally after subtracting the mean row), cached.

    Rows with NaN/Inf or all zeros become zero vectors, so they score 0 rather than
    poisoning every cosine with NaN or dividing by zero.
    """

    def compute() -> torch.Tensor:
        recipe = unit_recipe(model, centered)
        units = torch.empty_like(model.table)
        if recipe.mean is None:
            torch.div(model.table, recipe.divisors[:, None], out=units)
        else:
            torch.sub(model.table, recipe.mean, out=units).div_(recipe.divisors[:, None])
        if recipe.odd.numel():
            units[recipe.odd] = recipe.odd_rows
        return units

    return model.derived(UNIT_TABLE if not centered else f"{UNIT_TABLE}:centred", compute)


def unit_scales(model: EmbeddingModel) -> torch.Tensor | None:
    """1 / ‖row‖ for every row, or None when some row needs the careful path of
    `unit_table`. Lets PCA scale rows chunk by chunk without building the unit table."""

    def compute() -> torch.Tensor | None:
        norms = row_norms(model)
        plain = bool(((norms > _PLAIN_NORMS[0]) & (norms < _PLAIN_NORMS[1])).all())
        return 1.0 / norms if plain else None

    return model.derived("unit_scales", compute)


def mean_row(model: EmbeddingModel) -> torch.Tensor:
    def compute() -> torch.Tensor:
        finite = _finite_rows(model)
        rows = model.table[finite] if not bool(finite.all()) else model.table
        return rows.mean(dim=0) if rows.shape[0] else torch.zeros(model.dim, device=model.device)

    return model.derived("mean_row", compute)


def query_vector(model: EmbeddingModel, query: Query, centered: bool = False) -> torch.Tensor:
    """A unit vector in the same space as `unit_table(model, centered)`."""
    if isinstance(query, (int, np.integer)):
        token_id = int(query)
        if not 0 <= token_id < model.vocab_size:
            raise EmbvizError(f"Token id {token_id} is outside the vocabulary (0–{model.vocab_size - 1}).")
        finite, zero = _row_flags_cpu(model)
        if not finite[token_id]:
            raise EmbvizError(f"The row of '{model.vocab.label(token_id)}' (id {token_id}) contains NaN or Inf values.")
        vec = unit_table(model, centered)[token_id]
        if zero[token_id] or (centered and not bool(vec.any())):  # centred, only the mean row itself is zero
            raise EmbvizError(f"The row of '{model.vocab.label(token_id)}' (id {token_id}) is all zeros: it has no direction.")
        return vec
    vec = torch.as_tensor(np.asarray(query, dtype=np.float32) if not isinstance(query, torch.Tensor) else query)
    vec = vec.to(device=model.device, dtype=torch.float32).flatten()
    if vec.numel() != model.dim:
        raise EmbvizError(f"The query vector has {vec.numel()} values; this table's rows have {model.dim}.")
    if not bool(torch.isfinite(vec).all()):
        raise EmbvizError("The query vector contains NaN or Inf values.")
    if centered:
        vec = vec - mean_row(model)
    peak = vec.abs().max()
    if float(peak) == 0.0:
        raise EmbvizError("The query vector is all zeros: it has no direction.")
    vec = vec / peak
    unit: torch.Tensor = vec / vec.norm()
    return unit


def mean_direction(model: EmbeddingModel, ids: Sequence[int], centered: bool = False) -> torch.Tensor:
    """The unit mean of the rows `ids`' unit rows (a map selection's "mean word")."""
    if not len(ids):
        raise EmbvizError("Select some tokens first.")
    bad = [i for i in ids if not 0 <= int(i) < model.vocab_size]
    if bad:
        raise EmbvizError(f"Token id {bad[0]} is outside the vocabulary (0–{model.vocab_size - 1}).")
    index = torch.as_tensor([int(i) for i in ids], dtype=torch.long, device=model.device)
    mean = unit_table(model, centered).index_select(0, index).mean(dim=0)
    length = float(mean.norm())
    if length == 0.0:
        raise EmbvizError("The selected rows cancel out (or are all zeros): their mean has no direction.")
    return mean / length


def mean_query(model: EmbeddingModel, ids: Sequence[int], centered: bool = False, by: str = "cosine") -> tuple[torch.Tensor, torch.Tensor]:
    """(scores of every row, the mean raw row) for the mean of the rows `ids`: by cosine
    with their mean direction, or by dot product with their mean row (lengths count)."""
    if by not in ("cosine", "dot"):
        raise EmbvizError(f"Rank by 'cosine' or 'dot', not {by!r}.")
    direction = mean_direction(model, ids, centered)  # checks the ids
    index = torch.as_tensor([int(i) for i in ids], dtype=torch.long, device=model.device)
    raw = model.table.index_select(0, index).mean(dim=0)
    if centered:
        raw = raw - mean_row(model)
    if by == "cosine":
        return matmul(unit_table(model, centered), direction), raw
    scores = matmul(model.table, raw)
    return (scores - mean_row(model) @ raw if centered else scores), raw


def mean_scores_of(model: EmbeddingModel, ids: Sequence[int], index: list[int],
                   centered: bool = False) -> tuple[list[float], list[float], list[float]]:
    """(cosines, dot products, row lengths) of the rows `index` with the mean of the rows
    `ids`: the Neighbours table's columns for a selection."""
    direction = mean_direction(model, ids, centered)
    picked = torch.as_tensor(index, dtype=torch.long, device=model.device)
    rows = model.table.index_select(0, picked)
    mean = model.table.index_select(0, torch.as_tensor([int(i) for i in ids], dtype=torch.long, device=model.device)).mean(dim=0)
    if centered:
        rows, mean = rows - mean_row(model), mean - mean_row(model)
    cosines = unit_table(model, centered).index_select(0, picked) @ direction
    return cosines.cpu().tolist(), (rows @ mean).cpu().tolist(), rows.norm(dim=1).cpu().tolist()


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b; on the CPU through numpy's BLAS, which measured 2× faster than torch.mv
    for a 49,152 × 576 table (bench figure 4) and faster for PCA's covariance too.
    Zero-copy both ways (numpy reads strided views such as a transpose)."""
    if a.device.type == "cpu" and a.dtype == b.dtype == torch.float32:
        return torch.from_numpy(a.numpy() @ b.numpy())
    return a @ b


def cosine_scores(model: EmbeddingModel, query: Query, centered: bool = False) -> torch.Tensor:
    """Cosine of every row with the query: (V,) on the model's device."""
    return matmul(unit_table(model, centered), query_vector(model, query, centered))


def dot_scores(model: EmbeddingModel, token_id: int, centered: bool = False) -> torch.Tensor:
    """The dot product of every row with row `token_id` (both mean-centred first when
    asked): what an output head computes, the rows' lengths included. (V,) on the device."""
    query_vector(model, token_id, centered)  # the same checks: an id in range, a finite, non-zero row
    q = model.table[int(token_id)]
    if not centered:
        return matmul(model.table, q)
    m = mean_row(model)
    qc = q - m
    return matmul(model.table, qc) - m @ qc  # (x − m)·(q − m), without a centred copy of the table


def scores_of(model: EmbeddingModel, token_id: int, ids: list[int], centered: bool = False) -> tuple[list[float], list[float], list[float]]:
    """(cosines, dot products, row lengths) of the rows `ids` with row `token_id`: both
    columns of the Neighbours table, whichever of them ranked it."""
    index = torch.as_tensor(ids, dtype=torch.long, device=model.device)
    cosines = unit_table(model, centered).index_select(0, index) @ query_vector(model, token_id, centered)
    rows = model.table.index_select(0, index)
    q = model.table[int(token_id)]
    if centered:
        m = mean_row(model)
        rows, q = rows - m, q - m
    return cosines.cpu().tolist(), (rows @ q).cpu().tolist(), rows.norm(dim=1).cpu().tolist()


def top_k(
    model: EmbeddingModel,
    scores: torch.Tensor,
    k: int,
    exclude: Iterable[int] = (),
    keep: np.ndarray | None = None,
) -> list[Hit]:
    """The k best rows by score, ties broken by lower id, skipping excluded/filtered rows."""
    k = check_k(k, model.vocab_size)
    # A copy in which NaN never ranks (and -inf stays -inf for excluded rows).
    scores = torch.nan_to_num(scores, nan=-torch.inf, posinf=torch.inf, neginf=-torch.inf)
    banned = list(exclude)
    if len(banned) <= 8:  # the usual few inputs: no index tensor to copy to a GPU
        for token_id in banned:
            scores[int(token_id)] = -torch.inf
    else:
        scores[torch.as_tensor(banned, dtype=torch.long, device=scores.device)] = -torch.inf
    if keep is not None:
        scores[torch.as_tensor(~keep, device=scores.device)] = -torch.inf
    values, idx = torch.topk(scores, min(k + 1, scores.numel()))
    vals_np = values.cpu().numpy()
    idx_np = idx.cpu().numpy()
    if vals_np.size > k and vals_np[k] == vals_np[k - 1]:
        # topk does not order ties: take everything tied with the k-th score.
        tied = (scores >= values[k - 1]).nonzero().flatten()
        vals_np, idx_np = scores[tied].cpu().numpy(), tied.cpu().numpy()
    order = [i for i in np.lexsort((idx_np, -vals_np)) if np.isfinite(vals_np[i])][:k]
    vocab = model.vocab
    return [Hit(int(idx_np[i]), vocab.label(int(idx_np[i])), float(vals_np[i]), vocab.texts[int(idx_np[i])]) for i in order]


def check_k(k: int, vocab_size: int) -> int:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise EmbvizError(f"k must be a whole number, not {k!r}.")
    if k < 1:
        raise EmbvizError(f"k must be at least 1 (got {k}).")
    return min(int(k), vocab_size)


def nearest_neighbours(
    model: EmbeddingModel,
    query: Query,
    k: int = 10,
    centered: bool = False,
    keep: np.ndarray | None = None,
    include_self: bool = False,
    by: str = "cosine",
) -> list[Hit]:
    """Nearest neighbours of a token id or a vector, by cosine (directions only) or, for a
    token id, by dot product (lengths too); a token never finds itself."""
    if by not in ("cosine", "dot"):
        raise EmbvizError(f"Rank by 'cosine' or 'dot', not {by!r}.")
    if by == "dot" and not isinstance(query, (int, np.integer)):
        raise EmbvizError("Ranking by dot product needs a token, not a vector.")
    scores = cosine_scores(model, query, centered) if by == "cosine" else dot_scores(model, int(query), centered)  # type: ignore[arg-type]  # an id: checked above
    exclude = [int(query)] if isinstance(query, (int, np.integer)) and not include_self else []
    return top_k(model, scores, k, exclude=exclude, keep=keep)


def similarity(model: EmbeddingModel, a: int, b: int, centered: bool = False) -> float:
    return float(query_vector(model, a, centered) @ query_vector(model, b, centered))
