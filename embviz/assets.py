"""Where the files that ship with embviz live."""

from pathlib import Path

ASSETS_DIR = Path(__file__).resolve().parent.parent / "assets"


def asset(*parts: str) -> Path:
    return ASSETS_DIR.joinpath(*parts)
