"""Figure 18: the first next-token request on the default model (SmolLM2-135M, Q4_1 GGUF).

Each run is a fresh process with an empty cache folder (EMBVIZ_CACHE_DIR), timed from after its
imports of embviz (or of transformers, for the baseline) to the logits: embviz opens the file and
asks for the next token after TEXT; the baseline is transformers' own GGUF tokenizer and model
load (`from_pretrained(..., gguf_file=...)`) and one forward pass. Both print their top-5 logits,
which must agree to 1e-5, and their peak resident memory (VmHWM)."""

from __future__ import annotations

import statistics
import tempfile

from bench.figures import Context, Figure
from bench.measure import LIMIT, PEAK, run_child

TEXT = "The capital of France is"

_OURS = PEAK + LIMIT + f"""
import time
from embviz.core import open_checkpoint
from embviz.core.lm.logits import next_token_logits
t0 = time.perf_counter()
model = open_checkpoint(None, 'cpu')
t1 = time.perf_counter()
result = next_token_logits(model, {TEXT!r}, k=5)
t2 = time.perf_counter()
print(json.dumps({{'open': t1 - t0, 'request': t2 - t0, 'rss': peak(),
                   'top': [[r.id, r.logit] for r in result.results]}}))
"""

_TRANSFORMERS = PEAK + LIMIT + f"""
import time
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from embviz.core.default_model import default_model_path
path = default_model_path()
t0 = time.perf_counter()
tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32).eval()
with torch.inference_mode():
    logits = model(torch.tensor([tokenizer.encode({TEXT!r})])).logits[0, -1]
t1 = time.perf_counter()
top = logits.topk(5)
print(json.dumps({{'request': t1 - t0, 'rss': peak(), 'top': [[int(i), float(v)] for i, v in zip(top.indices, top.values)]}}))
"""


def _fresh(code: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="embviz-bench-cache-") as cache:
        return run_child(code, {"EMBVIZ_CACHE_DIR": cache, "HF_HUB_OFFLINE": "1", "TQDM_DISABLE": "1"})


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    repeats = 1 if args.quick else 3
    # Interleaved, so that a machine busy for a while slows both alike.
    runs = [(_fresh(_OURS), _fresh(_TRANSFORMERS)) for _ in range(repeats)]
    ours = [o for o, _ in runs]
    theirs = [t for _, t in runs]
    differs = max(abs(a[1] - b[1]) for o, t in runs for a, b in zip(o["top"], t["top"]))
    same_ids = all([a[0] for a in o["top"]] == [b[0] for b in t["top"]] for o, t in runs)
    record(18, "first next-token request on the default model (empty cache: open + logits)",
           statistics.median(r["request"] for r in ours), "s",
           baseline=statistics.median(r["request"] for r in theirs),
           baseline_name="transformers' GGUF tokenizer + model load + one forward", target="≤ 6 s",
           note=f"open alone {statistics.median(r['open'] for r in ours):.2f} s; imports apart; "
                f"top-5 {'same tokens' if same_ids else 'DIFFERENT tokens'}, logits within {differs:.1e}; "
                f"peak RSS {max(r['rss'] for r in ours) / 2**20:,.0f} MiB vs "
                f"{max(r['rss'] for r in theirs) / 2**20:,.0f} MiB; median of {repeats}")


FIGURE = Figure(18, run, order=430)
