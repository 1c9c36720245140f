"""Sanity checks on the real default model: SmolLM2-135M-Instruct (Q4_1 GGUF)."""

from __future__ import annotations

import pytest
import torch

from embviz.core import open_checkpoint
from embviz.core.table.analogy import analogy, parse_inputs
from embviz.core.default_model import default_model_path
from embviz.core.lm.logits import next_token_logits
from embviz.core.readers import gguf
from embviz.core.table.similarity import nearest_neighbours, similarity

pytestmark = pytest.mark.default_model


def test_shape_and_share(default_model):
    assert (default_model.vocab_size, default_model.dim) == (49152, 576)
    assert default_model.tied and default_model.kind == "transformer"
    assert default_model.embedding_share == pytest.approx(49152 * 576 / default_model.total_params)
    assert 0.15 < default_model.embedding_share < 0.25
    assert default_model.head_share == 0.0


def test_weekdays_are_neighbours(default_model):
    v = default_model.vocab
    monday, tuesday = v.resolve(" Monday"), v.resolve(" Tuesday")
    assert tuesday in [h.id for h in nearest_neighbours(default_model, monday, 3)]
    assert monday in [h.id for h in nearest_neighbours(default_model, tuesday, 3)]
    assert similarity(default_model, monday, tuesday) > 0.8
    assert similarity(default_model, monday, v.resolve(" banana")) < 0.5


def test_capital_of_france_is_paris(default_model):
    result = next_token_logits(default_model, "The capital of France is", k=5)
    assert result.results[0].token == "␣Paris"
    assert [t for _, t in result.tokens] == ["The", "␣capital", "␣of", "␣France", "␣is"]
    assert 0.3 < result.results[0].prob < 1.0
    assert sum(r.prob for r in result.results) < 1.0  # softmax over the whole vocabulary
    direct = next_token_logits(default_model, "The capital of France is", k=5, direct=True)
    assert direct.path == "direct" and direct.results[0].token != "␣Paris"


def test_king_man_woman(default_model):
    a, b, c = parse_inputs(default_model, [" king", " man", " woman"])
    on = analogy(default_model, a, b, c, k=5, exclude_inputs=True)
    off = analogy(default_model, a, b, c, k=5, exclude_inputs=False)
    assert "␣queen" in [h.token for h in on.results[:3]]
    assert {a, b, c}.isdisjoint(h.id for h in on.results)
    assert a in [h.id for h in off.results]  # king itself stays near the top without the rule


def test_multi_token_word_is_reported_not_averaged(default_model):
    from embviz.core import EmbvizError

    with pytest.raises(EmbvizError, match="not one token but"):
        default_model.vocab.resolve("kingdomship")
    with pytest.raises(EmbvizError, match="leading space"):
        default_model.vocab.resolve("queen")  # "queen" is 2 tokens; " queen" is one


def test_gguf_opens_without_conversion_and_caches_only_the_table(tmp_path, monkeypatch):
    from safetensors.torch import load_file

    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path))
    first = open_checkpoint(None, "cpu")
    (entry,) = (tmp_path / "gguf").iterdir()
    size = sum(f.stat().st_size for f in entry.rglob("*") if f.is_file())
    assert size <= 200 * 2**20  # the table and its labels, not a converted model
    assert load_file(str(entry / "table.safetensors"))["table"].shape == (49152, 576)
    assert first.info()["dtype"] == "Q8_0" and not first.lm_loaded  # the table as the file stores it

    def no_reading(*args, **kwargs):
        raise AssertionError("read the GGUF again")

    monkeypatch.setattr(gguf, "read_gguf_table", no_reading)
    again = open_checkpoint(None, "cpu")
    assert torch.equal(again.table, first.table) and again.vocab.labels == first.vocab.labels


def test_gguf_labels_match_the_transformers_tokenizer(default_model):
    """The labels read from the file's own token list equal those of transformers' GGUF tokenizer."""
    from transformers import AutoTokenizer

    from embviz.core.table.vocab import vocabulary_from_tokenizer

    path = default_model_path()
    reference = vocabulary_from_tokenizer(AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name), 49152)
    vocab = default_model.vocab
    assert vocab.texts == reference.texts and vocab.labels == reference.labels
    assert vocab.partial_ids == reference.partial_ids and vocab.special_ids == reference.special_ids


def test_content_keyed_cache_survives_a_touch_and_tells_files_apart(tmp_path, monkeypatch):
    import os
    import shutil

    from embviz.core.cache import content_key, file_hash

    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))
    a = tmp_path / "a.gguf"
    shutil.copyfile(default_model_path(), a)
    key = content_key(a, "x")
    os.utime(a, ns=(1, 1))
    assert content_key(a, "x") == key  # touched, same bytes: same entry
    b = tmp_path / "b.gguf"
    shutil.copyfile(a, b)
    with b.open("r+b") as f:  # same size and mtime, one byte different
        f.seek(-1, 2)
        last = f.read(1)
        f.seek(-1, 2)
        f.write(bytes([last[0] ^ 1]))
    os.utime(b, ns=(1, 1))
    assert file_hash(b) != file_hash(a) and content_key(b, "x") != key
    assert content_key(a, "y") != key  # another producer, another entry
