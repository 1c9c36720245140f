"""The figures of docs/benchmarks.md, one module each, found here by the registry.

A figure is a module in this folder that defines `FIGURE = Figure(number, run, order, ...)`;
`run(ctx)` measures it and records its rows through `ctx.record`. Nothing else registers it.
`order` is where it runs in a whole run (the order the figures were always measured in, so
that each one finds the machine as before): below 100 the ones that start children of their
own, 100–199 those on the default model (`ctx.model()`, opened once for them all), 200–299
the map views, 300–399 those in the window (`ctx.window()`, one window for them all), 400 and
up the big files. Pick a free number in the band that fits."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable

from bench.measure import Recorder


@dataclass(frozen=True)
class Figure:
    number: int
    run: Callable[[Context], None]
    order: float
    gui: bool = False  # needs Qt: left out by --no-gui
    model: bool = False  # measures the default model (ctx.model())
    window: bool = False  # measures in the window (ctx.window()); needs Qt
    only_without_gui: bool = False  # what --no-gui measures in place of a window figure
    full_only: bool = False  # left out by --quick

    def wanted(self, args: argparse.Namespace) -> bool:
        if args.only_figures and self.number not in args.only_figures:
            return False
        if (self.gui or self.window) and args.no_gui or self.only_without_gui and not args.no_gui:
            return False
        return not (self.full_only and args.quick)


@dataclass
class Context:
    """What a figure is given: the run's options, where its rows go, and the default model and
    the window, made once for the figures that share them."""

    args: argparse.Namespace
    record: Recorder
    _model: Any = field(default=None, repr=False)
    _window: Any = field(default=None, repr=False)

    def model(self) -> Any:
        if self._model is None:
            from embviz.core import open_checkpoint

            self._model = open_checkpoint(None, self.args.device)
        return self._model

    def window(self) -> Any:
        """The window, on the default model with its language model built (bench.window_session)."""
        if self._window is None:
            from bench.window_session import WindowSession

            self._window = WindowSession(self.args)
        return self._window

    def release(self, keep_model: bool, keep_window: bool) -> None:
        """Let go of what the next figure does not share, as soon as it is not needed."""
        if not keep_model:
            self._model = None
        if not keep_window and self._window is not None:
            self._window.close()
            self._window = None


def figures() -> list[Figure]:
    """Every module's FIGURE, in the order a whole run measures them."""
    found = []
    for module in pkgutil.iter_modules(__path__):
        figure = getattr(importlib.import_module(f"{__name__}.{module.name}"), "FIGURE", None)
        if isinstance(figure, Figure):
            found.append(figure)
    return sorted(found, key=lambda f: f.order)
