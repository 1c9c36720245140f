"""A zoo of tiny random causal LMs, one per decoder-only family of the installed
transformers: each built offline from that family's own config class, shrunk to a width
of 32 and 2 blocks, saved with a real byte-level BPE tokenizer, and the reference each
view is checked against — transformers' own forward pass and hooks, in the same process.

`python tests/zoo.py [families…]` prints the table in docs/families.md from a fresh run.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from embviz.core.lm.anatomy import find_layers

TEXT = "paris is the capital of france . the king and the queen"
SMALL = dict(
    hidden_size=32, n_embd=32, d_model=32, intermediate_size=64, ffn_dim=64, n_inner=64,
    num_hidden_layers=2, n_layer=2, num_layers=2, n_layers=2, num_attention_heads=4, n_head=4, n_heads=4,
    num_key_value_heads=2, head_dim=8, max_position_embeddings=128, n_positions=128, n_ctx=128,
    moe_intermediate_size=32, num_experts=4, num_local_experts=4, n_routed_experts=4, num_experts_per_tok=2,
    shared_expert_intermediate_size=32, word_embed_proj_dim=32, rotary_dim=4,
)
MAX_PARAMS = 3_000_000  # a family whose config keeps other sizes large is not built
MLA = dict(kv_lora_rank=16, q_lora_rank=16, qk_rope_head_dim=4, qk_nope_head_dim=4, v_head_dim=8, qk_head_dim=8,
           num_key_value_heads=4, head_dim=4)
# What a family's config needs beyond SMALL to build small and run.
OVERRIDES: dict[str, dict[str, Any]] = {
    "deepseek_v2": MLA, "deepseek_v3": MLA, "deepseek_v32": MLA, "minicpm3": MLA, "longcat_flash": MLA,
    "axk1": MLA, "axk2": MLA, "glm4_moe_lite": MLA, "glm_moe_dsa": MLA, "dots1": dict(first_k_dense_replace=1),
    "gemma2": dict(final_logit_softcapping=30.0), "cohere": dict(logit_scale=0.25), "cohere2": dict(logit_scale=0.25),
    "granite": dict(logits_scaling=4.0, residual_multiplier=0.5, embedding_multiplier=2.0),
    "granitemoe": dict(logits_scaling=4.0, residual_multiplier=0.5),
    "granitemoeshared": dict(logits_scaling=4.0, residual_multiplier=0.5),
    "opt": dict(word_embed_proj_dim=16),
    "gpt_neo": dict(attention_types=[[["global", "local"], 1]]),
    "dbrx": dict(d_model=32, n_heads=4, n_layers=2, attn_config=dict(kv_n_heads=2, rope_theta=10000.0),
                 ffn_config=dict(ffn_hidden_size=64, moe_num_experts=4, moe_top_k=2)),
}
# Families of the installed transformers that are not decoder-only causal LMs of text, or
# whose own config cannot be built small and run offline (the reason beside each).
NOT_IN_ZOO: dict[str, str] = {
    **{name: "an encoder or encoder-decoder" for name in (
        "bart", "bert", "bert-generation", "big_bird", "bigbird_pegasus", "blenderbot", "blenderbot-small",
        "camembert", "data2vec-text", "electra", "ernie", "marian", "mbart", "megatron-bert", "mvp", "pegasus",
        "plbart", "prophetnet", "reformer", "rembert", "roberta", "roberta-prelayernorm", "roc_bert", "roformer",
        "xlm", "xlm-roberta", "xlm-roberta-xl", "xlnet", "xmod", "trocr", "whisper", "cpmant")},
    **{name: "multimodal (its text model is in the zoo where it has one)" for name in (
        "musicgen", "musicgen_melody", "moshi", "git", "fuyu", "got_ocr2", "emu3", "mllama", "gemma3", "gemma3n",
        "gemma4", "gemma4_unified", "qwen3_5", "qwen3_5_moe", "qwen4_exp", "phi4_multimodal", "dots3_note",
        "moss_transcribe_diarize", "llama4", "aria_text", "minimax_m3_vl_text")},
}


@dataclass
class Specimen:
    family: str
    folder: Path
    hf: Any  # the transformers model, float32, eager attention


@dataclass
class Row:
    family: str
    views: dict[str, str] = field(default_factory=dict)  # view → "exact" or the refusal / failure

    def status(self) -> str:
        values = set(self.views.values())
        if values <= {"exact"}:
            return "exact"
        if any(v.startswith(("WRONG", "CRASH")) for v in values):
            return "wrong"
        return "partly refused"


def families() -> list[str]:
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    return sorted(name for name in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES if name not in NOT_IN_ZOO)


def build(family: str, folder: Path, make_tokenizer: Callable[[Path], Any]) -> Specimen:
    """A tiny random model of `family` saved to `folder` with a tokenizer; its head scaled so
    that logits are tens, where a soft cap or a logit scale shows."""
    from transformers import AutoConfig, AutoModelForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    tok = make_tokenizer(folder)
    defaults = AutoConfig.for_model(family)
    wanted = {**SMALL, **OVERRIDES.get(family, {}), "vocab_size": len(tok)}
    kwargs = {k: v for k, v in wanted.items() if (k in defaults.to_dict() or hasattr(defaults, k))
              and not isinstance(getattr(type(defaults), k, None), property)}  # derived, read-only
    layer_types = getattr(defaults, "layer_types", None)
    if isinstance(layer_types, list) and layer_types and not isinstance(getattr(type(defaults), "layer_types", None), property):
        n = 2
        kinds = list(dict.fromkeys(layer_types))  # every kind of layer the family has, in a 2-block model
        kwargs["layer_types"] = (kinds + layer_types)[:n] if len(kinds) <= n else layer_types[:n]
    config = AutoConfig.for_model(family, **kwargs)
    for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
        if isinstance(getattr(config, key, None), int) and getattr(config, key) >= len(tok):
            setattr(config, key, 0)
    with torch.device("meta"):
        size = sum(p.numel() for p in AutoModelForCausalLM.from_config(config).parameters())
    if size > MAX_PARAMS:
        raise ValueError(f"its config does not shrink: {size:,} parameters")
    torch.manual_seed(0)
    hf = AutoModelForCausalLM.from_config(config).eval()
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for name, param in hf.named_parameters():
            if name.endswith("bias") or "norm" in name or ".ln" in name:
                param.add_(0.1 * torch.randn(param.shape, generator=generator))  # fresh ones are 0 and 1
        head = hf.get_output_embeddings()
        head.weight.mul_(40 / max(1e-6, float(head.weight.std())) / math.sqrt(config.get_text_config().hidden_size))
    hf.set_attn_implementation("eager")
    reference_logits(hf, tok(TEXT)["input_ids"])  # a family transformers cannot run this small is not in the zoo
    hf.save_pretrained(str(folder))
    return Specimen(family, folder, hf)


# --- the references: transformers' own forward pass ------------------------------------------------

@torch.no_grad()
def reference_logits(hf: Any, ids: list[int]) -> torch.Tensor:
    """(T, V): the model's logits at every position."""
    return hf(input_ids=torch.tensor([ids]), use_cache=False).logits[0].float()


