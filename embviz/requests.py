"""What views ask the compute worker for: small, plain dataclasses (no Qt, no torch).

Each request names a `channel`; a newer request on the same channel makes the older
one stale (dropped if queued, cancelled if running). `LONG` requests run on their
own lane so that a t-SNE never delays a neighbour lookup.
"""

from __future__ import annotations

from dataclasses import dataclass, field

WORDSET_PREFIX = "wordset:"


@dataclass
class Request:
    request_id: int = field(default=0, init=False)
    generation: int = field(default=0, init=False)  # which loaded model it was asked of

    channel = "request"
    long = False


@dataclass
class LoadModel(Request):
    source: str | None = None
    device: str = "auto"
    channel = "load"
    long = True


@dataclass
class Neighbours(Request):
    query: int | str = ""
    k: int = 10
    centered: bool = False
    hide_special: bool = True
    channel = "neighbours"


@dataclass
class Analogy(Request):
    a: int | str = ""
    b: int | str = ""
    c: int | str = ""
    k: int = 10
    exclude_inputs: bool = True
    method: str = "add"
    channel = "analogy"


@dataclass
class Logits(Request):
    text: str = ""
    k: int = 10
    temperature: float = 1.0
    direct: bool = False
    channel = "logits"


@dataclass
class Project(Request):
    method: str = "pca"
    subset: str = "all"  # "all", "first" (the first `limit` ids) or "words"
    limit: int = 5000
    channel = "project"
    long = True


@dataclass
class Search(Request):
    pattern: str = ""
    regex: bool = False
    limit: int = 500
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
    channel = "benchmark"
    long = True
