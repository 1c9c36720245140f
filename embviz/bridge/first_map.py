"""The map a Project request will draw, found in the cache before the model it is asked of is
open (core.maps.first_map): numpy only, no torch and no handlers, so the window can draw it
on its own thread the moment it is on screen, while the worker opens the model."""

from __future__ import annotations

from embviz.bridge import requests as rq
from embviz.core.maps.first_map import FirstMap, first_map

__all__ = ["FirstMap", "first_map_of"]


def first_map_of(source: str | None, device: str, request: rq.Project) -> FirstMap | None:
    """The map `request` will get from the model `source` opened on `device`, when the cache
    holds exactly that map; None otherwise (the map then comes from the model)."""
    if request.method != "pca" or request.subset == "words":
        return None
    limit = request.limit if request.subset == "first" else request.first
    return first_map(source, device, limit)
