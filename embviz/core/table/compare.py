"""Two models side by side: which tokens they share, and how alike each shared token's
neighbourhood is in the two (MIT's Embedding Comparator, exact and for every token).

Tokens are matched by their text. Two conventions are bridged, each said in the result's
`rule`: a tokenizer that marks a word mid-sentence with a leading space (" king") meets a
word list without one ("king") through its space-prefixed tokens, the space dropped; and a
vocabulary with no capitals (GloVe) meets the other side lower-cased, one token per word.
Rows that are NaN, Inf or all zeros have no direction: such tokens are left out, with a note.

Neighbourhoods are the k nearest by cosine *among the shared tokens* in each model, so both
sides choose from the same candidates; a token's score is the Jaccard of its two sets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.maps.knn import self_top_k, unit_rows
from embviz.core.model import EmbeddingModel
from embviz.core.output_table import output_table
from embviz.core.table.compare_k import DEFAULT_K, K_RANGE
from embviz.core.table.neighbours import nearest_exact, self_neighbours
from embviz.core.table.similarity import unit_table
from embviz.core.table.vocab import visible

KEPT_COMPARISONS = 4  # their neighbour lists: 2 × rows × k ids each


@dataclass(frozen=True, eq=False)  # holds arrays and models: compared by identity
class SharedTokens:
    """The tokens both models have, rows aligned: `ids_a[i]` and `ids_b[i]` are one word."""

    ids_a: np.ndarray
    ids_b: np.ndarray
    words: list[str]  # the form they were matched on ("king")
    only_a: int  # rows of A left out: no match, special, byte piece, another case of a kept word, bad row
    only_b: int
    rule: str  # how texts were matched, in one sentence
    notes: list[str] = field(default_factory=list)

    @property
    def count(self) -> int:
        return int(self.ids_a.size)


def _forms(model: EmbeddingModel, strip_space: bool, lower: bool,
           wanted: dict[str, list[int]] | None = None) -> dict[str, list[int]]:
    """Form → the rows spelling it, in id order; only forms in `wanted` when given (a
    400,000-word list is then only looked up). With `strip_space` only tokens with one
    leading space take part (" king" → "king"): the others start a text or continue a word."""
    vocab = model.vocab
    skip = vocab.special_ids | vocab.partial_ids
    forms: dict[str, list[int]] = {}
    for i, text in enumerate(vocab.texts):
        if strip_space:
            if text[:1] != " " or text[1:2] == " ":
                continue
            text = text[1:]
        form = text.lower() if lower else text
        if (wanted is None or form in wanted) and i not in skip and text.strip():
            forms.setdefault(form, []).append(i)
    return forms


def _pick(model: EmbeddingModel, rows: list[int], form: str, strip_space: bool) -> int:
    """Of several rows that lower-case to one word, the one already in its case (" king"
    over " King"), else the lowest id (a BPE vocabulary's most frequent spelling)."""
    prefix = " " if strip_space else ""
    return next((i for i in rows if model.vocab.texts[i] == prefix + form), rows[0])


def _convention(a: EmbeddingModel, b: EmbeddingModel, fold_case: bool) -> tuple[bool, bool, bool, bool, str]:
    """(strip A's space, strip B's, lower-case A, lower-case B, the rule in words)."""
    a_space, b_space = a.vocab.space_prefixed, b.vocab.space_prefixed
    strip_a, strip_b = a_space and not b_space, b_space and not a_space
    a_low, b_low = a.vocab.lowercased, b.vocab.lowercased
    lower_a, lower_b = fold_case and b_low and not a_low, fold_case and a_low and not b_low
    rule = "Exact texts on both sides"
    if strip_a or strip_b:
        spaced, plain = ("A", "B") if strip_a else ("B", "A")
        rule = (f"{spaced}'s space-prefixed tokens (' king') match {plain}'s words ('king'), the space dropped; "
                f"{spaced}'s tokens without a leading space are left out")
    if lower_a or lower_b:
        upper, lower = ("A", "B") if lower_a else ("B", "A")
        rule += (f"; {lower} has no capitals, so {upper}'s texts are lower-cased, keeping one token per word "
                 f"(the one already lower-case, else the lowest id)")
    return strip_a, strip_b, lower_a, lower_b, rule + "."


def shared_tokens(a: EmbeddingModel, b: EmbeddingModel, fold_case: bool = True) -> SharedTokens:
    """The tokens of A and B with the same text, under the rule `SharedTokens.rule` states."""
    strip_a, strip_b, lower_a, lower_b, rule = _convention(a, b, fold_case)
    forms_a = _forms(a, strip_a, lower_a)
    forms_b = _forms(b, strip_b, lower_b, wanted=forms_a)
    words = [w for w in forms_a if w in forms_b]
    notes = []
    if lower_a or lower_b:
        folded = sum(len((forms_a if lower_a else forms_b)[w]) for w in words)
        notes.append(f"{folded:,} tokens of {'A' if lower_a else 'B'} lower-case to one of the "
                     f"{len(words):,} shared words; one token per word is kept.")
    ids_a = np.array([_pick(a, forms_a[w], w, strip_a) for w in words], dtype=np.int64)
    ids_b = np.array([_pick(b, forms_b[w], w, strip_b) for w in words], dtype=np.int64)
    good = directed_rows(a, ids_a) & directed_rows(b, ids_b)
    if not good.all():
        dropped = [visible(w) for w, ok in zip(words, good) if not ok]
        notes.append(f"{len(dropped):,} shared tokens left out: their row is NaN, Inf or all zeros in A or B "
                     f"({', '.join(dropped[:5])}{', …' if len(dropped) > 5 else ''}).")
        ids_a, ids_b, words = ids_a[good], ids_b[good], [w for w, ok in zip(words, good) if ok]
    n = len(words)
    return SharedTokens(ids_a, ids_b, words, a.vocab_size - n, b.vocab_size - n, rule, notes)


def directed_rows(model: EmbeddingModel, ids: np.ndarray) -> np.ndarray:
    """Which of the rows `ids` have a direction (finite and not all zeros)."""
    rows = model.table.index_select(0, torch.as_tensor(ids, device=model.table.device))
    return (torch.isfinite(rows).all(dim=1) & (rows != 0).any(dim=1)).cpu().numpy()


def check_comparable(shared: SharedTokens, k: int) -> int:
    """k, once the shared tokens can have k neighbours each; else one sentence why not."""
    n = shared.count
    if n == 0:
        raise EmbvizError(f"The two models share no tokens; {shared.rule[0].lower()}{shared.rule[1:]}")
    if n == 1:
        raise EmbvizError(f"The two models share only one token ('{visible(shared.words[0])}'): "
                          "a neighbourhood needs at least two.")
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not K_RANGE[0] <= k <= K_RANGE[1]:
        raise EmbvizError(f"k must be a whole number from {K_RANGE[0]} to {K_RANGE[1]} (got {k!r}).")
    if k > n - 1:
        raise EmbvizError(f"k = {k} needs at least {k + 1} shared tokens; these models share {n}.")
    return int(k)


@dataclass(frozen=True, eq=False)  # holds arrays and models: compared by identity
class Comparison:
    """Each shared token's k nearest among the shared tokens in A and in B (positions into
    `shared`, best first) and the Jaccard of the two sets; the tables' global likeness."""

    shared: SharedTokens
    k: int
    neighbours_a: np.ndarray  # (n, k)
    neighbours_b: np.ndarray
    jaccard: np.ndarray  # (n,)
    cka: float | None  # linear CKA of the shared unit rows; None where undefined (CKA_UNDEFINED)
    procrustes: np.ndarray | None  # (n,) cosine distance after rotating A onto B; None for unequal widths

    @property
    def mean_jaccard(self) -> float:
        return float(self.jaccard.mean())


def compare(a: EmbeddingModel, b: EmbeddingModel, shared: SharedTokens, k: int = DEFAULT_K,
            progress: ProgressFn = no_progress, threads: int | None = None) -> Comparison:
    """Exact, for every shared token: each model's k nearest, cancellable at each progress
    report. On the CPU the neighbour search takes `threads` threads (every core when None:
    the window only waits on it); on a GPU, chunked products and top-k."""
    k = check_comparable(shared, k)
    rows_a, rows_b = unit_rows(a, shared.ids_a), unit_rows(b, shared.ids_b)
    near_a = _all_nearest(rows_a, k, progress, (0.0, 0.45), "neighbours in A", threads)
    near_b = _all_nearest(rows_b, k, progress, (0.45, 0.9), "neighbours in B", threads)
    x, y = rows_a.cpu().numpy(), rows_b.cpu().numpy()
    result = Comparison(shared, k, near_a, near_b, jaccard(near_a, near_b), linear_cka(x, y),
                        procrustes_distances(x, y) if x.shape[1] == y.shape[1] else None)
    progress(1.0, "compared", None)
    return result


def _all_nearest(rows: torch.Tensor, k: int, progress: ProgressFn, span: tuple[float, float], stage: str,
                 threads: int | None) -> np.ndarray:
    if rows.device.type == "cpu":
        return self_neighbours(rows, k, progress, span, stage, threads)
    return self_top_k(rows, k, progress, span, stage)[0]


def jaccard(near_a: np.ndarray, near_b: np.ndarray) -> np.ndarray:
    """|A ∩ B| / |A ∪ B| of each row's two neighbour sets (each row's k ids are distinct)."""
    both = np.sort(np.concatenate([near_a, near_b], axis=1), axis=1)
    common = (both[:, 1:] == both[:, :-1]).sum(axis=1)
    shared: np.ndarray = common / (near_a.shape[1] + near_b.shape[1] - common)
    return shared


CKA_UNDEFINED = ("Linear CKA is undefined here: the shared rows of one table are all the same direction, "
                 "so it has no variance to compare.")


def linear_cka(x: np.ndarray, y: np.ndarray) -> float | None:
    """Linear CKA (Kornblith et al. 2019) of two row-aligned tables, widths free: 1 when one
    is a rotation and scaling of the other. Through the D × D products, never n × n. None when
    a table's centred rows are all zero (every row the same): 0 / 0, no number (CKA_UNDEFINED)."""
    x = x.astype(np.float64) - x.mean(axis=0, dtype=np.float64)
    y = y.astype(np.float64) - y.mean(axis=0, dtype=np.float64)
    scale = np.linalg.norm(x.T @ x) * np.linalg.norm(y.T @ y)
    if not scale > 0:
        return None
    return float(np.linalg.norm(y.T @ x) ** 2 / scale)


def procrustes_distances(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each unit row's cosine distance to its partner after the best rotation of X onto Y."""
    from scipy.linalg import orthogonal_procrustes

    rotation, _ = orthogonal_procrustes(x.astype(np.float64), y.astype(np.float64))
    turned = x.astype(np.float64) @ rotation
    distance: np.ndarray = 1.0 - (turned * y).sum(axis=1)
    return distance


@dataclass(frozen=True)
class Dominoes:
    """One shared token's neighbours, split: in both models' lists, only A's, only B's
    (positions into the shared tokens, each list in its model's order, nearest first)."""

    index: int
    jaccard: float
    common: list[int]
    only_a: list[int]
    only_b: list[int]


def dominoes(index: int, near_a: np.ndarray, near_b: np.ndarray) -> Dominoes:
    in_a, in_b = set(near_a.tolist()), set(near_b.tolist())
    common = [p for p in near_a.tolist() if p in in_b]
    return Dominoes(index, len(common) / len(in_a | in_b), common,
                    [p for p in near_a.tolist() if p not in in_b], [p for p in near_b.tolist() if p not in in_a])


def token_dominoes(a: EmbeddingModel, b: EmbeddingModel, shared: SharedTokens, index: int,
                   k: int = DEFAULT_K) -> Dominoes:
    """One token's dominoes without the whole comparison: one row of products per model."""
    k = check_comparable(shared, k)
    return dominoes(index, _nearest_shared(a, shared.ids_a, index, k), _nearest_shared(b, shared.ids_b, index, k))


def _nearest_shared(model: EmbeddingModel, ids: np.ndarray, index: int, k: int) -> np.ndarray:
    units = unit_table(model)
    if units.device.type == "cpu":  # ranked exactly as `compare` ranks them
        return nearest_exact(units.index_select(0, torch.as_tensor(ids)), index, k)
    scores = units[torch.as_tensor(ids, device=units.device)] @ units[int(ids[index])]
    scores[index] = -torch.inf  # a token is not its own neighbour
    return torch.topk(scores, k).indices.cpu().numpy()


def find_shared(a: EmbeddingModel, b: EmbeddingModel, shared: SharedTokens, word: str) -> int:
    """The position of a typed token among the shared ones: A's exact text (' king'), the
    shared word ('king') or B's exact text, in that order."""
    for texts in ([a.vocab.texts[i] for i in shared.ids_a], shared.words, [b.vocab.texts[i] for i in shared.ids_b]):
        if word in texts:
            return texts.index(word)
    raise EmbvizError(f"'{visible(word)}' is not one of the {shared.count:,} tokens the two models share.")


@dataclass(frozen=True, eq=False)  # holds arrays and models: compared by identity
class ModelPair:
    """A first model, a second beside it, and the tokens they share (matched once, on opening)."""

    a: EmbeddingModel
    b: EmbeddingModel
    shared: SharedTokens
    names: tuple[str, str]  # what the text and charts call A and B
    kept: dict[int, Comparison] = field(default_factory=dict)  # by k, the latest last

    def comparison(self, k: int = DEFAULT_K, progress: ProgressFn = no_progress) -> Comparison:
        """The comparison at k, kept for the last few k asked: a class stepping k back and
        forth waits seconds only the first time."""
        k = check_comparable(self.shared, k)
        found = self.kept.pop(k, None)
        if found is None:
            found = compare(self.a, self.b, self.shared, k, progress)
        self.kept[k] = found
        while len(self.kept) > KEPT_COMPARISONS:
            self.kept.pop(next(iter(self.kept)))
        return found


def pair_models(a: EmbeddingModel, b: EmbeddingModel, names: tuple[str, str] | None = None) -> ModelPair:
    return ModelPair(a, b, shared_tokens(a, b), names or (a.name, b.name))


def heads_of(a: EmbeddingModel, b: EmbeddingModel) -> ModelPair:
    """Both models' output heads (untied ones'), matched token by token as their input tables are."""
    for model in (a, b):
        if model.head is None:
            raise EmbvizError(f"{model.name}'s output head is its input table (tied): compare the input tables.")
    return pair_models(output_table(a), output_table(b))


def own_tables(model: EmbeddingModel) -> ModelPair:
    """The model's input table beside its own output head (no file read): one vocabulary, so
    every token that takes part is shared; a tied model refuses in one sentence (TIED)."""
    head = output_table(model)
    return pair_models(model, head, (f"{model.name} (input table)", head.name))
