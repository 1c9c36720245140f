"""The rooms stay apart, with rules derived from the packages rather than hand-kept module lists.

embviz/core    torch and numpy, no Qt; imports nothing from the layers above it
embviz/state   no Qt; may use the core's plain types
embviz/bridge  Qt at its edge only; imports core and state, never ui
embviz/ui      Qt; never torch; talks to the core through the bridge
embviz/cli     no Qt; the bridge's handlers, printed
"""

from __future__ import annotations

import ast
from functools import cache

import pytest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "embviz"
QT = {"PySide6", "pyqtgraph", "superqt", "shiboken6"}
LAYERS = ("core", "state", "bridge", "ui", "cli")
# What each layer may import from embviz (besides itself). The command line runs the bridge's
# handlers, and opens the window (ui) for its GUI commands.
MAY_IMPORT = {"core": set(), "state": {"core"}, "bridge": {"core", "state"}, "ui": {"bridge", "state", "core"},
              "cli": {"core", "state", "bridge", "ui"}}
# The few core modules a view may use: plain types and texts, no computation (and no torch,
# which test_result_types_load_without_torch checks).
UI_CORE_ALLOWED = {"embviz.core.errors", "embviz.core.lessons", "embviz.core.lm.results", "embviz.core.table.results",
                   "embviz.core.table.bias_results", "embviz.core.table.weat_data"}  # plain types and data


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in ROOT.rglob("*.py")}


@cache
def imports_of(path: Path) -> frozenset[str]:
    """Every module `path` imports, at the top or inside a function, resolved to module names."""
    names: set[str] = set()
    known = modules()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in known)
    return frozenset(names)


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "embviz" and parts[1] in LAYERS else None


def test_every_module_lives_in_a_layer():
    loose = {m for m in modules() if layer_of(m) is None} - {"embviz", "embviz.__main__"}
    assert not loose, f"modules outside core/state/bridge/ui/cli: {sorted(loose)}"


def test_layers_import_only_downwards():
    for module, path in modules().items():
        layer = layer_of(module)
        if layer is None:
            continue
        for name in imports_of(path):
            other = layer_of(name)
            if other is not None and other != layer:
                assert other in MAY_IMPORT[layer], f"{module} ({layer}) imports {name} ({other})"


def test_qt_only_in_bridge_and_ui():
    for module, path in modules().items():
        if layer_of(module) in ("bridge", "ui"):
            continue
        bad = {m for m in imports_of(path) if m.split(".")[0] in QT}
        assert not bad, f"{module} imports {bad}"


def test_views_have_no_torch_and_no_core_compute():
    for module, path in modules().items():
        if layer_of(module) != "ui":
            continue
        mods = imports_of(path)
        assert not {m for m in mods if m.split(".")[0] == "torch"}, f"{module} imports torch"
        compute = {m for m in mods if layer_of(m) == "core"} - UI_CORE_ALLOWED - {"embviz.core"}
        assert not compute and "embviz.core" not in mods, f"{module} imports {compute}: views talk to the worker"


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_cycles():
    known = modules()
    # A package's __init__ re-exporting its own modules is not a cycle between modules.
    graph = {m: {n for n in imports_of(p) if n in known and n != m and not m.startswith(n + ".")}
             for m, p in known.items()}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " → ".join(cycle)


def test_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


# A module longer than this does more than one job: it is split by them.
MOST_LINES = 500


def long_modules(paths: dict[str, Path]) -> dict[str, int]:
    """The modules of `paths` (name → file) over MOST_LINES lines, with their lengths."""
    lengths = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in paths.items()}
    return {name: n for name, n in sorted(lengths.items()) if n > MOST_LINES}


def test_no_module_is_over_500_lines():
    assert not (long := long_modules(modules())), f"modules over {MOST_LINES} lines: {long}"


def test_the_length_rule_finds_a_long_module(tmp_path):
    (tmp_path / "short.py").write_text("x = 1\n" * MOST_LINES, encoding="utf-8")
    (tmp_path / "long.py").write_text("x = 1\n" * (MOST_LINES + 1), encoding="utf-8")
    assert long_modules({"short": tmp_path / "short.py", "long": tmp_path / "long.py"}) == {"long": MOST_LINES + 1}


