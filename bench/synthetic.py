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


BIG_ROWS = (2_000_000, 300)
BIG_QUICK = (50_000, 64)


def write_word2vec_clusters(path: Path, rows: int, dim: int, clusters: int = 1_000, seed: int = 0) -> Path:
    """A word2vec binary (word2vec.c's layout: a newline after each vector) of `rows` unit-scale
    vectors around `clusters` Gaussian centres, words `w0000000`…; written once, in chunks, and reused."""
    import numpy as np

    marker = path.with_name(path.name + ".done")
    if path.is_file() and marker.is_file() and marker.read_text() == f"{rows} {dim} {clusters} {seed}":
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim)).astype(np.float32)
    width = len(str(rows - 1))
    record = np.dtype([("word", f"S{width + 2}"), ("vec", "<f4", (dim,)), ("nl", "S1")])
    with path.open("wb") as f:
        f.write(f"{rows} {dim}\n".encode())
        for start in range(0, rows, 100_000):
            n = min(100_000, rows - start)
            chunk = np.empty(n, dtype=record)
            chunk["word"] = [f"w{i:0{width}d} ".encode() for i in range(start, start + n)]
            members = rng.integers(0, clusters, size=n)
            chunk["vec"] = centres[members] + 0.5 * rng.normal(size=(n, dim)).astype(np.float32)
            chunk["nl"] = b"\n"
            f.write(chunk.tobytes())
    marker.write_text(f"{rows} {dim} {clusters} {seed}")
    return path
