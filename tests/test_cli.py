"""The command line, run as a real subprocess: JSON shapes, exit codes, messages."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "embviz", *args], capture_output=True, text=True, timeout=600)


def run_json(*args: str) -> dict:
    proc = run(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_info_json(default_model):
    info = run_json("info")
    assert info["vocab_size"] == 49152 and info["dim"] == 576 and info["tied"] is True
    assert info["device"] == "cpu" or info["device"].startswith("cuda")
    assert info["embedding_share"] == pytest.approx(49152 * 576 / info["total_params"])


def test_neighbors_json_shape(default_model):
    out = run_json("neighbors", " Monday", "--k", "3")
    assert [set(r) for r in out["results"]] == [{"id", "token", "label", "score"}] * 3
    tokens = {r["token"]: r["label"] for r in out["results"]}
    assert tokens[" Tuesday"] == "␣Tuesday"  # "token" is the exact text, "label" the display form
    # What comes back can be fed back in.
    again = run_json("neighbors", " Tuesday", "--k", "3")
    assert " Monday" in [r["token"] for r in again["results"]]


def test_hide_special_gives_the_windows_answer():
    from embviz.core import open_checkpoint
    from embviz.bridge.handlers import run_request
    from embviz.bridge.requests import Neighbours

    literal = run_json("--model", "spells", "neighbors", "I", "--k", "4")
    hidden = run_json("--model", "spells", "neighbors", "I", "--k", "4", "--hide-special")
    assert "<eos>" in [r["token"] for r in literal["results"]]
    assert "<eos>" not in [r["token"] for r in hidden["results"]] and len(hidden["results"]) == 3
    window = run_request(open_checkpoint("spells", "cpu"), Neighbours(query="I", k=4), lambda *a: None)
    assert [h.id for h in window.hits] == [r["id"] for r in hidden["results"]]


def test_similarity_on_a_lesson_model():
    assert run_json("--model", "toy4", "similarity", "cat", "dog")["score"] == pytest.approx(12 / 13, abs=1e-6)
    assert run_json("similarity", "cat", "dog", "--model", "toy4")["score"] == pytest.approx(12 / 13, abs=1e-6)


def test_analogy_json_with_and_without_inputs(default_model):
    on = run_json("analogy", " king", " man", " woman", "--k", "3")
    off = run_json("analogy", " king", " man", " woman", "--k", "3", "--include-inputs")
    assert " king" not in [r["token"] for r in on["results"]]
    assert " king" in [r["token"] for r in off["results"]]
    assert on["results"][0]["token"] == " queen" and on["results"][0]["label"] == "␣queen"
    assert on["input_ranks"][0]["rank"] == 2 and on["input_ranks"][0]["token"] == " king"


def test_logits_json(default_model):
    out = run_json("logits", "The capital of France is", "--k", "4", "--temperature", "0.7")
    assert out["tokens"] == ["The", " capital", " of", " France", " is"]
    assert out["token_labels"] == ["The", "␣capital", "␣of", "␣France", "␣is"]
    assert out["results"][0]["token"] == " Paris" and out["results"][0]["label"] == "␣Paris"
    assert set(out["results"][0]) == {"id", "token", "label", "logit", "prob"}
    assert out["path"] == "full" and out["bad_ids"] == []


def test_spells_logits_from_the_cli():
    out = run_json("--model", "spells", "logits", "I cast", "--k", "5")
    assert {r["token"]: r["logit"] for r in out["results"]} == {"fireball": 2.0, "heal": 1.0, "I": 0.5, "cast": 0.0, "<eos>": 0.0}
    assert out["path"] == "direct"  # an embedding + linear model has only the direct path


def test_project_writes_csv(tmp_path, default_model):
    out = tmp_path / "coords.csv"
    proc = run("project", "--method", "pca", "--limit", "500", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    with out.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["id", "token", "x", "y"] and len(rows) == 501
    assert [int(r[0]) for r in rows[1:]] == list(range(500))
    assert rows[1 + 198][1] == "\n"  # token texts are kept exact (CSV-quoted), not labels
    assert "the map keeps" in proc.stderr and "10 nearest neighbours" in proc.stderr  # how faithful it is
    summary = run_json("project", "--method", "pca", "--limit", "500", "--out", str(out))
    faithful = summary["faithfulness"]
    assert summary["rows"] == 500 and summary["method"] == "pca" and len(summary["explained"]) == 2
    assert faithful["k"] == 10 and faithful["sample"] == faithful["rows"] == 500 and 0 < faithful["share"] < 0.5


def test_analogies_benchmark_json(default_model):
    out = run_json("analogies")
    assert out["total"] == 19544 and len(out["sections"]) == 14
    # The stricter rule (the inputs' case and space variants excluded too) is reported beside the others.
    assert 0 < out["accuracy_excluded_variants"] <= 1 and all("accuracy_excluded_variants" in s for s in out["sections"])
    assert 0 < out["kept"] < out["total"]
    # The seeds' point: excluding the inputs makes a large difference.
    assert out["accuracy_excluded"] > 2 * out["accuracy_included"]


@pytest.mark.parametrize(
    "args, message",
    [
        pytest.param(("neighbors", "queen"), "not one token", marks=pytest.mark.default_model),
        (("--model", "/no/such/model", "info"), "No such file or folder"),
        (("--model", "toy4", "neighbors", "zebra"), "not in the vocabulary"),
        (("--model", "toy4", "neighbors", "cat", "--k", "0"), "at least 1"),
        (("logits", "", "--model", "spells"), "Type some text"),
        (("--model", "toy4", "logits", "cat", "--temperature", "0"), "Temperature must be a positive"),
    ],
)
def test_failures_are_one_line_on_stderr(args, message):
    proc = run(*args)
    assert proc.returncode != 0
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in proc.stderr


def test_version_prints_the_package_version(capsys):
    from importlib.metadata import version

    from embviz.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"embviz {version('embviz')}"


def test_project_in_three_dimensions_writes_x_y_z(tmp_path):
    out = tmp_path / "coords3.csv"
    summary = run_json("--model", "toy4", "project", "--dims", "3", "--out", str(out))
    with out.open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["id", "token", "x", "y", "z"] and len(rows) == 1 + summary["rows"]
    assert summary["dims"] == 3 and len(summary["explained"]) == 3
    # toy4's four unit rows span two directions: three components hold all of their variance
    assert sum(summary["explained"]) == pytest.approx(1.0) and summary["explained"][2] == pytest.approx(0.0, abs=1e-6)
