"""PyTorch pickle checkpoints (.pt, .bin), loaded with weights_only=True: a file
that asks to build arbitrary objects or call functions is refused, never run."""

from __future__ import annotations

import pickle
from pathlib import Path

import torch

from embviz.core.errors import EmbvizError, first_line
from embviz.core.readers.regular_file import require_regular, shown


def load_torch_state_dict(path: Path) -> dict[str, torch.Tensor]:
    """A pickle checkpoint, loaded with weights_only=True so it cannot run code."""
    require_regular(path)  # torch.load would wait forever on a FIFO
    name = shown(path.name)
    try:
        try:
            obj = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        except RuntimeError as exc:
            if "mmap" not in str(exc):
                raise
            obj = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        if "GLOBAL" in str(exc):
            raise EmbvizError(
                f"Refused to load {name}: it asks to run code or build objects that a plain weights file "
                "does not need (only tensors are allowed)."
            ) from exc
        raise EmbvizError(f"{name} is not a readable PyTorch checkpoint (not a plain pickle of tensors).") from exc
    except (IndexError, TypeError, UnicodeDecodeError, MemoryError, OverflowError, RecursionError) as exc:
        # Random bytes read as pickle opcodes fail in any of these ways; their words mean nothing to a user.
        raise EmbvizError(f"{name} is not a readable PyTorch checkpoint (not a plain pickle of tensors).") from exc
    except (RuntimeError, EOFError, ValueError, OSError, AttributeError, KeyError) as exc:
        raise EmbvizError(f"{name} is not a readable PyTorch checkpoint ({first_line(exc, 160)}).") from exc
    if isinstance(obj, dict) and "state_dict" in obj and isinstance(obj["state_dict"], dict):
        obj = obj["state_dict"]
    if not isinstance(obj, dict):
        raise EmbvizError(f"{name} holds a {type(obj).__name__}, not a dictionary of tensors.")
    return {str(k): v for k, v in obj.items() if isinstance(v, torch.Tensor)}
