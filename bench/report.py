"""Render bench/run.py --json output as the Markdown results table of docs/benchmarks.md.

    python bench/run.py --json > results.json && python bench/report.py results.json
"""

from __future__ import annotations

import json
import sys


def fmt(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.3g}"


def render(report: dict) -> str:
    lines = [
        f"Measured {report['date']} on {report['machine']}, device {report['device']}"
        + (" (quick mode)" if report["quick"] else "") + ".",
        "",
        "| # | figure | embviz | baseline | ratio | target | note |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for f in report["figures"]:
        base = f"{fmt(f['baseline'])} {f['unit']} ({f['baseline_name']})" if f["baseline"] is not None else "—"
        ratio = f"{f['ratio']:.3g}×" if f["ratio"] is not None else "—"
        lines.append(f"| {f['figure']} | {f['name']} | {fmt(f['value'])} {f['unit']} | {base} | {ratio} | {f['target'] or '—'} | {f['note']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as fh:
        print(render(json.load(fh)), end="")
