"""Hostile and broken input: a clear one-line message every time, no crash, no code run.

Every bad file here is made by the test itself. Each case is checked through the core
(`open_checkpoint` and friends raise EmbvizError) and through the CLI (one line on
stderr, non-zero exit); the GUI face is in test_gui.py / test_worker.py.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import struct
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st
from safetensors.torch import save_file

from embviz.cli import main as cli_main
from embviz.core import EmbvizError, open_checkpoint
from embviz.core.table.analogy import analogy
from embviz.core.table.analogy_benchmark import read_questions
from embviz.core.lm.logits import next_token_logits
from embviz.core.maps.projection import project
from embviz.core.readers.assemble import assemble
from embviz.core.table.similarity import cosine_scores, nearest_neighbours
from embviz.core.table.vocab import vocabulary_from_ids, vocabulary_from_words
from embviz.state.settings import Settings
from tests.conftest import make_tiny_model


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = cli_main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def assert_clean_failure(capsys, source: str, fragment: str) -> None:
    with pytest.raises(EmbvizError, match=fragment):
        open_checkpoint(source, "cpu")
    code, out, err = cli(capsys, "--model", source, "info")
    assert code != 0 and out == ""
    assert len(err.strip().splitlines()) == 1 and fragment.replace("\\", "") in err and "Traceback" not in err


# --- files ----------------------------------------------------------------------------------

def test_missing_path(capsys, tmp_path):
    assert_clean_failure(capsys, str(tmp_path / "nope.safetensors"), "No such file or folder")


@pytest.mark.parametrize("suffix", [".safetensors", ".gguf", ".pt", ".bin"])
def test_empty_file(capsys, tmp_path, suffix):
    path = tmp_path / f"empty{suffix}"
    path.write_bytes(b"")
    assert_clean_failure(capsys, str(path), "is empty")


@pytest.mark.parametrize(
    "suffix, fragment",
    [(".safetensors", "not a valid safetensors"), (".gguf", "not a GGUF file"),
     (".pt", "not a readable PyTorch checkpoint"), (".bin", "not a readable PyTorch checkpoint")],
)
def test_random_bytes(capsys, tmp_path, suffix, fragment):
    path = tmp_path / f"random{suffix}"
    path.write_bytes(np.random.default_rng(0).bytes(4096))
    assert_clean_failure(capsys, str(path), fragment)


@pytest.mark.parametrize("suffix", [".pt", ".bin"])
def test_random_bytes_that_upset_the_unpickler(capsys, tmp_path, suffix):
    """Random bytes starting with a pickle opcode that pops an empty stack (a file of a
    teacher's walk-through): IndexError inside torch.load, still one plain line."""
    path = tmp_path / f"random{suffix}"
    path.write_bytes(b"u" + np.random.default_rng(1).bytes(4095))
    assert_clean_failure(capsys, str(path), r"not a readable PyTorch checkpoint \(not a plain pickle of tensors\)")


def test_truncated_safetensors(capsys, tmp_path):
    path = tmp_path / "cut.safetensors"
    save_file({"embedding.weight": torch.randn(100, 16)}, str(path))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    assert_clean_failure(capsys, str(path), "truncated or corrupt")


@pytest.mark.default_model
def test_truncated_gguf(capsys, tmp_path, monkeypatch):
    from embviz.core.default_model import default_model_path

    path = tmp_path / "cut.gguf"
    with default_model_path().open("rb") as f:
        path.write_bytes(f.read(4 << 20))  # the whole header, a sliver of the tensors
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))
    assert_clean_failure(capsys, str(path), "truncated or corrupt: the tensor")
    assert not list((tmp_path / "cache").glob("gguf/*"))  # nothing half-written is left


def tiny_gguf(path, rows=6, cols=32, tokens=True, table=None):
    """A small real GGUF written with the gguf package: an F32 table (`table`, or rows × cols
    counting up) and a token list."""
    import gguf

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(64)
    if tokens:
        writer.add_tokenizer_model("gpt2")
        writer.add_token_list(["<s>", "Ġcat", "Ġdog", "car", "Ġtr", "uck"][:rows])
        writer.add_token_types([3, 1, 1, 1, 1, 1][:rows])
    if table is None:
        table = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) / 100
    writer.add_tensor("token_embd.weight", table)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return table


