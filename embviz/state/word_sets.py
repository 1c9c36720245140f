"""Word sets to highlight on the map: presets shipped in assets/, plus the user's own."""

from __future__ import annotations

import json

from embviz.core.resources import asset


def preset_word_sets() -> dict[str, list[str]]:
    with asset("wordsets.json").open(encoding="utf-8") as f:
        return {str(k): [str(w) for w in v] for k, v in json.load(f).items()}


def parse_word_list(text: str) -> list[str]:
    """Words separated by commas or new lines; surrounding spaces are not part of a word."""
    parts = [p.strip() for chunk in text.splitlines() for p in chunk.split(",")]
    return [p for p in parts if p]
