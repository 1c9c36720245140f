"""The lesson models, openable by a short name (files in assets/lessons/)."""

from __future__ import annotations

from pathlib import Path

from embviz.asset_files import asset

LESSONS: dict[str, tuple[str, str]] = {
    "spells": ("spells.safetensors", "Hand-set 5-token embedding + linear model (<eos>, I, cast, heal, fireball)"),
    "toy4": ("toy4.safetensors", "4-token toy table (cat, dog, car, truck), tied as its own output head"),
}


def lesson_path(name: str) -> Path | None:
    key = name.removeprefix("lesson:").strip().lower()
    if key not in LESSONS:
        return None
    return asset("lessons", LESSONS[key][0])
