"""The compute core: torch and numpy only, no Qt.

Everything the GUI and the CLI show is computed here, from one `EmbeddingModel`
returned by `open_checkpoint`. The names below load on first use, so importing one
light module of the core (a constant, the errors) does not import torch.
"""

import os
from typing import Any

# transformers and huggingface_hub otherwise print progress bars and advice on every load.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

from embviz.core.errors import Cancelled, EmbvizError

_LAZY = {"open_checkpoint": "embviz.core.checkpoint", "EmbeddingModel": "embviz.core.model"}

__all__ = ["Cancelled", "EmbvizError", "EmbeddingModel", "open_checkpoint"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'embviz.core' has no attribute {name!r}")
