"""The compute core: torch and numpy only, no Qt.

Everything the GUI and the CLI show is computed here, from one `EmbeddingModel`
returned by `open_checkpoint`.
"""

import os

# transformers and huggingface_hub otherwise print progress bars and advice on every load.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

from embviz.core.errors import Cancelled, EmbvizError
from embviz.core.checkpoint import open_checkpoint
from embviz.core.model import EmbeddingModel

__all__ = ["Cancelled", "EmbvizError", "EmbeddingModel", "open_checkpoint"]
