"""Every case of the hostile corpus ends in one clear line, through the core and the command line; every
hostile cache folder in the same answer as a clean one."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from embviz.cli import main as cli_main
from embviz.core import EmbvizError, open_checkpoint
from embviz.core.maps import kept_maps, knn
from tests.hostile_corpus import load_all
from tests.hostile_corpus.cache import CACHE_CASES, ask, entry_of, source

ROOT = Path(__file__).resolve().parent.parent

CASES = load_all()


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_case(name, tmp_path, capsys, monkeypatch):
    # A cache of its own: a table cached when an older reader accepted the file would hide the refusal.
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))
    case = CASES[name]
    path = case.make(tmp_path)
    with pytest.raises(EmbvizError, match=case.expect) as info:
        open_checkpoint(str(path), "cpu")
    assert "\n" not in str(info.value)
    code = cli_main(["--model", str(path), "info"])
    out = capsys.readouterr()
    assert code != 0 and out.out == ""
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.err


# --- the cache folder, altered on disk ---------------------------------------------------------
CACHE_CHILD = """
import json, resource, sys
from pathlib import Path
import embviz.core, embviz.core.maps.projection, embviz.core.maps.knn, embviz.core.table.similarity
from embviz.core.maps import kept_maps, knn
from tests.hostile_corpus.cache import ask

kept_maps.KEEP_ROWS, knn.DISK_ROWS = 0, 0
with open("/proc/self/status") as f:
    size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 30),) * 2)
print(json.dumps(ask(Path(sys.argv[1]), sys.argv[2])))
"""


def ask_in_child(path: Path, kind: str, cache: Path) -> dict:
    """The question asked in a child with a time and a memory limit: a hang or a blow-up fails here."""
    if not Path("/proc/self/status").exists():
        pytest.skip("the memory limit needs /proc")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "EMBVIZ_CACHE_DIR": str(cache)}
    result = subprocess.run([sys.executable, "-c", CACHE_CHILD, str(path), kind], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(CACHE_CASES))
def test_hostile_cache_case(name, tmp_path, monkeypatch):
    """A clean cache made here, altered as the case says: the next open answers exactly as the clean
    cache did, with the case's note (or none), never another table, a hang or a traceback."""
    case = CACHE_CASES[name]
    cache = tmp_path / "cache"
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(cache))
    monkeypatch.setattr(kept_maps, "KEEP_ROWS", 0)
    monkeypatch.setattr(knn, "DISK_ROWS", 0)
    a, b = (source(tmp_path, "gguf" if case.kind == "gguf" else "words", which) for which in "ab")
    clean = ask(a, case.kind)
    entry = entry_of(cache, case.kind)
    ask(b, case.kind)
    other = next(p for p in entry.parent.iterdir() if p != entry and not p.name.startswith("."))
    case.alter(entry, other, cache)
    answer = ask_in_child(a, case.kind, cache) if case.isolated else ask(a, case.kind)
    notes = answer.pop("notes")
    assert answer == {k: v for k, v in clean.items() if k != "notes"}
    if case.note is None:
        assert notes == clean["notes"]
    else:
        assert any(re.search(case.note, n) for n in notes), notes
        assert all("\n" not in n for n in notes)
