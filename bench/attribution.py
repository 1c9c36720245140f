"""Attribution on SmolLM2 beside a plain transformers forward pass with hooks doing the same sums.

    .venv/bin/python bench/attribution.py [--repeat 5]

embviz: `attribute` of the last position of a 20-token text, every block and head, with the
prefix cache holding the text (what typing one more word costs), and one block's attention
pattern. Baseline: an uncached forward pass with hooks on every attention output and every
output projection's input, then the same linearised-norm sums per block and per head. Prints
one JSON line per figure (median seconds of `--repeat` runs).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

TEXT = "The capital of France is a city that many people visit every year because it is"


def timed(fn, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


@torch.no_grad()
def hooks_baseline(hf, ids: list[int], target: int) -> float:
    """The block and head parts of `target`'s last logit from one uncached pass with hooks (Llama layout)."""
    base, position = hf.base_model, len(ids) - 1
    attn_out, heads_in, final = {}, {}, []
    hooks = [base.norm.register_forward_pre_hook(lambda _m, args: final.append(args[0][0, position]))]
    for n, layer in enumerate(base.layers):
        hooks.append(layer.self_attn.register_forward_hook(
            lambda _m, _a, out, n=n: attn_out.__setitem__(n, out[0][0, position])))
        hooks.append(layer.self_attn.o_proj.register_forward_pre_hook(
            lambda _m, args, n=n: heads_in.__setitem__(n, args[0][0, position])))
    try:
        out = hf(input_ids=torch.tensor([ids]), use_cache=False, output_hidden_states=True)
    finally:
        for h in hooks:
            h.remove()
    x, w = final[0], hf.lm_head.weight[target]
    scale = base.norm.weight / torch.sqrt(x.pow(2).mean() + base.norm.variance_epsilon)
    hidden = [h[0, position] for h in out.hidden_states]
    parts = [float((hidden[0] * scale) @ w)]
    head_parts = []
    heads = hf.config.num_attention_heads
    for n, layer in enumerate(base.layers):
        block_out = hidden[n + 1] if n + 1 < len(base.layers) else x
        parts += [float((attn_out[n] * scale) @ w), float(((block_out - hidden[n] - attn_out[n]) * scale) @ w)]
        d = heads_in[n].shape[0] // heads
        weight = layer.self_attn.o_proj.weight
        head_parts += [float(((weight[:, h * d:(h + 1) * d] @ heads_in[n][h * d:(h + 1) * d]) * scale) @ w)
                       for h in range(heads)]
    return sum(parts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from embviz.core import open_checkpoint
    from embviz.core.device import limit_compute_threads
    from embviz.core.lm.attribution import attention_pattern, attribute

    limit_compute_threads()
    model = open_checkpoint(None, "cpu")
    model.load_language_model()
    first = attribute(model, TEXT)  # the prefix cache now holds the text
    hf = model.language_model().model
    ids = model.vocab.encode_for_model(TEXT)
    target = first.target_id
    figures = {
        "attribution, cached prefix (s)": timed(lambda: attribute(model, TEXT), args.repeat),
        "hooks baseline, uncached pass (s)": timed(lambda: hooks_baseline(hf, ids, target), args.repeat),
        "attention pattern, one block (s)": timed(lambda: attention_pattern(model, TEXT, 24), args.repeat),
    }
    figures["ratio attribution / baseline"] = figures["attribution, cached prefix (s)"] / figures[
        "hooks baseline, uncached pass (s)"]
    agrees = abs(hooks_baseline(hf, ids, target) - first.logit) <= 1e-3 * max(1.0, abs(first.logit))
    print(json.dumps({"tokens": len(ids), "baseline's parts add up to embviz's logit": agrees,
                      **{k: round(v, 4) for k, v in figures.items()}}))


if __name__ == "__main__":
    main()
