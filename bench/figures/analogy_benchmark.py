"""8: the analogy benchmark, alone and beside a busy core, against the same matrix products alone."""

from __future__ import annotations

import contextlib

import torch

from bench.figures import Context, Figure
from bench.measure import BusyCore, paired_times


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    model = ctx.model()
    from embviz.core.table.analogy_benchmark import evaluate, read_questions, token_form
    from embviz.core.table.similarity import unit_table

    units = unit_table(model)
    # Quick mode: an eighth of the questions.
    questions = read_questions()
    if args.quick:
        questions = questions[::8]
    kept = [tuple(token_form(model, w) for w in q.words) for q in questions]
    quads = torch.tensor([r for r in kept if None not in r], device=model.device)

    def floor():
        with torch.inference_mode():
            for start in range(0, len(quads), 1024):
                qq = quads[start:start + 1024]
                (units[qq[:, 1]] - units[qq[:, 0]] + units[qq[:, 2]]) @ units.T

    for busy in (False, True):
        with BusyCore() if busy else contextlib.nullcontext():
            ours, base = paired_times(lambda: evaluate(model, questions), floor, max(1, args.repeats // 3))
        record(8, f"analogy benchmark ({len(quads):,} questions kept)" + (", beside a process busy on one core" if busy else ""),
               ours, "s", base, "the same matrix products alone", "≤ 1.3×", note="timed by turns with the floor")


FIGURE = Figure(8, run, order=102, model=True)
