"""What the tabs show, as small Qt-free objects that the widgets follow: one source of
truth each, testable without a window, and what a saved session is made of.

The tab states are psygnal `@evented` dataclasses (napari's models): setting a field emits
`state.events.<field>` when the value changes, and the bound widgets follow it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from psygnal import SignalGroup, evented

from embviz.core.table import compare_k
from embviz.core.table.results import TABLES
from embviz.state.tab_state import one_of, ranged, tab_state

# The window's defaults, named once (the requests and the command line take them from here).
# A field's `ranged` limits are what a saved session may hold: the window's own, with room to
# spare, so a file cannot ask for a billion neighbours.
CLUSTERS_K = 50  # k-means clusters
FIRST_ROWS = 5000  # Rows ▸ First N ids
SEARCH_LIMIT = 500  # search hits marked on the map


@dataclass
class WordSetsState:
    """The word sets offered, which are ticked, and the token ids of the ticked ones on
    the model shown. The list's ticks, the map's dots and the legend all come from here:
    a set is drawn only while it is ticked and resolved on the current model."""

    names: list[str] = field(default_factory=list)
    ticked: list[str] = field(default_factory=list)  # in tick order
    resolved: dict[str, list[int]] = field(default_factory=dict)

    def set_names(self, names: list[str]) -> None:
        """A new list of sets (one was added): ticks and ids of the sets kept survive."""
        self.names = list(names)
        self.ticked = [n for n in self.ticked if n in self.names]
        self.resolved = {n: ids for n, ids in self.resolved.items() if n in self.ticked}

    def tick(self, name: str, on: bool) -> None:
        if on and name not in self.ticked and name in self.names:
            self.ticked.append(name)
        elif not on and name in self.ticked:
            self.ticked.remove(name)
            self.resolved.pop(name, None)

    def is_ticked(self, name: str) -> bool:
        return name in self.ticked

    def resolve(self, name: str, ids: list[int]) -> bool:
        """Store the ids a lookup found; False (and nothing stored) for a set unticked
        while its lookup was on the way."""
        if name not in self.ticked:
            return False
        self.resolved[name] = list(ids)
        return True

    def model_changed(self) -> None:
        """Ids belong to one vocabulary: the ticks stay, the ids are looked up again."""
        self.resolved.clear()

    def shown(self) -> dict[str, list[int]]:
        """The sets to draw, in tick order."""
        return {n: self.resolved[n] for n in self.ticked if n in self.resolved}


@dataclass
class PromptState:
    """The logits prompt as text pieces and clicked token ids, in order.

    A clicked bar appends its exact id: the text box shows the token's text, but
    re-tokenising that text need not give the id back (a byte piece of an emoji
    decodes to "�"). Typing after the last piece keeps the pieces before it; an edit
    anywhere else turns the prompt back into plain text."""

    parts: list[tuple[str, int | None]] = field(default_factory=list)  # (shown text, id or None)

    @property
    def text(self) -> str:
        return "".join(t for t, _ in self.parts)

    def set_text(self, text: str) -> None:
        """The text box now holds `text` (typed or pasted)."""
        if text == self.text:
            return
        fixed = self.parts[:-1] if self.parts and self.parts[-1][1] is None else self.parts
        prefix = "".join(t for t, _ in fixed)
        if any(i is not None for _, i in fixed) and text.startswith(prefix):
            tail = text[len(prefix):]
            self.parts = fixed + ([(tail, None)] if tail else [])
        else:
            self.parts = [(text, None)] if text else []

    def append_token(self, token_id: int, text: str) -> None:
        self.parts.append((text, int(token_id)))

    def request_prompt(self) -> str | list[str | int]:
        """Plain text when no id was clicked, else the pieces in order."""
        if all(i is None for _, i in self.parts):
            return self.text
        return [t if i is None else i for t, i in self.parts]


@dataclass(eq=False)  # compared by identity: its arrays have no single truth value
class ProjectionState:
    """A finished map: which rows, where, and the caption it was shown with."""

    method: str
    subset: str
    limit: int
    ids: np.ndarray  # int64 row ids
    coords: np.ndarray  # float32, (len(ids), 2 or 3)
    caption: str = ""
    table: str = "input"  # or "output": the table whose rows were mapped


@tab_state("map")
@evented
@dataclass
class MapState:
    if TYPE_CHECKING:
        events: ClassVar[SignalGroup]  # psygnal's: a signal per field

    method: str = one_of("pca", "tsne", "umap", "axes")
    subset: str = one_of("all", "first", "words")
    limit: int = ranged(FIRST_ROWS, 1, 10_000_000)
    labels_on: bool = True
    search: str = ""
    regex: bool = False
    substring: bool = False
    word_sets: WordSetsState = field(default_factory=WordSetsState)
    projection: ProjectionState | None = None
    view_range: list[float] | None = None  # x0, x1, y0, y1 of the zoom shown
    axis_x: str = "man, woman"  # word-pair axes: from, to
    axis_y: str = "man, king"
    table: str = one_of(*TABLES)  # the rows mapped: an untied model's head rows, or its embedding's
    colour_by: str = one_of("none", "kind", "id", "norm", "cluster")
    # the neighbour graph's communities, k-means, or HDBSCAN of the map's points
    cluster_method: str = one_of("graph", "kmeans", "hdbscan")
    clusters_k: int = ranged(CLUSTERS_K, 1, 10_000)
    selection: list[int] = field(default_factory=list)  # ids picked with the rectangle or lasso
    drag_mode: str = one_of("pan", "rect", "lasso")  # what a drag on the map does
    contours: bool = False  # density contours under the points
    dims: int = ranged(2, 2, 3)  # a map in two or three dimensions
    # The 3-D map's camera (pyqtgraph's GLViewWidget options), in degrees and map units;
    # a distance of 0 and no centre: fit the cloud.
    camera_distance: float = ranged(0.0, 0.0, 1e12)
    camera_elevation: float = ranged(20.0, -90.0, 90.0)
    camera_azimuth: float = ranged(-60.0, -360.0, 360.0)
    camera_centre: list[float] | None = None  # x, y, z

    def __post_init__(self) -> None:
        # name: (the user's value, the one a model needed instead); not a field: sessions keep the user's
        self._fitted: dict[str, tuple[Any, Any]] = {}

    def fit_to_model(self, max_clusters: int, word_rows: int) -> str:
        """Change the settings a new model cannot honour (k beyond its rows, whole words
        when it has none) to the nearest it can; one sentence naming the changes, or "".
        First the changes the last model needed are undone, where the user has not changed
        them since: a small model's limits do not stay with the next one."""
        for name, (chosen, fitted) in self._fitted.items():
            if getattr(self, name) == fitted:
                setattr(self, name, chosen)
        self._fitted = {}
        changes = []
        k = min(self.clusters_k, max_clusters)
        if k < 2 and self.colour_by == "cluster":  # one row cannot be split into clusters
            self._fit("colour_by", "none")
            changes.append("no colours, as one row cannot be clustered")
        elif k != self.clusters_k and k >= 2:
            self._fit("clusters_k", k)
            changes.append(f"k = {k} clusters, the most it allows")
        if self.subset == "words" and word_rows == 0:
            self._fit("subset", "all")
            changes.append("all rows, as it has no whole words")
        return f"Map settings changed to fit this model: {' and '.join(changes)}." if changes else ""

    def forget_fits(self) -> None:
        """The values now on screen are the user's (a restored session's): the next model
        must not put back what they were before the last model's clamp."""
        self._fitted = {}

    def _fit(self, name: str, value: Any) -> None:
        self._fitted[name] = (getattr(self, name), value)
        setattr(self, name, value)


