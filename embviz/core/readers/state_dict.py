"""A plain state dict (.safetensors or .pt) holding an nn.Embedding weight and
optionally an nn.Linear head, with a vocabulary file beside it: the lessons'
"embedding + linear" model, whose logits are head(embedding(id)) with no context."""

from __future__ import annotations

import math
from pathlib import Path

import torch

from embviz.core.errors import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.readers.assemble import assemble
from embviz.core.readers.torch_pickle import load_torch_state_dict
from embviz.core.readers.names import find_embedding, find_head, find_head_bias
from embviz.core.readers.regular_file import read_json, read_text, shown
from embviz.core.readers.safetensors_file import load_tensor, read_header
from embviz.core.table.vocab import Vocabulary, vocabulary_from_ids, vocabulary_from_words


def vocab_file_for(path: Path) -> Path | None:
    for candidate in (path.with_suffix(".vocab.json"), path.with_suffix(".vocab.txt"), path.parent / "vocab.json", path.parent / "vocab.txt"):
        if candidate.is_file():
            return candidate
    return None


def read_word_list(path: Path) -> list[str]:
    """A JSON list of tokens, a JSON {token: id} map, or one token per line."""
    if path.suffix == ".json":
        data = read_json(path)
        if isinstance(data, list) and all(isinstance(w, str) for w in data):
            return data
        if isinstance(data, dict) and all(isinstance(v, int) and not isinstance(v, bool) for v in data.values()):
            if max(data.values(), default=-1) >= len(data):
                # ids past the number of tokens would leave holes (and a few bytes could ask for billions)
                raise EmbvizError(f"{shown(path.name)} gives ids up to {max(data.values()):,} for {len(data):,} tokens.")
            words = [""] * (max(data.values(), default=-1) + 1)
            for word, i in data.items():
                if i >= 0:
                    words[i] = word
            return words
        raise EmbvizError(f"{shown(path.name)} should be a list of tokens or a {{token: id}} map.")
    return read_text(path).splitlines()


def open_state_dict(path: Path, device: torch.device, name: str | None = None) -> EmbeddingModel:
    path = Path(path)
    if path.suffix == ".safetensors":
        infos = read_header(path)
        shapes = {n: i.shape for n, i in infos.items()}

        def get(tensor_name: str) -> torch.Tensor:
            return load_tensor(infos[tensor_name])
    else:
        state = load_torch_state_dict(path)
        shapes = {n: tuple(t.shape) for n, t in state.items()}
        def get(tensor_name: str) -> torch.Tensor:
            return state[tensor_name]
    table_name = find_embedding(shapes)
    table = get(table_name)
    head_name = find_head(shapes, tuple(table.shape))
    head = get(head_name) if head_name else None
    bias_name = find_head_bias(shapes, head_name, table.shape[0]) if head_name else None
    head_bias = get(bias_name) if bias_name else None
    notes: list[str] = []
    vocab_path = vocab_file_for(path)
    vocab: Vocabulary
    if vocab_path is None:
        vocab = vocabulary_from_ids(table.shape[0])
        notes.append("No vocabulary file beside the weights (expected NAME.vocab.json or vocab.txt): tokens are shown by id.")
    else:
        words = read_word_list(vocab_path)
        if len(words) != table.shape[0]:
            notes.append(f"{vocab_path.name} lists {len(words)} tokens; the table has {table.shape[0]} rows.")
        vocab = vocabulary_from_words(words, table.shape[0])
    total = sum(math.prod(s) for s in shapes.values())
    return assemble(
        name=name or path.stem, source=str(path), table=table, vocab=vocab, device=device, kind="embedding+linear",
        head=head, head_bias=head_bias, total_params=total, notes=notes,
    )