def test_a_small_real_gguf_opens_with_its_own_labels(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))
    table = tiny_gguf(tmp_path / "tiny.gguf")
    model = open_checkpoint(str(tmp_path / "tiny.gguf"), "cpu")
    assert model.vocab.labels == ["<s>", "␣cat", "␣dog", "car", "␣tr", "uck"]
    assert model.vocab.special_ids == {0} and model.vocab.id_of(" cat") == 1
    assert torch.equal(model.table, torch.from_numpy(table)) and model.info()["dtype"] == "F32"
    assert model.context_length == 64 and model.tied


def _header_positions(path):
    """Byte positions of the tensor count and of the embedding's type and offset fields."""
    data = path.read_bytes()
    name = b"token_embd.weight"
    at = data.rindex(name) + len(name)  # then: n_dims u32, dims u64 × 2, type u32, offset u64
    return data, 8, at + 4 + 16, at + 4 + 16 + 4


@pytest.mark.parametrize("lie, fragment", [
    ("tensor count", "truncated or corrupt"),
    ("type", "unknown type"),
    ("offset", "runs past the end"),
])
def test_gguf_that_lies(capsys, tmp_path, monkeypatch, lie, fragment):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "liar.gguf"
    tiny_gguf(path)
    data, count_at, type_at, offset_at = _header_positions(path)
    data = bytearray(data)
    if lie == "tensor count":
        data[count_at : count_at + 8] = struct.pack("<Q", 10**12)
    elif lie == "type":
        data[type_at : type_at + 4] = struct.pack("<I", 999)
    else:
        data[offset_at : offset_at + 8] = struct.pack("<Q", 1 << 40)
    path.write_bytes(bytes(data))
    assert_clean_failure(capsys, str(path), fragment)


def test_header_that_lies_about_shape(capsys, tmp_path):
    header = {"embedding.weight": {"dtype": "F32", "shape": [1000, 64], "data_offsets": [0, 64]}}
    raw = json.dumps(header).encode()
    path = tmp_path / "liar.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * 64)
    assert_clean_failure(capsys, str(path), "claims shape")


def test_header_that_lies_about_offsets(capsys, tmp_path):
    header = {"embedding.weight": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 10**12]}}
    raw = json.dumps(header).encode()
    path = tmp_path / "liar2.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * 64)
    assert_clean_failure(capsys, str(path), "truncated or corrupt")


def test_config_that_disagrees_with_the_weights(capsys, tmp_path):
    make_tiny_model(tmp_path, "gpt2")
    config = json.loads((tmp_path / "config.json").read_text())
    config["n_embd"] = 48
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert_clean_failure(capsys, str(tmp_path), "do not belong together")


def test_folder_without_tokenizer_still_maps(capsys, tmp_path):
    make_tiny_model(tmp_path, "gpt2")
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (tmp_path / name).unlink(missing_ok=True)
    model = open_checkpoint(tmp_path, "cpu")
    assert model.vocab.labels[7] == "#7"
    assert nearest_neighbours(model, 7, 3)
    assert project(model, "pca").coords.shape == (model.vocab_size, 2)
    with pytest.raises(EmbvizError, match="no tokenizer"):
        next_token_logits(model, "hello")
    from embviz.bridge.handlers import summarise

    assert not summarise(model).text_enabled and "tokenizer" in summarise(model).text_disabled_reason


class Exploit:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("suffix", [".pt", ".bin"])
def test_pickle_that_runs_code_is_refused(capsys, tmp_path, suffix):
    marker = tmp_path / "pwned"
    path = tmp_path / f"evil{suffix}"
    torch.save({"embedding.weight": torch.zeros(3, 2), "payload": Exploit(marker)}, path)
    assert_clean_failure(capsys, str(path), "Refused to load")
    assert not marker.exists()
    with path.open("wb") as f:  # a raw pickle, not even torch's zip format
        pickle.dump(Exploit(marker), f)
    with pytest.raises(EmbvizError):
        open_checkpoint(path, "cpu")
    assert not marker.exists()


def test_no_embedding_table_lists_what_was_found(capsys, tmp_path):
    path = tmp_path / "weird.safetensors"
    save_file({"encoder.w1": torch.zeros(3, 4), "encoder.w2": torch.zeros(4, 5), "bias": torch.zeros(3), "x": torch.zeros(2, 2)}, str(path))
    assert_clean_failure(capsys, str(path), "No embedding table found")
    with pytest.raises(EmbvizError, match=r"encoder\.w1 \[3, 4\]"):
        open_checkpoint(path, "cpu")


