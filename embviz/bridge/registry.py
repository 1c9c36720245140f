"""One table from request type to the function that computes it.

A handler is registered with `@handles(RequestType)` next to the result it returns; the
worker's lanes and the command line both call `run_request` (through `embviz.bridge.handlers`,
whose import registers every handler), so a request type needs its
dataclass, its handler and the panel that asks for it, nothing else.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from embviz.bridge.requests import Request
from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.model import EmbeddingModel
from embviz.core.table.compare import ModelPair

Handler = Callable[[Any, Any, ProgressFn], Any]
R = TypeVar("R", bound=Request)

HANDLERS: dict[type[Request], Handler] = {}


# What a handler runs on: the model (EmbeddingModel), the pair a LoadComparison made (ModelPair),
# or nothing (a request that makes the model, or needs none).
TypedHandler = Callable[[Any, R, ProgressFn], Any]


def handles(request_type: type[R]) -> Callable[[TypedHandler[R]], TypedHandler[R]]:
    """Register the decorated function as what `request_type` computes (one handler per type)."""
    def register(fn: TypedHandler[R]) -> TypedHandler[R]:
        if request_type in HANDLERS:
            raise ValueError(f"{request_type.__name__} already has a handler")
        HANDLERS[request_type] = fn
        return fn
    return register


def handler_for(request: Request) -> Handler:
    for kind in type(request).__mro__:
        if kind in HANDLERS:
            return HANDLERS[kind]
    raise EmbvizError(f"Unknown request {type(request).__name__}.")


def run_request(model: EmbeddingModel | ModelPair | None, request: Request, progress: ProgressFn = no_progress) -> Any:
    """What one request computes on `model`: for a request that compares, the pair of models
    a LoadComparison made. Runs on a worker lane (or the command line), never the GUI thread."""
    handler = handler_for(request)
    if request.needs_comparison and not isinstance(model, ModelPair):
        raise EmbvizError("Open a second model to compare with first.")
    if request.needs_model and model is None:
        raise EmbvizError("No model is open yet.")
    table = getattr(request, "table", "input")  # requests that read rows say which table
    if table != "input" and isinstance(model, EmbeddingModel):
        from embviz.core.output_table import table_of

        model = table_of(model, table)
    return handler(model, request, progress)
