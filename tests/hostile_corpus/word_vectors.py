"""Hostile word-vector files: GloVe / word2vec text, word2vec binary, .gz, a .npy with its
vocabulary beside it, gensim's .kv with its vectors in a .npz."""

from __future__ import annotations

import gzip
import io
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np

from tests.hostile_corpus import case


def w2v_binary(entries: list[tuple[bytes, np.ndarray]], dim: int, newline: bool = True) -> bytes:
    """A word2vec binary file whose header says `dim`; `newline` as word2vec.c writes (gensim does not)."""
    end = b"\n" if newline else b""
    return f"{len(entries)} {dim}\n".encode() + b"".join(w + b" " + v.astype("<f4").tobytes() + end for w, v in entries)


def repeated_gzip(block: bytes, times: int) -> bytes:
    """A multi-member gzip stream that expands to `times` copies of `block`, made in one compression."""
    return gzip.compress(block) * times


def gensim_kv_pickle(words: list[str]) -> bytes:
    """A gensim KeyedVectors pickle whose vectors gensim stored beside it (written by hand, so no
    gensim is needed): GLOBAL, NEWOBJ, its state, BUILD."""
    state = {"index_to_key": words, "vector_size": 3, "__numpys": ["vectors"]}
    return (b"\x80\x02cgensim.models.keyedvectors\nKeyedVectors\n)\x81"
            + pickle.dumps(state, protocol=2)[2:-1] + b"b.")


def npy_bytes(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def npy_with_words(folder: Path, rows: int = 3) -> Path:
    path = folder / "table.npy"
    np.save(path, np.arange(rows * 2, dtype=np.float32).reshape(rows, 2))
    return path


def parquet(path: Path, columns: dict) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path)
    return path


@case("wv_glove_ragged_rows", r"ragged\.txt, line 2: expected 3 numbers after the word, found 4")
def glove_ragged_rows(folder: Path) -> Path:
    # 3 + 4 + 2 numbers divide into a 3 × 3 table: they must not be re-flowed into one.
    path = folder / "ragged.txt"
    path.write_bytes(b"a 1 2 3\nb 4 5 6 7\nc 8 9\n")
    return path


@case("wv_bin_header_dim_too_small", r"do not line up with 3 numbers per word")
def bin_header_dim_too_small(folder: Path) -> Path:
    rows = np.arange(12, dtype=np.float32).reshape(3, 4) + 0.5
    data = w2v_binary([(w, r) for w, r in zip([b"one", b"two", b"three"], rows)], dim=4)
    path = folder / "wrongdim.bin"
    path.write_bytes(data.replace(b"3 4\n", b"3 3\n", 1))
    return path


@case("wv_bin_word_with_space", r"do not line up with 3 numbers per word \(a word with a space in it")
def bin_word_with_space(folder: Path) -> Path:
    rows = np.arange(9, dtype=np.float32).reshape(3, 3) + 0.25
    path = folder / "space.bin"
    path.write_bytes(w2v_binary([(b"new york", rows[0]), (b"paris", rows[1]), (b"rome", rows[2])], dim=3))
    return path


@case("wv_vec_header_claims_huge_row", r"header says 1 word of 2,000,000 numbers, which take at least 4,000,001 bytes")
def vec_header_claims_huge_row(folder: Path) -> Path:
    path = folder / "huge.vec"
    path.write_bytes(b"1 2000000\nword 0.1 0.2 0.3\n")
    return path


@case("wv_glove_line_too_long", r"long\.txt, line 2 is 5,000,002 bytes long, more than a word and 3 numbers can take")
def glove_line_too_long(folder: Path) -> Path:
    path = folder / "long.txt"
    path.write_bytes(b"a 1 2 3\nb " + b"0 " * 2_500_000 + b"\n")
    return path


@case("wv_gz_bomb", r"bomb\.txt\.gz expands past 67,108,864 bytes when decompressed")
def gz_bomb(folder: Path) -> Path:
    path = folder / "bomb.txt.gz"
    path.write_bytes(repeated_gzip(bytes(2**20), 80))  # 80 MiB of zeros in about 80 KB
    return path


@case("wv_gz_too_many_rows", r"rows\.vec\.gz has more than 10,000,000 lines")
def gz_too_many_rows(folder: Path) -> Path:
    path = folder / "rows.vec.gz"
    path.write_bytes(repeated_gzip(b"a 0\n" * 2**18, 40))  # 10,485,760 tiny rows in about 40 KB
    return path


def _kv_with_npz(folder: Path, npz: bytes) -> Path:
    path = folder / "words.kv"
    path.write_bytes(gensim_kv_pickle(["a", "b"]))
    (folder / "words.kv.vectors.npz").write_bytes(npz)
    return path


@case("wv_npz_bomb", r"words\.kv\.vectors\.npz expands past 67,108,864 bytes")
def npz_bomb(folder: Path) -> Path:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("val.npy", npy_bytes(np.zeros((2, 9_000_000), dtype=np.float32)))  # 72 MB in about 70 KB
    return _kv_with_npz(folder, out.getvalue())


