"""What the handlers answer the window: plain types (numpy, no torch, no Qt), which a panel
types its callbacks with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from embviz.core.table.results import AnalogyPlane, AnalogyResult, Hit

if TYPE_CHECKING:
    from embviz.core.maps.clusters import Cluster

@dataclass
class ModelSummary:
    info: dict[str, Any]
    labels: list[str]
    text_enabled: bool
    text_disabled_reason: str | None
    generation: int = 0  # which load of the worker this model is
    lm_needed: bool = False  # full-model logits need a LoadLanguageModel first
    fingerprint: dict[str, Any] = field(default_factory=dict)  # what a saved session checks against
    lens_reason: str | None = None  # why the lens and drift tabs cannot run here; None when they can
    max_clusters: int = 0  # the largest k that k-means accepts on this model
    word_rows: int = 0  # rows that Rows ▸ Whole words would keep


@dataclass
class LessonNumbersView:
    rows: list[tuple[int, str, list[float]]] | None  # (id, label, the fetched row), in input order
    tokens: list[str]  # the text's tokens as the model sees them
    shapes: list[tuple[str, tuple[int, ...]]] | None  # ("ids", (B, T)), ("embeddings", (B, T, D)), ("logits", (B, T, V))
    tied: bool
    embedding_share: float | None
    head_share: float | None
    total_params: int | None
    table: list[tuple[int, str, list[float]]] | None = None  # every row, for a table small enough to show


@dataclass
class NeighboursView:
    query_id: int
    query_label: str
    hits: list[Hit]  # ranked by `by`
    centered: bool
    by: str = "cosine"
    cosines: list[float] = field(default_factory=list)  # of each hit, whichever ranked it
    dots: list[float] = field(default_factory=list)
    lengths: list[float] = field(default_factory=list)  # each hit's row length
    query_length: float = 0.0


@dataclass
class AnalogyView:
    input_ids: list[int]
    input_labels: list[str]
    result: AnalogyResult
    plane: AnalogyPlane | None = None  # of the inputs and the answer, when there is one
    no_plane: str = ""  # why there is none, in one sentence, when one was asked for


@dataclass
class StripsView:
    ids: list[int]
    labels: list[str]
    rows: np.ndarray  # (len(ids), D) raw rows, as the table holds them
    missing: list[str] = field(default_factory=list)  # words that are not one token here


@dataclass
class WordSetView:
    name: str
    ids: list[int]
    missing: list[str] = field(default_factory=list)


@dataclass
class PointValuesView:
    by: str  # "kind", "id" or "norm"
    ids: np.ndarray  # the map's row ids, as asked
    values: np.ndarray  # one per id: a kind's index into `names`, or a number for a gradient
    names: list[str] = field(default_factory=list)  # the kinds, for "kind"


@dataclass
class ClustersView:
    method: str
    k: int | None
    ids: np.ndarray  # the map's row ids, as asked
    codes: np.ndarray  # (len(ids),) int32 cluster of each, -1 for none (HDBSCAN's noise)
    clusters: list[Cluster]  # (name, size, examples, readable), numbered by size: cluster 0 is the largest
    largest_readable: list[int] = field(default_factory=list)  # the biggest clusters named by whole words, for a status line
    coarse: list[Cluster] = field(default_factory=list)  # the clusters merged into a few groups, for a map seen whole
    coarse_of: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))  # (len(clusters),) coarse group of each


@dataclass
class ComparisonSummary:
    """What opening the second model tells the window: the model, and what the two share."""

    info: dict[str, Any]
    names: tuple[str, str]  # A's and B's, as the comparison's text says them
    shared: int
    only_a: int
    only_b: int
    rule: str
    notes: list[str]


@dataclass(frozen=True)
class TokenScore:
    token: str  # A's exact text
    label: str
    jaccard: float

    def as_dict(self) -> dict[str, Any]:
        return {"token": self.token, "label": self.label, "jaccard": self.jaccard}


@dataclass(frozen=True)
class DominoesView:
    token: str
    label: str
    jaccard: float
    common: list[tuple[str, str]]  # (text, label), nearest first in A
    only_a: list[tuple[str, str]]
    only_b: list[tuple[str, str]]  # nearest first in B

    def as_dict(self) -> dict[str, Any]:
        def texts(words: list[tuple[str, str]]) -> list[str]:
            return [text for text, _ in words]

        return {"token": self.token, "label": self.label, "jaccard": self.jaccard,
                "common": texts(self.common), "only_a": texts(self.only_a), "only_b": texts(self.only_b)}


@dataclass
class CompareView:
    names: tuple[str, str]
    shared: int
    only_a: int
    only_b: int
    k: int
    mean_jaccard: float
    cka: float | None  # None: undefined, and a note says why
    procrustes_mean: float | None  # mean cosine distance after rotating A onto B; None for unequal widths
    rule: str
    notes: list[str]
    least_similar: list[TokenScore]
    most_similar: list[TokenScore]
    tokens: list[DominoesView]
    ids_a: np.ndarray  # every shared token, for a view of all of them
    ids_b: np.ndarray
    jaccard: np.ndarray
    procrustes: np.ndarray | None
    words: list[str]  # each shared token as matched ("march"): what CompareToken accepts for any of them
    neighbours_a: np.ndarray  # (n, k) positions into the shared tokens, nearest first: the window exports them
    neighbours_b: np.ndarray
    whole_a: np.ndarray  # (n,) bool: each shared token is a whole word in A (see Vocabulary.whole_words)

    def as_dict(self) -> dict[str, Any]:
        return {"shared": self.shared, "only_a": self.only_a, "only_b": self.only_b, "k": self.k,
                "mean_jaccard": self.mean_jaccard, "cka": self.cka,
                "least_similar": [t.as_dict() for t in self.least_similar],
                "most_similar": [t.as_dict() for t in self.most_similar],
                "tokens": [t.as_dict() for t in self.tokens]}
