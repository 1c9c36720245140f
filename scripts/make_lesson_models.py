"""Writes the two lesson models into assets/lessons/ from the numbers in the lessons.

spells: seed 000's hand-set nn.Embedding(5, 2) + nn.Linear(2, 5).
toy4:   seed 004's 4 × 3 toy table (cat, dog, car, truck), used as its own output head.
"""

import json
from pathlib import Path

import torch
from safetensors.torch import save_file

OUT = Path(__file__).resolve().parent.parent / "assets" / "lessons"


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    spells = {
        "embedding.weight": torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 1.0]]),
        "head.weight": torch.tensor([[0.0, 0.0], [0.0, 0.5], [1.0, 0.0], [0.0, 1.0], [-1.0, 2.0]]),
        "head.bias": torch.zeros(5),
    }
    save_file(spells, str(OUT / "spells.safetensors"), metadata={"lesson": "000: token ids to vocabulary logits"})
    (OUT / "spells.vocab.json").write_text(json.dumps(["<eos>", "I", "cast", "heal", "fireball"]) + "\n")
    toy4 = {"embedding.weight": torch.tensor([[2.0, 3.0, 0.0], [3.0, 2.0, 0.0], [0.0, 1.0, 3.0], [1.0, 0.0, 3.0]])}
    save_file(toy4, str(OUT / "toy4.safetensors"), metadata={"lesson": "004: embeddings and logits"})
    (OUT / "toy4.vocab.json").write_text(json.dumps(["cat", "dog", "car", "truck"]) + "\n")


if __name__ == "__main__":
    main()
