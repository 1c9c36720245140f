"""What the language-model views answer: plain types (numpy, no torch), so the window
may import them, and the language model's child process sends them by these names."""

from __future__ import annotations

from typing import Any

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from embviz.core.table.results import Hit


@dataclass(frozen=True)
class TokenScore:
    id: int
    token: str  # readable label
    logit: float
    prob: float  # softmax over the whole vocabulary at the chosen temperature
    text: str = ""  # the token's exact text, e.g. to append it to a prompt

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "token": self.text, "label": self.token, "logit": self.logit, "prob": self.prob}


@dataclass(frozen=True)
class KeptToken:
    """A token that survived top-k / top-p: its probability at the temperature, and after
    the filter renormalised the kept set to sum to 1 (what the draw samples from)."""

    id: int
    token: str  # readable label
    text: str
    prob: float
    kept_prob: float

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "token": self.text, "label": self.token, "prob": self.prob, "kept_prob": self.kept_prob}


@dataclass(frozen=True)
class DrawnToken(KeptToken):
    seed: int = 0  # the generator's seed for this draw
    kept_count: int = 0  # how many tokens it was drawn from

    def as_dict(self) -> dict[str, Any]:
        return {**super().as_dict(), "seed": self.seed, "kept_count": self.kept_count}


@dataclass
class LogitsResult:
    tokens: list[tuple[int, str]]  # what the model sees, (id, label)
    results: list[TokenScore]
    path: str  # "full" or "direct"
    temperature: float
    truncated: int = 0  # tokens dropped from the start to fit the context
    notes: list[str] = field(default_factory=list)
    token_texts: list[str] = field(default_factory=list)  # exact texts of `tokens`
    bad_ids: list[int] = field(default_factory=list)  # rows whose logit was NaN or +Inf
    # Sampling (embviz.core.lm.sampling): 0 and 1.0 are off; kept_* are None without a filter.
    top_k: int = 0
    top_p: float = 1.0
    kept_probs: list[float] | None = None  # per entry of `results`: renormalised, 0.0 if filtered out
    kept_count: int | None = None  # the kept set's size
    kept_mass: float | None = None  # its probability at the temperature, before renormalising
    kept: list[KeptToken] = field(default_factory=list)  # the kept set, most probable first (the command line's)
    drawn: list[DrawnToken] = field(default_factory=list)  # draws appended in turn, the first from this distribution
    last: "LogitsResult | None" = None  # after several draws: the distribution the last one came from

    @property
    def filtered(self) -> bool:
        return self.kept_count is not None and bool(self.top_k or self.top_p < 1)

    def sampling_dict(self) -> dict[str, Any]:
        """The filter, the kept set and the draws, for --json."""
        out: dict[str, Any] = {"top_k": self.top_k, "top_p": self.top_p}
        if self.filtered:
            out |= {"kept_count": self.kept_count, "kept_mass": self.kept_mass, "kept": [t.as_dict() for t in self.kept]}
        if self.drawn:
            out["drawn"] = self.drawn[0].as_dict()
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "tokens": list(self.token_texts),
            "token_labels": [label for _, label in self.tokens],
            "token_ids": [i for i, _ in self.tokens],
            "bad_ids": list(self.bad_ids),
            "results": [r.as_dict() for r in self.results],
            "path": self.path,
            "temperature": self.temperature,
            "truncated": self.truncated,
            "notes": self.notes,
        }


def filter_phrase(top_k: int, top_p: float) -> str:
    """"after top-k 40 and top-p 0.9", or "" with neither on."""
    parts = ([f"top-k {top_k}"] if top_k else []) + ([f"top-p {top_p:g}"] if top_p < 1 else [])
    return f"after {' and '.join(parts)}" if parts else ""


