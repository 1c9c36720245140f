"""Where the files that ship with embviz live: the top-level `assets/` folder, packaged
as `embviz.assets` (pyproject maps it), so a wheel carries it too."""

from __future__ import annotations

from pathlib import Path


def assets_dir() -> Path:
    # A checkout's own assets/ first: an editable install of another checkout maps embviz.assets
    # to that checkout's folder, whose files may lag behind (or lack) this one's.
    own = Path(__file__).resolve().parents[2] / "assets"
    if (own / "__init__.py").is_file():
        return own
    try:
        from importlib.resources import files

        path = Path(str(files("embviz.assets")))
        if path.is_dir():
            return path
    except ModuleNotFoundError:
        pass
    return own


def asset(*parts: str) -> Path:
    return assets_dir().joinpath(*parts)
