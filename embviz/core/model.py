"""`EmbeddingModel`: the table on its device, its vocabulary, an optional output
head, and the full language model, loaded only when someone asks for logits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

import torch

from embviz.core.vocab import Vocabulary


class LanguageModel(Protocol):
    """The full forward pass, as far as embviz needs it."""

    def last_logits(self, ids: list[int]) -> torch.Tensor:
        """Logits (V,) for the token after the last of `ids`."""


@dataclass
class EmbeddingModel:
    name: str
    source: str
    table: torch.Tensor  # (V, D) float32, on `device`
    vocab: Vocabulary
    device: torch.device
    storage_dtype: str  # how the checkpoint stores the table, e.g. "bfloat16"
    kind: str  # "transformer", "embedding+linear" or "table"
    head: torch.Tensor | None = None  # (V, D) when the output head is not tied
    head_bias: torch.Tensor | None = None  # (V,)
    total_params: int | None = None
    context_length: int | None = None
    notes: list[str] = field(default_factory=list)  # warnings worth showing (NaN rows, …)
    lm_loader: Callable[[], LanguageModel] | None = None
    lm_unavailable_reason: str | None = None
    cache: dict[str, Any] = field(default_factory=dict, repr=False)  # derived tensors
    _lm: LanguageModel | None = field(default=None, repr=False)

    @property
    def vocab_size(self) -> int:
        return int(self.table.shape[0])

    @property
    def dim(self) -> int:
        return int(self.table.shape[1])

    @property
    def tied(self) -> bool:
        return self.head is None

    @property
    def output_head(self) -> torch.Tensor:
        """The (V, D) matrix that scores the vocabulary: the table itself when tied."""
        return self.table if self.head is None else self.head

    @property
    def embedding_share(self) -> float | None:
        """Fraction of all parameters in the input table (seed 003's figure)."""
        if not self.total_params:
            return None
        return self.vocab_size * self.dim / self.total_params

    @property
    def head_share(self) -> float | None:
        """Fraction of all parameters in an untied output head (0 when tied)."""
        if not self.total_params:
            return None
        return 0.0 if self.head is None else self.vocab_size * self.dim / self.total_params

    def language_model(self) -> LanguageModel:
        """The full model, loaded once on first use (can take seconds and memory)."""
        from embviz.core.errors import EmbvizError

        if self._lm is None:
            if self.lm_loader is None:
                raise EmbvizError(self.lm_unavailable_reason or "This checkpoint has no full model to run.")
            self._lm = self.lm_loader()
        return self._lm

    def rows(self, ids: list[int]) -> torch.Tensor:
        """Row lookup, zero-based and in input order (seed 002): (len(ids), D)."""
        index = torch.as_tensor(ids, dtype=torch.long, device=self.device)
        return self.table.index_select(0, index)

    def info(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "kind": self.kind,
            "vocab_size": self.vocab_size,
            "dim": self.dim,
            "tied": self.tied,
            "embedding_share": self.embedding_share,
            "head_share": self.head_share,
            "total_params": self.total_params,
            "device": str(self.device),
            "dtype": self.storage_dtype,
            "context_length": self.context_length,
            "has_tokenizer": self.vocab.has_tokenizer,
            "notes": list(self.notes),
        }
