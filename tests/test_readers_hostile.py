"""The binary readers against hostile input they once mishandled, and the GGUF header parser
against the gguf package's own reader. Sessions: tests/test_session_hostile.py."""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import struct

import pytest
import torch
from safetensors.torch import save_file

from embviz.core import EmbvizError, open_checkpoint
from embviz.core.readers import regular_file
from embviz.core.readers.gguf_file import read_header


@pytest.mark.default_model
@pytest.mark.skipif(importlib.util.find_spec("gguf") is None, reason="the gguf package is not installed")
def test_the_gguf_header_parser_agrees_with_gguf_reader():
    from gguf import GGUFReader

    from embviz.core.default_model import default_model_path

    path = default_model_path()
    ours, theirs = read_header(path), GGUFReader(str(path))
    assert list(ours.tensors) == [t.name for t in theirs.tensors]
    for t in theirs.tensors:
        mine = ours.tensors[t.name]
        assert (mine.shape, mine.type_id, mine.offset, mine.nbytes) == \
            (tuple(int(n) for n in t.shape), int(t.tensor_type), int(t.data_offset), int(t.n_bytes)), t.name
    fields = {k: f.contents() for k, f in theirs.fields.items() if not k.startswith("GGUF.")}
    assert fields.keys() == ours.fields.keys()
    for key, value in fields.items():
        assert ours.fields[key] == value, key
    assert len(ours.fields["tokenizer.ggml.tokens"]) == 49152


def test_an_fp8_table_is_read_as_float32(tmp_path):
    table = torch.randn(6, 4)
    path = tmp_path / "fp8.safetensors"
    save_file({"embedding.weight": table.to(torch.float8_e4m3fn)}, str(path))
    model = open_checkpoint(str(path), "cpu")
    assert model.table.dtype == torch.float32
    assert torch.equal(model.table, table.to(torch.float8_e4m3fn).to(torch.float32))


def test_a_type_torch_cannot_convert_is_one_line(tmp_path):
    header = json.dumps({"embedding.weight": {"dtype": "F4", "shape": [2, 4], "data_offsets": [0, 4]}}).encode()
    path = tmp_path / "f4.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 4)
    with pytest.raises(EmbvizError, match="stored as F4") as info:
        open_checkpoint(str(path), "cpu")
    assert "\n" not in str(info.value)


def _unreadable(tmp_path, monkeypatch, name: str):
    """A file the system refuses to open: by its mode where that binds (not for root), and by
    the refusal itself for root, whom no mode stops."""
    path = tmp_path / name
    path.write_bytes(b"\0" * 64)
    path.chmod(0)
    if os.geteuid() == 0:
        real_open = os.open

        def refuse(file, *args, **kwargs):
            if os.fspath(file) == os.fspath(path):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(regular_file.os, "open", refuse)
    return path


@pytest.mark.parametrize("name", ["model.safetensors", "model.gguf", "words.kv", "weights.pt"])
def test_a_file_without_read_permission_is_one_line(tmp_path, monkeypatch, name):
    path = _unreadable(tmp_path, monkeypatch, name)
    with pytest.raises(EmbvizError, match="cannot be read: permission denied") as info:
        open_checkpoint(str(path), "cpu")
    assert "\n" not in str(info.value)


def test_an_unreadable_vocabulary_beside_the_weights_is_one_line(tmp_path, monkeypatch):
    save_file({"embedding.weight": torch.randn(3, 4)}, str(tmp_path / "w.safetensors"))
    _unreadable(tmp_path, monkeypatch, "vocab.json")
    with pytest.raises(EmbvizError, match="vocab.json cannot be read: permission denied"):
        open_checkpoint(str(tmp_path / "w.safetensors"), "cpu")


def test_a_hub_id_longer_than_the_hub_allows_never_reaches_the_hub(monkeypatch):
    from embviz.core.readers import hub

    def no_hub(*args, **kwargs):
        raise AssertionError("the hub was asked")

    monkeypatch.setattr(hub, "_cached_snapshot", no_hub)
    monkeypatch.setattr(hub, "plan_download", no_hub)
    with pytest.raises(EmbvizError, match="too long for a hub id"):
        open_checkpoint("someone/" + "m" * 200, "cpu")


def test_a_table_survives_its_file_being_truncated_after_the_open(tmp_path):
    """safetensors maps the file: a table still backed by the map would die of SIGBUS here."""
    import subprocess
    import sys
    from pathlib import Path

    path = tmp_path / "w.safetensors"
    save_file({"embedding.weight": torch.ones(4096, 512)}, str(path))
    code = ("import os, sys\n"
            "from embviz.core.readers.safetensors_file import read_header, load_tensor\n"
            "t = load_tensor(read_header(sys.argv[1])['embedding.weight'])\n"
            "os.truncate(sys.argv[1], 8)\n"
            "print(float(t.sum()))\n")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120,
                          cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0 and float(done.stdout) == 4096 * 512, done.stderr[-500:]