@torch.no_grad()
def reference_lens(hf: Any, layers: list[torch.nn.Module], ids: list[int], layer: int) -> torch.Tensor:
    """(T, V): the model's logits with every block after `layer` skipped (each returns its
    input unchanged): transformers' own readout of the residual stream after that layer."""
    def skip(_module: torch.nn.Module, args: tuple, kwargs: dict, output: object) -> object:
        given = args[0] if args else kwargs["hidden_states"]
        if isinstance(output, (tuple, list)):  # GPT-1's blocks return a list
            return type(output)([given, *output[1:]])
        return given

    handles = [block.register_forward_hook(skip, with_kwargs=True) for block in layers[layer:]]
    try:
        return reference_logits(hf, ids)
    finally:
        for handle in handles:
            handle.remove()


@torch.no_grad()
def reference_stream(hf: Any, layers: list[torch.nn.Module], ids: list[int]) -> torch.Tensor:
    """(layers + 1, T, D), float32: the first block's input, then every block's output, at
    every position, caught by hooks on the model's own blocks."""
    rows: list[torch.Tensor] = []

    def keep_in(_m: torch.nn.Module, args: tuple, kwargs: dict) -> None:
        given = args[0] if args else kwargs["hidden_states"]
        rows.append(given[0].float().clone())

    def keep_out(_m: torch.nn.Module, _args: tuple, output: object) -> None:
        out = output[0] if isinstance(output, (tuple, list)) else output
        rows.append(out[0].float().clone())

    handles = [layers[0].register_forward_pre_hook(keep_in, with_kwargs=True)]
    handles += [block.register_forward_hook(keep_out) for block in layers]
    try:
        hf(input_ids=torch.tensor([ids]), use_cache=False)
    finally:
        for handle in handles:
            handle.remove()
    return torch.stack(rows)


