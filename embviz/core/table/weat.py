"""The Word Embedding Association Test (Caliskan, Bryson and Narayanan 2017), its
single-category form (SC-WEAT), and the paper's ten tests shipped as data.

For target sets X, Y and attribute sets A, B, on unit rows (cosines in float64):

    s(w, A, B)    = mean_a cos(w, a) − mean_b cos(w, b)
    s(X, Y, A, B) = Σ_x s(x, A, B) − Σ_y s(y, A, B)                 (the statistic)
    d             = (mean_x s − mean_y s) / std_{w ∈ X∪Y} s(w, A, B)  (the effect size)

The std is the population std (numpy's default, ddof = 0), as WEFE 1.0.1's `WEAT` computes it
(`np.std` without ddof in `_calc_effect_size`); the sample std would shrink |d| by √((n−1)/n).

The one-sided p-value is Caliskan's Pr_i[s(X_i, Y_i, A, B) > s(X, Y, A, B)] over the partitions
(X_i, Y_i) of X∪Y into sets of the sizes of X and Y, strictly greater, as WEFE counts. It is exact,
over every partition (the observed one in the count of partitions, never above itself), when there
are at most EXACT_LIMIT of them; otherwise `permutations` seeded random partitions are drawn and
p = (count + 1) / (draws + 1), WEFE's estimator (the observed partition counted once on each side).
WEFE 1.0.1 itself draws its "permutations" *with* replacement (`rng.choice` without
`replace=False`), so its X_i and Y_i repeat words and are no partitions; `sampling="wefe"` draws the
same way, to compare with it, and is not the default.

SC-WEAT (Caliskan et al. 2017's single-category test, as the Caliskan lab's SC-WEAT code has it):
s = mean_a cos(w, a) − mean_b cos(w, b), d = s / std_{x ∈ A∪B} cos(w, x) with the sample std
(ddof = 1), and a p-value over the partitions of A∪B in the same way (counted, where that code
fits a normal distribution to its permutations)."""

from __future__ import annotations

import itertools
import math
from typing import Any, Sequence

import numpy as np

from embviz.core.errors import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.table.bias_results import Association, ScWeatResult, WeatResult, WordSet
from embviz.core.table.directions import require_set, unit_rows64
from embviz.core.table.weat_data import paper_tests
from embviz.core.table.vocab import visible
from embviz.core.table.word_pairs import matching_rule

EXACT_LIMIT = 100_000  # partitions counted exactly at most; beyond, random ones are drawn
PERMUTATIONS = 100_000  # random partitions drawn by default (WEFE's default is 10,000)
MAX_PERMUTATIONS = 10_000_000
SAMPLINGS = ("partitions", "wefe")
WEFE_LOST_SHARE = 0.2  # WEFE answers NaN when a set loses more than this share of its words
_CHUNK_INDICES = 2_000_000  # indices drawn at a time (16 MB), however long the lists


def _chunks(draws: int, width: int) -> list[int]:
    """How many draws to make at a time, so that each chunk holds about _CHUNK_INDICES indices."""
    step = max(1, _CHUNK_INDICES // max(width, 1))
    return [min(step, draws - at) for at in range(0, draws, step)]


def paper_test(number: int) -> tuple[str, list[list[str]]]:
    """(name, [X, Y, A, B]) of test `number`, 1–10, as Caliskan et al. number them."""
    data = paper_tests()
    tests = {int(t["number"]): t for t in data["tests"]}
    if number not in tests:
        raise EmbvizError(f"There is no WEAT test {number}: the paper's tests are 1–{len(tests)}.")
    test = tests[number]
    return f"WEAT {number}: {test['name']}", [list(data["sets"][test[key]]) for key in "xyab"]


def _check_draws(permutations: int, sampling: str) -> None:
    if isinstance(permutations, bool) or not isinstance(permutations, (int, np.integer)) or permutations < 1:
        raise EmbvizError(f"The number of permutations must be a whole number of at least 1, not {permutations!r}.")
    if permutations > MAX_PERMUTATIONS:
        raise EmbvizError(f"At most {MAX_PERMUTATIONS:,} permutations are drawn (got {permutations:,}).")
    if sampling not in SAMPLINGS:
        raise EmbvizError(f"Sampling is 'partitions' or 'wefe', not {sampling!r}.")


def partition_p_value(values: np.ndarray, first: int, permutations: int = PERMUTATIONS, seed: int | None = 0,
                      exact_limit: int = EXACT_LIMIT) -> tuple[float, int, bool]:
    """(p, partitions counted, exact) for "the first `first` values sum higher than chance": the
    share of partitions of `values` into sets of `first` and the rest whose first set sums strictly
    higher than the observed one. The WEAT statistic (2 Σ_X s − Σ s) and SC-WEAT's difference of
    means both grow with that sum, so it orders the partitions as they do."""
    n = len(values)
    total = math.comb(n, first)
    if total <= exact_limit:
        combos = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n), first)),
                             dtype=np.int64, count=total * first).reshape(total, first)
        sums = values[combos].sum(axis=1)
        # combinations() starts with (0, 1, …, first − 1), the observed partition, summed the same way
        return float((sums > sums[0]).sum()) / total, total, True
    rng = np.random.default_rng(seed)
    observed = values[np.arange(first)[None, :]].sum(axis=1)[0]
    above = 0
    for m in _chunks(permutations, n):
        picked = rng.permuted(np.tile(np.arange(n), (m, 1)), axis=1)[:, :first]
        picked.sort(axis=1)  # the observed set, drawn again, then sums in the same order: never "above"
        above += int((values[picked].sum(axis=1) > observed).sum())
    return (above + 1) / (permutations + 1), permutations, False


