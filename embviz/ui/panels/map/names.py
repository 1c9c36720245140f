"""The Map tab's names and numbers: its choices, its sets' names, its sizes, and the
helpers its rooms share."""

from __future__ import annotations

from embviz.ui.widgets import FittedCombo

METHOD_NAMES = {"pca": "PCA (instant)", "tsne": "t-SNE (minutes)", "umap": "UMAP (minutes)",
                "axes": "Word-pair axes (instant)"}
METHOD_SHORT = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP", "axes": "Word-pair axes"}
INSTANT = ("pca", "axes")
SUBSETS = {"all": "All rows", "first": "First N ids", "words": "Whole words only"}
HOVER_HINT = "Hover over a point: its token shows here."
SIDE_WIDTH = 260  # the side column's width at 100 % text
SEARCH_WIDTH = 150  # the search field's least width at 100 % text (it takes what its row leaves)
SEARCH_SET = "search"
SELECTION_SET = "selection"
DRAG_MODES = {"pan": "Drag: pan", "rect": "Drag: rectangle", "lasso": "Drag: lasso"}
SEARCH_DEBOUNCE_MS = 300


def clusters_summary(found) -> str:
    """One line for the status bar: how many clusters, and the largest that whole words name."""
    if not found.clusters:
        return "No clusters found on this map."
    named = [f"{found.clusters[c].label} ({found.clusters[c].size:,})" for c in found.largest_readable]
    return f"{len(found.clusters)} clusters; the largest named by whole words: " + "; ".join(named) if named else \
        f"{len(found.clusters)} clusters, none named by whole words."


def combo(choices: dict[str, str]) -> FittedCombo:
    """A combo box of `choices` (data → text)."""
    box = FittedCombo()
    for key, text in choices.items():
        box.addItem(text, key)
    return box
