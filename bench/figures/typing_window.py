"""15 in the window: a word typed at the end of a long text → bars; the lens tab, its last column
first and then the whole grid, from scratch and after typing its last word."""

from __future__ import annotations

import statistics
import time

from bench.figures import Context, Figure
from bench.measure import wait
from bench.window_session import LENS_TEXT, logits_texts


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    session = ctx.window()
    app, window = session.app, session.window
    panel = window.logits
    long_label, long_text = logits_texts(args)[1]

    def typed(tab, text: str, shown) -> float:
        t = time.perf_counter()
        tab.set_text(text)  # what the debounce timer ends in; the debounce itself is not counted
        rid = tab.asking.id
        wait(app, lambda: shown(rid), 120)
        return time.perf_counter() - t

    appended = []
    for _ in range(args.repeats):
        typed(panel, long_text, lambda rid: panel.shown_id == rid)
        appended.append(typed(panel, long_text + " sat", lambda rid: panel.shown_id == rid))
    record(15, f"logits: one word typed at the end of a {long_label} text → bars drawn in the window",
           statistics.median(appended) * 1000, "ms", target="≤ 150 ms")
    # 15: the lens in the window: its last column (the model's own answer through every layer)
    # first, then the whole grid; the language model runs in its child process.
    from embviz.core.lm.process import forget_text, run_lm

    lens, model = window.lens, window.worker.model
    lens_text = LENS_TEXT
    window.tabs.setCurrentWidget(lens)
    drawn = lambda rid: lens.shown_id == rid  # noqa: E731
    read_from: dict[int, float] = {}  # request id → when the window heard that its forward pass was done

    def heard(_channel, rid, _fraction, stage, _preview) -> None:
        if stage == "Reading every layer":
            read_from.setdefault(rid, time.perf_counter())

    window.worker.progressed.connect(heard)
    cold, first_column, after_forward, forward, warm = [], [], [], [], []
    for _ in range(args.repeats):
        run_lm(model, forget_text)  # the child's typing cache and kept columns: from scratch
        t = time.perf_counter()
        lens.set_text(lens_text)  # what the debounce timer ends in; the debounce itself is not counted
        rid = lens.asking.id
        wait(app, lambda: (lens.asking.id == rid and lens.preview_started and bool(lens.drawn)) or drawn(rid), 120)
        shown = time.perf_counter()
        wait(app, lambda: drawn(rid), 120)
        cold.append(time.perf_counter() - t)
        first_column.append(shown - t)
        forward.append(read_from[rid] - t)
        after_forward.append(shown - read_from[rid])
        typed(lens, lens_text.rsplit(" ", 1)[0], drawn)
        warm.append(typed(lens, lens_text, drawn))
    window.worker.progressed.disconnect(heard)
    n_tokens, fwd = len(lens.result.tokens), statistics.median(forward) * 1000
    record(15, f"logit lens tab: a {n_tokens}-token text pasted → last column drawn (every layer)",
           statistics.median(first_column) * 1000, "ms", fwd, "the forward pass (request → heard done)")
    record(15, "logit lens tab: last column drawn after the forward pass was done",
           statistics.median(after_forward) * 1000, "ms", target="≤ 100 ms")
    record(15, f"logit lens tab: a {n_tokens}-token text pasted → whole grid drawn", statistics.median(cold) * 1000,
           "ms", fwd, "the forward pass, as above", "≤ 300 ms")
    record(15, "logit lens tab: its last word typed → grid drawn", statistics.median(warm) * 1000, "ms",
           target="≤ 300 ms")


FIGURE = Figure(15, run, order=310, window=True)
