"""The logit lens, contextual drift and the prefix cache between keystrokes: on tiny
GPT-2 and Llama models saved by the tests, and on the default model."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from embviz.core.lm.drift import contextual_drift
from embviz.core.errors import EmbvizError
from embviz.core.lm.lens import logit_lens
from embviz.core.lm.logits import next_token_logits

from conftest import make_tiny_model


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def tiny(request, tmp_path_factory):
    from embviz.core import open_checkpoint

    folder = tmp_path_factory.mktemp(f"tiny-{request.param}")
    make_tiny_model(folder, arch=request.param)
    return open_checkpoint(str(folder), "cpu")


def uncached_logits(model, ids: list[int]) -> torch.Tensor:
    hf = model.language_model().model
    with torch.inference_mode():
        return hf(input_ids=torch.tensor([ids]), use_cache=False).logits[0, -1].float()


# --- the prefix cache -----------------------------------------------------------------------------

def test_appending_runs_only_the_new_tokens_and_gives_the_uncached_logits(tiny):
    lm = tiny.language_model()
    ids = tiny.vocab.encode_for_model("the king and the queen ruled the kingdom")
    lm.forget()
    lm.last_logits(ids[:-1])
    before = lm.tokens_run
    logits = lm.last_logits(ids)
    assert lm.tokens_run - before == 1  # one token through the blocks, not len(ids)
    torch.testing.assert_close(logits, uncached_logits(tiny, ids), atol=1e-5, rtol=1e-5)
    assert lm.last_logits(ids) is lm.last_logits(ids) and lm.tokens_run - before == 1  # the same text: nothing runs


@pytest.mark.parametrize("edit", ["delete", "change", "restart"])
def test_edits_keep_only_the_common_prefix(tiny, edit):
    lm = tiny.language_model()
    ids = tiny.vocab.encode_for_model("the man and the woman walked to the city")
    lm.forget()
    lm.last_logits(ids)
    new = {"delete": ids[:5], "change": ids[:4] + ids[6:8], "restart": ids[3:]}[edit]
    before = lm.tokens_run
    logits = lm.last_logits(new)
    ran = lm.tokens_run - before
    assert ran == {"delete": 1, "change": 2, "restart": len(new)}[edit]
    torch.testing.assert_close(logits, uncached_logits(tiny, new), atol=1e-5, rtol=1e-5)


# --- the lens -------------------------------------------------------------------------------------

def test_the_lens_reads_every_layer_and_its_last_row_is_the_models_answer(tiny):
    text = "paris is the capital of"
    lens = logit_lens(tiny, text, k=5)
    logits = next_token_logits(tiny, text, k=5)
    assert lens.layer_names == ["embedding", "block 1", "block 2"]
    assert [label for _, label in lens.tokens] == [label for _, label in logits.tokens]
    last = lens.top[-1][-1]
    assert [s.id for s in last] == [r.id for r in logits.results]
    assert [s.prob for s in last] == pytest.approx([r.prob for r in logits.results], rel=1e-5, abs=1e-7)
    for row in lens.top:
        assert len(row) == len(lens.tokens)
        for cell in row:
            probs = [s.prob for s in cell]
            assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1 + 1e-6


def test_each_row_is_the_head_of_the_normed_residual(tiny):
    """The lens by hand: hidden states through the final norm and the head, a softmax."""
    lm = tiny.language_model()
    ids = tiny.vocab.encode_for_model("one two three four")
    stream = lm.residual_stream(ids)
    lens = logit_lens(tiny, "one two three four", k=3)
    raw = logit_lens(tiny, "one two three four", k=3, final_norm=False)
    with torch.inference_mode():
        for layer in range(stream.shape[0]):
            for view, vector in ((lens, lm.final_norm(stream[layer, 1])), (raw, stream[layer, 1])):
                probs = torch.softmax(lm.head(vector).float(), -1)
                top = torch.topk(probs, 3)
                cell = view.top[layer][1]
                assert [s.id for s in cell] == top.indices.tolist()
                assert [s.prob for s in cell] == pytest.approx(top.values.tolist(), rel=1e-5)


def test_typing_one_more_token_keeps_the_columns_already_read(tiny):
    lm = tiny.language_model()
    tiny.cache.pop("lens_columns", None)
    first = logit_lens(tiny, "the king and the", k=4)
    before = lm.tokens_run
    second = logit_lens(tiny, "the king and the queen", k=4)
    added = len(second.tokens) - len(first.tokens)
    assert added >= 1 and lm.tokens_run - before == added  # only the new tokens ran
    for a, b in zip(first.top, second.top):
        assert [[s.id for s in cell] for cell in a] == [[s.id for s in cell] for cell in b[:len(a)]]
    tiny.cache.pop("lens_columns", None)
    fresh = logit_lens(tiny, "the king and the queen", k=4)
    def probs(lens):
        return [s.prob for row in lens.top for cell in row for s in cell]
    assert probs(fresh) == pytest.approx(probs(second), rel=1e-5)


def test_top_k_softmax_equals_a_softmax_and_ranks_nan_and_inf_last():
    from embviz.core.lm.lens import top_k_softmax

    logits = torch.randn(6, 300, generator=torch.Generator().manual_seed(0)) * 8
    logits[1, 7], logits[2, 9], logits[3, 11], logits[4, :50] = float("nan"), float("inf"), -float("inf"), -float("inf")
    clean = torch.nan_to_num(logits, nan=-torch.inf, posinf=-torch.inf)
    want = torch.softmax(clean, -1).topk(5, -1)
    values, ids, probs = top_k_softmax(logits.clone(), 5)
    assert torch.equal(ids, want.indices) and torch.equal(values, clean.topk(5, -1).values)
    torch.testing.assert_close(probs, want.values, rtol=1e-5, atol=1e-7)
    assert 7 not in ids[1] and 9 not in ids[2]


def cells(lens):
    return [[[s.id for s in cell] for cell in row] for row in lens.top], \
        [s.prob for row in lens.top for cell in row for s in cell]


def test_rows_read_in_any_blocks_give_the_same_cells(tiny, monkeypatch):
    """One product for the whole grid (a GPU's blocks) or a few rows at a time: the same numbers."""
    from embviz.core.lm import lens as lens_module

    text = "the king and the queen ruled the kingdom of the north"
    tiny.cache.pop("lens_columns", None)
    small = logit_lens(tiny, text, k=4)
    for rows, workers in ((lens_module.GPU_ROWS_PER_PRODUCT, 1), (3, 2)):
        monkeypatch.setattr(lens_module, "_rows_per_product", lambda _device, rows=rows: rows)
        monkeypatch.setattr(lens_module, "_workers", lambda _device, workers=workers: workers)
        tiny.cache.pop("lens_columns", None)
        previews = []
        other = logit_lens(tiny, text, k=4, progress=lambda _f, _s, preview: previews.append(preview))
        assert cells(other)[0] == cells(small)[0]
        assert cells(other)[1] == pytest.approx(cells(small)[1], rel=1e-5, abs=1e-7)
        shown = [p for preview in previews if preview is not None for p in preview.columns]
        assert shown[0] == len(other.tokens) - 1 and sorted(shown) == list(range(len(other.tokens)))


def test_a_cancel_while_the_columns_are_read_stops_the_lens(tiny):
    from embviz.core.errors import Cancelled

    def progress(_fraction, _stage, preview):
        if preview is not None:
            raise Cancelled()

    tiny.cache.pop("lens_columns", None)
    with pytest.raises(Cancelled):
        logit_lens(tiny, "the king and the queen ruled the kingdom", k=4, progress=progress)
    assert "lens_columns" not in tiny.cache  # nothing half-read is kept


def test_models_without_layers_say_why(spells, toy4):
    with pytest.raises(EmbvizError, match="no blocks"):
        logit_lens(spells, "cast")
    with pytest.raises(EmbvizError, match="no blocks"):
        contextual_drift(toy4, "cat", ["cat dog"])


def test_empty_text_is_refused_and_long_text_is_read_at_its_end(tiny, monkeypatch):
    from embviz.core.lm import drift as drift_module, lens as lens_module

    with pytest.raises(EmbvizError, match="Type some text"):
        logit_lens(tiny, "   ")
    for module in (lens_module, drift_module):
        monkeypatch.setattr(module, "MAX_LENS_CONTEXT", 40)  # the tiny model's context is 64
    long = logit_lens(tiny, "one two three four five six seven . " * 20, k=2)
    assert len(long.tokens) == 40 and any("last 40 of the text" in n for n in long.notes)
    with pytest.raises(EmbvizError, match="Sentence 1 is"):
        contextual_drift(tiny, "king", ["the king " * 30])


# --- drift ----------------------------------------------------------------------------------------

def test_drift_starts_at_the_static_row_and_follows_one_token(tiny):
    result = contextual_drift(tiny, "king", ["the king ruled", "paris is the capital of the king"])
    assert len(result.between) == len(result.to_static) == len(result.baseline) == 3
    if "gpt2" in tiny.name:  # GPT-2 adds a learned position vector to the row, other at each position
        assert result.between[0] < 0.999 and max(result.to_static[0]) < 0.999
    else:  # rotary positions act inside attention: layer 0 is the row itself, in both sentences
        assert result.between[0] == pytest.approx(1.0, abs=1e-6)
        assert result.to_static[0] == pytest.approx([1.0, 1.0], abs=1e-6)
    assert all(-1 - 1e-6 <= c <= 1 + 1e-6 for row in result.to_static for c in row)
    assert len(set(result.token_ids)) == 1 and result.positions[0] != result.positions[1]
    assert result.neighbours_layer == 2 and len(result.neighbours) == 2


def test_drift_refuses_missing_and_split_words(tiny):
    with pytest.raises(EmbvizError, match="not a token of sentence 2"):
        contextual_drift(tiny, "king", ["the king ruled", "the man walked"])
    with pytest.raises(EmbvizError, match="tokens here"):
        contextual_drift(tiny, "kingqueenzz", ["the kingqueenzz"])
    with pytest.raises(EmbvizError, match="Layer 9"):
        contextual_drift(tiny, "king", ["the king ruled"], neighbours_layer=9)


def test_bank_drifts_apart_in_smollm2(default_model):
    result = contextual_drift(default_model, "bank", ["I sat on the river bank", "She paid the cash into the bank"])
    assert len(result.between) == 31
    assert result.between[0] == pytest.approx(1.0, abs=1e-5)
    assert min(result.between) < 0.9  # the contexts pull the two vectors apart
    # Above the baseline of unrelated tokens at every block: still the same word.
    assert all(b > base for b, base in zip(result.between[1:], result.baseline[1:]))


def test_smollm2_lens_knows_paris_at_the_end(default_model):
    lens = logit_lens(default_model, "The capital of France is", k=3)
    assert lens.top[-1][-1][0].token == "␣Paris"
    assert lens.top[0][-1][0].token == "␣is"  # tied: the embedding row scores itself highest


# --- the command line -----------------------------------------------------------------------------

def run_json(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "embviz", *args, "--json"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_lens_and_drift_json(default_model):
    lens = run_json("lens", "The capital of France is", "--k", "2")
    assert lens["tokens"] == ["The", " capital", " of", " France", " is"] and lens["final_norm"] is True
    assert [layer["layer"] for layer in lens["layers"]] == list(range(31))
    assert lens["layers"][0]["name"] == "embedding" and lens["layers"][30]["name"] == "block 30"
    last = lens["layers"][30]["top"][-1]
    assert len(last) == 2 and last[0]["token"] == " Paris" and set(last[0]) >= {"id", "token", "prob"}
    raw = run_json("lens", "The capital of France is", "--k", "2", "--raw")
    assert raw["final_norm"] is False and raw["layers"][5]["top"] != lens["layers"][5]["top"]
    drift = run_json("drift", "bank", "I sat on the river bank", "She paid the cash into the bank")
    assert drift["word"] == " bank" and len(drift["layers"]) == 31
    assert set(drift["layers"][0]) >= {"layer", "between_contexts", "to_static"}
    assert len(drift["layers"][3]["to_static"]) == 2


def test_drift_cli_says_what_is_wrong(default_model):
    proc = subprocess.run([sys.executable, "-m", "embviz", "drift", "bank", "I like money"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "not a token of sentence 1" in proc.stderr and "Traceback" not in proc.stderr