@tab_state("neighbours")
@evented
@dataclass
class NeighboursState:
    if TYPE_CHECKING:
        events: ClassVar[SignalGroup]  # psygnal's: a signal per field

    word: str = ""
    query: int | str | list[int] | None = None  # the last one asked: typed text, a clicked id, or a selection's ids
    k: int = ranged(10, 1, 10_000)
    centered: bool = False
    hide_special: bool = True  # hide special tokens and byte pieces that are not whole characters
    by: str = one_of("cosine", "dot")  # dot: the rows' lengths count too
    table: str = one_of(*TABLES)  # output: an untied model's head rows


@tab_state("analogies")
@evented
@dataclass
class AnalogyState:
    if TYPE_CHECKING:
        events: ClassVar[SignalGroup]  # psygnal's: a signal per field

    a: str = ""
    b: str = ""
    c: str = ""
    exclude_inputs: bool = True
    exclude_variants: bool = False  # also the inputs' case and space variants (␣Paris, Paris, paris…)
    method: str = one_of("add", "mul")
    k: int = ranged(10, 1, 10_000)
    hide_special: bool = True
    table: str = one_of(*TABLES)  # output: an untied model's head rows


@tab_state("vectors")
@evented
@dataclass
class VectorsState:
    if TYPE_CHECKING:
        events: ClassVar[SignalGroup]  # psygnal's: a signal per field

    words: str = "king, man, woman, queen"


