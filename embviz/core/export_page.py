"""The interactive page: one HTML file a class takes home, holding the map as drawn, every
shown token's nearest neighbours, the next-token bars for a text, and what model it is.

The numbers travel as base64 of typed arrays (float32 coordinates, uint8 kinds, int32
neighbour positions, int16 cosines in thousandths), not as JSON lists of numbers: for
SmolLM2's 49,152 rows that is 5.3 MB of data beside Plotly's own 4.8 MB (a 9.7 MB page)
rather than three times as much, and the page decodes it in milliseconds."""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.fingerprint import model_fingerprint
from embviz.core.lm.results import LogitsResult
from embviz.core.maps.knn import Faithfulness, table_knn
from embviz.core.maps.projection import Projection
from embviz.core.model import EmbeddingModel
from embviz.core.table.token_kinds import KIND_NAMES, token_kinds

VIEWS = ("map", "neighbours", "logits")
PAGE_NEIGHBOURS = 10
# The same colours as the window's Map tab (ui.style.KIND_COLORS, which core cannot import).
KIND_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
# What the page may take beyond Plotly's script: coordinates, kind, label and ten neighbours a row,
# base64 and JSON included (SmolLM2 measures 109 bytes a row; labels of long tokens take more).
BYTES_PER_ROW = 160
PAGE_OVERHEAD = 64 * 1024  # the page's own markup, script and header


def parse_views(text: str) -> tuple[str, ...]:
    """`map,neighbours,logits` (any order, `neighbors` too) as the views' names, checked."""
    names = tuple(dict.fromkeys(v.strip().replace("neighbors", "neighbours") for v in text.split(",") if v.strip()))
    wrong = [v for v in names if v not in VIEWS]
    if wrong or not names:
        raise EmbvizError(f"Pick views from {', '.join(VIEWS)}, not {', '.join(wrong) or 'none'}.")
    if "neighbours" in names and "map" not in names:
        raise EmbvizError("The neighbours are listed beside the map: add map to the views.")
    return names


def size_bound(rows: int, script_bytes: int) -> int:
    """The most bytes a page of `rows` points may take, Plotly's script included."""
    return script_bytes + PAGE_OVERHEAD + BYTES_PER_ROW * rows


def _b64(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()).decode("ascii")


def neighbour_table(model: EmbeddingModel, ids: np.ndarray, k: int = PAGE_NEIGHBOURS,
                    progress: ProgressFn = no_progress) -> tuple[np.ndarray, np.ndarray]:
    """(positions into `ids` as int32, cosines in thousandths as int16), each (n, k): every
    row's k nearest other rows by cosine, exact, from the maps' own neighbour graph."""
    positions, cosines = table_knn(model, ids, k, progress, (0.0, 1.0), "each token's nearest neighbours")
    thousandths = np.clip(np.rint(np.nan_to_num(cosines, nan=0.0) * 1000), -1000, 1000)
    return positions.astype(np.int32), thousandths.astype(np.int16)


@dataclass
class PageData:
    """What the page shows, computed: the map, its caption, the neighbours, the bars."""

    model: EmbeddingModel
    views: tuple[str, ...]
    projection: Projection | None = None
    faithfulness: Faithfulness | None = None
    neighbours: tuple[np.ndarray, np.ndarray] | None = None
    logits: LogitsResult | None = None
    text: str = ""
    notes: list[str] = field(default_factory=list)


def _map_payload(data: PageData) -> dict[str, Any]:
    model, proj = data.model, data.projection
    assert proj is not None
    ids = np.asarray(proj.ids, dtype=np.int64)
    labels = model.vocab.labels
    kinds = model.derived("token_kinds", lambda: token_kinds(model.vocab))[ids].astype(np.uint8)
    method = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP", "axes": "word-pair axes"}.get(proj.method, proj.method)
    caption = f"{method} of {ids.size:,} rows"
    if proj.explained:
        caption += f" (the axes explain {sum(proj.explained):.1%} of the variance)"
    if data.faithfulness is not None:
        caption += f"; the map {data.faithfulness.caption()}. {data.faithfulness.how_measured()}"
    payload: dict[str, Any] = {
        "rows": int(ids.size), "method": method, "caption": caption,
        "ids": _b64(ids.astype(np.int32)), "labels": [labels[i] for i in ids.tolist()],
        "x": _b64(proj.coords[:, 0].astype(np.float32)), "y": _b64(proj.coords[:, 1].astype(np.float32)),
        "kinds": _b64(kinds), "kind_names": list(KIND_NAMES), "kind_colours": list(KIND_COLOURS),
        "notes": list(proj.notes),
    }
    if data.neighbours is not None:
        positions, thousandths = data.neighbours
        payload["neighbours"] = {"k": int(positions.shape[1]), "positions": _b64(positions.astype(np.int32)),
                                 "thousandths": _b64(thousandths.astype(np.int16))}
    return payload


def page_payload(data: PageData) -> dict[str, Any]:
    """The page's data as one JSON-able object (what its script reads)."""
    fingerprint = model_fingerprint(data.model)
    payload: dict[str, Any] = {
        "model": data.model.name, "fingerprint": fingerprint, "views": list(data.views), "notes": list(data.notes),
        "vocab_size": data.model.vocab_size, "dim": data.model.dim,
    }
    if data.projection is not None:
        payload["map"] = _map_payload(data)
    if data.logits is not None:
        result = data.logits
        payload["logits"] = {
            "text": data.text, "tokens": [label for _, label in result.tokens], "path": result.path,
            "temperature": result.temperature, "notes": list(result.notes),
            "bars": [{"id": r.id, "label": r.token, "prob": r.prob, "logit": r.logit} for r in result.results],
        }
    return payload


def write_page(path: str | Path, html: str) -> int:
    """Write the page whole or not at all (a file beside it, then renamed); its size in bytes."""
    target = Path(path)
    scratch = target.with_name(target.name + ".tmp")
    data = html.encode("utf-8", "replace")
    try:
        scratch.write_bytes(data)
        os.replace(scratch, target)
    except OSError as exc:
        scratch.unlink(missing_ok=True)
        raise EmbvizError(f"Could not write the page to {target}: {exc.strerror or exc}.") from exc
    return len(data)


def payload_json(payload: dict[str, Any]) -> str:
    """JSON that is safe inside a <script> element: no `</script>` or `<!--` a label could hold."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
