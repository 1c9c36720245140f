"""Big tables: word2vec binaries read a piece at a time into the table, and the cache of
word-vector tables mapped rather than read: never stale, and rebuilt (with a note) when damaged."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import pytest

from embviz.core import EmbvizError, open_checkpoint
from embviz.core.readers import word2vec_binary
from embviz.core.readers.word2vec_binary import read_word2vec_binary

WORDS = [f"w{i}" + "x" * (i % 7) for i in range(40)] + ["café", "naïve"]
VECS = np.random.default_rng(1).normal(size=(len(WORDS), 6)).astype(np.float32)


def binary(words=WORDS, vecs=VECS, newline: bool = True) -> bytes:
    end = b"\n" if newline else b""
    return f"{len(words)} {vecs.shape[1]}\n".encode() + b"".join(
        w.encode() + b" " + v.astype("<f4").tobytes() + end for w, v in zip(words, vecs))


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))


def read(data: bytes, allocate=word2vec_binary.new_table):
    return read_word2vec_binary(io.BytesIO(data), len(data), "w.bin", allocate)


@pytest.mark.parametrize("newline", [True, False], ids=["word2vec.c", "gensim"])
@pytest.mark.parametrize("piece", [1, 7, 33, 10**6])
def test_any_piece_size_reads_the_same_table(monkeypatch, newline, piece):
    monkeypatch.setattr(word2vec_binary, "PIECE_BYTES", piece)
    words, table, notes = read(binary(newline=newline))
    assert words == WORDS and notes == []
    np.testing.assert_array_equal(table, VECS)


# With newlines the missing one gives word 21 away; without, the float bytes read as word 22.
@pytest.mark.parametrize("newline, caught", [(True, 21), (False, 22)], ids=["word2vec.c", "gensim"])
def test_a_shifted_entry_is_refused_at_the_same_word_whatever_the_pieces(monkeypatch, newline, caught):
    words = list(WORDS)
    words[20] = "new york"  # a space in a word: every byte after it is shifted
    data = binary(words, newline=newline)
    messages = set()
    for piece in (5, 64, 10**6):
        monkeypatch.setattr(word2vec_binary, "PIECE_BYTES", piece)
        with pytest.raises(EmbvizError) as err:
            read(data)
        messages.add(str(err.value))
    (message,) = messages
    assert "do not line up" in message and f"after word {caught} " in message


def test_a_header_that_claims_more_rows_than_the_file_holds_is_refused_before_allocating():
    def allocate(shape):
        raise AssertionError(f"allocated {shape} for a lying header")

    body = binary()[binary().index(b"\n") + 1:]
    for header in (b"100000000 300\n", b"1000 6\n"):
        with pytest.raises(EmbvizError, match="truncated or its header lies"):
            read(header + body, allocate)
    # A claim the file's size allows is refused where the file ends (what was allocated is within its size).
    with pytest.raises(EmbvizError, match="truncated or corrupt at word 43 of 43"):
        read(b"43 6\n" + body)


def test_a_truncated_last_vector_and_trailing_bytes_are_refused():
    data = binary()
    with pytest.raises(EmbvizError, match="truncated or corrupt at word 42 of 42"):
        read(data[:-3])
    with pytest.raises(EmbvizError, match="5 bytes follow the last"):
        read(data + b"extra")


def test_bad_utf8_is_noted_once_and_shown_replaced():
    words = ["ok", "caf\udce9"]  # a lone latin-1 byte where UTF-8 was meant
    raw = [w.encode("utf-8", "surrogateescape") for w in words]
    data = b"2 6\n" + b"".join(w + b" " + v.tobytes() + b"\n" for w, v in zip(raw, VECS[:2]))
    got, _, notes = read(data)
    assert got == ["ok", "caf\ufffd"] and len(notes) == 1


def _cache_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "word-vectors").glob("*/table.npy"))


def test_a_cached_open_maps_the_cache_file(tmp_path):
    path = tmp_path / "w.bin"
    path.write_bytes(binary())
    first = open_checkpoint(str(path), "cpu")
    second = open_checkpoint(str(path), "cpu")
    np.testing.assert_array_equal(second.table.numpy(), VECS)
    assert first.notes == second.notes == [] and second.vocab.labels == WORDS
    (entry,) = _cache_files(tmp_path)
    maps = Path("/proc/self/maps")
    if maps.exists():
        mapped = [line for line in maps.read_text().splitlines() if line.endswith(str(entry))]
        assert mapped and all(line.split()[1].startswith("rw-p") for line in mapped)  # private: copy-on-write


def test_a_changed_file_is_never_served_from_the_old_map(tmp_path):
    path = tmp_path / "w.bin"
    path.write_bytes(binary())
    first = open_checkpoint(str(path), "cpu")
    stat = path.stat()
    changed = VECS + 1
    with path.open("r+b") as f:  # in place, same size, and its old modification time put back
        f.write(binary(vecs=changed))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    second = open_checkpoint(str(path), "cpu")
    np.testing.assert_array_equal(second.table.numpy(), changed)
    np.testing.assert_array_equal(first.table.numpy(), VECS)  # the first model's map is untouched
    assert len(_cache_files(tmp_path)) == 2


def _damage(entry: Path, how: str) -> None:
    data = entry.read_bytes()
    if how == "truncated":
        entry.write_bytes(data[:len(data) // 2])
    elif how == "wrong header":
        entry.write_bytes(b"not a .npy header" + data[17:])
    elif how == "wrong size":
        entry.write_bytes(data + b"\0" * 24)
    elif how == "wrong shape":
        np.save(entry, np.zeros((3, 6), np.float32))
    elif how == "words missing":
        (entry.parent / "words.txt").unlink()
    elif how == "a word too many":
        (entry.parent / "words.txt").write_text("\n".join([*WORDS, "extra"]), encoding="utf-8")
    elif how == "norms of another table":
        np.save(entry.parent / "norms.npy", np.ones(7, np.float32))


@pytest.mark.parametrize("how", ["truncated", "wrong header", "wrong size", "wrong shape", "words missing",
                                 "a word too many", "norms of another table"])
def test_a_damaged_cache_entry_is_rebuilt_with_a_note(tmp_path, how):
    path = tmp_path / "w.bin"
    path.write_bytes(binary())
    open_checkpoint(str(path), "cpu")
    (entry,) = _cache_files(tmp_path)
    _damage(entry, how)
    rebuilt = open_checkpoint(str(path), "cpu")
    np.testing.assert_array_equal(rebuilt.table.numpy(), VECS)
    assert rebuilt.vocab.labels == WORDS
    (note,) = rebuilt.notes
    assert "cached copy of w.bin was damaged" in note and "read again" in note and "\n" not in note
    again = open_checkpoint(str(path), "cpu")
    assert again.notes == []  # the entry was written anew
    np.testing.assert_array_equal(again.table.numpy(), VECS)


def test_nothing_written_into_a_mapped_table_reaches_the_cache_file(tmp_path):
    path = tmp_path / "w.bin"
    path.write_bytes(binary())
    open_checkpoint(str(path), "cpu")
    model = open_checkpoint(str(path), "cpu")
    model.table[0] = 42.0  # nothing in embviz does this; copy-on-write keeps it out of the file anyway
    (entry,) = _cache_files(tmp_path)
    np.testing.assert_array_equal(np.load(entry), VECS)


@pytest.mark.parametrize("how", ["truncated", "wrong header", "not a table"])
def test_a_damaged_gguf_table_cache_is_rebuilt_with_a_note(tmp_path, how):
    import torch
    from safetensors.torch import save_file

    from tests.test_hostile import tiny_gguf

    table = tiny_gguf(tmp_path / "tiny.gguf")
    open_checkpoint(str(tmp_path / "tiny.gguf"), "cpu")
    (entry,) = (tmp_path / "cache" / "gguf").glob("*/table.safetensors")
    data = entry.read_bytes()
    if how == "truncated":
        entry.write_bytes(data[:-40])
    elif how == "wrong header":
        entry.write_bytes(b"\xff" * 8 + data[8:])
    else:
        save_file({"table": torch.zeros(6, dtype=torch.int32)}, str(entry))
    rebuilt = open_checkpoint(str(tmp_path / "tiny.gguf"), "cpu")
    assert torch.equal(rebuilt.table, torch.from_numpy(table))
    (note,) = rebuilt.notes
    assert "cached copy of tiny.gguf was damaged" in note and "\n" not in note
    assert open_checkpoint(str(tmp_path / "tiny.gguf"), "cpu").notes == []


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_a_safetensors_table_is_read_exactly_in_its_own_type(tmp_path, dtype):
    import torch
    from safetensors.torch import save_file

    from embviz.core.readers.safetensors_file import load_tensor, read_header

    tensors = {"a": torch.arange(10.0), "table": torch.randn(50, 7).to(getattr(torch, dtype)), "z": torch.ones(3)}
    save_file(tensors, str(tmp_path / "m.safetensors"))
    got = load_tensor(read_header(tmp_path / "m.safetensors")["table"])
    assert got.dtype == tensors["table"].dtype and torch.equal(got, tensors["table"])
    info = read_header(tmp_path / "m.safetensors")["table"]
    data = (tmp_path / "m.safetensors").read_bytes()
    (tmp_path / "m.safetensors").write_bytes(data[:-20])  # cut after its header was read
    with pytest.raises(EmbvizError, match="m.safetensors"):
        load_tensor(info)


@pytest.mark.parametrize("piece", [3, 50, 10**6])
def test_text_vectors_read_the_same_at_any_piece_size(monkeypatch, piece):
    from embviz.core.readers import word_text

    monkeypatch.setattr(word_text, "TEXT_PIECE_BYTES", piece)
    lines = [w + "\t" + " ".join(f"{x:.9g}" for x in v) for w, v in zip(WORDS, VECS)]
    for header in ("", f"{len(WORDS)} 6\n"):
        data = ("\ufeff" + header + "\n".join(lines) + "\n\n \n").encode()
        words, table, notes = word_text.parse_text(data, "w.vec")
        assert words == WORDS and notes == []
        np.testing.assert_array_equal(table, VECS)
    with pytest.raises(EmbvizError, match=r"w.vec, line 3: expected 6 numbers after the word, found 5"):
        word_text.parse_text("\n".join(lines[:2] + [lines[2].rsplit(" ", 1)[0]] + lines[3:]).encode(), "w.vec")


def test_a_cached_open_takes_the_row_norms_from_the_cache(tmp_path):
    import torch

    from embviz.core.table.similarity import ROW_NORMS

    path = tmp_path / "w.bin"
    path.write_bytes(binary())
    first = open_checkpoint(str(path), "cpu")
    (entry,) = _cache_files(tmp_path)
    norms = np.load(entry.parent / "norms.npy")
    second = open_checkpoint(str(path), "cpu")
    expected = torch.linalg.vector_norm(torch.from_numpy(VECS), dim=1)
    assert torch.equal(first.cache[ROW_NORMS], expected) and torch.equal(second.cache[ROW_NORMS], expected)
    np.testing.assert_array_equal(norms, expected.numpy())