def test_nan_inf_and_zero_rows_are_reported(tmp_path):
    table = torch.randn(10, 4)
    table[2] = float("nan")
    table[5, 1] = float("inf")
    table[7] = 0
    path = tmp_path / "bad_rows.safetensors"
    save_file({"embedding.weight": table}, str(path))
    model = open_checkpoint(path, "cpu")
    assert any("NaN or Inf" in n and "ids 2, 5" in n for n in model.notes)
    assert any("all zeros" in n and "ids 7" in n for n in model.notes)
    scores = cosine_scores(model, 0)
    assert torch.isfinite(scores).all()
    assert np.isfinite(project(model, "pca").coords).all()


# --- words and text ---------------------------------------------------------------------------

def test_analogy_with_repeated_or_empty_inputs(capsys, toy4):
    result = analogy(toy4, 0, 0, 1, k=3)  # cat − cat + dog = dog, excluded → the next best
    assert result.results and 1 not in [h.id for h in result.results]
    code, _, err = cli(capsys, "--model", "toy4", "analogy", "cat", "", "dog")
    assert code == 2 and "Word B is empty" in err


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpt2-hostile")
    make_tiny_model(folder, "gpt2")
    return open_checkpoint(folder, "cpu")


def test_text_longer_than_the_context_is_truncated_with_a_note(tiny_gpt2):
    result = next_token_logits(tiny_gpt2, "the king and the queen " * 50, k=3)
    assert result.truncated > 0 and len(result.tokens) == 64
    assert any("context of 64 tokens" in n for n in result.notes)


@pytest.mark.parametrize("text", ["🙂🙂 café", "مرحبا بالعالم", "שלום", "a\x00b\x07c\u200f", "\n\n\t"])
def test_unusual_text_gets_logits(tiny_gpt2, text):
    result = next_token_logits(tiny_gpt2, text if text.strip() else text + "x", k=3)
    assert len(result.results) == 3 and all(math.isfinite(r.logit) for r in result.results)


def test_empty_text_is_a_message(tiny_gpt2):
    for text in ("", "   ", "\n"):
        with pytest.raises(EmbvizError, match="Type some text"):
            next_token_logits(tiny_gpt2, text)


def test_invalid_utf8_in_files(tmp_path):
    path = tmp_path / "m.safetensors"
    save_file({"embedding.weight": torch.randn(3, 2)}, str(path))
    (tmp_path / "m.vocab.txt").write_bytes(b"a\nb\n\xff\xfe\n")
    with pytest.raises(EmbvizError, match="not UTF-8"):
        open_checkpoint(path, "cpu")
    questions = tmp_path / "q.txt"
    questions.write_bytes(b": s\nking man \xff woman\n")
    with pytest.raises(EmbvizError, match="not UTF-8"):
        read_questions(questions)


# --- numbers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("k", [0, -1])
def test_bad_k(capsys, k):
    code, _, err = cli(capsys, "--model", "toy4", "neighbors", "cat", "--k", str(k))
    assert code == 2 and "k must be at least 1" in err


def test_k_larger_than_the_vocabulary(toy4):
    assert len(nearest_neighbours(toy4, 0, 10_000)) == 3


@pytest.mark.parametrize("t", ["0", "-1", "nan", "inf"])
def test_bad_temperature(capsys, t):
    code, _, err = cli(capsys, "--model", "spells", "logits", "I cast", "--temperature", t)
    assert code == 2 and "Temperature must be a positive number" in err


def test_one_row_and_one_column_tables():
    one_row = assemble(name="r", source="r", table=torch.tensor([[1.0, 2.0]]), vocab=vocabulary_from_ids(1), device=torch.device("cpu"), kind="table")
    assert nearest_neighbours(one_row, 0, 5) == []
    assert project(one_row, "pca").coords.shape == (1, 2)
    one_col = assemble(name="c", source="c", table=torch.tensor([[1.0], [-2.0], [3.0]]), vocab=vocabulary_from_ids(3),
                       device=torch.device("cpu"), kind="table")
    assert [h.id for h in nearest_neighbours(one_col, 0, 2)] == [2, 1]


# --- resources ------------------------------------------------------------------------------------

def test_too_big_for_ram_is_refused_before_allocating(capsys, tmp_path, monkeypatch):
    import embviz.core.device as device

    path = tmp_path / "big.safetensors"
    save_file({"embedding.weight": torch.zeros(1000, 64)}, str(path))
    make_tiny_model(tmp_path / "folder", "gpt2")
    monkeypatch.setattr(device, "free_bytes", lambda dev: 10_000)
    with pytest.raises(EmbvizError, match="needs about .* but only .* is free"):
        open_checkpoint(tmp_path / "folder", "cpu")


