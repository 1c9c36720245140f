"""7: logits in the window, a space typed and deleted by turns: request → bars drawn, beside the core call."""

from __future__ import annotations

import statistics
import time

from bench.figures import Context, Figure
from bench.measure import median_time, wait
from bench.window_session import logits_texts


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    session = ctx.window()
    app, window = session.app, session.window
    panel = window.logits
    for label, text in logits_texts(args):
        times = []
        for i in range(args.repeats * 2):
            panel.text.blockSignals(True)
            panel.text.setPlainText(text + " " * (i % 2))
            panel.text.blockSignals(False)
            t = time.perf_counter()
            panel.run()  # what the debounce timer calls; the debounce itself (120 ms) is not counted
            rid = panel.asking.id
            wait(app, lambda: panel.shown_id == rid, 120)
            times.append(time.perf_counter() - t)
        from embviz.core.lm.logits import next_token_logits

        model = window.worker.model
        lm = model.language_model()
        core_t = median_time(lambda: (lm.forget(), next_token_logits(model, text, 10)), args.repeats)
        record(7, f"logits, {label} text, a space typed and deleted by turns: request → bars drawn in the window",
               statistics.median(times[1:]) * 1000, "ms", core_t * 1000, "the core call on the whole text, no cache",
               "≤ 150 ms (short text)")


FIGURE = Figure(7, run, order=300, window=True)
