"""Start-up: the window is built and shown without the heavy compute libraries, and the
model is opened only once the window is on screen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("torch", "transformers", "sklearn", "umap", "openTSNE", "scipy", "igraph")


def _modules_after(code: str) -> dict:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_importing_the_window_imports_no_compute_library():
    loaded = _modules_after(
        "import sys, json\n"
        "import embviz.cli, embviz.ui.app, embviz.ui.main_window, embviz.bridge.worker\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n")
    assert loaded == []


def test_a_shown_window_imports_no_compute_library_until_its_first_request(tmp_path):
    loaded = _modules_after(
        "import sys, json\n"
        "from pathlib import Path\n"
        "from embviz.ui.app import make_app\n"
        "from embviz.ui.main_window import MainWindow\n"
        "from embviz.state.settings import Settings\n"
        "app = make_app()\n"
        f"w = MainWindow(settings=Settings(Path({str(tmp_path)!r}) / 's.json'))\n"
        "w.show()\n"
        "for _ in range(20): app.processEvents()\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n")
    assert loaded == []


def test_the_model_opens_once_the_window_is_exposed(qtbot):
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QMainWindow

    from embviz.ui.app import when_exposed

    window = QMainWindow()
    qtbot.addWidget(window)
    calls = []
    window.show()
    when_exposed(window, lambda: calls.append(window.windowHandle().isExposed()), fallback_ms=3000)
    qtbot.waitUntil(lambda: bool(calls), timeout=5000)
    QCoreApplication.sendPostedEvents()  # a second expose's call, had one been queued, would run here
    QCoreApplication.processEvents()
    assert calls == [True]  # once, with the window on screen


def test_the_tabs_behind_the_map_are_built_after_the_window_and_when_first_wanted(qtbot, tmp_path):
    from embviz.state.settings import Settings
    from embviz.ui.main_window import MainWindow
    from embviz.ui.panels.neighbours import NeighboursPanel

    window = MainWindow(settings=Settings(tmp_path / "s.json"), device="cpu")
    qtbot.addWidget(window)
    window.show()
    assert window._tab_panels is None and window.tabs.widget(1) is None  # only the map is made for the first paint
    window.tabs.setCurrentIndex(1)  # a tab shown is built at once (test_projector_layout: their keys work too)
    assert isinstance(window.tabs.currentWidget(), NeighboursPanel) and window.tabs.currentWidget() is window.neighbours
    assert window.tabs.indexOf(window.compare) == 8 and window.panel_named("drift") is window.tabs.widget(6)