class TokenStrings:
    """The labels and exact texts of some vocabulary ids, each kind as one joined string
    with its end offsets: a handful of objects on the pipe, however many tokens, and a
    label is cut out only when it is shown."""

    def __init__(self, ids: np.ndarray, labels: list[str], texts: list[str]) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)  # sorted, unique
        self._labels, self._label_ends = _joined(labels)
        self._texts, self._text_ends = _joined(texts)

    @classmethod
    def of(cls, vocab: Any, ids: np.ndarray) -> "TokenStrings":
        """The strings of every id in `ids`, from the vocabulary."""
        unique = np.unique(ids).tolist()
        return cls(np.array(unique, dtype=np.int64), [vocab.label(i) for i in unique], [vocab.texts[i] for i in unique])

    def _slot(self, token_id: int) -> int:
        slot = int(np.searchsorted(self.ids, token_id))
        if slot >= len(self.ids) or self.ids[slot] != token_id:
            raise KeyError(token_id)
        return slot

    def label(self, token_id: int) -> str:
        slot = self._slot(token_id)
        return self._labels[self._label_ends[slot - 1] if slot else 0:self._label_ends[slot]]

    def text(self, token_id: int) -> str:
        slot = self._slot(token_id)
        return self._texts[self._text_ends[slot - 1] if slot else 0:self._text_ends[slot]]

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TokenStrings) and np.array_equal(self.ids, other.ids)
                and self._labels == other._labels and np.array_equal(self._label_ends, other._label_ends)
                and self._texts == other._texts and np.array_equal(self._text_ends, other._text_ends))


def _joined(strings: list[str]) -> tuple[str, np.ndarray]:
    return "".join(strings), np.cumsum([len(s) for s in strings], dtype=np.int64)


@dataclass(eq=False)
class LensCells:
    """Top-k cells as (layers, positions, k) arrays, best first, and the strings of the ids
    they hold: thousands of cells cross the pipe as three arrays, and the window reads only
    the cells it draws."""

    ids: np.ndarray  # int32
    logits: np.ndarray  # float32
    probs: np.ndarray  # float32: softmax over the whole vocabulary
    strings: TokenStrings

    @classmethod
    def of_scores(cls, top: list[list[list[TokenScore]]]) -> "LensCells":
        """From nested [layer][position] → top-k scores (tests and hand-made grids)."""
        scores = [s for row in top for cell in row for s in cell]
        shape = (len(top), len(top[0]) if top else 0, len(top[0][0]) if top and top[0] else 0)
        texts = {s.id: (s.token, s.text) for s in scores}
        ids = sorted(texts)
        return cls(np.array([s.id for s in scores], dtype=np.int32).reshape(shape),
                   np.array([s.logit for s in scores], dtype=np.float32).reshape(shape),
                   np.array([s.prob for s in scores], dtype=np.float32).reshape(shape),
                   TokenStrings(np.array(ids, dtype=np.int64), [texts[i][0] for i in ids], [texts[i][1] for i in ids]))

    def cell(self, layer: int, position: int) -> list[TokenScore]:
        strings = self.strings
        return [TokenScore(i, strings.label(i), v, p, strings.text(i)) for i, v, p in zip(
            self.ids[layer, position].tolist(), self.logits[layer, position].tolist(), self.probs[layer, position].tolist())]

    def top_label(self, layer: int, position: int) -> str:
        return self.strings.label(int(self.ids[layer, position, 0]))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, LensCells) and np.array_equal(self.ids, other.ids)
                and np.array_equal(self.logits, other.logits) and np.array_equal(self.probs, other.probs)
                and self.strings == other.strings)


@dataclass
class LensResult:
    tokens: list[tuple[int, str]]  # the positions read, (id, label)
    token_texts: list[str]
    layer_names: list[str]  # "embedding", "block 1", …
    cells: LensCells  # (layers, positions, k)
    final_norm: bool
    truncated: int = 0  # positions before the ones read (context only)
    notes: list[str] = field(default_factory=list)

    def __getstate__(self) -> dict[str, Any]:
        return {name: value for name, value in self.__dict__.items() if name != "top"}  # `top` is rebuilt on demand

    @cached_property
    def top(self) -> list[list[list[TokenScore]]]:
        """[layer][position] → the top k, best first, as scores (the command line, JSON)."""
        layers, positions = self.cells.ids.shape[:2]
        return [[self.cells.cell(layer, p) for p in range(positions)] for layer in range(layers)]

    def as_dict(self) -> dict[str, Any]:
        return {
            "tokens": list(self.token_texts),
            "token_ids": [i for i, _ in self.tokens],
            "final_norm": self.final_norm,
            "skipped_positions": self.truncated,
            "notes": list(self.notes),
            "layers": [
                {"layer": n, "name": name,
                 "top": [[{"id": s.id, "token": s.text, "label": s.token, "prob": s.prob, "logit": s.logit} for s in cell]
                         for cell in row]}
                for n, (name, row) in enumerate(zip(self.layer_names, self.top))
            ],
        }


