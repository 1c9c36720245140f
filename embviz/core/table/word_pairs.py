"""Human similarity judgements and the odd one out: the table's cosines against people's
ratings of word pairs (gensim's `evaluate_word_pairs`), and the word of a few that does not
belong (gensim's `doesnt_match`).

Words are matched to tokens by the rule the analogy benchmark and Compare state: a word is
its mid-sentence token (`␣cup`) where the vocabulary marks words with a leading space, and is
lower-cased first where the vocabulary has no capitals (GloVe). A word that is several tokens
here is skipped and named; averaging its pieces would score a vector that is no token.

WordSim-353 (Finkelstein et al. 2002, relatedness) and SimLex-999 (Hill, Reichart and
Korhonen 2015, similarity) are read from the copies gensim ships in its test data."""

from __future__ import annotations

import io
import itertools
import math
from importlib import resources
from pathlib import Path

import numpy as np
import torch

from embviz.core.errors import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.readers.regular_file import open_regular, shown
from embviz.core.table.analogy_benchmark import token_form
from embviz.core.table.results import OddOneOut, PairScores, ScoredPair, SkippedWord, WordPairCosine
from embviz.core.table.vocab import visible

# name → (file in gensim's test data, how it is cited)
DATASETS = {
    "wordsim353": ("wordsim353.tsv", "WordSim-353",
                   "WordSim-353: Finkelstein et al., Placing Search in Context (2002); relatedness, 0–10"),
    "simlex999": ("simlex999.txt", "SimLex-999",
                  "SimLex-999: Hill, Reichart and Korhonen, Computational Linguistics 41(4) (2015); similarity, 0–10"),
}
MAX_PAIRS = 100_000  # the largest published sets hold a few thousand (SimVerb-3500, MEN's 3,000)
MAX_LINE = 4096  # characters of one line read at most: a pair of words and a number need far fewer
MIN_PAIRS = 3  # a correlation of fewer pairs says nothing
MIN_WORDS = 3  # the odd one out of two is no question


def dataset_path(name: str) -> Path:
    """The file of a dataset gensim ships, found through its package (gensim installed)."""
    if name not in DATASETS:
        raise EmbvizError(f"No dataset named {name!r}; there are {', '.join(DATASETS)}, or give a file.")
    try:
        folder = resources.files("gensim") / "test" / "test_data"
    except ModuleNotFoundError:
        raise EmbvizError(f"{DATASETS[name][1]} comes with gensim, which is not installed "
                          "(pip install gensim); a file of 'word1 word2 score' lines works without it.") from None
    return Path(str(folder / DATASETS[name][0]))


def read_pairs(path: Path | str, limit: int = MAX_PAIRS) -> list[tuple[str, str, float]]:
    """The (word1, word2, rating) lines of a file of `word1 word2 score` lines (tabs or spaces;
    '#' starts a comment line), at most `limit` of them, read a line at a time. Anything else
    is refused in one sentence that names the line."""
    name = shown(Path(path).name)
    pairs: list[tuple[str, str, float]] = []
    with open_regular(path) as raw:
        stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", newline=None)
        for number in itertools.count(1):
            try:
                line = stream.readline(MAX_LINE)
            except UnicodeDecodeError:
                raise EmbvizError(f"{name} is not UTF-8 text (line {number}).") from None
            if not line:
                break
            if len(line) >= MAX_LINE and not line.endswith("\n"):
                raise EmbvizError(f"Line {number} of {name} is longer than {MAX_LINE:,} characters; "
                                  "a pair file has lines of 'word1 word2 score'.")
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) != 3:
                raise EmbvizError(f"Line {number} of {name} has {len(parts)} column{'s' * (len(parts) != 1)}; "
                                  "a pair file has three: word1 word2 score.")
            rating = _number(parts[2])
            if rating is None:
                raise EmbvizError(f"Line {number} of {name}: the score {visible(parts[2])!r} is not a finite number.")
            if len(pairs) == limit:
                raise EmbvizError(f"{name} holds more than {limit:,} pairs, the most embviz reads "
                                  "(WordSim-353 has 353, SimLex-999 999).")
            pairs.append((parts[0], parts[1], rating))
    if not pairs:
        raise EmbvizError(f"{name} holds no pairs: lines of 'word1 word2 score' were expected.")
    return pairs


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def matching_rule(model: EmbeddingModel) -> str:
    """How a listed word finds its token here, in one sentence (Compare's and the analogy benchmark's rule)."""
    vocab = model.vocab
    rule = ("each word is its space-prefixed token ('cup' is '␣cup'), as a word reads mid-sentence"
            if vocab.space_prefixed else "each word is the token with exactly its text")
    if vocab.lowercased:
        rule += "; the vocabulary has no capitals, so words are lower-cased first"
    return rule[0].upper() + rule[1:] + "; a word that is several tokens here is skipped."


