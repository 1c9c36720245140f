"""Word-vector readers never guess: a file is read exactly or refused in one line.

The files that must be refused are in tests/hostile_corpus/word_vectors.py (run by
test_hostile_corpus.py); here are the exact reads beside them, and the bounds checked with
small files and lowered limits."""

from __future__ import annotations

import gzip
import importlib.util
import io
import os
import subprocess
import sys
import zipfile

import numpy as np
import pytest

from embviz.core import EmbvizError, open_checkpoint
from embviz.core.readers import bounded, word_text
from tests.hostile_corpus import load_all
from tests.hostile_corpus.word_vectors import gensim_kv_pickle, npy_bytes, npy_with_words, parquet, repeated_gzip, w2v_binary

CASES = load_all()
needs_pyarrow = pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="pyarrow reads parquet")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))


def opened(path):
    model = open_checkpoint(str(path), "cpu")
    return model.vocab.labels, model.table.numpy()


def refused(path, fragment: str) -> str:
    with pytest.raises(EmbvizError, match=fragment) as err:
        open_checkpoint(str(path), "cpu")
    assert "\n" not in str(err.value)
    return str(err.value)


# 1 ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("pyarrow", [True, False], ids=["pyarrow", "numpy"])
def test_ragged_rows_are_refused_by_line_not_reflowed(tmp_path, monkeypatch, pyarrow):
    if not pyarrow:
        monkeypatch.setattr(word_text, "_floats_by_pyarrow", lambda rests, dim: None)
    path = CASES["wv_glove_ragged_rows"].make(tmp_path)
    refused(path, "line 2: expected 3 numbers after the word, found 4")


def test_fasttext_trailing_spaces_and_runs_of_spaces_read_exactly(tmp_path):
    path = tmp_path / "spaces.vec"
    path.write_bytes(b"2 3\na 1 2 3 \nb  4   5 6\n")
    words, table = opened(path)
    assert words == ["a", "b"]
    np.testing.assert_array_equal(table, [[1, 2, 3], [4, 5, 6]])


# 2, 3 ------------------------------------------------------------------------------------------
ROWS = np.array([[0.5, -1.25, 2.0], [3.5, 0.125, -4.0], [1.0, 2.0, 3.0]], dtype=np.float32)


@pytest.mark.parametrize("newline", [True, False], ids=["word2vec.c", "gensim"])
def test_a_binary_read_exactly_in_either_layout(tmp_path, newline):
    path = tmp_path / "ok.bin"
    path.write_bytes(w2v_binary(list(zip([b"new_york", b"paris", "café".encode()], ROWS)), 3, newline))
    words, table = opened(path)
    assert words == ["new_york", "paris", "café"]
    np.testing.assert_array_equal(table, ROWS)


@pytest.mark.parametrize("newline", [True, False], ids=["word2vec.c", "gensim"])
def test_a_binary_whose_header_names_too_few_numbers_is_refused(tmp_path, newline):
    rows = np.arange(12, dtype=np.float32).reshape(3, 4) + 0.5
    path = tmp_path / "wrongdim.bin"
    path.write_bytes(w2v_binary(list(zip([b"one", b"two", b"three"], rows)), 4, newline).replace(b"3 4\n", b"3 3\n", 1))
    refused(path, "do not line up with 3 numbers per word|do not fit the file|truncated or corrupt")


@pytest.mark.parametrize("newline", [True, False], ids=["word2vec.c", "gensim"])
def test_a_binary_word_with_a_space_is_refused_not_shifted(tmp_path, newline):
    path = tmp_path / "space.bin"
    path.write_bytes(w2v_binary(list(zip([b"new york", b"paris", b"rome"], ROWS)), 3, newline))
    refused(path, "do not line up with 3 numbers per word")


def test_a_binary_with_bytes_after_its_last_word_is_refused(tmp_path):
    path = tmp_path / "tail.bin"
    path.write_bytes(w2v_binary(list(zip([b"a", b"b"], ROWS)), 3) + b"extra")
    refused(path, "5 bytes follow the last of its 2 words")


# 4, 5 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, header", [("bom.txt", b""), ("bom.vec", b"2 3\n")])
def test_a_byte_order_mark_is_not_part_of_the_first_word(tmp_path, name, header):
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + header + b"king 1 2 3\nqueen 4 5 6\n")
    words, table = opened(path)
    assert words == ["king", "queen"]
    np.testing.assert_array_equal(table, [[1, 2, 3], [4, 5, 6]])


def test_a_tab_separates_like_a_space_and_never_ends_a_word(tmp_path):
    path = tmp_path / "tabs.txt"
    path.write_bytes(b"king\t1 2 3\nqueen 4\t5\t6\t\n")
    words, table = opened(path)
    assert words == ["king", "queen"]
    np.testing.assert_array_equal(table, [[1, 2, 3], [4, 5, 6]])


# 6, 7, 10 --------------------------------------------------------------------------------------
@needs_pyarrow
@pytest.mark.parametrize("columns", [
    {"id": [7, 8, 9], "token": ["x", "y", "z"]},
    {"id": ["7", "8", "9"], "word": ["x", "y", "z"]},
    {"index": ["x", "y", "z"]},
], ids=["id-then-text", "two-texts-one-named-word", "the-example's"])
def test_the_parquet_word_column_is_picked_by_type_then_name(tmp_path, columns):
    path = npy_with_words(tmp_path)
    parquet(tmp_path / "index.parquet", columns)
    words, table = opened(path)
    assert words == ["x", "y", "z"]
    np.testing.assert_array_equal(table, np.arange(6, dtype=np.float32).reshape(3, 2))