@dataclass
class LensColumns:
    """Some columns of a lens still being read: the preview the window draws at once (the
    last position's column first, the model's own answer through every layer), then as
    the rest of the grid fills in."""

    tokens: list[tuple[int, str]]  # every position the lens reads: the grid's columns
    layer_names: list[str]
    final_norm: bool
    positions: list[int]  # indices into `tokens`, one per column of `cells`
    cells: LensCells  # (layers, len(positions), k)
    truncated: int = 0  # positions before the ones read (context only), as in LensResult

    @property
    def columns(self) -> dict[int, list[list[TokenScore]]]:
        """Position → per layer, the top k (tests; the window reads `cells`)."""
        return {p: [self.cells.cell(layer, i) for layer in range(len(self.layer_names))]
                for i, p in enumerate(self.positions)}


@dataclass(frozen=True)
class Part:
    block: int | None  # 0: the embedding, 1…N: a block; None: the final norm's or the head's bias
    kind: str  # "embedding", "attention", "mlp", "norm bias" or "head bias"
    value: float

    def as_dict(self) -> dict[str, Any]:
        return {"block": self.block, "kind": self.kind, "value": self.value}


@dataclass(frozen=True)
class HeadPart:
    block: int  # 1…N
    head: int | None  # 0-based; None: the attention output projection's bias, which no head wrote
    value: float


@dataclass
class AttributionResult:
    tokens: list[tuple[int, str]]  # the text's tokens, (id, label)
    token_texts: list[str]
    position: int  # the position whose next-token logit is split
    target_id: int
    target: str  # the target token's exact text
    logit: float  # the model's own logit for it
    prob: float
    parts: list[Part]  # they add up to `logit` (or to `uncapped_logit`)
    heads: list[HeadPart]  # per block, they add up to its attention part
    notes: list[str] = field(default_factory=list)
    uncapped_logit: float | None = None  # the logit before the model's soft cap, which the parts split

    def ranked_heads(self, block: int | None = None) -> list[HeadPart]:
        """The heads (of one block, or all), largest part of the logit first."""
        chosen = [h for h in self.heads if h.head is not None and block in (None, h.block)]
        return sorted(chosen, key=lambda h: h.value, reverse=True)

    def as_dict(self) -> dict[str, Any]:
        return {
            "token": self.target, "token_id": self.target_id, "position": self.position,
            "logit": self.logit, "prob": self.prob, "uncapped_logit": self.uncapped_logit,
            "tokens": list(self.token_texts), "token_ids": [i for i, _ in self.tokens],
            "parts": [p.as_dict() for p in self.parts],
            "heads": [{"block": h.block, "head": h.head, "value": h.value} for h in self.heads if h.head is not None],
            "attention_biases": [{"block": h.block, "value": h.value} for h in self.heads if h.head is None],
            "notes": list(self.notes),
        }


@dataclass
class AttentionResult:
    tokens: list[tuple[int, str]]  # the positions shown, (id, label)
    token_texts: list[str]
    block: int  # 1…N
    heads: list[int]  # 0-based, in the order of `weights`
    weights: np.ndarray  # (len(heads), T, T): row = the attending position, column = the one attended to
    ranking: list[HeadPart]  # the block's heads by their part of the attribution's logit, largest first
    target_id: int  # the token whose logit ranks them
    target: str
    position: int  # ...after this position of the text
    skipped: int = 0  # positions before the ones shown (not run)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "block": self.block, "heads": list(self.heads), "tokens": list(self.token_texts),
            "token_ids": [i for i, _ in self.tokens], "skipped_positions": self.skipped,
            "weights": [{"head": h, "weights": w.tolist()} for h, w in zip(self.heads, self.weights)],
            "ranking": [{"head": h.head, "value": h.value} for h in self.ranking],
            "token": self.target, "token_id": self.target_id, "position": self.position, "notes": list(self.notes),
        }


@dataclass(frozen=True)
class PinnedToken:
    id: int
    text: str
    label: str
    probs: list[float]  # per layer: the embedding, then each block
    ranks: list[int]  # 1 = that layer's top guess
    logits: list[float]


