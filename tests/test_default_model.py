"""Sanity checks on the real default model: SmolLM2-135M-Instruct (Q4_1 GGUF)."""

from __future__ import annotations

import pytest

from embviz.core import open_checkpoint
from embviz.core.analogy import analogy, parse_inputs
from embviz.core.default_model import default_model_path
from embviz.core.logits import next_token_logits
from embviz.core.readers import gguf
from embviz.core.similarity import nearest_neighbours, similarity


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


def test_gguf_cache_is_used_on_reopen(default_model, monkeypatch):
    key = gguf.cache_key(default_model_path())
    assert (gguf.cache_root() / "gguf" / key / "model.safetensors").is_file()

    def no_conversion(*args, **kwargs):
        raise AssertionError("converted again")

    monkeypatch.setattr(gguf, "_convert", no_conversion)
    again = open_checkpoint(None, "cpu")
    assert again.vocab_size == 49152
