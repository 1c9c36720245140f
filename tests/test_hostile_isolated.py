"""Hostile files that once crashed, hung or ate gigabytes: each is opened by the command line in
a child process with a time and memory limit, so a regression fails its test instead of taking
pytest down, and still ends in one line on stderr."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile_corpus.checkpoints import ISOLATED

ROOT = Path(__file__).resolve().parent.parent
# The child imports everything first, then may allocate only this much more: far below what the
# hostile files asked for, far above what refusing them takes.
HEADROOM = 1 << 30
CHILD = """
import resource, sys
import embviz.cli, embviz.core, embviz.state.session

def vm_bytes():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))

limit = vm_bytes() + int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
if sys.argv[2] == "session":
    try:
        embviz.state.session.load_session(sys.argv[3])
    except embviz.core.EmbvizError as exc:
        print(f"embviz: {exc}", file=sys.stderr)
        sys.exit(2)
    sys.exit(0)
sys.exit(embviz.cli.main(["--model", sys.argv[3], "--device", "cpu", "info"]))
"""


def run_isolated(kind: str, path: Path, timeout: float = 90) -> subprocess.CompletedProcess:
    """Open `path` (a model, or with kind "session" a session) in a child; a hang fails here."""
    if not Path("/proc/self/status").exists():
        pytest.skip("the memory limit needs /proc")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
           "EMBVIZ_CACHE_DIR": str(path.parent / "cache")}
    return subprocess.run([sys.executable, "-c", CHILD, str(HEADROOM), kind, str(path)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def assert_one_line(result: subprocess.CompletedProcess, expect: str) -> None:
    assert result.returncode > 0, f"the child ended by signal {-result.returncode}" if result.returncode < 0 else "it opened"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert re.search(expect, lines[0]), lines[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need a POSIX system")
@pytest.mark.parametrize("name", sorted(ISOLATED))
def test_isolated_hostile_case(name, tmp_path):
    case = ISOLATED[name]
    assert_one_line(run_isolated("model", case.make(tmp_path)), case.expect)
