"""Meaning lives in directions: a concept direction (a unit vector in the table's space) from
two words, from word pairs, or from two word sets; the vocabulary ranked along it, chosen
words placed on it, and Bolukbasi et al.'s DirectBias.

Every direction is made from unit rows (each row divided by its length first), as Bolukbasi
et al. (2016) normalise their vectors, so a long row does not outweigh a short one:

- two words: to − from, normalised;
- word pairs: the mean of the pairs' differences (b − a), normalised; or, with `pca`,
  Bolukbasi's first principal component of the pairs, each pair centred on its own mean (their
  `doPCA`), pointed the way the mean difference points, with the share of variance it explains;
- two sets: mean of B − mean of A, normalised (TF Projector's custom projection, on unit rows).

Words are matched to tokens by the rule of Similarities (`word_pairs.match_word`): a word is its
space-prefixed token (" doctor") where the vocabulary marks words with a leading space, lower-cased
first where the vocabulary has no capitals (GloVe); a word that is several tokens, or whose row has
no direction, is dropped and named."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from embviz.core.errors import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.table.bias_results import DirectionResult, MatchedWord, PlacedWord, WordSet
from embviz.core.table.compare import directed_rows
from embviz.core.table.results import Hit, SkippedWord
from embviz.core.table.similarity import check_k, matmul, row_checks, row_norms, top_k, unit_table
from embviz.core.table.vocab import visible
from embviz.core.table.word_pairs import match_word, matching_rule

MAX_WORDS = 10_000  # words in one list at most: the published lists hold a few dozen


def _clean(word: str) -> str:
    return word.replace("␣", " ").strip()  # a typed ␣ is the space the rule adds anyway


def word_tokens(model: EmbeddingModel, words: Sequence[str]) -> tuple[dict[str, int], dict[str, str]]:
    """({word: its token} for each word with a token that has a direction, {word: why not} for
    the others), by the rule, each distinct word once."""
    found: dict[str, int] = {}
    why_not: dict[str, str] = {}
    for word in dict.fromkeys(_clean(w) for w in words):
        if word:
            token, why = match_word(model, word)
            if token is None:
                why_not[word] = why
            else:
                found[word] = int(token)
    if found:
        ok = directed_rows(model, np.asarray(list(found.values())))
        for word, good in zip(list(found), ok):
            if not good:
                why_not[word] = "has no direction here (its row is NaN, Inf or all zeros)"
                del found[word]
    return found, why_not


def match_set(model: EmbeddingModel, words: Sequence[str], name: str) -> WordSet:
    """The words of one list split into kept (each one token with a direction, by the rule) and
    dropped (with why). A word repeated, or naming a token already kept, counts once, as WEFE's
    word → vector dictionaries keep it once."""
    if len(words) > MAX_WORDS:
        raise EmbvizError(f"{name} holds {len(words):,} words; embviz takes at most {MAX_WORDS:,} in one list.")
    found, why_not = word_tokens(model, words)
    kept: dict[int, MatchedWord] = {}
    for word, token in found.items():
        kept.setdefault(token, MatchedWord(word, token, model.vocab.label(token)))
    return WordSet(name, list(kept.values()), [SkippedWord(w, why) for w, why in why_not.items()])


def require_set(model: EmbeddingModel, words: Sequence[str], name: str) -> WordSet:
    """`match_set`, refusing in one sentence a list that is empty or keeps no word."""
    found = match_set(model, words, name)
    if not found.kept:
        if not found.dropped:
            raise EmbvizError(f"{name} is empty: give it at least one word.")
        why = "; ".join(f"'{visible(s.word)}' {s.reason}" for s in found.dropped[:3])
        more = f" (and {len(found.dropped) - 3} more)" if len(found.dropped) > 3 else ""
        raise EmbvizError(f"{name} keeps none of its words in {model.name}: {why}{more}.")
    return found


def unit_rows64(model: EmbeddingModel, ids: Sequence[int]) -> np.ndarray:
    """The rows `ids` divided by their lengths, in float64: a few dozen rows, so the cosines
    that WEAT sums carry no float32 rounding of their own."""
    rows = model.rows(list(ids)).double().cpu().numpy()
    unit: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


def _normalised(vector: np.ndarray, what: str) -> np.ndarray:
    length = float(np.linalg.norm(vector))
    if not np.isfinite(length) or length < 1e-12:
        raise EmbvizError(f"{what} is the zero vector here, so it points nowhere.")
    unit: np.ndarray = vector / length
    return unit


def two_word_direction(model: EmbeddingModel, start: str, end: str) -> tuple[np.ndarray, list[WordSet]]:
    """unit(to − from) of the two words' unit rows, and the two one-word sets."""
    sets = [require_set(model, [start], f"The 'from' word '{visible(start)}'"),
            require_set(model, [end], f"The 'to' word '{visible(end)}'")]
    a, b = unit_rows64(model, [sets[0].ids[0], sets[1].ids[0]])
    return _normalised(b - a, f"{visible(end)} − {visible(start)}"), sets