def _wefe_p_value(s: np.ndarray, first: int, permutations: int, seed: int | None) -> float:
    """WEFE 1.0.1's draws: len(X∪Y) words *with* replacement, the first |X| as X_i, the rest as
    Y_i; strictly greater statistic counted; (count + 1) / (draws + 1)."""
    rng = np.random.default_rng(seed)
    n = len(s)
    observed = np.sum(s[:first]) - np.sum(s[first:])
    above = 0
    for m in _chunks(permutations, n):
        picked = s[rng.integers(0, n, size=(m, n))]
        above += int((picked[:, :first].sum(axis=1) - picked[:, first:].sum(axis=1) > observed).sum())
    return (above + 1) / (permutations + 1)


def associations(model: EmbeddingModel, ids: Sequence[int], a: WordSet, b: WordSet) -> np.ndarray:
    """s(w, A, B) of each row `ids`, float64."""
    w = unit_rows64(model, ids)
    return np.asarray((w @ unit_rows64(model, a.ids).T).mean(axis=1) - (w @ unit_rows64(model, b.ids).T).mean(axis=1))


def _lost_notes(sets: Sequence[WordSet]) -> list[str]:
    notes = []
    for s in sets:
        total = len(s.kept) + len(s.dropped)
        if total and len(s.dropped) / total > WEFE_LOST_SHARE:
            notes.append(f"{s.name} lost {len(s.dropped)} of its {total} words; WEFE refuses (NaN) beyond "
                         f"{WEFE_LOST_SHARE:.0%} lost.")
    return notes


def weat(
    model: EmbeddingModel,
    x: Sequence[str],
    y: Sequence[str],
    a: Sequence[str],
    b: Sequence[str],
    *,
    name: str = "WEAT",
    permutations: int = PERMUTATIONS,
    seed: int | None = 0,
    exact_limit: int = EXACT_LIMIT,
    sampling: str = "partitions",
) -> WeatResult:
    """WEAT of targets X, Y against attributes A, B, on the words the vocabulary holds."""
    _check_draws(permutations, sampling)
    sets = [require_set(model, words, f"Target set {key}") for key, words in (("X", x), ("Y", y))]
    sets += [require_set(model, words, f"Attribute set {key}") for key, words in (("A", a), ("B", b))]
    sx, sy, sa, sb = sets
    s = associations(model, sx.ids + sy.ids, sa, sb)
    nx = len(sx.kept)
    s_x, s_y = s[:nx], s[nx:]
    statistic = float(np.sum(s_x) - np.sum(s_y))
    std = float(np.std(s))  # ddof = 0, as WEFE
    notes = _lost_notes(sets)
    effect = float((np.mean(s_x) - np.mean(s_y)) / std) if std > 1e-15 else None
    if effect is None:
        notes.append("Every target word has the same association here, so the effect size is undefined.")
    if sampling == "wefe":
        p, counted, exact = _wefe_p_value(s, nx, permutations, seed), permutations, False
    else:
        p, counted, exact = partition_p_value(s, nx, permutations, seed, exact_limit)
    overlap = sorted(set(sx.ids) & set(sy.ids))
    if overlap:
        notes.append(f"{len(overlap)} token(s) are in both X and Y: " + ", ".join(model.vocab.label(i) for i in overlap[:5]))
    return WeatResult(name, sx, sy, sa, sb, statistic, effect, p, counted, exact, None if exact else seed, sampling,
                      [Association(w.word, w.label, float(v)) for w, v in zip(sx.kept, s_x)],
                      [Association(w.word, w.label, float(v)) for w, v in zip(sy.kept, s_y)],
                      matching_rule(model), notes)


def weat_test(model: EmbeddingModel, number: int, **options: Any) -> WeatResult:
    """The paper's test `number` (1–10) on this model."""
    name, (x, y, a, b) = paper_test(number)
    return weat(model, x, y, a, b, name=name, **options)


def sc_weat(
    model: EmbeddingModel,
    word: str,
    a: Sequence[str],
    b: Sequence[str],
    *,
    permutations: int = PERMUTATIONS,
    seed: int | None = 0,
    exact_limit: int = EXACT_LIMIT,
) -> ScWeatResult:
    """SC-WEAT: one word's association with A against B, its effect size and p-value."""
    _check_draws(permutations, "partitions")
    target = require_set(model, [word], f"The word '{visible(word)}'")
    token = target.ids[0]
    sa, sb = require_set(model, a, "Attribute set A"), require_set(model, b, "Attribute set B")
    if len(sa.kept) + len(sb.kept) < 3:
        raise EmbvizError("SC-WEAT needs at least three attribute words in all, for a sample std.")
    w = unit_rows64(model, [token])[0]
    values = np.concatenate([unit_rows64(model, sa.ids) @ w, unit_rows64(model, sb.ids) @ w])
    na = len(sa.kept)
    s = float(values[:na].mean() - values[na:].mean())
    std = float(np.std(values, ddof=1))
    effect = s / std if std > 1e-15 else None
    p, counted, exact = partition_p_value(values, na, permutations, seed, exact_limit)
    return ScWeatResult(target.kept[0].word, int(token), model.vocab.label(int(token)), sa, sb, s, effect, p, counted, exact,
                        None if exact else seed, matching_rule(model))