@tab_state("logits")
@evented
@dataclass
class LogitsState:
    if TYPE_CHECKING:
        events: ClassVar[SignalGroup]  # psygnal's: a signal per field

    prompt: PromptState = field(default_factory=PromptState)
    k: int = ranged(10, 1, 10_000)
    temperature: float = ranged(1.0, 0.01, 100.0)
    direct: bool = False
    by_id: bool = False
    hold_axis: bool = False
    top_k: int = ranged(0, 0, 10_000)  # 0: off
    top_p: float = ranged(1.0, 0.01, 1.0)  # 1.0: off
    seed: int = ranged(0, 0, 999_999)  # the next draw's; each draw moves it on by one
    steps: int = ranged(5, 1, 200)  # tokens a Step draws


@tab_state("lens")
@evented
@dataclass
class LensState:
    if TYPE_CHECKING:
        events: ClassVar[SignalGroup]  # psygnal's: a signal per field

    text: str = "The capital of France is"
    final_norm: bool = True


@tab_state("drift")
@evented
@dataclass
class DriftState:
    if TYPE_CHECKING:
        events: ClassVar[SignalGroup]  # psygnal's: a signal per field

    word: str = "bank"
    sentences: str = "I sat on the river bank.\nShe paid the cash into the bank."  # one per line
    layer: int = ranged(-1, -1, 100_000)  # where the nearest vocabulary rows are listed; −1: the last block


# CompareState.source of the first model's own output head beside its input table (a file of
# that name in the working folder reads as this, and is not opened).
OWN_OUTPUT = "#output-table"


@tab_state("compare")
@evented
@dataclass
class CompareState:
    """The Compare tab: the second model, how many neighbours each token's score counts,
    the token whose neighbours are shown, the score range brushed, the list's order."""

    if TYPE_CHECKING:
        events: ClassVar[SignalGroup]  # psygnal's: a signal per field

    source: str | None = None  # how the second model was opened (OWN_OUTPUT: the model's own head); None while there is none
    k: int = ranged(compare_k.DEFAULT_K, *compare_k.K_RANGE)
    token: str = ""  # the focused token, as matched in both models ("march")
    low: float = ranged(0.0, 0.0, 1.0)  # the brushed score range, inclusive
    high: float = ranged(1.0, 0.0, 1.0)
    order: str = one_of("descending", "ascending")  # most alike first (what a class looks for first), or least
    words_only: bool = True  # list whole words only: the pieces' scores say little to a class
    table: str = one_of(*TABLES)  # both models' input tables, or both (untied) output heads


