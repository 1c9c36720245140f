"""A cached table cut short on disk while a command runs on it: the command keeps its numbers (no
SIGBUS), in a child process so that a regression fails this test rather than ending pytest."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.hostile_corpus.word_vectors import w2v_binary

ROOT = Path(__file__).resolve().parent.parent
CHILD = """
import os, subprocess, sys, time
from embviz.core import open_checkpoint

source = sys.argv[1]
open_checkpoint(source, "cpu")  # makes the cache entry
model = open_checkpoint(source, "cpu")  # a cached open: the table is a map of the entry's table.npy
mapped = str(model.cache["mapped_table"].path)
before = float(model.table.double().sum())
cut = subprocess.Popen([sys.executable, "-c", f"import os; os.truncate({mapped!r}, 128)"])
while cut.poll() is None:  # another process cuts the file while this one runs
    time.sleep(0.01)
after = float(model.table.double().sum())
print(os.path.getsize(mapped), before == after)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="file leases are Linux's")
def test_a_table_cut_short_under_a_running_command_keeps_its_numbers(tmp_path):
    rows = np.random.default_rng(0).normal(size=(100_000, 16)).astype(np.float32)
    source = tmp_path / "big.bin"
    source.write_bytes(w2v_binary([(f"w{i}".encode(), row) for i, row in enumerate(rows)], dim=16))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EMBVIZ_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-c", CHILD, str(source)], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, f"signal {-result.returncode}" if result.returncode < 0 else result.stderr[-2000:]
    assert result.stdout.split() == ["128", "True"]
