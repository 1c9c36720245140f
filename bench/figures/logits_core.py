"""7 without a window (--no-gui): the logits core call on a short and a long text."""

from __future__ import annotations



from bench.measure import median_time
from bench.window_session import logits_texts

from bench.figures import Context, Figure


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    model = ctx.model()
    from embviz.core.lm.logits import next_token_logits

    lm = model.language_model()
    for label, text in logits_texts(args):
        t = median_time(lambda: (lm.forget(), next_token_logits(model, text, 10)), args.repeats)
        record(7, f"logits, {label} text: the core call (full forward pass + top 10)", t * 1000, "ms")


FIGURE = Figure(7, run, order=140, model=True, only_without_gui=True)