# --- saved state ------------------------------------------------------------------------------------

def test_corrupt_settings_are_set_aside(tmp_path):
    path = tmp_path / "settings.json"
    path.write_text("{not json")
    s = Settings(path)
    assert s.data == {} and "set aside" in s.problem
    assert list(tmp_path.glob("settings.json.corrupt-*"))
    s.add_recent("toy4")
    assert Settings(path).recent_models == ["toy4"]


def test_a_crash_mid_write_keeps_the_old_settings(tmp_path, monkeypatch):
    path = tmp_path / "settings.json"
    s = Settings(path)
    s.add_recent("first")
    monkeypatch.setattr(os, "replace", lambda *a: (_ for _ in ()).throw(OSError("disk died")))
    with pytest.raises(OSError):
        s.add_recent("second")
    monkeypatch.undo()
    assert Settings(path).recent_models == ["first"]
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]


# --- property-based: random tables and queries ---------------------------------------------------

special = st.sampled_from([0.0, float("nan"), float("inf"), -float("inf"), 1e30, -1e-30])
entries = st.one_of(st.floats(-1e3, 1e3, allow_nan=False, width=32), special)


@st.composite
def tables(draw):
    v = draw(st.integers(1, 12))
    d = draw(st.integers(1, 5))
    rows = [[draw(entries) for _ in range(d)] for _ in range(v)]
    return torch.tensor(rows, dtype=torch.float32)


def model_of(table: torch.Tensor):
    words = [f"w{i}" for i in range(table.shape[0])]
    return assemble(name="h", source="h", table=table, vocab=vocabulary_from_words(words), device=torch.device("cpu"), kind="embedding+linear")


def allowed_failure(message: str, table: torch.Tensor, rows: list[int], k: int, centered: bool) -> bool:
    """Whether a refusal has a reason that really holds; anything else must succeed."""
    if "at least 1" in message:
        return k < 1
    if "NaN or Inf" in message:
        return any(not bool(torch.isfinite(table[r]).all()) for r in rows)
    if "all zeros" in message:
        finite = torch.isfinite(table).all(dim=1)
        mean = table[finite].double().mean(0) if bool(finite.any()) else torch.zeros(table.shape[1], dtype=torch.float64)
        return any(bool((table[r] == 0).all()) or (centered and torch.allclose(table[r].double(), mean, rtol=1e-4, atol=1e-6))
                   for r in rows)
    if "zero vector" in message:  # A − B + C cancels out
        return True
    return False


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables(), query=st.integers(0, 11), k=st.integers(-2, 20), centered=st.booleans())
def test_neighbours_on_random_tables(table, query, k, centered):
    model = model_of(table)
    query = query % model.vocab_size
    try:
        hits = nearest_neighbours(model, query, k, centered=centered)
    except EmbvizError as exc:
        assert allowed_failure(str(exc), table, [query], k, centered), str(exc)
        return
    assert k >= 1
    scores = [h.score for h in hits]
    assert all(math.isfinite(s) and -1.0001 <= s <= 1.0001 for s in scores)
    assert scores == sorted(scores, reverse=True)
    assert query not in [h.id for h in hits]
    assert len(hits) == min(k, model.vocab_size - 1)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables(), abc=st.tuples(st.integers(0, 11), st.integers(0, 11), st.integers(0, 11)),
       exclude=st.booleans(), method=st.sampled_from(["add", "mul"]))
def test_analogies_on_random_tables(table, abc, exclude, method):
    model = model_of(table)
    a, b, c = (x % model.vocab_size for x in abc)
    try:
        result = analogy(model, a, b, c, k=5, exclude_inputs=exclude, method=method)
    except EmbvizError as exc:
        assert allowed_failure(str(exc), table, [a, b, c], 5, False), str(exc)
        assert method == "add" or "zero vector" not in str(exc)
        return
    assert all(math.isfinite(h.score) for h in result.results)
    if exclude:
        assert not {a, b, c} & {h.id for h in result.results}
    assert len(result.results) == min(5, model.vocab_size - (len({a, b, c}) if exclude else 0))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=tables())
def test_pca_on_random_tables_is_finite(table):
    proj = project(model_of(table), "pca")
    assert proj.coords.shape == (table.shape[0], 2) and np.isfinite(proj.coords).all()
