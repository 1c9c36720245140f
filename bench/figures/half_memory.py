"""Figure 19: the memory of the first next-token request on a bfloat16 checkpoint.

A synthetic Llama of 0.85B parameters stored in bfloat16 (1.7 GB of weights, random, written
once into the work folder by this bench, like figure 2's checkpoint) is asked for the next
token after TEXT by embviz (open, then `next_token_logits`, in one fresh process) and by
transformers itself (`from_pretrained(..., dtype=torch.bfloat16)` and one forward pass, in
another). Both print their top-5 logits, which must be the same, and their peak resident
memory (VmHWM); the figure is the ratio of the peaks."""

from __future__ import annotations

import json
from pathlib import Path

from bench.figures import Context, Figure
from bench.measure import LIMIT, PEAK, run_child

TEXT = "the king and the queen ruled the kingdom"
# 0.85B parameters: a 32,000-token vocabulary, width 2,048, 15 blocks, untied head.
SHAPE = dict(vocab_size=32000, hidden_size=2048, intermediate_size=5632, num_hidden_layers=15, num_attention_heads=16,
             num_key_value_heads=16, max_position_embeddings=2048, tie_word_embeddings=False)

_OURS = PEAK + LIMIT + """
import sys
sys.argv[1:] = {argv!r}
from embviz.core import open_checkpoint
from embviz.core.lm.logits import next_token_logits
model = open_checkpoint(sys.argv[1], 'cpu')
result = next_token_logits(model, sys.argv[2], k=5)
print(json.dumps({'rss': peak(), 'top': [[r.id, r.logit] for r in result.results]}))
"""

_TRANSFORMERS = PEAK + LIMIT + """
import sys
sys.argv[1:] = {argv!r}
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
tokenizer = AutoTokenizer.from_pretrained(sys.argv[1])
model = AutoModelForCausalLM.from_pretrained(sys.argv[1], dtype=torch.bfloat16).eval()
with torch.inference_mode():
    logits = model(torch.tensor([tokenizer(sys.argv[2])['input_ids']])).logits[0, -1].float()
top = logits.topk(5)
print(json.dumps({'rss': peak(), 'top': [[int(i), float(v)] for i, v in zip(top.indices, top.values)]}))
"""


def write_half_checkpoint(folder: Path) -> Path:
    """The synthetic bfloat16 Llama, written once (a tensor at a time, so that writing it
    never holds more than the file)."""
    import torch
    from safetensors.torch import save_file
    from transformers import LlamaConfig, LlamaForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    if (folder / "model.safetensors").is_file():
        return folder
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from conftest import make_tokenizer

    make_tokenizer(folder)
    config = LlamaConfig(**SHAPE)
    with torch.device("meta"):
        shapes = {name: p.shape for name, p in LlamaForCausalLM(config).state_dict().items()}
    generator = torch.Generator().manual_seed(0)
    tensors = {}
    for name, shape in shapes.items():
        if "norm" in name:
            tensors[name] = torch.ones(shape, dtype=torch.bfloat16)
        else:
            tensors[name] = (torch.randn(shape, generator=generator) * 0.02).to(torch.bfloat16)
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config.dtype = torch.bfloat16
    config.save_pretrained(str(folder))
    (folder / "parameters.json").write_text(json.dumps(sum(t.numel() for t in tensors.values())))
    return folder


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    folder = write_half_checkpoint(Path(args.workdir) / "half-llama")
    params = json.loads((folder / "parameters.json").read_text())
    env = {"HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"}
    argv = [str(folder), TEXT]
    ours = run_child(_OURS.replace("{argv!r}", repr(argv)), env)
    theirs = run_child(_TRANSFORMERS.replace("{argv!r}", repr(argv)), env)
    same = [a[0] for a in ours["top"]] == [b[0] for b in theirs["top"]]
    record(19, f"peak memory of the first next-token request, {params / 1e9:.2f}B-parameter bfloat16 Llama",
           ours["rss"] / 2**20, "MiB", baseline=theirs["rss"] / 2**20,
           baseline_name="transformers' from_pretrained(dtype=bfloat16) + one forward", target="≤ 1.25×",
           note=f"weights {params * 2 / 2**20:,.0f} MiB; top-5 {'same tokens' if same else 'DIFFERENT tokens'}")


# Full runs only: it writes a 1.7 GB checkpoint and loads it twice.
FIGURE = Figure(19, run, order=440, full_only=True)
