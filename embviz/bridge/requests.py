"""What views ask the compute worker for: small, plain dataclasses (no Qt, no torch).

Each request names a `channel`; a newer request on the same channel makes the older
one stale (dropped if queued, cancelled if running). `lane` says which worker thread
runs it: "quick" lookups, "long" projections and benchmarks, "models" for opening a
model or its language model, and "layers" for the lens and drift (a forward pass over
every layer, up to seconds), so that none of them waits behind another.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

import numpy as np

from embviz.state.tab_state import field_default
from embviz.state.tabs import CLUSTERS_K, FIRST_ROWS, SEARCH_LIMIT, AnalogyState, NeighboursState, SimilaritiesState

WORDSET_PREFIX = "wordset:"


QUICK, LONG, MODELS, LAYERS = "quick", "long", "models", "layers"
R = TypeVar("R", bound="Request")


def from_state(request_type: type[R], state: Any, **given: Any) -> R:
    """A request of a tab's state: each of its fields the state has too takes the state's value;
    `given` names the others (and overrides)."""
    shared = {f.name for f in fields(request_type) if f.init} & {f.name for f in fields(state)}
    return request_type(**{name: getattr(state, name) for name in shared - given.keys()}, **given)


@dataclass
class Request:
    request_id: int = field(default=0, init=False)
    # The model generation the asker shows; None means "whatever is loaded when submitted".
    generation: int | None = field(default=None, init=False)
    # Likewise the second model the asker compares with (requests that need one).
    comparison_generation: int | None = field(default=None, init=False)

    channel = "request"
    lane = QUICK
    needs_model = True
    needs_comparison = False  # runs on the pair of models (LoadComparison's), not the first alone


@dataclass
class LoadModel(Request):
    """Open a checkpoint: cancels every job of the old model; installed only if not superseded."""

    source: str | None = None
    device: str = "auto"
    expect: dict[str, Any] | None = None  # a saved session's model fingerprint (and name) it must match
    channel = "load"
    lane = MODELS
    needs_model = False  # it makes the next model; the one it was asked of does not matter


@dataclass
class LoadLanguageModel(Request):
    """Build the full model behind the logits tab (seconds; memory-checked first)."""

    channel = "language-model"
    lane = MODELS


@dataclass
class LoadComparison(Request):
    """Open a second model beside the first, to compare with it (or pair the first with its
    own output head). The first model stays whether or not it opens; opening another first
    model drops it."""

    source: str | None = None  # with against "model": the second checkpoint; None for the default model
    device: str = "auto"
    against: str = "model"  # or "output": the first model's own output head (untied), no file read
    # With against "model": both models' input tables, or both output heads ("output"). Not
    # `table`: that name has the registry swap the first model for its head before pairing.
    tables: str = "input"
    channel = "load-comparison"
    lane = MODELS


@dataclass
class Compare(Request):
    """Every shared token's k nearest neighbours in both models, and how alike they are;
    the dominoes of `tokens` (typed literally, in either model's spelling)."""

    k: int = 50
    tokens: list[str] = field(default_factory=list)
    channel = "compare"
    lane = LONG
    needs_comparison = True


@dataclass
class CompareToken(Request):
    """One shared token's neighbours in both models: common, only in A, only in B."""

    token: str = ""
    k: int = 50
    channel = "compare-token"
    needs_comparison = True


@dataclass
class Neighbours(Request):
    """The options are NeighboursState's (its fields say what they mean); `from_state` makes one."""

    query: int | str | list[int] = ""  # typed text, a token id, or the ids whose mean unit row is asked (a map selection)
    k: int = field_default(NeighboursState, "k")
    centered: bool = field_default(NeighboursState, "centered")
    hide_special: bool = field_default(NeighboursState, "hide_special")
    by: str = field_default(NeighboursState, "by")
    table: str = field_default(NeighboursState, "table")  # or "output": an untied model's head rows
    channel = "neighbours"


@dataclass
class WordPairs(Request):
    """The table's cosines against people's ratings: a dataset gensim ships ("wordsim353",
    "simlex999") or a file of `word1 word2 score` lines (`path`, which wins when given)."""

    dataset: str = field_default(SimilaritiesState, "dataset")
    path: str | None = None
    channel = "word-pairs"


@dataclass
class WordPairsB(WordPairs):
    """The same, for the second model a LoadComparison opened beside the first."""

    channel = "word-pairs-b"
    needs_comparison = True


@dataclass
class OddOneOut(Request):
    """Of N ≥ 3 words, the one that does not belong, and each word's cosine to the others' mean."""

    words: list[str] = field(default_factory=list)
    table: str = "input"  # or "output": an untied model's head rows
    channel = "odd-one-out"


@dataclass
class PairCosine(Request):
    """The cosine of two words, each matched to its token as the rated pairs are."""

    word1: str = ""
    word2: str = ""
    channel = "pair-cosine"


@dataclass
class Direction(Request):
    """A concept direction from one kind of input (two words, word pairs, or two word sets),
    the vocabulary ranked along it (`top` rows at each end) and `words` placed on it."""

    start: str = ""  # the "from" word
    end: str = ""  # the "to" word
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (from, to) pairs
    a_set: list[str] = field(default_factory=list)
    b_set: list[str] = field(default_factory=list)
    pca: bool = False  # the pairs' first principal component (Bolukbasi et al. 2016), not their mean difference
    top: int = 20
    words: list[str] = field(default_factory=list)
    words_only: bool = True
    channel = "direction"


@dataclass
class AssociationTest(Request):
    """What WEAT and SC-WEAT share: the attribute sets a and b, and what the p-value draws
    (random partitions, where the exact count would exceed 100,000)."""

    a: list[str] = field(default_factory=list)
    b: list[str] = field(default_factory=list)
    permutations: int = 100_000
    seed: int | None = 0


@dataclass
class Weat(AssociationTest):
    """WEAT: the paper's test `test` (1–10), or the four lists x, y, a, b when `test` is None."""

    test: int | None = None
    x: list[str] = field(default_factory=list)
    y: list[str] = field(default_factory=list)
    sampling: str = "partitions"  # or "wefe": WEFE 1.0.1's draws with replacement, for comparison
    channel = "weat"
    lane = LONG


@dataclass
class ScWeat(AssociationTest):
    """SC-WEAT: one word against the attribute sets a and b."""

    word: str = ""
    channel = "sc-weat"


@dataclass
class CosineBaseline(Request):
    """The mean cosine over all pairs of distinct rows (one pass over the table)."""

    channel = "cosine-baseline"
    lane = LONG


@dataclass
class Info(Request):
    """The model's size, width, tying, embedding share, device and dtype."""

    channel = "info"


@dataclass
class Similarity(Request):
    """The cosine of two token ids."""

    a: int = 0
    b: int = 0
    centered: bool = False
    table: str = "input"  # or "output": an untied model's head rows
    channel = "similarity"


@dataclass
class Analogy(Request):
    """The words and options are AnalogyState's (its fields say what they mean); `from_state` makes one."""

    a: int | str = ""
    b: int | str = ""
    c: int | str = ""
    k: int = field_default(AnalogyState, "k")
    exclude_inputs: bool = field_default(AnalogyState, "exclude_inputs")
    exclude_variants: bool = field_default(AnalogyState, "exclude_variants")
    method: str = field_default(AnalogyState, "method")
    hide_special: bool = field_default(AnalogyState, "hide_special")
    plane: bool = True  # also the analogy's own plane (the window draws it; the command line does not)
    table: str = field_default(AnalogyState, "table")  # or "output": an untied model's head rows
    channel = "analogy"


@dataclass
class Logits(Request):
    text: str | list[str | int] = ""  # free text, or text pieces and clicked token ids in order
    k: int = 10
    temperature: float = 1.0
    direct: bool = False
    # Sampling (embviz.core.lm.sampling): top_k 0 and top_p 1.0 are off; `steps` draws,
    # each appended before the next, the i-th with seed + i.
    top_k: int = 0
    top_p: float = 1.0
    seed: int = 0
    steps: int = 0
    list_kept: int = 0  # how many of the kept set to list (the command line's)
    channel = "logits"

    @property
    def samples(self) -> bool:
        return bool(self.top_k or self.top_p < 1 or self.steps or self.list_kept)


@dataclass
class Lens(Request):
    """The logit lens: every layer's next-token guess at each position of the text."""

    text: str = ""
    k: int = 10
    final_norm: bool = True
    channel = "lens"
    lane = LAYERS


@dataclass
class Drift(Request):
    """One word in several sentences, followed through the layers."""

    word: str = ""
    sentences: list[str] = field(default_factory=list)
    layer: int | None = None  # where to list the nearest vocabulary rows; None: the last block
    k: int = 8
    channel = "drift"
    lane = LAYERS


@dataclass
class Attribution(Request):
    """Which blocks and heads wrote one next-token logit (direct logit attribution)."""

    text: str | list[str | int] = ""
    token: str | int | None = None  # the target: a token id or one token's text; None: the top guess
    position: int | None = None  # 0-based; None: the last token
    channel = "attribution"
    lane = LAYERS


@dataclass
class Attention(Request):
    """One block's attention weights over the text, its heads ranked by their part of a logit."""

    text: str | list[str | int] = ""
    block: int = 1  # 1…N, as the lens names blocks
    head: int | None = None  # 0-based; None: every head
    token: str | int | None = None  # the logit that ranks the heads, as in Attribution
    position: int | None = None
    channel = "attention"
    lane = LAYERS


@dataclass
class PinnedTokens(Request):
    """Some tokens' probability and rank at every layer (the lens), after one position."""

    text: str | list[str | int] = ""
    tokens: list[str | int] = field(default_factory=list)
    position: int | None = None  # None: the last token
    channel = "pinned-tokens"
    lane = LAYERS


@dataclass
class Steer(Request):
    """The next-token guess before and after α · (a residual norm) · unit(start → end) is added
    to the residual stream after one layer, at every position."""

    text: str = ""
    start: str = ""
    end: str = ""
    layer: int = 0  # 0: the embedding output; L: after block L
    alpha: float = 0.0
    k: int = 10
    watch: list[str | int] = field(default_factory=list)  # empty: the two words' own tokens
    channel = "steer"
    lane = LAYERS


@dataclass
class DirectionLayers(Request):
    """The residual stream at one position projected on unit(start → end), layer by layer."""

    text: str = ""
    start: str = ""
    end: str = ""
    position: int | None = None  # None: the last token
    channel = "direction-layers"
    lane = LAYERS


@dataclass
class Project(Request):
    method: str = "pca"  # or "tsne", "umap", "axes"
    subset: str = "all"  # "all", "first" (the first `limit` ids) or "words"
    limit: int = FIRST_ROWS
    first: int | None = None  # of "all" or "words", only the first N (the command line's --limit)
    axes: tuple[str, str, str, str] = ("man", "woman", "man", "king")  # "axes": x from → to, y from → to
    sample: int | None = None  # t-SNE, UMAP: lay out this many sampled rows, place the others by their neighbours
    dims: int = 2  # 2 or 3 components
    table: str = "input"  # or "output": an untied model's head rows
    channel = "project"
    lane = LONG


@dataclass
class VectorStrips(Request):
    """The raw rows of some typed words, for the colour strips of the Vectors tab."""

    words: list[str] = field(default_factory=list)
    channel = "vectors"


@dataclass
class LessonNumbers(Request):
    """The numbers a lesson step shows beside the tabs: the rows some ids fetch (a row
    lookup), and the shapes a text goes through, with the table's share of the model."""

    ids: list[int] | None = None
    text: str | None = None
    channel = "lesson"


@dataclass
class Faithfulness(Request):
    """How many of each row's 10 nearest rows in the table a drawn map keeps. Asked
    after the map is drawn, on the long lane: a lookup never waits for it."""

    ids: np.ndarray | None = None  # the map's row ids
    coords: np.ndarray | None = None  # and its coordinates
    table: str = "input"  # the table the map was drawn of
    channel = "faithfulness"
    lane = LONG


@dataclass
class Clusters(Request):
    """Clusters of the rows on the map: communities of the table's neighbour graph or
    k-means of every row's direction (cached per model and k), or HDBSCAN of the map's own
    2-D points; each cluster named by its central whole words."""

    method: str = "graph"  # or "kmeans", or "hdbscan"
    k: int = CLUSTERS_K
    ids: np.ndarray | None = None  # the map's row ids
    coords: np.ndarray | None = None  # and its coordinates (HDBSCAN clusters those)
    table: str = "input"  # the table the map was drawn of
    channel = "clusters"
    lane = LONG


@dataclass
class PointValues(Request):
    """A value per map point to colour it by: its token kind, its id or its row's length."""

    by: str = "kind"  # or "id", "norm"
    ids: np.ndarray | None = None  # the map's row ids
    table: str = "input"  # the table the map was drawn of (a row's length is that table's)
    channel = "point-values"


@dataclass
class Search(Request):
    pattern: str = ""
    regex: bool = False
    substring: bool = False  # plain text: any token containing it, not whole tokens only
    limit: int = SEARCH_LIMIT
    channel = "search"


@dataclass
class WordSet(Request):
    name: str = ""
    words: list[str] = field(default_factory=list)

    @property
    def channel(self) -> str:  # type: ignore[override]
        return WORDSET_PREFIX + self.name  # sets resolve independently of each other


@dataclass
class Benchmark(Request):
    path: str | None = None
    table: str = "input"  # or "output": an untied model's head rows
    channel = "benchmark"
    lane = LONG


@dataclass
class CacheSize(Request):
    """Bytes in embviz's cache folder."""

    channel = "cache"
    needs_model = False


@dataclass
class ClearCache(Request):
    """Empty the cache folder; on the models lane, so no open is writing to it meanwhile."""

    channel = "clear-cache"
    lane = MODELS
    needs_model = False


@dataclass
class ExportPage(Request):
    """Write the interactive page (one offline HTML file): the map of every row, each row's
    nearest neighbours, the next-token bars after `text`, the model's name and fingerprint."""

    path: str = ""
    views: tuple[str, ...] = ("map", "neighbours", "logits")
    text: str = "The capital of France is"
    method: str = "pca"
    channel = "export-page"
    lane = LONG
