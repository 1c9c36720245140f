"""The benchmark's quick mode as a smoke test: every figure is measured and reported
with its baseline (no timing assertions: machines here are noisy)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.default_model
def test_quick_benchmark_reports_every_figure(tmp_path):
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--json", "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=1200,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    figures = report["figures"]
    assert {f["figure"] for f in figures} == set(range(1, 11)) | {12, 13, 14, 15}
    for f in figures:
        assert f["value"] is not None and f["value"] > 0, f
    with_baseline = [f for f in figures if f["baseline"] is not None]
    assert {f["figure"] for f in with_baseline} >= {2, 3, 4, 5, 6, 7, 8, 10, 13, 14}
    assert all(abs(f["ratio"] - f["value"] / f["baseline"]) < 1e-9 for f in with_baseline)
    assert report["device"] == "cpu" and report["date"]
