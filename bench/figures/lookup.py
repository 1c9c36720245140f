"""4: a cosine top-10 over the whole vocabulary, alone and beside a busy core, against a plain matvec."""

from __future__ import annotations

import contextlib

import numpy as np
import torch

from bench.figures import Context, Figure
from bench.measure import BusyCore, paired_times


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    model = ctx.model()
    from embviz.core.table.similarity import nearest_neighbours, unit_table

    units = unit_table(model)
    x = units.cpu().numpy()
    query = model.vocab.resolve(" king") if model.vocab.id_of(" king") is not None else 0
    keep = model.vocab.special_filter(True)  # the window hides special tokens by default
    if model.device.type == "cpu":
        q = x[query]

        def baseline_topk():
            scores = x @ q
            top = np.argpartition(-scores, 11)[:11]
            return top[np.argsort(-scores[top])]

        baseline_name = "numpy matvec + argpartition on a pre-normalised table"
    else:
        q_dev = units[query]

        def baseline_topk():
            return torch.topk(units @ q_dev, 11).indices.cpu()

        baseline_name = f"torch matvec + topk on a pre-normalised table ({model.device.type})"
    lookup = lambda: nearest_neighbours(model, query, 10, keep=keep)  # noqa: E731
    lookup(), baseline_topk()
    for busy in (False, True):
        with BusyCore() if busy else contextlib.nullcontext():
            ours, base = paired_times(lookup, baseline_topk, args.repeats * 10)
        record(4, "cosine top-10 over the whole vocabulary, special tokens hidden"
               + (", beside a process busy on one core" if busy else ""), ours * 1000, "ms", base * 1000,
               baseline_name, "≤ 1.2×", note="timed by turns with the baseline")


FIGURE = Figure(4, run, order=101, model=True)
