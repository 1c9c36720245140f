"""Where the files that ship with embviz live: the top-level `assets/` folder, packaged
as `embviz.assets` (pyproject maps it), so a wheel carries it too."""

from __future__ import annotations

from pathlib import Path


def assets_dir() -> Path:
    try:
        from importlib.resources import files

        path = Path(str(files("embviz.assets")))
        if path.is_dir():
            return path
    except ModuleNotFoundError:  # run from a checkout that was never installed
        pass
    return Path(__file__).resolve().parents[2] / "assets"


def asset(*parts: str) -> Path:
    return assets_dir().joinpath(*parts)
