"""What identifies a model's table well enough to tell, when a saved session is
re-opened, that the file at its path still holds the same model: the vocabulary's
text and the lengths of a few rows. The norms are compared with a tolerance, so the
same checkpoint on another device or in another dtype still matches. A row with no length (NaN,
Inf) is None, so the fingerprint is JSON."""

from __future__ import annotations

import hashlib
import math
from typing import TYPE_CHECKING, Any

import torch

from embviz.core.errors import EmbvizError

if TYPE_CHECKING:
    from embviz.core.model import EmbeddingModel

PROBE_ROWS = 16
NORM_TOLERANCE = 1e-2  # relative: bfloat16 on a GPU against float32 on the CPU


def model_fingerprint(model: EmbeddingModel) -> dict[str, Any]:
    """{"vocab_size", "dim", "vocab_sha256", "probe_norms"} of an EmbeddingModel."""
    vocab_size, dim = model.vocab_size, model.dim
    digest = labels_sha256(model.vocab.labels)
    rows = torch.linspace(0, vocab_size - 1, min(PROBE_ROWS, vocab_size)).round().long().to(model.table.device)
    norms = model.table.index_select(0, rows).float().norm(dim=1).cpu().tolist()
    # A NaN or Inf row has no length JSON can hold (a session file would not be JSON): None stands for it.
    probe = [float(n) if math.isfinite(n) else None for n in norms]
    return {"vocab_size": vocab_size, "dim": dim, "vocab_sha256": digest, "probe_norms": probe}


def labels_sha256(labels: list[str]) -> str:
    """sha256 of the labels joined by newlines, fed a few thousand labels at a time: one join
    of two million labels holds the interpreter lock for a tenth of a second, a stall of
    the window's thread when a lane computes it."""
    hasher = hashlib.sha256()
    for start in range(0, len(labels), _LABELS_PER_PIECE):
        piece = "\n".join(labels[start : start + _LABELS_PER_PIECE])
        hasher.update((("\n" if start else "") + piece).encode("utf-8", "surrogatepass"))
    return hasher.hexdigest()


_LABELS_PER_PIECE = 8192


def same_model(saved: dict[str, Any], current: dict[str, Any]) -> bool:
    """Whether two fingerprints name the same table (NaN rows match NaN rows)."""
    keys = ("vocab_size", "dim", "vocab_sha256")
    if any(saved.get(k) != current.get(k) for k in keys):
        return False
    a, b = saved.get("probe_norms"), current.get("probe_norms")
    if not isinstance(a, list) or not isinstance(b, list) or len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = _length(x), _length(y)
        if x is False or y is False:
            return False
        if x is None or y is None:
            if not (x is None and y is None):
                return False
        elif abs(x - y) > NORM_TOLERANCE * max(abs(x), abs(y), 1e-12):
            return False
    return True


def _length(value: object) -> float | None | bool:
    """A probe row's length: a finite number, None for a NaN or Inf row (older files wrote NaN),
    False for anything else."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return float(value) if math.isfinite(value) else None


def check_same_model(expected: dict[str, Any], model: EmbeddingModel) -> None:
    """Raise, naming both, when `model` is not the table `expected` describes (a
    fingerprint plus the "name" it was saved under)."""
    if same_model(expected, model_fingerprint(model)):
        return
    vocab, dim = expected.get("vocab_size"), expected.get("dim")
    saved = str(expected.get("name") or "another model")
    if isinstance(vocab, int) and isinstance(dim, int):
        saved += f" ({vocab:,} tokens × {dim} dims)"
    raise EmbvizError(
        f"This session was saved with {saved}, but {model.source or 'that source'} now holds {model.name} "
        f"({model.vocab_size:,} tokens × {model.dim} dims), a different table. Nothing was restored."
    )