def _pair_rows(model: EmbeddingModel, pairs: Sequence[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray, list[WordSet]]:
    """(from rows, to rows) of the pairs whose two words both have a token, unit length."""
    if not pairs:
        raise EmbvizError("Give at least one word pair (from:to).")
    froms = match_set(model, [a for a, _ in pairs], "The pairs' 'from' words")
    tos = match_set(model, [b for _, b in pairs], "The pairs' 'to' words")
    token = word_tokens(model, [w for pair in pairs for w in pair])[0]  # every word, "Man" beside "man" too
    clean = [(_clean(a), _clean(b)) for a, b in pairs]
    whole = [(token[a], token[b]) for a, b in clean if a in token and b in token]
    if not whole:
        missing = "; ".join(f"'{visible(s.word)}' {s.reason}" for s in (froms.dropped + tos.dropped)[:3])
        raise EmbvizError(f"None of the {len(pairs)} pairs has both words in {model.name}: {missing}.")
    rows = unit_rows64(model, [i for pair in whole for i in pair])
    return rows[0::2], rows[1::2], [froms, tos]


def pairs_direction(model: EmbeddingModel, pairs: Sequence[tuple[str, str]]) -> tuple[np.ndarray, list[WordSet]]:
    """unit(mean over the pairs of (to − from)) of unit rows."""
    a, b, sets = _pair_rows(model, pairs)
    return _normalised((b - a).mean(axis=0), "The pairs' mean difference"), sets


def pairs_pca(model: EmbeddingModel, pairs: Sequence[tuple[str, str]]) -> tuple[np.ndarray, float, list[WordSet]]:
    """Bolukbasi et al.'s direction: the first principal component of the pairs' unit rows,
    each pair centred on its own mean (`doPCA`: rows a − c and b − c, c = (a + b)/2), and the
    share of their variance it explains. Its sign is arbitrary in the PCA; here it points the
    way the pairs' mean difference (to − from) points, so "from → to" reads the same as without."""
    a, b, sets = _pair_rows(model, pairs)
    centre = (a + b) / 2
    matrix = np.concatenate([a - centre, b - centre])
    matrix = matrix - matrix.mean(axis=0)  # sklearn's PCA centres again (a no-op here, kept to match it)
    _, singular, vt = np.linalg.svd(matrix, full_matrices=False)
    total = float((singular ** 2).sum())
    if total < 1e-24:
        raise EmbvizError("Each pair's two words are the same row here, so the pairs point nowhere.")
    pc = vt[0]
    if float(pc @ (b - a).mean(axis=0)) < 0:
        pc = -pc
    return pc / np.linalg.norm(pc), float(singular[0] ** 2) / total, sets


def sets_direction(model: EmbeddingModel, a_set: Sequence[str], b_set: Sequence[str]) -> tuple[np.ndarray, list[WordSet]]:
    """unit(mean of B's unit rows − mean of A's), TF Projector's custom projection."""
    a, b = require_set(model, a_set, "Set A"), require_set(model, b_set, "Set B")
    mean_a = unit_rows64(model, a.ids).mean(axis=0)
    mean_b = unit_rows64(model, b.ids).mean(axis=0)
    return _normalised(mean_b - mean_a, "mean of B − mean of A"), [a, b]


def direction_scores(model: EmbeddingModel, direction: np.ndarray) -> torch.Tensor:
    """The cosine of every row with the unit direction: (V,) on the model's device."""
    g = torch.as_tensor(np.asarray(direction, dtype=np.float32), device=model.device)
    return matmul(unit_table(model), g)


def ranked_rows(model: EmbeddingModel, words_only: bool = True) -> np.ndarray:
    """The rows a direction ranks: those with a direction (not NaN, Inf or all zeros), not
    special tokens, and only whole words unless asked otherwise."""
    finite, zero = row_checks(model.table, row_norms(model))
    keep: np.ndarray = (finite & ~zero).cpu().numpy() & model.vocab.mask(hide_special=True, words_only=words_only)
    return keep


def direct_bias(model: EmbeddingModel, ids: Sequence[int], direction: np.ndarray, c: float = 1.0) -> float:
    """DirectBias (Bolukbasi et al. 2016): the mean of |cos(w, g)|^c over the words w."""
    if not len(ids):
        raise EmbvizError("DirectBias needs at least one word.")
    if not c > 0:
        raise EmbvizError(f"DirectBias's strictness c must be positive (got {c}).")
    cosines = unit_rows64(model, ids) @ np.asarray(direction, dtype=np.float64)
    return float(np.mean(np.abs(cosines) ** c))


def _describe(kind: str, sets: list[WordSet]) -> str:
    names = [", ".join(w.word for w in s.kept) for s in sets]
    return f"{names[0]} → {names[1]}" if kind == "words" else f"{{{names[0]}}} → {{{names[1]}}}"


def direction_view(
    model: EmbeddingModel,
    direction: np.ndarray,
    kind: str,
    sets: list[WordSet],
    explained: float | None = None,
    top: int = 20,
    words: Sequence[str] = (),
    words_only: bool = True,
) -> DirectionResult:
    """The vocabulary ranked by cosine with the unit direction, both ends, and the chosen
    words placed on it (by cosine, with their rank among the rows ranked)."""
    top = check_k(top, model.vocab_size)
    scores = direction_scores(model, direction)
    keep = ranked_rows(model, words_only)
    ranked = int(keep.sum())
    if ranked == 0:
        raise EmbvizError("No row of this vocabulary is ranked: none is a whole word with a direction.")
    toward = top_k(model, scores, top, keep=keep)
    away = [Hit(h.id, h.token, -h.score, h.text) for h in top_k(model, -scores, top, keep=keep)]
    placed_set = match_set(model, list(words), "The words placed")
    kept_scores = scores[torch.as_tensor(keep, device=scores.device)]
    cosines = unit_rows64(model, placed_set.ids) @ direction if placed_set.kept else np.zeros(0)
    placed = []
    for w, cosine in zip(placed_set.kept, cosines.tolist()):
        rank = int((kept_scores > scores[w.id]).sum()) + 1 if keep[w.id] else None
        placed.append(PlacedWord(w.word, w.id, w.label, float(cosine), rank))
    bias = float(np.mean(np.abs(cosines))) if placed else None  # DirectBias, c = 1
    return DirectionResult(kind, _describe(kind, sets), [float(x) for x in direction], explained, toward, away, ranked,
                           words_only, placed, sets + ([placed_set] if words else []), bias, matching_rule(model))


def concept_direction(
    model: EmbeddingModel,
    *,
    start: str = "",
    end: str = "",
    pairs: Sequence[tuple[str, str]] = (),
    a_set: Sequence[str] = (),
    b_set: Sequence[str] = (),
    pca: bool = False,
    top: int = 20,
    words: Sequence[str] = (),
    words_only: bool = True,
) -> DirectionResult:
    """One direction from whichever input is given (two words, pairs, or two sets), ranked."""
    given = [bool(start or end), bool(pairs), bool(a_set or b_set)]
    if sum(given) != 1:
        raise EmbvizError("Give one kind of input: two words (from, to), word pairs, or two word sets (A, B).")
    if given[0] and not (start.strip() and end.strip()):
        raise EmbvizError("A direction from two words needs both: the 'from' word and the 'to' word.")
    if pca and not pairs:
        raise EmbvizError("The principal component (Bolukbasi et al.) is taken of word pairs: give pairs.")
    explained = None
    if given[0]:
        direction, sets = two_word_direction(model, start, end)
        kind = "words"
    elif given[1]:
        if pca:
            direction, explained, sets = pairs_pca(model, pairs)
        else:
            direction, sets = pairs_direction(model, pairs)
        kind = "pca" if pca else "pairs"
    else:
        direction, sets = sets_direction(model, a_set, b_set)
        kind = "sets"
    return direction_view(model, direction, kind, sets, explained, top, words, words_only)
