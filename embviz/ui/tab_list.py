"""The window's tabs, in order: one entry each. The window, its tab bar and View menu,
sessions (which keep a tab's state and the tab shown by its key) and the lessons (which
name a step's tab by its key) all read this list and nothing else.

A new tab is its state (a `@tab_state` dataclass in state/tabs.py), its request(s) and
handler(s), its panel, and one entry here. A panel is made with the services its entry
`takes`, holds its `state`, and has `on_model(summary, restore)`, where `restore` is the
state a session saved (or None); a `snapshot()` when a session must keep more than
`state`. The window connects, where a panel has them, its `highlight` (token ids to ring
on the map), `statusMessage` (a message about this tab; "" takes it back) and `focusToken` signals,
and calls its `on_second_model(summary)` when File ▸ Compare with… opens a second model."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

from PySide6.QtWidgets import QWidget

from embviz.state.tab_state import key_of
from embviz.state.tabs import (
    AnalogyState, AttributionState, CompareState, DirectionsState, DriftState, LensState, LogitsState, MapState,
    NeighboursState, OddOneOutState, SimilaritiesState, SteeringState, VectorsState,
)

PanelClass = Callable[..., QWidget]


def lazy(module: str, name: str) -> Callable[[], PanelClass]:
    """A panel class imported when its tab is first built, not with the window."""
    return lambda: getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class TabServices:
    """What the window lends its panels, named in a TabSpec's `takes`."""

    submit: Callable[..., int]
    cancel: Callable[[str], None]
    language_model: Any  # panels.language_model.LanguageModelLoader
    settings: Any  # state.settings.Settings
    presets: dict[str, list[str]]


@dataclass(frozen=True)
class TabSpec:
    state: type  # the tab's `@tab_state` class: its key is the tab's key
    title: str
    short: str  # the title when the full ones do not fit the tab bar: a whole word the title has
    panel: Callable[[], PanelClass]
    takes: tuple[str, ...] = ("submit",)  # the panel's arguments, TabServices' fields in order

    @property
    def key(self) -> str:
        return key_of(self.state)

    def make(self, services: TabServices) -> QWidget:
        return self.panel()(*(getattr(services, name) for name in self.takes))


_PANELS = "embviz.ui.panels."
_ASKS, _RUNS = ("submit", "cancel"), ("submit", "cancel", "language_model")
TABS: list[TabSpec] = [
    TabSpec(MapState, "Map", "Map", lazy(_PANELS + "map", "MapPanel"), ("submit", "cancel", "settings", "presets")),
    TabSpec(NeighboursState, "Neighbours", "Neighbours", lazy(_PANELS + "neighbours", "NeighboursPanel")),
    TabSpec(AnalogyState, "Analogies", "Analogies", lazy(_PANELS + "analogies", "AnalogyPanel"), _ASKS),
    TabSpec(LogitsState, "Next-token logits", "Logits", lazy(_PANELS + "logits", "LogitsPanel"), _RUNS),
    TabSpec(VectorsState, "Vectors", "Vectors", lazy(_PANELS + "vectors", "VectorsPanel")),
    TabSpec(LensState, "Logit lens", "Lens", lazy(_PANELS + "lens", "LensPanel"), _RUNS),
    TabSpec(DriftState, "Drift", "Drift", lazy(_PANELS + "drift", "DriftPanel"), _RUNS),
    TabSpec(AttributionState, "Attribution", "Attribution", lazy(_PANELS + "attribution", "AttributionPanel"), _RUNS),
    TabSpec(CompareState, "Compare", "Compare", lazy(_PANELS + "compare", "ComparePanel"), _ASKS),
    TabSpec(SimilaritiesState, "Similarity", "Similarity", lazy(_PANELS + "similarities", "SimilaritiesPanel")),
    TabSpec(OddOneOutState, "Odd one out", "Odd one out", lazy(_PANELS + "odd_one_out", "OddOneOutPanel")),
    TabSpec(DirectionsState, "Directions", "Directions", lazy(_PANELS + "directions", "DirectionsPanel")),
    TabSpec(SteeringState, "Steering", "Steering", lazy(_PANELS + "steering", "SteeringPanel"), _RUNS),
]


def tab_named(key: str) -> TabSpec:
    return next(spec for spec in TABS if spec.key == key)
