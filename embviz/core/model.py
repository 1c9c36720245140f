"""`EmbeddingModel`: the table on its device, its vocabulary, an optional output
head, and the full language model, loaded only when someone asks for logits."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence, TypeVar, cast

import torch

from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.table.vocab import Vocabulary

T = TypeVar("T")


class SubwordVectors(Protocol):
    """A vector for any word, from its character n-grams (a fastText model: readers.fasttext_bin)."""

    def vector(self, word: str) -> Any:
        """(D,) float32 numpy array: the mean of the word's n-gram rows, as gensim's `wv[word]`
        gives a word outside the vocabulary."""


class LanguageModel(Protocol):
    """The full forward pass, as far as embviz needs it (core.lm.causal_lm.HFLanguageModel)."""

    def last_logits(self, ids: list[int]) -> torch.Tensor:
        """Logits (V,) for the token after the last of `ids`."""

    @property
    def anatomy(self) -> Any:
        """Where the model keeps its blocks, readout and writes (core.lm.anatomy.Anatomy, which
        imports the table's code that imports this module)."""

    def run(self, ids: list[int], residuals: bool = False, hooks: Sequence[Any] = ()) -> Any:
        """The kept prefix for `ids` (its logits, and its residual stream when asked)."""

    def uncached_residual_stream(self, ids: list[int]) -> torch.Tensor:
        """(layers + 1, T, D) for text that must not replace the typing cache."""

    def uncached_pass(self, ids: list[int], hooks: Sequence[Any] = (),
                      residuals: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(logits, residual stream or None) of one hooked pass that leaves the typing cache alone."""

    def eager_forward(self, ids: list[int], hooks: Sequence[Any]) -> None:
        """One uncached pass with eager attention, hooked."""

    def forget(self) -> None:
        """Drop the typing cache."""


@dataclass
class EmbeddingModel:
    name: str
    source: str
    table: torch.Tensor  # (V, D) float32, on `device`
    vocab: Vocabulary
    device: torch.device
    storage_dtype: str  # how the checkpoint stores the table, e.g. "bfloat16"
    kind: str  # "transformer", "embedding+linear" or "table"
    head: torch.Tensor | None = None  # (V, D) when the output head is not tied, in its stored dtype
    head_bias: torch.Tensor | None = None  # (V,)
    total_params: int | None = None
    context_length: int | None = None
    notes: list[str] = field(default_factory=list)  # warnings worth showing (NaN rows, …)
    lm_loader: Callable[[], LanguageModel] | None = None
    lm_unavailable_reason: str | None = None
    subwords: SubwordVectors | None = None  # fastText: vectors for words outside the vocabulary
    cache: dict[str, Any] = field(default_factory=dict, repr=False)  # derived tensors, filled through `derived`
    # Where the window runs the language model: a child process (core.lm.process's host),
    # so that no forward pass holds the window's interpreter lock. None: in this process.
    lm_host: Any = field(default=None, repr=False)
    _lm: LanguageModel | None = field(default=None, repr=False)
    # Re-entrant: a derived value may be computed from another (the unit table from the norms).
    _derived_lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _lm_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

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

    def derived(self, key: str, compute: Callable[[], T]) -> T:
        """A value computed from the table once, by whichever thread asks first; the
        compute-worker lanes and the command line share it."""
        try:
            return cast(T, self.cache[key])
        except KeyError:
            pass
        with self._derived_lock:
            if key not in self.cache:
                self.cache[key] = compute()
            return cast(T, self.cache[key])

    @property
    def lm_loaded(self) -> bool:
        return self._lm is not None if self.lm_host is None else self.lm_host.ready

    def load_language_model(self, progress: ProgressFn = no_progress) -> LanguageModel | None:
        """Build the full model (seconds, and its float32 size in memory), once: in the child
        process of `lm_host` when there is one (nothing to return here), else in this one. A
        cancel reported through `progress` after the build leaves nothing installed."""
        if self.lm_host is not None and self.lm_loader is not None:
            self.lm_host.start(progress)
            return None
        return self._build_language_model(progress)

    def _build_language_model(self, progress: ProgressFn = no_progress) -> LanguageModel:
        if self.lm_loader is None:
            raise EmbvizError(self.lm_unavailable_reason or "This checkpoint has no full model to run.")
        with self._lm_lock:
            if self._lm is None:
                progress(0.0, "Loading the language model", None)
                lm = self.lm_loader()
                progress(1.0, "Language model loaded", None)  # raises Cancelled if asked to stop
                self._lm = lm
            return self._lm

    def language_model(self, load: bool = True) -> LanguageModel:
        """The full model; with `load=False` a model not loaded yet is an error rather than
        a wait of seconds (the window's quick lane never waits for it)."""
        if self._lm is not None:
            return self._lm
        if not load:
            raise LanguageModelNotLoaded("The language model is not loaded yet.")
        return self._build_language_model()  # in this process, even beside a child's

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


class LanguageModelNotLoaded(EmbvizError):
    """Logits were asked for on a lane that must not load the full model."""
