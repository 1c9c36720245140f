"""Run a command (the test suite) and sample the memory of its whole process tree.

    python bench/suite_memory.py [--every 0.5] -- make test

Every `--every` seconds it sums the proportional set size (PSS: shared pages split between the
processes that map them, so a file mapped by two workers is counted once) of the command and all
its descendants, from /proc/PID/smaps_rollup. At the end it prints, as one JSON object, the peak
of that sum, the largest single process seen and what it was, and the command's exit status.
Linux only. A sampler misses peaks shorter than its period; the figures are a floor.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _tree(root: int) -> list[int]:
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo += _children(pid)
    return pids


def _pss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:120]
    except OSError:
        return "?"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--every", type=float, default=0.5, help="seconds between samples")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    started = time.perf_counter()
    proc = subprocess.Popen(command)
    peak_total, peak_one, peak_one_name = 0, 0, ""
    while proc.poll() is None:
        sizes = {pid: _pss_kib(pid) for pid in _tree(proc.pid)}
        peak_total = max(peak_total, sum(sizes.values()))
        biggest = max(sizes, key=sizes.__getitem__)
        if sizes[biggest] > peak_one:
            peak_one, peak_one_name = sizes[biggest], _name(biggest)
        time.sleep(args.every)
    print(json.dumps({
        "command": " ".join(command), "returncode": proc.returncode,
        "wall_s": round(time.perf_counter() - started, 1),
        "peak_total_pss_mib": round(peak_total / 1024), "peak_process_pss_mib": round(peak_one / 1024),
        "peak_process": peak_one_name,
    }))
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
