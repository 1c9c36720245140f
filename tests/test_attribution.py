"""Direct logit attribution, attention patterns and pinned tokens: checked against an
independent computation from forward hooks and the weights themselves, on tiny GPT-2 and
Llama models saved by the tests (with random biases and norm gains, so that each bias part
is non-zero) and on the default model."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from embviz.core.errors import EmbvizError
from embviz.core.lm.attribution import attention_pattern, attribute, pinned_tokens
from embviz.core.lm.lens import logit_lens

from conftest import make_tiny_model, make_tokenizer

TEXT = "paris is the capital of"


def save_tiny(folder, arch: str):
    """gpt2: tied, LayerNorm; llama: untied, RMSNorm, with biases in attention and MLP."""
    from transformers import LlamaConfig, LlamaForCausalLM

    if arch == "gpt2":
        return make_tiny_model(folder, arch="gpt2", tied=True)
    folder.mkdir(parents=True, exist_ok=True)
    tok = make_tokenizer(folder)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                         tie_word_embeddings=False, attention_bias=True, mlp_bias=True)
    LlamaForCausalLM(config).eval().save_pretrained(str(folder))


def open_tiny(folder):
    """The model, its biases and norm gains made random: fresh ones are 0 and 1."""
    from embviz.core import open_checkpoint

    model = open_checkpoint(str(folder), "cpu")
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, param in model.language_model().model.named_parameters():
            if name.endswith("bias") or "norm" in name or ".ln_" in name:
                param.add_(0.3 * torch.randn(param.shape, generator=generator))
    return model


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def tiny(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"attr-{request.param}")
    save_tiny(folder, request.param)
    return open_tiny(folder)


@pytest.fixture
def fresh_llama(tmp_path):
    """A model of its own, for tests that change it."""
    save_tiny(tmp_path, "llama")
    return open_tiny(tmp_path)


# --- the reference: hooks, the weights' own slices and the norm's formula ---------------------------

@torch.no_grad()
def reference(model, ids: list[int], target: int, position: int) -> tuple[dict, dict, float]:
    """({(block, kind): logit part}, {(block, head): part}, the model's logit), computed
    without embviz: an uncached pass with hooks, each head's columns of the projection."""
    hf = model.language_model().model
    base = hf.base_model
    gpt2 = hasattr(base, "h")
    layers = base.h if gpt2 else base.layers
    norm = base.ln_f if gpt2 else base.norm
    attn_out, heads_in, final = {}, {}, []
    hooks = [norm.register_forward_pre_hook(lambda _m, args: final.append(args[0][0, position].clone()))]
    for n, layer in enumerate(layers):
        attention = layer.attn if gpt2 else layer.self_attn
        proj = attention.c_proj if gpt2 else attention.o_proj
        hooks.append(attention.register_forward_hook(
            lambda _m, _a, out, n=n: attn_out.__setitem__(n, out[0][0, position].clone())))
        hooks.append(proj.register_forward_pre_hook(lambda _m, args, n=n: heads_in.__setitem__(n, args[0][0, position].clone())))
    try:
        out = hf(input_ids=torch.tensor([ids]), use_cache=False, output_hidden_states=True)
    finally:
        for h in hooks:
            h.remove()
    hidden = [h[0, position] for h in out.hidden_states]
    x = final[0]
    if gpt2:
        def linear(v):
            return (v - v.mean()) * norm.weight / torch.sqrt(x.var(unbiased=False) + norm.eps)
    else:
        def linear(v):
            return v * norm.weight / torch.sqrt(x.pow(2).mean() + norm.variance_epsilon)
    w = hf.lm_head.weight[target]
    score = lambda v: float(linear(v) @ w)  # noqa: E731
    parts = {(0, "embedding"): score(hidden[0])}
    heads = {}
    n_heads = hf.config.num_attention_heads
    for n, layer in enumerate(layers):
        block_out = hidden[n + 1] if n + 1 < len(layers) else x
        parts[(n + 1, "attention")] = score(attn_out[n])
        parts[(n + 1, "mlp")] = score(block_out - hidden[n] - attn_out[n])
        z = heads_in[n]
        d = z.shape[0] // n_heads
        proj = layer.attn.c_proj if gpt2 else layer.self_attn.o_proj
        for h in range(n_heads):
            piece = z[h * d:(h + 1) * d]
            write = piece @ proj.weight[h * d:(h + 1) * d] if gpt2 else proj.weight[:, h * d:(h + 1) * d] @ piece
            heads[(n + 1, h)] = score(write)
        if proj.bias is not None:
            heads[(n + 1, None)] = score(proj.bias)
    if gpt2:
        parts[(None, "norm bias")] = float(norm.bias @ w)
    return parts, heads, float(out.logits[0, position, target])


def check_against_reference(model, text: str, result) -> None:
    ids = [i for i, _ in result.tokens]
    parts, heads, logit = reference(model, ids, result.target_id, result.position)
    assert {(p.block, p.kind): p.value for p in result.parts} == pytest.approx(parts, rel=1e-4, abs=1e-4)
    assert {(h.block, h.head): h.value for h in result.heads} == pytest.approx(heads, rel=1e-4, abs=1e-4)
    assert result.logit == pytest.approx(logit, rel=1e-5, abs=1e-5)
    assert abs(sum(p.value for p in result.parts) - logit) <= 1e-3 * max(1.0, abs(logit))
    for block in {h.block for h in result.heads}:
        attention = next(p.value for p in result.parts if p.block == block and p.kind == "attention")
        assert sum(h.value for h in result.heads if h.block == block) == pytest.approx(attention, rel=1e-4, abs=1e-4)


# --- attribution ----------------------------------------------------------------------------------

def test_parts_and_heads_match_the_reference_and_add_up_to_the_logit(tiny):
    result = attribute(tiny, TEXT)
    check_against_reference(tiny, TEXT, result)
    n_blocks = tiny.language_model().n_layers
    assert [(p.block, p.kind) for p in result.parts][:3] == [(0, "embedding"), (1, "attention"), (1, "mlp")]
    assert len([h for h in result.heads if h.head is not None]) == n_blocks * tiny.language_model().model.config.num_attention_heads
    assert result.target_id == int(torch.argmax(tiny.language_model().last_logits([i for i, _ in result.tokens])))
    if "gpt2" in tiny.name:  # LayerNorm: its bias is a part, and the note says what happens to the means
        assert any(p.kind == "norm bias" and p.value != 0 for p in result.parts)
        assert any("LayerNorm" in n for n in result.notes)
    else:
        assert not any(p.kind == "norm bias" for p in result.parts) and not result.notes


def test_any_token_and_any_position(tiny):
    by_text = attribute(tiny, TEXT, token=" king", position=2)
    assert by_text.position == 2 and by_text.target == " king"
    check_against_reference(tiny, TEXT, by_text)
    by_id = attribute(tiny, TEXT, token=by_text.target_id, position=-len(by_text.tokens) + 2)
    assert [p.value for p in by_id.parts] == pytest.approx([p.value for p in by_text.parts], rel=1e-5, abs=1e-6)
    assert attribute(tiny, TEXT, token="␣king", position=2).target_id == by_text.target_id  # labels' space mark


def test_the_last_position_runs_one_token_through_the_typing_cache(tiny):
    lm = tiny.language_model()
    ids = tiny.vocab.encode_for_model(TEXT)
    lm.forget()
    lm.last_logits(ids)
    before = lm.tokens_run
    result = attribute(tiny, TEXT)
    assert lm.tokens_run - before == 1
    check_against_reference(tiny, TEXT, result)
    assert lm.tokens_run - before == 1 and lm.last_logits(ids) is lm.last_logits(ids)  # the cache still holds the text


def test_a_head_bias_is_a_part_of_its_own(fresh_llama):
    head = fresh_llama.language_model().head
    head.bias = torch.nn.Parameter(torch.linspace(-1, 1, head.weight.shape[0]))
    result = attribute(fresh_llama, TEXT)
    bias = next(p for p in result.parts if p.kind == "head bias")
    assert bias.block is None and bias.value == pytest.approx(float(head.bias[result.target_id].detach()))
    assert abs(sum(p.value for p in result.parts) - result.logit) <= 1e-3 * max(1.0, abs(result.logit))
    assert {h.block for h in result.heads if h.head is None} == {1, 2, 3}  # o_proj's biases


def test_what_cannot_be_split_exactly_says_why(fresh_llama):
    hf = fresh_llama.language_model().model
    scaled = hf.lm_head.register_forward_hook(lambda _m, _a, out: out * 0.5 + 1)  # as Cohere's logit_scale
    with pytest.raises(EmbvizError, match="changes the logits after the output head"):
        attribute(fresh_llama, TEXT)
    scaled.remove()
    extra = hf.model.layers[1].register_forward_hook(lambda _m, _a, out: out * 1.5)
    with pytest.raises(EmbvizError, match="Block 2's attention and MLP outputs do not add up"):
        attribute(fresh_llama, TEXT)
    extra.remove()

    class TanhNorm(torch.nn.Module):
        def forward(self, x):
            return torch.tanh(x)

    hf.model.norm = TanhNorm()
    fresh_llama.language_model()._anatomy = None  # the model's structure changed: probe it again
    with pytest.raises(EmbvizError, match=r"final norm \(TanhNorm\) is neither an RMSNorm nor a LayerNorm"):
        attribute(fresh_llama, TEXT)


def test_bad_inputs_are_one_sentence(tiny, spells):
    with pytest.raises(EmbvizError, match="not one token but"):
        attribute(tiny, TEXT, token=" kingdom queen")
    with pytest.raises(EmbvizError, match=r"Position 40 is outside the text's \d+ tokens"):
        attribute(tiny, TEXT, position=40)
    with pytest.raises(EmbvizError, match="Token id -3 is outside"):
        attribute(tiny, TEXT, token=-3)
    with pytest.raises(EmbvizError, match="Type some text"):
        attribute(tiny, "  ")
    with pytest.raises(EmbvizError, match="no blocks"):
        attribute(spells, "cast")
    with pytest.raises(EmbvizError, match="Block 9 is out of range"):
        attention_pattern(tiny, TEXT, 9)
    with pytest.raises(EmbvizError, match="Head 7 is out of range"):
        attention_pattern(tiny, TEXT, 1, head=7)
    with pytest.raises(EmbvizError, match="Pin at least one"):
        pinned_tokens(tiny, TEXT, [])
    with pytest.raises(EmbvizError, match="no blocks"):
        pinned_tokens(spells, "cast", ["cast"])


# --- attention patterns ---------------------------------------------------------------------------

def test_attention_weights_are_the_models_own(tiny):
    hf = tiny.language_model().model
    before = hf.config._attn_implementation
    result = attention_pattern(tiny, TEXT, block=2)
    assert hf.config._attn_implementation == before  # the fused kernel is back for the other tabs
    ids = [i for i, _ in result.tokens]
    hf.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            expected = hf(input_ids=torch.tensor([ids]), output_attentions=True).attentions[1][0]
    finally:
        hf.set_attn_implementation(before)
    n_heads = hf.config.num_attention_heads
    assert result.heads == list(range(n_heads)) and result.weights.shape == (n_heads, len(ids), len(ids))
    torch.testing.assert_close(torch.from_numpy(result.weights), expected, atol=1e-5, rtol=1e-5)
    assert result.weights.sum(-1) == pytest.approx(1.0, abs=1e-5)
    attribution = attribute(tiny, TEXT)
    assert [(h.head, h.value) for h in result.ranking] == [(h.head, h.value) for h in attribution.ranked_heads(2)]
    assert [h.value for h in result.ranking] == sorted((h.value for h in result.ranking), reverse=True)
    one = attention_pattern(tiny, TEXT, block=2, head=1)
    assert one.heads == [1] and (one.weights[0] == result.weights[1]).all()


# --- pinned tokens --------------------------------------------------------------------------------

def test_pinned_tokens_follow_the_lens(tiny):
    lens = logit_lens(tiny, TEXT, k=1)
    top = lens.top[-1][-1][0]
    result = pinned_tokens(tiny, TEXT, [top.id, " king"])  # by id: a byte piece's text is not itself
    assert result.layer_names == lens.layer_names
    assert result.pinned[0].probs[-1] == pytest.approx(top.prob, rel=1e-5) and result.pinned[0].ranks[-1] == 1
    for layer, row in enumerate(lens.top):
        cell = row[-1][0]
        if cell.id == top.id:
            assert result.pinned[0].ranks[layer] == 1 and result.pinned[0].probs[layer] == pytest.approx(cell.prob, rel=1e-5)
        else:
            assert result.pinned[0].ranks[layer] > 1 and result.pinned[0].probs[layer] <= cell.prob
    assert all(1 <= r <= tiny.vocab_size for r in result.pinned[1].ranks)
    earlier = pinned_tokens(tiny, TEXT, [" king"], position=1)
    assert earlier.position == 1 and earlier.pinned[0].probs != result.pinned[1].probs


# --- the command line -----------------------------------------------------------------------------

def cli_json(capsys, *args: str) -> dict:
    from embviz.cli import main

    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_attribute_and_attention_json_shapes(tiny, capsys):
    folder = tiny.source
    out = cli_json(capsys, "attribute", TEXT, "--model", folder, "--device", "cpu")
    assert set(out) >= {"token", "logit", "parts", "heads"}
    n_blocks = tiny.language_model().n_layers
    assert [p["block"] for p in out["parts"] if p["block"] is not None] == [0] + [b for b in range(1, n_blocks + 1) for _ in (0, 1)]
    assert {p["kind"] for p in out["parts"]} <= {"embedding", "attention", "mlp", "norm bias", "head bias"}
    assert abs(sum(p["value"] for p in out["parts"]) - out["logit"]) <= 1e-3 * max(1.0, abs(out["logit"]))
    assert set(out["heads"][0]) == {"block", "head", "value"} and out["heads"][0]["head"] == 0
    out = cli_json(capsys, "attention", TEXT, "--block", "1", "--head", "0", "--model", folder, "--device", "cpu")
    assert out["block"] == 1 and out["heads"] == [0] and len(out["weights"]) == 1
    assert len(out["weights"][0]["weights"]) == len(out["tokens"]) == len(out["weights"][0]["weights"][-1])
    from embviz.cli import main

    assert main(["attribute", TEXT, "--model", folder, "--device", "cpu"]) == 0
    text = capsys.readouterr().out
    assert "embedding" in text and "sum" in text and "heads, the" in text
    assert main(["attribute", TEXT, "--token", " kingdom queen", "--model", folder, "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("embviz: ") and len(err.strip().splitlines()) == 1


# --- the default model ----------------------------------------------------------------------------

def test_smollm2_paris_is_written_late_by_block_24s_head_4_and_the_last_mlps(default_model):
    text = "The capital of France is"
    result = attribute(default_model, text)
    assert result.target == " Paris"
    check_against_reference(default_model, text, result)
    largest = max(result.parts, key=lambda p: p.value)
    assert (largest.block, largest.kind) == (30, "mlp")
    top = result.ranked_heads()[0]
    assert (top.block, top.head) == (24, 4)
    pattern = attention_pattern(default_model, text, block=24, head=4)
    assert pattern.token_texts[pattern.weights[0][-1].argmax()] == " France"  # it reads France from " is"


def test_smollm2_attribute_cli(default_model):
    proc = subprocess.run([sys.executable, "-m", "embviz", "attribute", "The capital of France is", "--token", " Paris",
                           "--json"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["token"] == " Paris" and len(out["parts"]) == 61 and len(out["heads"]) == 30 * 9
    assert abs(sum(p["value"] for p in out["parts"]) - out["logit"]) <= 1e-3 * abs(out["logit"])