def match_word(model: EmbeddingModel, word: str) -> tuple[int | None, str]:
    """(the word's token by the stated rule, "") or (None, why it has none)."""
    vocab = model.vocab
    form = word.lower() if vocab.lowercased else word
    token = token_form(model, form)
    if token is not None and token not in vocab.special_ids:
        return token, ""
    text = (" " if vocab.space_prefixed else "") + form
    if vocab.has_tokenizer:
        try:
            pieces = vocab.encode(text)
        except EmbvizError as exc:
            return None, str(exc)
        if len(pieces) > 1:
            return None, f"is {len(pieces)} tokens here: " + " + ".join(vocab.label(p) for p in pieces)
    return None, "is not in the vocabulary"


def directed(model: EmbeddingModel, ids: list[int]) -> np.ndarray:
    """Which rows have a direction (finite and not all zeros): the others have no cosine."""
    rows = model.rows(ids).float()
    return (torch.isfinite(rows).all(dim=1) & (rows != 0).any(dim=1)).cpu().numpy()


def unit_rows_of(model: EmbeddingModel, ids: list[int]) -> torch.Tensor:
    """The rows of `ids` scaled to length 1 in float32, as gensim's unitvec scales them."""
    rows = model.rows(ids).float().cpu()
    unit: torch.Tensor = rows / torch.linalg.vector_norm(rows, dim=1, keepdim=True)
    return unit


def score_pairs(model: EmbeddingModel, pairs: list[tuple[str, str, float]], source: str) -> PairScores:
    """The model's cosine of every pair whose words are each one token with a direction here,
    and how they correlate with the ratings (what gensim's evaluate_word_pairs reports)."""
    found: dict[str, tuple[int | None, str]] = {}
    for w1, w2, _ in pairs:
        for word in (w1, w2):
            if word not in found:
                found[word] = match_word(model, word)
    matched = sorted({t for t, _ in found.values() if t is not None})
    has_direction = dict(zip(matched, directed(model, matched).tolist())) if matched else {}
    for word, (token, _) in found.items():
        if token is not None and not has_direction[token]:
            found[word] = (None, "has no direction here (its row is NaN, Inf or all zeros)")
    kept = [(w1, w2, r) for w1, w2, r in pairs if found[w1][0] is not None and found[w2][0] is not None]
    skipped = [SkippedWord(w, why) for w, (t, why) in found.items() if t is None]
    if len(kept) < MIN_PAIRS:
        missing = ", ".join(f"'{visible(s.word)}' {s.reason}" for s in skipped[:3])
        raise EmbvizError(f"Only {len(kept)} of the {len(pairs):,} pairs of {source} have both words as one token "
                          f"in {model.name}, and a correlation needs {MIN_PAIRS}: {missing}.")
    token_of = {word: token for word, (token, _) in found.items() if token is not None}
    ids1 = [token_of[w1] for w1, _, _ in kept]
    ids2 = [token_of[w2] for _, w2, _ in kept]
    cosines = (unit_rows_of(model, ids1) * unit_rows_of(model, ids2)).sum(dim=1).numpy().astype(np.float64)
    ratings = np.array([r for _, _, r in kept], dtype=np.float64)
    pearson, spearman, line, notes = _correlations(ratings, cosines)
    residuals = cosines - (line[0] + line[1] * ratings)
    vocab = model.vocab
    scored = [ScoredPair(w1, w2, (int(a), int(b)), (vocab.label(int(a)), vocab.label(int(b))), float(r), float(c), float(d))
              for (w1, w2, r), a, b, c, d in zip(kept, ids1, ids2, cosines, residuals)]
    order = np.argsort(-np.abs(residuals), kind="stable")
    return PairScores(source, model.name, len(pairs), [scored[i] for i in order], len(pairs) - len(kept), skipped,
                      pearson, spearman, line, matching_rule(model), notes)


