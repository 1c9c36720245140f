"""The Map tab's Colour by: a value per point (token kind, id, row length) or clusters, asked of the worker and drawn.

A part of `MapPanel` (see panel.py), kept in a room of its own."""

from __future__ import annotations

import numpy as np

from embviz.bridge import requests as rq
from embviz.bridge.views import ClustersView, PointValuesView
from embviz.ui.panels.map.host import MapHost
from embviz.ui.panels.map.names import clusters_summary
from embviz.ui.plots import colouring


class ColourByMixin(MapHost):
    def _show_cluster_controls(self) -> None:
        clusters = self.state.colour_by == "cluster"
        self.cluster_method.setVisible(clusters)
        self.clusters_k.setVisible(clusters and self.state.cluster_method != "hdbscan")  # the graph's is about k

    def apply_colour_by(self) -> None:
        """Ask for the values that colour the map on screen (clusters on the long lane)."""
        self._show_cluster_controls()
        self.valuing.forget()
        self.clustering.forget()
        view = self.view
        if self.state.colour_by == "none" or not len(view.ids):
            view.set_colours(None)
            return
        if self.state.colour_by == "cluster":
            self.clustering.ask(rq.Clusters(method=self.state.cluster_method, k=self.state.clusters_k,
                                            ids=view.ids, coords=view.coords, table=self.drawn_table()))
            self.cancel_button.setEnabled(True)
            self.statusMessage.emit("Clusters: starting…")
        else:
            self.valuing.ask(rq.PointValues(by=self.state.colour_by, ids=view.ids, table=self.drawn_table()))

    def drawn_table(self) -> str:
        """The table whose rows the map on screen places (a kept first map, or a live preview: the one asked)."""
        projection = self.state.projection
        return projection.table if projection is not None else self._asked_rows[3]

    def _same_map(self, ids: np.ndarray) -> bool:
        return ids.shape == self.view.ids.shape and np.array_equal(ids, self.view.ids)

    def on_point_values(self, values: PointValuesView) -> None:
        if not self._same_map(values.ids):
            return
        if values.by == "kind":
            self.view.set_colours(*colouring.kind_colours(values.values, values.names))
        else:
            self.view.set_colours(*colouring.gradient_colours(values.values, values.by))

    def on_clusters(self, found: ClustersView) -> None:
        if not self._same_map(found.ids):
            return
        self.cancel_button.setEnabled(self.progress.isVisible())
        codes, table, legend = colouring.cluster_colours(found.codes, found.clusters, found.method, found.k)
        self.view.set_colours(codes, table, legend)
        self.view.set_cluster_labels(colouring.cluster_centres(codes, self.view.coords, found.clusters, table),
                                     colouring.coarse_centres(codes, self.view.coords, found.coarse, found.coarse_of))
        self.statusMessage.emit(clusters_summary(found))

    def _clusters_progress(self, fraction: float, stage: str, _preview: object) -> None:
        self.statusMessage.emit(f"Clusters: {stage} — {fraction:.0%}")

    def _colours_failed(self, message: str) -> None:
        self.cancel_button.setEnabled(self.progress.isVisible())
        self.view.set_colours(None)
        self.statusMessage.emit(f"Colour by {colouring.COLOUR_BY[self.state.colour_by].lower()}: {message}")

    def _colours_cancelled(self) -> None:
        self.cancel_button.setEnabled(self.progress.isVisible())
        self.statusMessage.emit("Clustering cancelled: the map is drawn without its colours.")