def reference_blocks(hf: Any, layers: list[torch.nn.Module], ids: list[int]) -> tuple[list[torch.Tensor], torch.Tensor]:
    """(each block's input and output at the last position, as [in_0, out_0, out_1, …];
    the residual at the end)."""
    rows = list(reference_stream(hf, layers, ids)[:, -1])
    return rows, rows[-1]


@torch.no_grad()
def reference_attention(hf: Any, ids: list[int], block: int) -> torch.Tensor:
    out = hf(input_ids=torch.tensor([ids]), use_cache=False, output_attentions=True)
    return out.attentions[block - 1][0].float()


def ratio_linear(norm_out: torch.Tensor, bias: torch.Tensor, x: torch.Tensor, centred: bool) -> Callable[[torch.Tensor], torch.Tensor]:
    """A norm made linear at x from its output alone: (norm(x) − b) / x elementwise is its
    gain over x's scale (with x's mean taken off first for a LayerNorm)."""
    spread = x - x.mean() if centred else x
    gain = (norm_out - bias) / spread

    def linear(v: torch.Tensor) -> torch.Tensor:
        return (v - v.mean(-1, keepdim=True) if centred else v) * gain
    return linear


# --- the check of one family -----------------------------------------------------------------------

def hf_layers(hf: Any) -> list[torch.nn.Module]:
    """The reference model's own blocks: its module list at the path embviz found in its copy."""
    found = find_layers(hf)
    assert found is not None, "no blocks"
    return list(found[1])