@tab_state("attribution")
@evented
@dataclass
class AttributionState:
    if TYPE_CHECKING:
        events: ClassVar[SignalGroup]  # psygnal's: a signal per field

    text: str = "The capital of France is"
    token: str = ""  # the target token's text (␣ for a space); "": the model's top guess
    position: int = ranged(-1, -1, 1_000_000)  # the position whose next-token logit is split; −1: the last
    head_block: int = ranged(0, 0, 100_000)  # the block (1…N) of the head whose attention is shown; 0: the top head's
    head: int = ranged(-1, -1, 100_000)  # 0-based; −1: the block's top head
    pinned: str = "␣Paris, ␣London"  # tokens followed through the layers, comma-separated
    compare: bool = False  # prompt B beside prompt A, and their difference
    text_b: str = "The capital of Italy is"

    def pinned_tokens(self) -> list[str]:
        return [t.strip() for t in self.pinned.split(",") if t.strip()]


@tab_state("similarities")
@evented
@dataclass
class SimilaritiesState:
    """People's similarity ratings against the model's cosines: which set of rated pairs, and
    one pair of the user's own whose cosine is shown beside them."""

    if TYPE_CHECKING:
        events: ClassVar[SignalGroup]  # psygnal's: a signal per field

    dataset: str = one_of("wordsim353", "simlex999", "file")
    path: str = ""  # the user's file of `word1 word2 score` lines, when dataset is "file"
    pair: str = "cup mug"  # two words, space-separated


@tab_state("odd-one-out")
@evented
@dataclass
class OddOneOutState:
    if TYPE_CHECKING:
        events: ClassVar[SignalGroup]  # psygnal's: a signal per field

    words: str = "breakfast cereal dinner lunch"  # space- or comma-separated

    def word_list(self) -> list[str]:
        return [w for w in self.words.replace(",", " ").split() if w]


@tab_state("directions")
@evented
@dataclass
class DirectionsState:
    """The Directions tab: a concept direction from one kind of input, the words placed on it,
    an optional second direction for a scatter, and one WEAT test."""

    if TYPE_CHECKING:
        events: ClassVar[SignalGroup]  # psygnal's: a signal per field

    source: str = one_of("words", "pairs", "sets")  # which input makes the direction
    start: str = "he"
    end: str = "she"
    pairs: str = "man:woman, king:queen, he:she"  # from:to, comma-separated
    pca: bool = False  # the pairs' first principal component (Bolukbasi et al.), not their mean difference
    a_set: str = "he him his man"
    b_set: str = "she her hers woman"
    words: str = "doctor nurse engineer teacher programmer homemaker surgeon receptionist"
    words_only: bool = True
    second: bool = False  # a second direction: the words on a scatter, x the first, y the second
    second_start: str = "small"
    second_end: str = "big"
    weat_test: int = ranged(7, 0, 10)  # the paper's test 1–10; 0: the user's own four sets
    x: str = "math algebra geometry calculus"
    y: str = "poetry art dance literature"
    a: str = "male man boy brother he"
    b: str = "female woman girl sister she"
    permutations: int = ranged(100_000, 1, 10_000_000)

    def pair_list(self) -> list[tuple[str, str]]:
        pairs = []
        for item in self.pairs.split(","):
            start, _, end = item.partition(":")
            if start.strip() or end.strip():
                pairs.append((start.strip(), end.strip()))
        return pairs


@tab_state("steering")
@evented
@dataclass
class SteeringState:
    """The Steering tab: a text, the direction from → to, the layer after which α · s_L · the
    direction is added, and α (in units of s_L, the residual's mean length there)."""

    if TYPE_CHECKING:
        events: ClassVar[SignalGroup]  # psygnal's: a signal per field

    text: str = "The doctor said that"
    start: str = "he"
    end: str = "she"
    layer: int = ranged(10, 0, 100_000)  # 0: the embedding output; L: after block L
    alpha: float = ranged(2.0, -1000.0, 1000.0)


def word_list(text: str) -> list[str]:
    """Space- or comma-separated words."""
    return [w for w in text.replace(",", " ").split() if w]
