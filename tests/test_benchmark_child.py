"""The analogy benchmark in a child process: the same answers as in this one, progress that
comes back, a cancel that stops it, and one sentence when the file no longer holds the model."""

from __future__ import annotations

import numpy as np
import pytest

from embviz.core import EmbvizError, open_checkpoint
from embviz.core.errors import Cancelled
from embviz.core.table.analogy_benchmark import evaluate, evaluate_in_child, read_questions

WORDS = [f"w{i}" for i in range(40)]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))


def write_vectors(path, seed: int) -> None:
    vecs = np.random.default_rng(seed).normal(size=(len(WORDS), 6)).astype(np.float32)
    path.write_text("\n".join(w + " " + " ".join(f"{x:.7g}" for x in v) for w, v in zip(WORDS, vecs)) + "\n",
                    encoding="utf-8")


def write_questions(path) -> None:
    rng = np.random.default_rng(1)
    lines = []
    for section in ("first", "second"):
        lines.append(f": {section}")
        lines += [" ".join(f"w{j}" for j in rng.choice(len(WORDS), 4, replace=False)) for _ in range(30)]
    lines.append("w1 w2 w3 missing")  # not four single tokens: counted, not kept
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_the_child_answers_as_this_process_does_and_reports_progress(tmp_path):
    vectors, questions = tmp_path / "vectors.txt", tmp_path / "questions.txt"
    write_vectors(vectors, 0)
    write_questions(questions)
    model = open_checkpoint(str(vectors), "cpu")
    seen = []
    result = evaluate_in_child(model, questions, lambda f, stage, _p: seen.append((f, stage)))
    assert result.as_dict() == evaluate(model, read_questions(questions)).as_dict()
    assert result.total == 61 and result.kept == 60 and [s.name for s in result.sections] == ["first", "second"]
    assert seen and all(0.0 <= f <= 1.0 for f, _ in seen)


def test_a_cancel_stops_the_child(tmp_path):
    vectors = tmp_path / "vectors.txt"
    write_vectors(vectors, 0)
    model = open_checkpoint(str(vectors), "cpu")

    def cancel(_f, _stage, _p):
        raise Cancelled()

    with pytest.raises(Cancelled):
        evaluate_in_child(model, None, cancel)


def test_a_file_that_no_longer_holds_the_model_gets_one_sentence(tmp_path):
    vectors, questions = tmp_path / "vectors.txt", tmp_path / "questions.txt"
    write_vectors(vectors, 0)
    write_questions(questions)
    model = open_checkpoint(str(vectors), "cpu")
    write_vectors(vectors, 1)  # other numbers for the same words
    with pytest.raises(EmbvizError, match="no longer holds the model on screen"):
        evaluate_in_child(model, questions)
