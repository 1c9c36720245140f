"""A corpus of hostile and broken files, made by code so every reader gets the same treatment.

Each module registers makers with `@case(name, expect)`: a function that writes one bad file (or
folder) under a directory and returns its path; `expect` is a fragment of the one-line message the
app must answer with. `python -m tests.hostile_corpus OUTDIR` writes them all for a manual run
(e.g. opening each in the window); `tests/test_hostile_corpus.py` checks each through the core and
the command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

Maker = Callable[[Path], Path]


@dataclass(frozen=True)
class Case:
    name: str
    expect: str  # a regex fragment of the one-line message
    make: Maker


CASES: dict[str, Case] = {}


def case(name: str, expect: str) -> Callable[[Maker], Maker]:
    def register(make: Maker) -> Maker:
        if name in CASES:
            raise ValueError(f"duplicate hostile case {name!r}")
        CASES[name] = Case(name, expect, make)
        return make
    return register


def load_all() -> dict[str, Case]:
    """Import every module of the corpus (each registers its cases) and return them."""
    import importlib
    import pkgutil

    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}")
    return CASES
