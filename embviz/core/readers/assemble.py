"""Turn tensors read from any format into an `EmbeddingModel` on its device."""

from __future__ import annotations

from typing import Callable

import torch

from embviz.core.device import GPU_HEADROOM, free_bytes, human_bytes
from embviz.core.errors import EmbvizError
from embviz.core.model import EmbeddingModel, LanguageModel
from embviz.core.table.similarity import ROW_CHECKS, ROW_NORMS, row_checks
from embviz.core.table.vocab import Vocabulary


def _row_report(ids: torch.Tensor, what: tuple[str, str], vocab: Vocabulary, why: str = "") -> str:
    """"1 row is all zeros (ids 0: <eos>); …": `what` for one row and for several, and the
    tokens named, so a class sees which ones."""
    n = ids.numel()
    listed = ids[:8].tolist()
    more = ", …" if n > 8 else ""
    names = ", ".join(vocab.labels[i][:20] for i in listed if i < len(vocab.labels))
    it = "they score" if n > 1 else "it scores"
    return (f"{n} row{'s' if n > 1 else ''} {what[n > 1]} (ids {', '.join(map(str, listed))}{more}"
            f"{': ' + names + more if names else ''}); {it} 0 in cosine similarity.{why}")


def assemble(
    *,
    name: str,
    source: str,
    table: torch.Tensor,
    vocab: Vocabulary,
    device: torch.device,
    kind: str,
    head: torch.Tensor | None = None,
    head_bias: torch.Tensor | None = None,
    total_params: int | None = None,
    context_length: int | None = None,
    notes: list[str] | None = None,
    lm_loader: Callable[[], LanguageModel] | None = None,
    lm_unavailable_reason: str | None = None,
    storage_dtype: str | None = None,
    norms: torch.Tensor | None = None,
) -> EmbeddingModel:
    """The model of `table` on `device`, its NaN, Inf and zero rows noted; `norms` (each row's
    length, as torch computes it) spares a pass over the table when a cache kept them."""
    if table.ndim != 2 or table.shape[0] < 1 or table.shape[1] < 1:
        raise EmbvizError(f"The embedding table has shape {list(table.shape)}; expected rows × columns, both at least 1.")
    if not table.dtype.is_floating_point:
        raise EmbvizError(f"The embedding table holds {table.dtype} values, not floating-point numbers.")
    if head is not None and tuple(head.shape) != tuple(table.shape):
        raise EmbvizError(f"The output head has shape {list(head.shape)} but the table has {list(table.shape)}.")
    notes = list(notes or [])
    storage_dtype = storage_dtype or str(table.dtype).removeprefix("torch.")  # how the file stores it
    table = _to_device(table, device, notes)
    device = table.device
    if norms is None or norms.shape != table.shape[:1]:
        norms = torch.linalg.vector_norm(table, dim=1)
    else:
        norms = norms.to(device=device, dtype=torch.float32)
    finite, zero = row_checks(table, norms)
    if not bool(finite.all()):
        notes.append(_row_report((~finite).nonzero().flatten().cpu(),
                                 ("has NaN or Inf values", "have NaN or Inf values"), vocab))
    if bool(zero.any()):
        notes.append(_row_report(zero.nonzero().flatten().cpu(), ("is all zeros", "are all zeros"), vocab,
                                 " Padding and end-of-text rows are often zero on purpose."))
    if head is not None:
        # Kept as stored (a bfloat16 head widened would cost as much as a quarter of a small model's
        # weights again); the direct path widens it when it is used.
        head = head.to(device=device, dtype=head.dtype if head.dtype.is_floating_point else torch.float32)
    if head_bias is not None:
        head_bias = head_bias.to(device=device, dtype=torch.float32)
    model = EmbeddingModel(
        name=name, source=source, table=table, vocab=vocab, device=device, storage_dtype=storage_dtype,
        kind=kind, head=head, head_bias=head_bias, total_params=total_params, context_length=context_length,
        notes=notes, lm_loader=lm_loader, lm_unavailable_reason=lm_unavailable_reason,
    )
    # similarity needs them too: one pass over the table is enough
    model.cache[ROW_NORMS], model.cache[ROW_CHECKS] = norms, (finite, zero)
    return model


def _to_device(table: torch.Tensor, device: torch.device, notes: list[str]) -> torch.Tensor:
    """float32 on the device; a GPU without room for it falls back to the CPU with a note."""
    need = table.numel() * 4
    if device.type != "cpu":
        free = free_bytes(device)
        if free is not None and need > GPU_HEADROOM * free:
            notes.append(f"The table needs {human_bytes(need)} but {device} has {human_bytes(free)} free: using the CPU.")
            device = torch.device("cpu")
        else:
            try:
                return table.to(device=device, dtype=torch.float32)
            except (RuntimeError, torch.OutOfMemoryError):
                notes.append(f"{device} ran out of memory for the table: using the CPU.")
                device = torch.device("cpu")
    return table.to(dtype=torch.float32) if table.dtype != torch.float32 else table