def test_a_new_request_type_needs_only_its_request_handler_and_asker(qtbot, monkeypatch):
    """docs/architecture.md's example: a request and its handler defined here, run by the worker (its
    answer reaching the asker's own Reply) and by the command line's `run_request`."""
    from dataclasses import dataclass

    from embviz.bridge import registry
    from embviz.bridge.handlers import resolve_typed, run_request
    from embviz.bridge.requests import Request
    from embviz.bridge.worker import ComputeWorker, Reply
    from embviz.bridge import requests as rq
    from embviz.core import open_checkpoint

    @dataclass
    class RowLength(Request):
        token: str = ""
        channel = "row-length"

    monkeypatch.setattr(registry, "HANDLERS", dict(registry.HANDLERS))  # the registration ends with the test

    @registry.handles(RowLength)
    def row_length(model, request, progress) -> float:
        return float(model.rows([resolve_typed(model.vocab, request.token)]).norm())

    toy4 = open_checkpoint("toy4", "cpu")
    expected = float(toy4.rows([toy4.vocab.resolve("cat")]).norm())
    assert run_request(toy4, RowLength(token="cat")) == pytest.approx(expected)

    worker = ComputeWorker()
    try:
        answers: list = []
        worker.submit(rq.LoadModel(source="toy4", device="cpu"), Reply(finished=lambda rid, s: answers.append("loaded")))
        qtbot.waitUntil(lambda: answers == ["loaded"], timeout=30_000)
        worker.submit(RowLength(token="cat"), Reply(finished=lambda rid, n: answers.append(n),
                                                    failed=lambda rid, m: answers.append(m)))
        qtbot.waitUntil(lambda: len(answers) == 2, timeout=30_000)
        assert answers[1] == pytest.approx(expected)
    finally:
        worker.shutdown()


def test_a_new_tab_needs_only_its_state_request_handler_panel_and_one_entry(qtbot, monkeypatch, tmp_path, request):
    """docs/architecture.md's recipe: a tab defined here (its state, its request and handler, its panel)
    and one entry in the tab list is in the tab bar and the View menu, gets every model, keeps
    its state and its place in a session by its key, and is found by the name lessons use."""
    from dataclasses import dataclass

    from psygnal import evented
    from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

    from embviz.bridge import registry
    from embviz.bridge.handlers import resolve_typed
    from embviz.bridge.requests import Request
    from embviz.bridge.worker import Reply
    from embviz.state.session import load_session
    from embviz.state.settings import Settings
    from embviz.state.tab_state import TAB_STATES, tab_state
    from embviz.ui.main_window import MainWindow
    from embviz.ui.tab_list import TABS, TabSpec

    @tab_state("row-length")  # 1. its state (embviz/state/tabs.py)
    @evented
    @dataclass
    class RowLengthState:
        token: str = "cat"

    request.addfinalizer(lambda: TAB_STATES.pop("row-length"))

    @dataclass
    class RowLength(Request):  # 2. its request (embviz/bridge/requests.py)
        token: str = ""
        channel = "row-length"

    monkeypatch.setattr(registry, "HANDLERS", dict(registry.HANDLERS))

    @registry.handles(RowLength)  # 3. its handler (embviz/bridge/handlers/)
    def row_length(model, request, progress) -> float:
        return float(model.rows([resolve_typed(model.vocab, request.token)]).norm())

    class RowLengthPanel(QWidget):  # 4. its panel (embviz/ui/panels/)
        def __init__(self, submit) -> None:
            super().__init__()
            self.submit = submit
            self.state = RowLengthState()
            self.answer = QLabel("")
            QVBoxLayout(self).addWidget(self.answer)

        def on_model(self, summary, restore: RowLengthState | None = None) -> None:
            self.state = restore or RowLengthState()
            self.submit(RowLength(token=self.state.token), Reply(lambda _rid, n: self.answer.setText(f"{n:.4f}")))

    entry = TabSpec(RowLengthState, "Row length", "Length", lambda: RowLengthPanel)  # 5. one entry
    TABS.append(entry)
    request.addfinalizer(lambda: TABS.remove(entry))
    pieces = (RowLengthState, RowLength, row_length, RowLengthPanel, entry)

    window = MainWindow(settings=Settings(tmp_path / "settings.json"), device="cpu")
    qtbot.addWidget(window)
    window.show()
    try:
        assert window.tabs.tabText(len(TABS) - 1) in ("Row length", "Length")
        view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
        assert "Row length" in [a.text() for a in view.actions()]
        window.open_model("toy4")
        panel = window.panel_named("row-length")
        qtbot.waitUntil(lambda: panel.answer.text() != "", timeout=60_000)
        from embviz.core import open_checkpoint

        model = open_checkpoint("toy4", "cpu")
        assert float(panel.answer.text()) == pytest.approx(float(model.rows([model.vocab.resolve("cat")]).norm()), abs=1e-4)

        panel.state.token = "dog"
        window.show_tab("row-length")
        saved = load_session(window.save_session(tmp_path / "s.embviz"))
        assert saved.tab == "row-length" and saved["row-length"] == RowLengthState(token="dog")
        window.show_tab("map")
        assert window.open_session(tmp_path / "s.embviz")
        qtbot.waitUntil(lambda: window.tabs.currentWidget() is panel and panel.state.token == "dog", timeout=60_000)
    finally:
        window.close()
    guide = (ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    words = {5: "five"}
    assert f"### Adding a tab: {words[len(pieces)]} files" in guide


def test_result_types_load_without_torch():
    """The types a panel is typed with (what the handlers answer) are plain: importing them
    brings neither torch nor Qt, so the window may name them."""
    import subprocess
    import sys

    code = ("import sys, embviz.bridge.views, embviz.core.lm.results, embviz.core.table.results; "
            "print(sorted(m for m in ('torch', 'PySide6', 'transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
