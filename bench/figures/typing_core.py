"""15: a keystroke at the end of a long text and the logit lens, with and without the prefix cache."""

from __future__ import annotations

import os
import statistics
import time

import torch

from bench.measure import median_time
from bench.window_session import logits_texts

from bench.figures import Context, Figure


def run(ctx: Context) -> None:
    """15: a keystroke at the end of a long text, and the logit lens, with and without the prefix cache."""
    args, record = ctx.args, ctx.record
    model = ctx.model()
    from embviz.core.lm.lens import logit_lens
    from embviz.core.lm.logits import encode_prompt, next_token_logits

    lm = model.language_model()
    long_ids = encode_prompt(model, logits_texts(args)[1][1])[:500]
    shorter = long_ids[:-1]

    def typed(forget: bool) -> float:
        times = []
        for _ in range(args.repeats):
            lm.forget()
            lm.last_logits(shorter)  # the text before the keystroke is on screen
            if forget:
                lm.forget()
            t = time.perf_counter()
            next_token_logits(model, list(long_ids), 10)
            times.append(time.perf_counter() - t)
        return statistics.median(times)

    record(15, f"logits after one more token on a {len(long_ids)}-token text (prefix cache)", typed(False) * 1000, "ms",
           typed(True) * 1000, "the whole text run again", "≤ 150 ms")
    text = "The capital of France is Paris, and the capital of Italy is Rome. So the capital of Spain is"
    n = len(encode_prompt(model, text))

    parts: dict[str, list[float]] = {"forward": [], "last column": [], "the rest": [], "cpu": []}

    def lens(forget: bool, grow: bool = False) -> float:
        times = []
        for _ in range(args.repeats):
            lm.forget()
            model.cache.pop("lens_columns", None)
            if grow:
                logit_lens(model, text.rsplit(" ", 1)[0], k=10)
            marks: list[float] = []  # the forward pass done, then each preview (the last column first)
            t, cpu = time.perf_counter(), time.process_time()
            logit_lens(model, text, k=10, progress=lambda *_: marks.append(time.perf_counter()))
            times.append(time.perf_counter() - t)
            if not grow:
                parts["cpu"].append(time.process_time() - cpu)
                parts["forward"].append(marks[0] - t)
                parts["last column"].append(marks[1] - marks[0])
                parts["the rest"].append(t + times[-1] - marks[1])
        return statistics.median(times)

    forward = median_time(lambda: (lm.forget(), lm.last_logits(encode_prompt(model, text))), args.repeats)
    whole = lens(True) * 1000
    record(15, f"logit lens of a {n}-token text, every layer, from scratch", whole, "ms",
           forward * 1000, "the forward pass alone (last position's logits)", "≤ 300 ms",
           note=f"{lm.n_layers + 1} layers × {n} positions × {model.vocab_size:,} logits; medians: "
                + ", ".join(f"{name} {statistics.median(v) * 1000:.0f} ms" for name, v in parts.items())
                + f" (CPU time, {torch.get_num_threads()} torch thread(s), {os.cpu_count()} cores)")
    record(15, "logit lens after typing the last word of that text (cached columns)", lens(False, grow=True) * 1000, "ms")


FIGURE = Figure(15, run, order=160, model=True)
