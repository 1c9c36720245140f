"""What each request computes on a loaded model (Qt-free, so the command line and tests
run the same code as the window). One module per room; importing this package registers
every handler with `embviz.bridge.registry`."""

from embviz.bridge.handlers import bias, compare, export, judgements, lm, maps, models, table  # noqa: F401  (registers the handlers)
from embviz.bridge.handlers.compare import summarise_comparison
from embviz.bridge.handlers.models import open_model, summarise
from embviz.bridge.handlers.table import resolve_typed
from embviz.bridge.registry import run_request
from embviz.bridge.views import (
    AnalogyView,
    ClustersView,
    CompareView,
    ComparisonSummary,
    DominoesView,
    LessonNumbersView,
    ModelSummary,
    NeighboursView,
    PointValuesView,
    StripsView,
    WordSetView,
)

__all__ = [
    "AnalogyView", "ClustersView", "CompareView", "ComparisonSummary", "DominoesView", "LessonNumbersView",
    "ModelSummary", "NeighboursView", "PointValuesView", "StripsView", "WordSetView", "open_model", "resolve_typed",
    "run_request", "summarise", "summarise_comparison",
]
