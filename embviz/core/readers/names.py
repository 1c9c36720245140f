"""Which tensor is the embedding table and which the output head, by name and shape."""

from __future__ import annotations

from typing import Mapping, Sequence

from embviz.core.errors import EmbvizError
from embviz.core.readers.regular_file import shown

# Suffixes in order of preference; position embeddings (wpe) are never candidates.
EMBEDDING_SUFFIXES = (
    "embed_tokens.weight", "wte.weight", "word_embeddings.weight", "embed_in.weight",
    "tok_embeddings.weight", "token_embedding.weight", "tok_emb.weight", "token_embd.weight",
    "embedding.weight", "embeddings.weight", "embed.weight", "emb.weight",
    "tokens_embed.weight",  # GPT-1
    "transformer.w.weight",  # CTRL
)
HEAD_SUFFIXES = ("lm_head.weight", "embed_out.weight", "output.weight", "head.weight", "linear.weight", "unembed.weight")


def _match(names: Sequence[str], suffixes: Sequence[str]) -> str | None:
    for suffix in suffixes:
        hits = sorted((n for n in names if n == suffix or n.endswith("." + suffix)), key=len)
        if hits:
            return hits[0]
    return None


def find_embedding(shapes: Mapping[str, tuple[int, ...]]) -> str:
    """Name of the (V, D) input table; a clear error listing what was found otherwise."""
    two_d = [n for n, s in shapes.items() if len(s) == 2]
    name = _match(two_d, EMBEDDING_SUFFIXES)
    if name is None and len(two_d) == 1 and len(shapes) <= 3:
        name = two_d[0]  # a bare table saved on its own
    if name is None:
        found = ", ".join(f"{shown(n)[:80]} {list(s)}" for n, s in list(shapes.items())[:12])
        more = f" and {len(shapes) - 12} more" if len(shapes) > 12 else ""
        raise EmbvizError(
            "No embedding table found. Expected a 2-D tensor named like "
            f"'model.embed_tokens.weight', 'transformer.wte.weight' or 'embedding.weight'; found: {found or 'nothing'}{more}."
        )
    return name


def find_head(shapes: Mapping[str, tuple[int, ...]], table_shape: tuple[int, ...]) -> str | None:
    """Name of an output head shaped like the table, or None (tied weights)."""
    same = [n for n, s in shapes.items() if tuple(s) == tuple(table_shape)]
    return _match(same, HEAD_SUFFIXES)


def find_head_bias(shapes: Mapping[str, tuple[int, ...]], head_name: str, vocab_size: int) -> str | None:
    bias = head_name[: -len("weight")] + "bias"
    return bias if tuple(shapes.get(bias, ())) == (vocab_size,) else None
