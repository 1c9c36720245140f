"""The one window the window figures (7, 15, 9, 10) measure in, in turn: the default model on
screen and its language model built, as a user who has typed once would have it."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from bench.measure import wait

LOGITS_TEXTS = (("5-token", "The capital of France is"), ("500-token", " ".join(["the cat sat on the mat"] * 83) + " and"))
# A quick run's long text: a fifth of the forward passes' work, the same code paths.
QUICK_LOGITS_TEXTS = (LOGITS_TEXTS[0], ("100-token", " ".join(["the cat sat on the mat"] * 16) + " and"))
LENS_TEXT = "The capital of France is Paris, and the capital of Italy is Rome. So the capital of Spain is"


def logits_texts(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    return QUICK_LOGITS_TEXTS if args.quick else LOGITS_TEXTS


class WindowSession:
    def __init__(self, args: argparse.Namespace) -> None:
        from embviz.state.settings import Settings
        from embviz.ui.app import make_app
        from embviz.ui.main_window import MainWindow

        self.app = make_app()
        self._config = tempfile.TemporaryDirectory()
        window = self.window = MainWindow(settings=Settings(Path(self._config.name) / "s.json"), device=args.device)
        window.resize(1300, 850)
        window.show()
        window.open_model(None)
        # The model on screen, not only the map the cache keeps for it (drawn before the model is open).
        wait(self.app, lambda: window.generation > 0 and window.map_panel.state.projection is not None, 300)
        # The language model is built once, by a job of its own, before the first bars.
        window.logits.set_text("Hello")
        wait(self.app, lambda: not window.language_model.needed and bool(window.logits.results), 300)

    def close(self) -> None:
        self.window.close()
        self._config.cleanup()