@needs_pyarrow
def test_a_parquet_with_no_text_column_is_refused(tmp_path):
    path = npy_with_words(tmp_path)
    parquet(tmp_path / "index.parquet", {"id": [1, 2, 3]})
    refused(path, r"index.parquet has no column of text to read words from \(its columns: id \(int64\)\)")


@needs_pyarrow
def test_a_parquet_row_count_is_checked_before_it_is_read(tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    path = CASES["wv_parquet_claims_a_million_rows"].make(tmp_path)
    monkeypatch.setattr(pq.ParquetFile, "read", lambda *a, **k: pytest.fail("the index was read"))
    refused(path, "has 3 rows but index.parquet lists 1,000,000 words")


# 8 ---------------------------------------------------------------------------------------------
def test_the_cli_exits_cleanly_every_time_after_reading_glove_text(tmp_path):
    """pyarrow's CSV threads beside torch's aborted about half the runs at exit (code 134)."""
    path = tmp_path / "glove.txt"
    rng = np.random.default_rng(0)
    path.write_text("".join(f"w{i} " + " ".join(f"{x:.5f}" for x in rng.normal(size=20)) + "\n" for i in range(3000)))
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    for run in range(8):
        env["EMBVIZ_CACHE_DIR"] = str(tmp_path / f"cache{run}")  # parse every time, never from the cache
        done = subprocess.run([sys.executable, "-m", "embviz", "--model", str(path), "info"],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, (run, done.returncode, done.stderr[-500:])


# 9 ---------------------------------------------------------------------------------------------
def test_a_first_line_longer_than_any_row_is_refused_before_it_is_split(tmp_path, monkeypatch):
    monkeypatch.setattr(word_text, "MAX_DIM", 100)
    path = tmp_path / "wide.txt"
    path.write_bytes(b"w " + b"0 " * 5000 + b"\n")
    refused(path, r"line 1 is 10,002 bytes long, longer than any row of 100 numbers")


def test_a_header_wider_than_any_row_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(word_text, "MAX_DIM", 2)
    path = tmp_path / "wide.vec"
    path.write_bytes(b"1 3\nw 1 2 3\n")
    refused(path, "the header says 3 numbers per word; embviz reads at most 2")


def test_a_gzip_stops_at_its_stated_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(bounded, "MIN_EXPANSION_BOUND", 2**20)
    path = tmp_path / "bomb.vec.gz"
    data = repeated_gzip(bytes(2**20), 40)
    path.write_bytes(data)
    bound = bounded.MAX_EXPANSION * len(data)
    refused(path, f"expands past {bound:,} bytes when decompressed \\(from {len(data):,}\\)")


def test_a_gzip_of_more_rows_than_the_bound_is_refused_before_it_is_split(tmp_path, monkeypatch):
    monkeypatch.setattr(word_text, "MAX_WORDS", 1000)
    path = tmp_path / "rows.txt.gz"
    path.write_bytes(gzip.compress(b"a 0\n" * 1002))
    refused(path, "has more than 1,000 lines; embviz reads at most 1,000 words")


def test_a_gzip_within_its_bound_reads_exactly(tmp_path):
    path = tmp_path / "ok.vec.gz"
    path.write_bytes(gzip.compress(b"2 2\na 1 2\nb 3 4\n"))
    words, table = opened(path)
    assert words == ["a", "b"]
    np.testing.assert_array_equal(table, [[1, 2], [3, 4]])


def _kv_with_vectors(tmp_path, vectors: np.ndarray, compression=zipfile.ZIP_DEFLATED):
    path = tmp_path / "words.kv"
    path.write_bytes(gensim_kv_pickle(["a", "b"]))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compression) as archive:
        archive.writestr("val.npy", npy_bytes(vectors))
    (tmp_path / "words.kv.vectors.npz").write_bytes(out.getvalue())
    return path


def test_a_vectors_npz_member_over_the_bound_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(bounded, "MIN_EXPANSION_BOUND", 2**16)
    monkeypatch.setattr(bounded, "_read_npy_stream", lambda *a: pytest.fail("the member was read"))
    path = _kv_with_vectors(tmp_path, np.zeros((2, 100_000), dtype=np.float32))
    refused(path, "words.kv.vectors.npz expands past")


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED], ids=["stored", "deflated"])
def test_a_vectors_npz_within_its_bound_reads_exactly(tmp_path, compression):
    vectors = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    words, table = opened(_kv_with_vectors(tmp_path, vectors, compression))
    assert words == ["a", "b"]
    np.testing.assert_array_equal(table, vectors)


# 11 --------------------------------------------------------------------------------------------
def test_a_vocab_text_beside_a_npy_reads_exactly_with_its_bom_dropped(tmp_path):
    path = npy_with_words(tmp_path)
    path.with_suffix(".vocab.txt").write_bytes(b"\xef\xbb\xbfx\ny\nz\n")
    assert opened(path)[0] == ["x", "y", "z"]