def _correlations(ratings: np.ndarray, cosines: np.ndarray) -> tuple[float | None, float | None, tuple[float, float], list[str]]:
    from scipy import stats

    if np.ptp(ratings) == 0 or np.ptp(cosines) == 0:
        same = "rating" if np.ptp(ratings) == 0 else "cosine"
        return None, None, (float(cosines.mean()), 0.0), [f"Every pair kept has the same {same}: no correlation."]
    slope, intercept = np.polyfit(ratings, cosines, 1)
    return (float(stats.pearsonr(ratings, cosines)[0]), float(stats.spearmanr(ratings, cosines)[0]),
            (float(intercept), float(slope)), [])


def pair_cosine(model: EmbeddingModel, word1: str, word2: str) -> WordPairCosine:
    """One pair of the user's, matched by the same rule; a word with no single token is named."""
    ids = _tokens(model, [word1, word2])
    cosine = (unit_rows_of(model, ids[:1]) * unit_rows_of(model, ids[1:])).sum().item()
    vocab = model.vocab
    return WordPairCosine((word1, word2), (ids[0], ids[1]), (vocab.label(ids[0]), vocab.label(ids[1])), float(cosine))


def _tokens(model: EmbeddingModel, words: list[str]) -> list[int]:
    """Each word's token by the stated rule (`␣` or a leading space typed means exactly that
    token's space); one sentence naming every word without one, or without a direction."""
    ids, missing = [], []
    for word in words:
        token, why = match_word(model, word.replace("␣", " ").strip())
        if token is None:
            missing.append(f"'{visible(word)}' {why}")
        else:
            ids.append(token)
    if missing:
        raise EmbvizError(f"Every word must be one token here: {'; '.join(missing)}.")
    flat = [w for w, ok in zip(words, directed(model, ids)) if not ok]
    if flat:
        raise EmbvizError(f"{', '.join(flat)} ha{'s' if len(flat) == 1 else 've'} no direction here "
                          "(a row of NaN, Inf or zeros), so no cosine.")
    return ids


def odd_one_out(model: EmbeddingModel, words: list[str]) -> OddOneOut:
    """The word that does not belong, by gensim's doesnt_match rule on the same unit rows,
    and each word's cosine to the mean of the others; unknown words are refused by name."""
    words = [w for w in words if w.strip()]
    if len(words) < MIN_WORDS:
        raise EmbvizError(f"Give at least {MIN_WORDS} words (got {len(words)}): the odd one out needs others to differ from.")
    ids = _tokens(model, words)
    repeated = sorted({w for w, i in zip(words, ids) if ids.count(i) > 1})
    if repeated:
        raise EmbvizError(f"{', '.join(repeated)} name the same token more than once; give distinct words.")
    units = unit_rows_of(model, ids)
    total = units.sum(dim=0)
    mean = total / torch.linalg.vector_norm(total)
    to_mean = (units @ mean).tolist()
    others = total[None, :] - units
    to_others = ((units * others).sum(dim=1) / torch.linalg.vector_norm(others, dim=1)).tolist()
    # gensim sorts (score, word) pairs: a tie goes to the word that sorts first
    outsider = min(range(len(words)), key=lambda i: (to_mean[i], words[i]))
    return OddOneOut(list(words), [int(i) for i in ids], [model.vocab.label(int(i)) for i in ids], to_others, to_mean,
                     outsider)
