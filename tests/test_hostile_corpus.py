"""Every case of the hostile corpus ends in one clear line, through the core and the command line."""

from __future__ import annotations

import pytest

from embviz.cli import main as cli_main
from embviz.core import EmbvizError, open_checkpoint
from tests.hostile_corpus import load_all

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