@case("wv_npz_is_a_bare_npy", r"words\.kv\.vectors\.npz is not a \.npz archive")
def npz_is_a_bare_npy(folder: Path) -> Path:
    return _kv_with_npz(folder, npy_bytes(np.zeros((2, 3), dtype=np.float32)))


@case("wv_npz_headers_disagree", r"its array header says \[2, 3000\] × 4 bytes, but the archive holds 24 bytes")
def npz_headers_disagree(folder: Path) -> Path:
    data = npy_bytes(np.zeros((2, 3), dtype=np.float32)).replace(b"(2, 3)", b"(2, 3000)")
    # Keep the header's length (a multiple of 64): the shape grew by three characters, so drop three pad spaces.
    data = data.replace(b"   \n", b"\n", 1)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("val.npy", data)
    return _kv_with_npz(folder, out.getvalue())


@case("wv_npy_vocab_is_a_fifo", r"table\.vocab\.txt is a pipe; embviz reads regular files only")
def npy_vocab_is_a_fifo(folder: Path) -> Path:
    path = npy_with_words(folder)
    os.mkfifo(folder / "table.vocab.txt")
    return path


@case("wv_npy_parquet_is_a_fifo", r"index\.parquet is a pipe; embviz reads regular files only")
def npy_parquet_is_a_fifo(folder: Path) -> Path:
    path = npy_with_words(folder)
    os.mkfifo(folder / "index.parquet")
    return path


@case("wv_parquet_not_parquet", r"index\.parquet \(beside table\.npy\) is not a readable parquet file")
def parquet_not_parquet(folder: Path) -> Path:
    path = npy_with_words(folder)
    (folder / "index.parquet").write_bytes(b"PAR1" + np.random.default_rng(0).bytes(200))
    return path


@case("wv_parquet_no_columns", r"table\.npy has 3 rows but index\.parquet lists 0 words")
def parquet_no_columns(folder: Path) -> Path:
    path = npy_with_words(folder)
    parquet(folder / "index.parquet", {})
    return path


@case("wv_parquet_two_text_columns", r"index\.parquet has 2 text columns \(a, b\); embviz will not guess")
def parquet_two_text_columns(folder: Path) -> Path:
    path = npy_with_words(folder)
    parquet(folder / "index.parquet", {"a": ["x", "y", "z"], "b": ["p", "q", "r"]})
    return path


@case("wv_parquet_two_files", r"table\.npy has 2 parquet files beside it \(a\.parquet, b\.parquet\)")
def parquet_two_files(folder: Path) -> Path:
    path = npy_with_words(folder)
    for name in ("a", "b"):
        parquet(folder / f"{name}.parquet", {"word": ["x", "y", "z"]})
    return path


@case("wv_parquet_claims_a_million_rows", r"table\.npy has 3 rows but index\.parquet lists 1,000,000 words")
def parquet_claims_a_million_rows(folder: Path) -> Path:
    import pyarrow as pa

    path = npy_with_words(folder)
    parquet(folder / "index.parquet", {"word": pa.repeat("w", 1_000_000)})  # a few KB: one value, run-length encoded
    return path



@case("wv_kv_vectors_npy_is_a_fifo", r"words\.kv\.vectors\.npy is a pipe; embviz reads regular files only")
def kv_vectors_npy_is_a_fifo(folder: Path) -> Path:
    path = folder / "words.kv"
    path.write_bytes(gensim_kv_pickle(["a", "b"]))
    os.mkfifo(folder / "words.kv.vectors.npy")
    return path


def _fasttext(folder: Path, name: str, at: int | None = None, value: bytes = b"", cut: int | None = None) -> Path:
    """A 3-word fastText .bin (4 numbers, 5 buckets), `value` written over its bytes at `at`, cut at `cut`."""
    from bench.figures.fasttext_open import write_fasttext_bin

    path = folder / name
    write_fasttext_bin(path, ["one", "two", "three"], dim=4, bucket=5)
    data = path.read_bytes()
    if at is not None:
        data = data[:at] + value + data[at + len(value):]
    path.write_bytes(data[:cut])
    return path


# The quantized flag before the input matrix: after the header (92 bytes) and 3 entries (13 + 13 + 15).
@case("wv_fasttext_quantized", r"ft\.ftz is a quantized fastText model \(\.ftz\); embviz reads unquantized \.bin files only")
def fasttext_quantized(folder: Path) -> Path:
    return _fasttext(folder, "ft.ftz", 92 + 41, b"\x01")


@case("wv_fasttext_claims_two_billion_words", r"its fastText header says 2,147,483,647 words; the file is corrupt")
def fasttext_huge_vocabulary(folder: Path) -> Path:
    return _fasttext(folder, "huge.bin", 68, (2**31 - 1).to_bytes(4, "little"))


@case("wv_fasttext_cut_in_its_matrix", r"cut\.bin ends inside its input matrix; the file is truncated")
def fasttext_truncated(folder: Path) -> Path:
    return _fasttext(folder, "cut.bin", cut=92 + 41 + 17 + 40)


@case("wv_fasttext_no_suffix_supervised", r"model is a supervised fastText model \(it has 2 labels\)")
def fasttext_supervised(folder: Path) -> Path:
    return _fasttext(folder, "model", 72, (2).to_bytes(4, "little"))
