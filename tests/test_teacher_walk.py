"""Issue 35's concrete faults found on a teacher's walk through the lessons: each one's test."""

from __future__ import annotations

import csv

import pytest

from embviz.ui.tab_list import TABS

from conftest import make_tiny_model
from helpers import wait_for


@pytest.mark.parametrize("spec", TABS, ids=lambda spec: spec.key)
def test_every_tab_has_what_the_file_menus_exports_ask_of_it(spec):
    panel = spec.panel()
    assert callable(getattr(panel, "table_rows", None)) and callable(getattr(panel, "picture", None))


def test_the_attribution_tab_exports_its_parts_and_heads(qtbot, window, tmp_path):
    make_tiny_model(tmp_path / "tiny", arch="gpt2")
    window.open_model(str(tmp_path / "tiny"))
    wait_for(qtbot, lambda: window.summary is not None, 60_000)
    panel = window.attribution
    window.tabs.setCurrentWidget(panel)
    assert window.export_table(tmp_path / "none.csv") is None  # nothing asked yet
    panel.state.text = "paris is the capital of"
    panel.run()
    wait_for(qtbot, lambda: panel.result is not None, 120_000)
    result = panel.result
    with window.export_table(tmp_path / "a.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["block", "kind", "head", "value"]
    parts = [r for r in rows[1:] if r[2] == ""]
    heads = [r for r in rows[1:] if r[1] == "head"]
    assert [(r[0], r[1]) for r in parts if r[1] != "attention bias"] == \
        [("" if p.block is None else str(p.block), p.kind) for p in result.parts]
    assert sum(float(r[3]) for r in parts if r[1] != "attention bias") == pytest.approx(
        result.uncapped_logit if result.uncapped_logit is not None else result.logit, abs=1e-3)
    assert len(heads) == sum(h.head is not None for h in result.heads) > 0
    top = result.ranked_heads()[0]
    assert float(next(r[3] for r in heads if (int(r[0]), int(r[2])) == (top.block, top.head))) == \
        pytest.approx(top.value, abs=1e-5)

    panel.state.text_b, panel.state.compare = "rome is the capital of", True
    panel.run()
    wait_for(qtbot, lambda: panel.result_b is not None, 120_000)
    with window.export_table(tmp_path / "ab.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["block", "kind", "head", "A", "B", "B − A"]
    for row in rows[1:]:
        assert float(row[5]) == pytest.approx(float(row[4]) - float(row[3]), abs=1e-5)
    assert any(abs(float(row[5])) > 1e-4 for row in rows[1:])  # two prompts, two splits
