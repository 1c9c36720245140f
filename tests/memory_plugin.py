"""Each test's peak resident memory, and that of the child processes it waited for.

Set EMBVIZ_MEMORY_LOG to a file: every test appends one JSON line to it (pytest-xdist's
workers included, each writing whole lines). `python tests/memory_plugin.py FILE` prints the
largest. Linux only: the process's peak is reset before each test through
/proc/self/clear_refs, so a test's figure is its own, not the run's high-water mark so far.
A child's peak is only known once it is reaped (RUSAGE_CHILDREN keeps the largest ever), so a
test is named for a child only when it raised that largest figure.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from pathlib import Path

import pytest

_LOG = os.environ.get("EMBVIZ_MEMORY_LOG")
_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def _status_kib(field: str) -> int:
    for line in _STATUS.read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _reset_peak() -> None:
    try:
        _CLEAR_REFS.write_text("5")  # "5" resets the peak resident set size (proc(5))
    except OSError:
        pass


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not _LOG:
        yield
        return
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    _reset_peak()
    yield
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    record = {
        "test": item.nodeid,
        "peak_mib": round(_status_kib("VmHWM:") / 1024, 1),
        "held_mib": round(_status_kib("VmRSS:") / 1024, 1),  # what the test left resident
        "child_peak_mib": round(children_after / 1024, 1) if children_after > children_before else 0.0,
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
    }
    with open(_LOG, "a", encoding="utf-8") as log:
        log.write(json.dumps(record) + "\n")


def largest(log: Path, count: int = 10) -> list[dict[str, object]]:
    """The `count` tests with the largest peak, of the process or of a child it waited for."""
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.strip()]
    return sorted(records, key=lambda r: -max(r["peak_mib"], r["child_peak_mib"]))[:count]


if __name__ == "__main__":
    print("| test | peak (MiB) | a child's peak (MiB) |\n| --- | ---: | ---: |")
    for r in largest(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 10):
        print(f"| `{r['test']}` | {r['peak_mib']:,.0f} | {r['child_peak_mib']:,.0f} |")