def check(specimen: Specimen, open_model: Callable[[Path], Any]) -> Row:
    """Every view of embviz on this family against the references; a refusal must be one
    sentence (an EmbvizError), anything else is a crash."""
    from embviz.core.errors import EmbvizError
    from embviz.core.lm.attribution import attention_pattern, attribute, pinned_tokens
    from embviz.core.lm.drift import contextual_drift
    from embviz.core.lm.lens import logit_lens
    from embviz.core.lm.logits import next_token_logits

    row = Row(specimen.family)
    hf = specimen.hf

    def view(name: str, fn: Callable[[], None]) -> None:
        try:
            fn()
            row.views[name] = "exact"
        except EmbvizError as exc:
            row.views[name] = str(exc)
        except AssertionError as exc:
            row.views[name] = f"WRONG: {exc}"
        except Exception as exc:  # noqa: BLE001 - the zoo's table names every crash
            row.views[name] = f"CRASH: {type(exc).__name__}: {str(exc)[:200]}"

    try:
        model = open_model(specimen.folder)
    except Exception as exc:  # noqa: BLE001
        row.views["open"] = f"CRASH: {type(exc).__name__}: {str(exc)[:200]}"
        return row
    ids = model.vocab.encode_for_model(TEXT)
    logits = reference_logits(hf, ids)

    def logits_view() -> None:
        result = next_token_logits(model, TEXT, k=5)
        assert [r.id for r in result.results] == logits[-1].topk(5).indices.tolist(), "top 5 differ"
        got = torch.tensor([r.logit for r in result.results])
        assert torch.allclose(got, logits[-1][[r.id for r in result.results]], rtol=1e-5, atol=1e-5), "logits differ"

    view("logits", logits_view)

    def lens_view() -> None:
        result = logit_lens(model, TEXT, k=3)
        layers = hf_layers(hf)
        assert len(result.layer_names) == len(layers) + 1, "layer count"
        for layer in range(len(layers) + 1):
            want = reference_lens(hf, layers, ids, layer)
            got_ids = torch.tensor(result.cells.ids[layer]).long()  # (T, k)
            got = torch.tensor(result.cells.logits[layer])
            expected = want.gather(1, got_ids)
            assert torch.allclose(got, expected, rtol=1e-4, atol=1e-4), f"layer {layer} logits differ"
            assert torch.allclose(got[:, 0], want.max(-1).values, rtol=1e-4, atol=1e-4), f"layer {layer} top differs"
        probs = torch.softmax(logits[-1], -1)
        assert torch.allclose(torch.tensor(result.cells.probs[-1, -1]), probs[result.cells.ids[-1, -1]], atol=1e-5), \
            "last row's probabilities"

    view("lens", lens_view)

    def drift_view() -> None:
        result = contextual_drift(model, "king", ["the king and the queen", "a king of france"])
        stream, _ = reference_blocks(hf, hf_layers(hf), model.vocab.encode_for_model("a king"))
        assert len(result.layer_names) == len(stream), "layer count"

    view("drift", drift_view)

    def pin_view() -> None:
        result = pinned_tokens(model, TEXT, [int(logits[-1].argmax())])
        want = torch.softmax(logits[-1], -1)[int(logits[-1].argmax())]
        assert math.isclose(result.pinned[0].probs[-1], float(want), rel_tol=1e-4, abs_tol=1e-6), "pinned last layer"

    view("pin", pin_view)

    def attribution_view() -> None:
        result = attribute(model, TEXT)
        lm_ = model.language_model()
        anatomy = lm_.anatomy
        rows, final = reference_blocks(hf, hf_layers(hf), ids)
        target = result.target_id
        assert math.isclose(result.logit, float(logits[-1, target]), rel_tol=1e-5, abs_tol=1e-5), "logit"
        split = result.uncapped_logit if result.uncapped_logit is not None else result.logit
        assert abs(sum(p.value for p in result.parts) - split) <= 1e-3 * max(1.0, abs(split)), "parts' sum"
        # Each block's two parts against its write through the final norm made linear from its
        # output alone, and the head's row (scaled as the model scales its logits).
        norm = anatomy.final_norm
        if norm is not None:
            with torch.no_grad():
                out = norm(final[None, None])[0, 0].float()
                bias = norm(torch.zeros_like(final)[None, None])[0, 0].float()
            centred = abs(float(norm(torch.ones_like(final)[None, None]).float().sub(bias).abs().max())) < 1e-6
            linear = ratio_linear(out, bias, final, centred)
        else:
            linear = lambda v: v  # noqa: E731
        w = hf.get_output_embeddings().weight[target].float() * anatomy.logit_map.factor * anatomy.pre_head
        for module in reversed(anatomy.after_norm):
            w = module.weight.float().T @ w
        by_block = {}
        for p in result.parts:
            if p.block:
                by_block[p.block] = by_block.get(p.block, 0.0) + p.value
        for b in range(1, len(anatomy.layers) + 1):
            want = float(linear(rows[b] - rows[b - 1]) @ w)
            assert math.isclose(by_block[b], want, rel_tol=1e-3, abs_tol=1e-3), f"block {b}: {by_block[b]} vs {want}"
        embedding = next(p.value for p in result.parts if p.kind == "embedding")
        assert math.isclose(embedding, float(linear(rows[0]) @ w), rel_tol=1e-3, abs_tol=1e-3), "embedding part"

    view("attribution", attribution_view)

    def heads_view() -> None:
        result = attribute(model, TEXT)
        if not any(h.head is not None for h in result.heads):
            raise EmbvizError(next((n for n in result.notes if "head" in n), "no heads"))
        for block in {h.block for h in result.heads}:
            attention = next(p.value for p in result.parts if p.block == block and p.kind == "attention")
            total = sum(h.value for h in result.heads if h.block == block)
            assert math.isclose(total, attention, rel_tol=1e-3, abs_tol=1e-3), f"block {block}'s heads"

    view("heads", heads_view)

    def attention_view() -> None:
        # The first block whose attention forms weights (a hybrid's first may be linear attention).
        if find_layers(hf) is None:
            attention_pattern(model, TEXT, block=1)  # refuses: no blocks found
        skipped = 0
        for block in range(1, len(hf_layers(hf)) + 1):
            try:
                result = attention_pattern(model, TEXT, block=block)
            except EmbvizError as exc:
                if "does not return its weights" in str(exc) and block < len(hf_layers(hf)):
                    skipped += 1
                    continue
                raise
            want = reference_attention(hf, ids, block - skipped)  # `attentions` lists the blocks that form weights
            assert tuple(result.weights.shape) == tuple(want.shape), f"shape {result.weights.shape} vs {tuple(want.shape)}"
            assert torch.allclose(torch.tensor(result.weights), want, atol=1e-5), "weights differ"
            return

    view("attention", attention_view)
    return row