@dataclass
class PinnedResult:
    tokens: list[tuple[int, str]]
    token_texts: list[str]
    position: int
    layer_names: list[str]
    pinned: list[PinnedToken]
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "tokens": list(self.token_texts), "token_ids": [i for i, _ in self.tokens], "position": self.position,
            "layers": list(self.layer_names), "notes": list(self.notes),
            "pinned": [{"id": p.id, "token": p.text, "label": p.label, "probs": p.probs, "ranks": p.ranks,
                        "logits": p.logits} for p in self.pinned],
        }


@dataclass
class DriftResult:
    word: str  # the token followed, its exact text
    token_ids: list[int]  # the token's id in each sentence (" bank" or "bank")
    positions: list[int]  # where it sits in each sentence's tokens
    sentences: list[str]
    layer_names: list[str]
    between: list[float | None]  # per layer: mean pairwise cosine of the contexts' vectors
    to_static: list[list[float]]  # per layer, per sentence: cosine to the token's static row
    # Per layer: mean cosine of other tokens across the sentences. Residual streams share a
    # few huge directions, so any two vectors look alike; the contexts' cosine means
    # something only above this line (Ethayarajh 2019's anisotropy baseline).
    baseline: list[float | None] = field(default_factory=list)
    neighbours_layer: int = 0
    neighbours: list[list[Hit]] = field(default_factory=list)  # per sentence, at `neighbours_layer`

    def as_dict(self) -> dict[str, Any]:
        return {
            "word": self.word,
            "token_ids": self.token_ids,
            "positions": self.positions,
            "sentences": self.sentences,
            "layers": [{"layer": n, "name": name, "between_contexts": b, "to_static": s, "baseline": base}
                       for n, (name, b, s, base)
                       in enumerate(zip(self.layer_names, self.between, self.to_static, self.baseline))],
            "neighbours": {"layer": self.neighbours_layer,
                           "of_sentence": [[{"id": h.id, "token": h.text, "label": h.token, "cosine": h.score} for h in hits]
                                           for hits in self.neighbours]},
        }


@dataclass(frozen=True)
class WatchedToken:
    """One chosen token's probability before and after steering."""

    id: int
    text: str
    label: str
    prob_before: float
    prob_after: float
    logit_before: float
    logit_after: float

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "token": self.text, "label": self.label, "prob_before": self.prob_before,
                "prob_after": self.prob_after, "logit_before": self.logit_before, "logit_after": self.logit_after}


@dataclass
class SteerResult:
    """The next-token guess before and after α · scale · direction is added after one layer."""

    tokens: list[tuple[int, str]]
    token_texts: list[str]
    direction: str  # "he → she"
    layer: int  # 0: the embedding output; L: after block L
    layer_name: str
    alpha: float
    alpha_units: str
    scale: float  # the norm α is counted in
    added_norm: float  # |α| · scale: the length of the vector added at every position
    before: list[TokenScore]
    after: list[TokenScore]
    watched: list[WatchedToken]
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "tokens": list(self.token_texts), "token_ids": [i for i, _ in self.tokens], "direction": self.direction,
            "layer": self.layer, "layer_name": self.layer_name, "alpha": self.alpha, "alpha_units": self.alpha_units,
            "scale": self.scale, "added_norm": self.added_norm, "positions": "all",
            "before": [s.as_dict() for s in self.before], "after": [s.as_dict() for s in self.after],
            "watch": [w.as_dict() for w in self.watched], "notes": list(self.notes),
        }


@dataclass
class DirectionLayersResult:
    """A unit direction's projection on the residual stream at one position, per layer."""

    tokens: list[tuple[int, str]]
    token_texts: list[str]
    direction: str
    position: int
    layer_names: list[str]
    projections: list[float]  # residual · unit direction, per layer
    norms: list[float]  # the residual's L2 norm there, per layer
    notes: list[str] = field(default_factory=list)

    @property
    def cosines(self) -> list[float]:
        return [p / n if n else 0.0 for p, n in zip(self.projections, self.norms)]

    def as_dict(self) -> dict[str, Any]:
        return {
            "tokens": list(self.token_texts), "token_ids": [i for i, _ in self.tokens], "direction": self.direction,
            "position": self.position, "notes": list(self.notes),
            "layers": [{"layer": n, "name": name, "projection": p, "norm": r, "cosine": c}
                       for n, (name, p, r, c) in enumerate(zip(self.layer_names, self.projections, self.norms,
                                                               self.cosines))],
        }
