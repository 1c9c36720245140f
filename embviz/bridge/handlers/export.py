"""The interactive page: the map, the neighbours and the logits computed by their own
handlers and core functions, then written as one offline HTML file."""

from __future__ import annotations

from typing import Any

from embviz.bridge import requests as rq
from embviz.bridge.registry import handles, run_request
from embviz.core.errors import EmbvizError, ProgressFn
from embviz.core.model import EmbeddingModel


def _part(progress: ProgressFn, lo: float, hi: float) -> ProgressFn:
    """One step's progress as its share of the page's (no previews: the window's map is not redrawn)."""
    def report(fraction: float, stage: str, _preview: object) -> None:
        progress(lo + (hi - lo) * fraction, stage, None)

    return report


@handles(rq.ExportPage)
def export_page(model: EmbeddingModel, request: rq.ExportPage, progress: ProgressFn) -> dict[str, Any]:
    """{"path", "bytes", "rows"} of the page written."""
    from embviz.core.export_page import PageData, neighbour_table, page_payload, parse_views, write_page
    from embviz.core.page_template import render_page

    views = parse_views(",".join(request.views))
    if not request.path:
        raise EmbvizError("Name the file to write the page to.")
    data = PageData(model, views, text=request.text)
    if "map" in views:
        progress(0.0, "the map", None)
        data.projection = run_request(model, rq.Project(method=request.method, subset="all"), _part(progress, 0.0, 0.4))
        if "neighbours" in views:
            data.neighbours = neighbour_table(model, data.projection.ids, progress=_part(progress, 0.4, 0.8))
        data.faithfulness = run_request(model, rq.Faithfulness(ids=data.projection.ids, coords=data.projection.coords))
    if "logits" in views:
        progress(0.85, "the next-token bars", None)
        try:
            if model.kind == "transformer" and not model.lm_loaded:  # the bars are the full model's, as the Logits tab's
                run_request(model, rq.LoadLanguageModel())
            data.logits = run_request(model, rq.Logits(text=request.text, k=10))
        except EmbvizError as exc:  # word vectors have no next token; the page says so and shows the rest
            data.notes.append(f"No next-token bars: {exc}")
    progress(0.95, "writing the page", None)
    size = write_page(request.path, render_page(page_payload(data)))
    rows = 0 if data.projection is None else int(data.projection.ids.size)
    return {"path": request.path, "bytes": size, "rows": rows, "views": list(views)}