VIEWS = ("logits", "lens", "drift", "pin", "attribution", "heads", "attention")


def markdown(rows: list[Row], unbuilt: dict[str, str]) -> str:
    """The family table of docs/families.md."""
    import transformers

    exact = [r for r in rows if r.status() == "exact"]
    wrong = [r for r in rows if r.status() == "wrong"]
    lines = [
        "# Families: what embviz reads exactly",
        "",
        "Generated by `python tests/zoo.py --markdown docs/families.md` (the same checks `tests/test_zoo.py` runs):",
        f"every decoder-only causal-LM family of transformers {transformers.__version__} whose config builds small",
        "offline, as a tiny random model (width 32, 2 blocks, a byte-level BPE tokenizer), checked view by view",
        "against transformers' own forward pass in the same process: the next-token logits (top 5, 1e-5), every",
        "layer of the lens (against the model's own logits with the later blocks skipped, 1e-4), drift, pinned",
        "tokens, attribution (each block's parts against its write through the final norm made linear from the",
        "norm's own output; the parts add up to the logit), heads (they add up to their block's attention part)",
        "and attention patterns (against `output_attentions`). ✓ is exact; anything else is the one sentence the",
        "view refuses with. GGUF: ✓ where a `.gguf` of the family builds its full model in seconds",
        "(`embviz.core.readers.gguf_model`, tested tensor for tensor against transformers' own GGUF load in",
        "tests/test_gguf_families.py); \"transformers\" where transformers' own GGUF loader builds it; — where",
        "neither can (the window says so in one sentence and the map, neighbours and analogies still work).",
        "",
        f"**{len(exact)} of {len(rows)} families fully exact, {len(wrong)} wrong, "
        f"{len(rows) - len(exact) - len(wrong)} refused somewhere in one sentence.**",
        "",
        "| family | " + " | ".join(VIEWS) + " | GGUF |",
        "| --- | " + " | ".join("---" for _ in VIEWS) + " | --- |",
    ]
    for row in rows:
        cells = ["✓" if row.views.get(v) == "exact" else (row.views.get(v) or "—").replace("|", "/") for v in VIEWS]
        if "open" in row.views:
            cells = [row.views["open"].replace("|", "/")] + [""] * (len(VIEWS) - 1)
        lines.append(f"| {row.family} | " + " | ".join(cells) + f" | {gguf_support(row.family)} |")
    lines += ["", "Not in the zoo: transformers itself cannot build or run these small offline "
              "(the error it gives):", ""]
    lines += [f"- {family}: {why}" for family, why in unbuilt.items()]
    lines += ["", "Left out as not decoder-only causal LMs of text: "
              + ", ".join(sorted(NOT_IN_ZOO)) + ".", ""]
    return "\n".join(lines)


def gguf_support(family: str) -> str:
    from transformers.integrations.ggml import GGUF_CONFIG_MAPPING

    from embviz.core.readers.gguf_model import FAST_ARCHITECTURES

    name = {"gemma3_text": "gemma3"}.get(family, family)
    if name in FAST_ARCHITECTURES:
        return "✓"
    return "transformers" if name in GGUF_CONFIG_MAPPING else "—"


def main(args: list[str]) -> None:
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    from conftest import make_tokenizer
    from embviz.core import open_checkpoint

    out = None
    if args[:1] == ["--markdown"]:
        out, args = Path(args[1]), args[2:]
    rows, unbuilt = [], {}
    with tempfile.TemporaryDirectory() as scratch:
        for family in args or families():
            try:
                specimen = build(family, Path(scratch) / family, make_tokenizer)
            except Exception as exc:  # noqa: BLE001
                unbuilt[family] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
                print(f"{family:24s} BUILD {unbuilt[family]}", flush=True)
                continue
            row = check(specimen, lambda folder: open_checkpoint(str(folder), "cpu"))
            rows.append(row)
            print(f"{family:24s} {row.status():15s} " + "  ".join(
                f"{k}={'ok' if v == 'exact' else v[:150]}" for k, v in row.views.items()), flush=True)
    if out is not None:
        out.write_text(markdown(rows, unbuilt), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
