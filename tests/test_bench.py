"""The benchmark's quick mode as a smoke test: every figure is measured and reported
with its baseline (no timing assertions: machines here are noisy)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # bench/ is a folder of the repository, not of the package


@pytest.mark.default_model
def test_quick_benchmark_reports_every_figure(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--json", "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    figures = report["figures"]
    assert {f["figure"] for f in figures} == set(range(1, 11)) | {12, 13, 14, 15, 16, 17, 18, 20, 21, 22, 23}
    for f in figures:
        assert f["value"] is not None and f["value"] > 0, f
    with_baseline = [f for f in figures if f["baseline"] is not None]
    assert {f["figure"] for f in with_baseline} >= {2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 18, 20, 21, 22}
    assert all(abs(f["ratio"] - f["value"] / f["baseline"]) < 1e-9 for f in with_baseline)
    assert report["device"] == "cpu" and report["date"]


def _report(date, device, figures, quick=False):
    return {"date": date, "machine": f"x86_64, 2 cores, 3.11.7, torch 2.13.0+{device}", "device": device,
            "quick": quick, "figures": [
                {"figure": n, "name": name, "value": value, "unit": unit, "baseline": base,
                 "baseline_name": "plain" if base else "", "ratio": value / base if base else None,
                 "target": target, "note": ""}
                for n, name, value, unit, base, target in figures]}


def test_latest_table_takes_each_figure_from_its_newest_run():
    from bench.report import latest_rows, met, render_latest

    old = _report("2026-11-30", "cpu", [
        (1, "first open (conversion) → map", 43.3, "s", None, ""),
        (1, "cached open → map", 1.01, "s", None, "≤ 1.5 s"),
        (2, "table read", 6.1, "s", 3.05, "≤ 1.5×"),
        (5, "t-SNE: whole run", 204.0, "s", None, "≤ 90 s"),
    ])
    new = _report("2026-12-01", "cpu", [
        (1, "first open (empty cache) → map", 1.71, "s", None, "≤ 5 s"),
        (1, "cached open → map", 0.97, "s", None, "≤ 1.5 s"),
        (5, "t-SNE: whole run", 60.1, "s", None, "≤ 90 s"),
    ])
    quick = _report("2026-12-02", "cpu", [(2, "table read", 0.1, "s", 1.0, "≤ 1.5×")], quick=True)
    new["source"] = "docs/benchmarks-2026-12-01d-cpu.json"  # a run docs/benchmarks.md calls idle
    later = [{"figure": 5, "name": "t-SNE: whole run", "value": 90.6, "unit": "s", "baseline": None,
              "baseline_name": "", "ratio": None, "target": "≤ 90 s", "note": "", "device": "cpu",
              "date": "2026-12-01", "machine": new["machine"], "load": "busy", "source": "benchmarks.md"}]

    rows = latest_rows([new, quick, old], later)  # out of order: sorted by date; quick runs never count
    got = [(r["figure"], r["name"], r["value"], r["date"], r["load"], met(r)) for r in rows]
    assert got[:6] == [
        (1, "first open (empty cache) → map", 1.71, "2026-12-01", "idle", "met"),  # the old name is gone with its run
        (1, "cached open → map", 0.97, "2026-12-01", "idle", "met"),
        (2, "table read", 6.1, "2026-11-30", "not recorded", "missed"),  # 2.0× against ≤ 1.5×
        (3, "PCA of every row", None, "—", "", "not measured"),
        (4, "cosine top-10 over the whole vocabulary", None, "—", "", "not measured"),
        (5, "t-SNE: whole run", 60.1, "2026-12-01", "idle", "met"),
    ]
    assert got[6] == (5, "t-SNE: whole run", 90.6, "2026-12-01", "busy", "missed")  # a later row joins
    assert {r["figure"] for r in rows} == set(range(1, 18))
    # A run of a later day measures figure 5 again: the older outside row goes with the old rows.
    newer = _report("2026-12-03", "cpu", [(5, "t-SNE: first picture", 20.0, "s", None, "≤ 30 s")])
    fives = [(r["name"], r["value"]) for r in latest_rows([new, newer, old], later) if r["figure"] == 5]
    assert fives == [("t-SNE: first picture", 20.0)]

    table = render_latest(rows).splitlines()
    assert table[0].startswith("| # | figure | date | machine | embviz | ratio")
    assert table[2] == ("| 1 | first open (empty cache) → map | 2026-12-01 | CPU, 2 cores; idle | 1.71 s | — "
                        "| ≤ 5 s | met | [benchmarks-2026-12-01d-cpu.json](benchmarks-2026-12-01d-cpu.json) |  |")
    assert "| 2 | table read | 2026-11-30 | CPU, 2 cores; not recorded | 6.1 s | 2× (3.05 s, plain) | ≤ 1.5× | missed |" in table[4]
    assert "| 3 | PCA of every row | — | CPU | not measured |" in table[5]


def test_met_reads_every_kind_of_target():
    from bench.report import met

    row = lambda value, unit, target, ratio=None: {"value": value, "unit": unit, "target": target, "ratio": ratio}  # noqa: E731
    assert met(row(140, "ms", "≤ 150 ms (short text)")) == "met"
    assert met(row(0.2, "s", "≤ 150 ms")) == "missed"  # units converted
    assert met(row(6.1, "s", "≤ 1.5×", ratio=2.0)) == "missed"  # a × target reads the ratio
    assert met(row(0.309, "share", "≥ openTSNE (0.229 measured before)", ratio=1.33)) == "met"
    assert met(row(9.8, "s", "")) == "no target"
    assert met(row(None, "s", "≤ 1 s")) == "not measured"


def test_the_current_table_in_the_docs_is_the_generated_one():
    from bench.report import MEASURED_OUTSIDE_JSON, latest_rows, load_reports, render_latest

    docs = ROOT / "docs"
    table = render_latest(latest_rows(load_reports([str(p) for p in docs.glob("benchmarks-*.json")]), MEASURED_OUTSIDE_JSON))
    assert table in (docs / "benchmarks.md").read_text(encoding="utf-8"), \
        "regenerate it: python bench/report.py --latest docs/benchmarks-*.json"


def test_a_target_beyond_its_baseline_is_judged_on_the_sum():
    from bench.report import met

    row = {"value": 0.4, "unit": "s", "baseline": 0.05, "ratio": 8.0, "target": "≤ baseline + 1 s"}
    assert met(row) == "met"
    assert met({**row, "value": 1.2}) == "missed"
    assert met({**row, "value": 900, "unit": "ms", "baseline": 50}) == "met"


def test_the_gap_trace_lists_what_ran_in_each_long_gap():
    from bench.trace_gaps import report

    ticks = [0.000, 0.005, 0.010, 0.040, 0.045, 0.070]  # gaps of 30 and 25 ms after two short ones
    events = [(0.012, 0.020, 0, "LensGrid", "Paint"), (0.013, 0.004, 1, "QScrollBar", "Paint"),
              (0.047, 0.015, 0, "ComputeWorker", "MetaCall"), (0.001, 0.002, 0, "QTimer", "Timer")]
    text = report(events, ticks, [0.0, 0.07], over_ms=16, top=5)
    assert text.splitlines()[0] == "2 gaps over 16 ms among 6 ticks"
    first = text.index("gap 30.0 ms")
    assert first < text.index("gap 25.0 ms") < text.index("ComputeWorker MetaCall")  # the longest first
    assert "    20.0 ms  LensGrid Paint" in text and "QScrollBar" not in text.split("outermost")[1]
    assert "QTimer" not in text  # it ran before the long gaps
    assert report(events, ticks, [None, None], 16, 5) == "figure 9 did not run"


def test_the_registry_finds_one_module_per_figure_and_what_each_run_measures():
    import argparse

    from bench.figures import figures

    found = figures()
    assert {f.number for f in found} == set(range(1, 24))
    orders = [f.order for f in found]
    assert orders == sorted(orders) and len(set(orders)) == len(orders)

    def measured(**options) -> list[int]:
        args = argparse.Namespace(**{"only_figures": set(), "no_gui": False, "quick": False, **options})
        return sorted({f.number for f in found if f.wanted(args)})

    assert measured() == list(range(1, 24))
    # A full run's alone: the GloVe text file (11), the 1.7 GB half-precision checkpoint (19).
    assert measured(quick=True) == [n for n in range(1, 24) if n not in (11, 19)]
    assert measured(no_gui=True) == [2, 3, 4, 5, 7, 8, 12, 13, 15, 16, 17, 18, 19, 21, 22, 23]  # 7: its core call alone
    assert measured(only_figures={9, 10}) == [9, 10]
    window = [f for f in found if f.window]
    assert {f.number for f in window} == {7, 9, 10, 15} and all(not f.wanted(argparse.Namespace(
        only_figures=set(), no_gui=True, quick=False)) for f in window)
