"""23: a concept direction on the default model: every row ranked along he → she (against a
plain matvec and partition on a pre-normalised table), and one WEAT with 10,000 random
permutations (against WEFE's own WEAT on the same rows and lists)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from bench.figures import Context, Figure
from bench.measure import median_time, paired_times

DRAWS = 10_000  # the figure, and WEFE's default number of iterations
WEAT_TEST = 8  # science vs arts, male vs female terms: every word a whole token in SmolLM2


def run(ctx: Context) -> None:
    args, record = ctx.args, ctx.record
    model = ctx.model()
    from embviz.core.table.directions import concept_direction, ranked_rows, two_word_direction
    from embviz.core.table.similarity import unit_table
    from embviz.core.table.weat import paper_test, weat

    direction, _ = two_word_direction(model, "he", "she")
    concept_direction(model, start="he", end="she")  # the unit table and the row mask, built once
    units = unit_table(model).cpu().numpy()
    keep = ranked_rows(model)
    g = np.asarray(direction, dtype=np.float32)

    def baseline_rank() -> object:
        scores = np.where(keep, units @ g, np.nan)
        finite = np.nan_to_num(scores, nan=-np.inf)
        return np.argpartition(-finite, 20)[:20], np.argpartition(np.nan_to_num(scores, nan=np.inf), 20)[:20]

    mine, base = paired_times(lambda: concept_direction(model, start="he", end="she"), baseline_rank, args.repeats * 3)
    record(23, f"rank {int(keep.sum()):,} whole words along he → she, both ends", mine * 1000, "ms", base * 1000,
           "numpy matvec + two argpartitions on a pre-normalised table", "≤ 16 ms (a frame)")

    name, lists = paper_test(WEAT_TEST)

    def ours() -> object:
        return weat(model, *lists, name=name, permutations=DRAWS, exact_limit=0)  # draws, not the 12,870 partitions

    found = ours()
    note = f"d = {found.effect_size:.3f}, p = {found.p_value:.4f} over {DRAWS:,} seeded draws"
    mine, base = median_time(ours, args.repeats), None
    if args.quick:
        note += "; WEFE not run in a quick run (its 10,000 iterations take minutes)"
    else:
        try:
            base = median_time(_wefe_weat(model, found), 1)  # once: about two minutes on 2 cores
        except ImportError as exc:
            note += f"; WEFE is not installed ({exc})"
    record(23, f"{name} with {DRAWS:,} random permutations", mine * 1000, "ms", base * 1000 if base else None,
           f"WEFE 1.0.1's WEAT, {DRAWS:,} iterations, same rows", "≤ 1 s, off the window's thread", note)


def _wefe_weat(model: Any, found: Any) -> Callable[[], object]:
    """WEFE's WEAT on the rows embviz kept for each list, by the same words."""
    from gensim.models import KeyedVectors
    from wefe.metrics import WEAT
    from wefe.query import Query
    from wefe.word_embedding_model import WordEmbeddingModel

    sets = [found.x, found.y, found.a, found.b]
    words = {w.word: w.id for s in sets for w in s.kept}
    kv = KeyedVectors(vector_size=model.dim)
    kv.add_vectors(list(words), model.rows(list(words.values())).cpu().numpy())
    wem = WordEmbeddingModel(kv, model.name)
    query = Query([[w.word for w in s.kept] for s in sets[:2]], [[w.word for w in s.kept] for s in sets[2:]])
    return lambda: WEAT().run_query(query, wem, calculate_p_value=True, p_value_iterations=DRAWS)


FIGURE = Figure(23, run, order=165, model=True)
