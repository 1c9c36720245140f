"""A Gemma-sized synthetic checkpoint: a 262,144 × 2,304 float32 table inside a sharded
safetensors checkpoint whose other tensors are filler, written once and reused."""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import save_file

FULL = (262_144, 2_304)
QUICK = (16_384, 256)


def write_checkpoint(folder: Path, rows: int, dim: int, filler_shards: int = 2) -> Path:
    """Shard 2 holds the table; the shards around it hold as many bytes of filler."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / "config.json"
    if marker.is_file() and json.loads(marker.read_text()).get("_embviz_bench") == [rows, dim, filler_shards]:
        return folder
    g = torch.Generator().manual_seed(0)
    weight_map = {}
    names = []
    for shard in range(filler_shards + 1):
        name = f"model-{shard + 1:05d}-of-{filler_shards + 1:05d}.safetensors"
        names.append(name)
        if shard == 1:
            tensors = {"model.embed_tokens.weight": torch.randn(rows, dim, generator=g) * 0.02}
        else:
            tensors = {f"model.layers.{shard}.filler.weight": torch.empty(rows // 2, dim).uniform_(generator=g) * 0.0
                       + 1.0, f"model.layers.{shard}.filler2.weight": torch.ones(rows // 2, dim)}
        save_file(tensors, str(folder / name), metadata={"format": "pt"})
        weight_map.update({t: name for t in tensors})
        del tensors
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    marker.write_text(json.dumps({"model_type": "llama", "hidden_size": dim, "vocab_size": rows,
                                  "tie_word_embeddings": True, "_embviz_bench": [rows, dim, filler_shards]}))
    return folder
