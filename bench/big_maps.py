"""Figure 17: a two-million-row word2vec table (bench.synthetic.write_word2vec_clusters)."""

from __future__ import annotations


def fig_big_maps(args, record) -> None:
    """Records its rows through `record` (bench.run.record)."""
