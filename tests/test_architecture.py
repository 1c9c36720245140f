"""The rooms stay apart: the core never imports Qt, the views never import torch."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "embviz"
QT = ("PySide6", "pyqtgraph", "superqt", "shiboken6")


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_core_has_no_qt():
    for path in (ROOT / "core").rglob("*.py"):
        bad = {m for m in imported_modules(path) if m.split(".")[0] in QT}
        assert not bad, f"{path.relative_to(ROOT)} imports {bad}"


def test_views_have_no_torch_and_no_core_compute():
    for path in (ROOT / "ui").rglob("*.py"):
        mods = imported_modules(path)
        assert not {m for m in mods if m.split(".")[0] == "torch"}, f"{path.name} imports torch"
        compute = {m for m in mods if m.startswith("embviz.core.") and m not in ("embviz.core.errors", "embviz.core.lessons")}
        assert not compute, f"{path.name} imports {compute}: views talk to the worker, not the core"


def test_jobs_and_cli_have_no_qt():
    for name in ("jobs.py", "cli.py", "requests.py", "settings.py", "wordsets.py", "state.py"):
        bad = {m for m in imported_modules(ROOT / name) if m.split(".")[0] in QT}
        assert not bad, f"{name} imports {bad}"
