"""21: people's similarity ratings (WordSim-353, SimLex-999) scored on GloVe's 400,000 rows,
and the odd one out of four words, each beside gensim's own call on the same rows."""

from __future__ import annotations

import time

from bench.figures import Context, Figure
from bench.measure import median_time, paired_times

ODD_WORDS = ["breakfast", "cereal", "dinner", "lunch"]


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    try:
        from gensim.models import KeyedVectors

        from embviz.core import open_checkpoint

        glove = open_checkpoint("glove-6b-50d", args.device)
    except Exception as exc:  # noqa: BLE001 - the example package is an extra
        record(21, "similarity judgements on GloVe", None, "s", note=f"skipped: {exc}")
        return
    from embviz.core.table.word_pairs import DATASETS, dataset_path, odd_one_out, read_pairs, score_pairs

    kv = KeyedVectors(vector_size=glove.dim)
    kv.add_vectors(glove.vocab.texts, glove.table.float().cpu().numpy())
    rows = f"{glove.vocab_size:,} rows"
    for name, (_, title, _) in DATASETS.items():
        path = dataset_path(name)

        def ours(path=path, title=title) -> object:
            return score_pairs(glove, read_pairs(path), title)

        def theirs(path=path) -> object:
            return kv.evaluate_word_pairs(str(path), restrict_vocab=glove.vocab_size)

        if name == "wordsim353":  # the first, as a fresh model meets it: its word index is built here
            start = time.perf_counter()
            ours()
            record(21, f"{title} on GloVe's {rows}, first on a fresh table", time.perf_counter() - start, "s",
                   target="≤ 1 s", note="includes building the word index")
        mine, base = paired_times(ours, theirs, args.repeats)
        record(21, f"{title} on GloVe's {rows}", mine, "s", base, "gensim's evaluate_word_pairs, same rows", "≤ 1 s")
    mine = median_time(lambda: odd_one_out(glove, ODD_WORDS), args.repeats * 3)
    base = median_time(lambda: kv.doesnt_match(ODD_WORDS), args.repeats * 3)
    record(21, "odd one out of four words on GloVe", mine * 1000, "ms", base * 1000, "gensim's doesnt_match", "≤ 50 ms")


FIGURE = Figure(21, run, order=405)
