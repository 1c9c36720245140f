"""Hostile text and numbers: a lone surrogate gets one sentence from every language-model command, a
word the vocabulary lacks is refused rather than answered for `<unk>`, a tiny temperature keeps its
probabilities finite, and an undefined CKA is said, never written as NaN."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from embviz.cli import main as cli_main
from embviz.core import EmbvizError, open_checkpoint
from embviz.core.lm.logits import next_token_logits, softmax
from embviz.core.model import EmbeddingModel
from embviz.core.table.compare import linear_cka
from embviz.core.table.vocab import vocabulary_from_tokenizer, vocabulary_from_words
from tests.conftest import make_tiny_model

SURROGATE = "the king\ud800 and"


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpt2-text")
    make_tiny_model(folder, "gpt2")
    return folder


@pytest.mark.parametrize("command", [["logits", SURROGATE], ["lens", SURROGATE], ["attribute", SURROGATE]])
def test_a_lone_surrogate_is_one_sentence_from_every_command(tiny_gpt2, command, capsys):
    code = cli_main(["--model", str(tiny_gpt2), "--device", "cpu", *command])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "lone surrogate (U+D800) at character 9" in lines[0]


def test_control_characters_still_reach_a_byte_level_tokenizer(tiny_gpt2):
    result = next_token_logits(open_checkpoint(str(tiny_gpt2), "cpu"), "a\x00b\x07c", k=3)
    assert len(result.results) == 3


def test_a_tiny_temperature_gives_finite_probabilities(tiny_gpt2):
    model = open_checkpoint(str(tiny_gpt2), "cpu")
    result = next_token_logits(model, "the king", k=5, temperature=1e-45)
    probs = [r.prob for r in result.results]
    assert all(math.isfinite(p) for p in probs) and probs[0] == 1.0 and probs[1:] == [0.0] * 4
    json.dumps(result.as_dict(), allow_nan=False)
    ties = softmax(torch.tensor([1.0, 3.0, 3.0, -math.inf]), 1e-45)
    assert ties.tolist() == [0.0, 0.5, 0.5, 0.0]
    logits = torch.tensor([0.5, -1.0, 2.0])
    assert torch.equal(softmax(logits, 1.0), torch.softmax(logits, -1))


def _unk_model() -> EmbeddingModel:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<unk>": 0, "cat": 1, "dog": 2, "car": 3}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="<unk>")
    return EmbeddingModel(name="unk", source="unk", table=torch.randn(4, 3), vocab=vocabulary_from_tokenizer(tokenizer, 4),
                          device=torch.device("cpu"), storage_dtype="float32", kind="table")


def test_a_word_read_as_the_unknown_token_is_refused_by_name():
    model = _unk_model()
    assert model.vocab.resolve("dog") == 2
    with pytest.raises(EmbvizError, match=r"'zzz' is not in this vocabulary: its tokenizer reads it as the unknown token '<unk>'"):
        model.vocab.resolve("zzz")
    with pytest.raises(EmbvizError, match="part of it as the unknown token"):
        model.vocab.resolve("cat zzz")


def test_the_attribution_token_is_resolved_by_the_vocabulary():
    from embviz.core.lm.attribution import resolve_token

    with pytest.raises(EmbvizError, match="unknown token '<unk>'"):
        resolve_token(_unk_model(), "zzz")


def test_the_cka_of_identical_rows_is_undefined_not_nan(tmp_path, capsys):
    same = np.tile(np.arange(1, 9, dtype=np.float32), (60, 1))
    other = np.random.default_rng(0).standard_normal((60, 8))
    assert linear_cka(same, other) is None and linear_cka(other, same) is None
    assert linear_cka(other, 2 * other) == pytest.approx(1.0)
    names = [f"w{i:03d}" for i in range(60)]
    for path, rows in ((tmp_path / "a.txt", same), (tmp_path / "b.txt", other)):
        path.write_text("".join(f"{t} " + " ".join(f"{v:.6f}" for v in row) + "\n" for t, row in zip(names, rows)))
    args = ["compare", "--model", str(tmp_path / "a.txt"), "--with", str(tmp_path / "b.txt"), "--device", "cpu", "--k", "5"]
    assert cli_main([*args, "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out)["cka"] is None and "NaN" not in out
    assert cli_main(args) == 0
    text = capsys.readouterr().out
    assert "linear CKA undefined" in text and "Linear CKA is undefined here" in text


def test_a_fingerprint_of_a_table_with_nan_and_inf_rows_is_json():
    from embviz.core.fingerprint import model_fingerprint, same_model

    table = torch.randn(20, 4)
    table[0], table[19] = math.nan, math.inf
    model = EmbeddingModel(name="t", source="t", table=table, vocab=vocabulary_from_words([f"w{i}" for i in range(20)]),
                           device=torch.device("cpu"), storage_dtype="float32", kind="table")
    fingerprint = json.loads(json.dumps(model_fingerprint(model), allow_nan=False))
    assert fingerprint["probe_norms"][0] is None and fingerprint["probe_norms"][-1] is None
    assert same_model(fingerprint, model_fingerprint(model))
    older = {**fingerprint, "probe_norms": [math.nan, *fingerprint["probe_norms"][1:-1], math.inf]}  # as files held them
    assert same_model(older, model_fingerprint(model))
    assert not same_model({**fingerprint, "probe_norms": [1.0, *fingerprint["probe_norms"][1:]]}, model_fingerprint(model))
