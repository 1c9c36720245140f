"""fastText's native .bin: every word's vector and out-of-vocabulary vectors as gensim's
`load_facebook_model` gives them, a name without a suffix, and hostile files refused in one
sentence, fast and without allocating what their headers claim."""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from embviz.core import EmbvizError, open_checkpoint
from embviz.core.readers.fasttext_bin import HEADER_BYTES, OLD_HEADER_BYTES, Subwords, read_fasttext_bin, read_layout
from embviz.core.readers.regular_file import open_regular
from embviz.core.readers.sniff import sniff

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gensim") is None,
                                reason="gensim writes the files these tests read (the dev extra installs it)")

SENTENCES = [["the", "king", "café", "queen", "naïve", "日本語", "man", "straße"],
             ["woman", "king", "the", "x", "ab", "naïveté", "crème", "brûlée"]] * 20
OOV = ["kings", "queenly", "zzz", "日本", "a", "é", "brûlé", "<>", "", "x" * 40, "ÿ\u00ad€"]
# Offsets in the header (after the magic and version): dim, loss, bucket; then the dictionary's.
DIM_AT, LOSS_AT, BUCKET_AT, MINN_AT = 8, 32, 40, 44
SIZE_AT, NWORDS_AT, NLABELS_AT, NTOKENS_AT, PRUNED_AT = 64, 68, 72, 76, 84


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))


def _model(folder: Path, minn: int = 3, maxn: int = 6, bucket: int = 2000, name: str = "ft.bin"):
    """A tiny trained FastText written in Facebook's format, and gensim's own load of it."""
    from gensim.models import FastText
    from gensim.models.fasttext import load_facebook_model, save_facebook_model

    trained = FastText(SENTENCES, vector_size=8, min_count=1, bucket=bucket, min_n=minn, max_n=maxn,
                       epochs=2, workers=1, seed=1)
    path = folder / name
    save_facebook_model(trained, str(path))
    return path, load_facebook_model(str(path))


@pytest.fixture(scope="module")
def fasttext(tmp_path_factory):
    return _model(tmp_path_factory.mktemp("fasttext"))


def _assert_like_gensim(model, gensim_model) -> None:
    assert model.vocab.labels == list(gensim_model.wv.index_to_key) and model.kind == "table"
    np.testing.assert_allclose(model.table.numpy(), gensim_model.wv.vectors, rtol=0, atol=1e-6)
    for word in OOV:
        np.testing.assert_allclose(model.subwords.vector(word), gensim_model.wv[word], rtol=0, atol=1e-6, err_msg=word)


@pytest.mark.parametrize("minn, maxn, bucket", [(3, 6, 2000), (1, 2, 500), (2, 5, 97), (4, 4, 3000)])
def test_every_word_and_unknown_words_are_gensims(tmp_path, minn, maxn, bucket):
    path, gensim_model = _model(tmp_path, minn, maxn, bucket)
    for _ in range(2):  # read, then from the cache (whose open never read the header)
        _assert_like_gensim(open_checkpoint(str(path), "cpu"), gensim_model)


def test_the_vectors_are_gensims_to_the_bit(fasttext):
    path, gensim_model = fasttext
    words, table, notes = read_fasttext_bin(path)
    assert words == list(gensim_model.wv.index_to_key)
    assert np.array_equal(table, gensim_model.wv.vectors)
    assert "mean of its own row and its 3–6-character n-grams' rows" in notes[0]
    for word in OOV:
        assert np.array_equal(Subwords(path).vector(word), gensim_model.wv[word]), word


@pytest.mark.parametrize("name", ["model", "vectors.vec", "weights.pt"])
def test_a_name_without_a_suffix_or_with_the_wrong_one_opens(tmp_path, fasttext, name):
    path, gensim_model = fasttext
    shutil.copy(path, tmp_path / name)
    _assert_like_gensim(open_checkpoint(str(tmp_path / name), "cpu"), gensim_model)


def test_an_unknown_word_after_the_file_changed_is_one_line(tmp_path, fasttext):
    shutil.copy(fasttext[0], tmp_path / "ft.bin")
    model = open_checkpoint(str(tmp_path / "ft.bin"), "cpu")
    model.subwords.vector("kings")  # reads the header now
    os.truncate(tmp_path / "ft.bin", 200)
    with pytest.raises(EmbvizError, match="has changed since it was opened"):
        model.subwords.vector("queenly")


# --- hostile files -------------------------------------------------------------------------------

def _patched(data: bytes, at: int, fmt: str, value: object) -> bytes:
    return data[:at] + struct.pack(fmt, value) + data[at + struct.calcsize(fmt):]


def _refused(path: Path, pattern: str) -> str:
    """The one sentence reading `path` gives, checked to come fast and without a big allocation."""
    tracemalloc.start()
    began = time.perf_counter()
    try:
        with pytest.raises(EmbvizError, match=pattern) as info:
            read_fasttext_bin(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - began < 2.0
    assert peak < 32 * 2**20, f"{peak:,} bytes allocated before refusing"
    message = str(info.value)
    assert "\n" not in message and message.count(". ") == 0, message
    return message


def _layout(path: Path):
    with open_regular(path) as f:
        return read_layout(f, path.name)


def test_a_file_cut_anywhere_is_one_line(tmp_path, fasttext):
    data = fasttext[0].read_bytes()
    layout = _layout(fasttext[0])
    output_at = layout.input_offset + (layout.nwords + layout.bucket) * layout.dim * 4
    cuts = [4, 8, 30, HEADER_BYTES - 1, HEADER_BYTES + 3, layout.input_offset - 17, layout.input_offset - 5,
            layout.input_offset + 100, output_at, output_at + 10, len(data) - 1]
    for cut in cuts:
        path = tmp_path / f"cut{cut}.bin"
        path.write_bytes(data[:cut])
        _refused(path, r"truncated|ends (before|inside)|fastText's magic")


@pytest.mark.parametrize("at, fmt, value, pattern", [
    (NWORDS_AT, "<i", 2**31 - 1, r"2,147,483,647 words"),
    (SIZE_AT, "<i", 2**31 - 1, r"2,147,483,647 dictionary entries"),
    (DIM_AT, "<i", 60_000, r"input matrix is .* × 8, but the header needs .* × 60,000"),
    (DIM_AT, "<i", 2**31 - 1, r"2,147,483,647 numbers per vector"),
    (BUCKET_AT, "<i", 2**31 - 1, r"the header needs 2,147,48\d,\d\d\d × 8"),
    (BUCKET_AT, "<i", 2**30, r"the header needs 1,073,7\d\d,\d\d\d × 8"),
    (NWORDS_AT, "<i", -5, r"-5 words"),
    (DIM_AT, "<i", -1, r"-1 numbers per vector"),
    (BUCKET_AT, "<i", -1, r"-1 n-gram buckets"),
    (MINN_AT, "<i", -3, r"n-grams of -3 to 6 characters"),
    (NTOKENS_AT, "<q", -1, r"-1 tokens"),
    (PRUNED_AT, "<q", -7, r"a pruned index of -7"),
    (PRUNED_AT, "<q", 2**62, r"truncated or its header lies"),
    (PRUNED_AT, "<q", 3, r"pruned fastText model|input matrix"),
    (LOSS_AT, "<i", 9, r"loss 9"),
    (NLABELS_AT, "<i", 1, r"supervised fastText model"),
    (NLABELS_AT, "<i", -2, r"header says -2 labels"),
    (4, "<i", 10, r"version 10; embviz reads versions 11 and 12"),
    (0, "<i", 12345, r"magic number"),
])
def test_a_header_that_lies_is_one_line(tmp_path, fasttext, at, fmt, value, pattern):
    path = tmp_path / "lies.bin"
    path.write_bytes(_patched(fasttext[0].read_bytes(), at, fmt, value))
    _refused(path, pattern)


def test_matrices_that_are_not_as_stated_are_one_line(tmp_path, fasttext):
    data = fasttext[0].read_bytes()
    layout = _layout(fasttext[0])
    flag_at = layout.input_offset - 17
    output_at = layout.input_offset + (layout.nwords + layout.bucket) * layout.dim * 4
    first = data.index(b"\0", HEADER_BYTES) - HEADER_BYTES  # the first word's length
    cases = {
        "quantized.bin": (_patched(data, flag_at, "<?", True), r"quantized fastText model \(\.ftz\)"),
        "quantized_out.bin": (_patched(data, output_at, "<?", True), r"quantized fastText model"),
        "flag.bin": (_patched(data, flag_at, "<B", 7), r"flag before its input matrix is 7"),
        "rows.bin": (_patched(data, flag_at + 1, "<q", -1), r"input matrix is -1 × 8"),
        "cols.bin": (_patched(data, output_at + 9, "<q", 2**40), r"output matrix is .* × 1,099,511,627,776"),
        "trailing.bin": (data + b"\0" * 12, r"12 bytes after its output matrix"),
        "label.bin": (_patched(data, HEADER_BYTES + first + 9, "<B", 1), r"a label \(a supervised model\)"),
        "count.bin": (_patched(data, HEADER_BYTES + first + 1, "<q", -2), r"negative count"),
        "no_nul.bin": (data[:HEADER_BYTES] + b"w" * 70_000 + data[HEADER_BYTES:], r"runs past 65,536 bytes"),
    }
    for name, (content, pattern) in cases.items():
        (tmp_path / name).write_bytes(content)
        _refused(tmp_path / name, pattern)


def test_a_folder_or_a_pipe_is_one_line(tmp_path):
    folder = tmp_path / "folder.bin"
    folder.mkdir()
    with pytest.raises(EmbvizError, match="is a folder"):
        read_fasttext_bin(folder)
    with pytest.raises(EmbvizError, match="not a model folder"):
        open_checkpoint(str(folder), "cpu")
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "pipe.bin"
        os.mkfifo(fifo)
        for read in (read_fasttext_bin, lambda p: open_checkpoint(str(p), "cpu"), lambda p: Subwords(p).vector("a")):
            with pytest.raises(EmbvizError, match="is a pipe; embviz reads regular files only"):
                read(fifo)


def test_a_compressed_fasttext_bin_says_to_decompress_it(tmp_path, fasttext):
    import gzip

    path = tmp_path / "ft.bin.gz"
    path.write_bytes(gzip.compress(fasttext[0].read_bytes()))
    with pytest.raises(EmbvizError, match="compressed fastText .bin: decompress it first"):
        open_checkpoint(str(path), "cpu")


@pytest.mark.parametrize("what, sep_limit", [("model", 1), ("model", 10**9), ("vectors", 1)])
def test_gensims_own_fasttext_files_compose_as_gensim_loads_them(tmp_path, what, sep_limit):
    """gensim saves a FastText's word rows and n-gram rows, not its vectors: they are composed here."""
    from gensim.models import FastText
    from gensim.models.fasttext import FastTextKeyedVectors

    trained = FastText(SENTENCES, vector_size=8, min_count=1, bucket=500, min_n=2, max_n=5, epochs=2, workers=1, seed=1)
    path = tmp_path / "ft"  # as gensim names them: no suffix
    (trained if what == "model" else trained.wv).save(str(path), sep_limit=sep_limit)
    loaded = FastText.load(str(path)).wv if what == "model" else FastTextKeyedVectors.load(str(path))
    model = open_checkpoint(str(path), "cpu")
    assert model.vocab.labels == list(loaded.index_to_key)
    np.testing.assert_allclose(model.table.numpy(), loaded.vectors, rtol=0, atol=1e-6)
    assert any("n-grams' rows" in note for note in model.notes)


def test_a_model_without_buckets_is_its_word_rows(tmp_path):
    """bucket 0 (fastText's `-maxn 0`, or word2vec trained by fastText): each word is its own row, and
    a word outside the vocabulary has no vector, as gensim says too."""
    from gensim.models.fasttext import load_facebook_model

    from bench.figures.fasttext_open import write_fasttext_bin

    path = tmp_path / "nobuckets.bin"
    write_fasttext_bin(path, ["one", "two", "three"], dim=4, bucket=0)
    model = open_checkpoint(str(path), "cpu")
    assert np.array_equal(model.table.numpy(), load_facebook_model(str(path)).wv.vectors)
    assert "a model without character n-grams" in model.notes[0]
    with pytest.raises(EmbvizError, match="no character n-grams, so a word outside its vocabulary has no vector"):
        model.subwords.vector("four")


# --- version 11 and the old format (no magic number) ------------------------------------------------

def _old_format(path: Path) -> bytes:
    """The same model in the format before the magic number: no magic and version, no
    pruneidx_size, no quant flag before either matrix."""
    data = path.read_bytes()
    layout = _layout(path)
    output_at = layout.input_offset + (layout.nwords + layout.bucket) * layout.dim * 4
    return (data[8:HEADER_BYTES - 8] + data[HEADER_BYTES:layout.input_offset - 17]
            + data[layout.input_offset - 16:output_at] + data[output_at + 1:])


@pytest.fixture(scope="module")
def old_fasttext(tmp_path_factory, fasttext):
    path = tmp_path_factory.mktemp("old") / "old.bin"
    path.write_bytes(_old_format(fasttext[0]))
    return path


def test_version_11_and_the_old_format_open_as_gensim_loads_them(tmp_path, fasttext, old_fasttext):
    from gensim.models.fasttext import load_facebook_model

    v11 = tmp_path / "v11.bin"
    v11.write_bytes(_patched(fasttext[0].read_bytes(), 4, "<i", 11))
    for path in (v11, old_fasttext):
        assert sniff(path) == "fasttext"
        _assert_like_gensim(open_checkpoint(str(path), "cpu"), load_facebook_model(str(path)))
    assert _layout(old_fasttext).input_offset == _layout(fasttext[0]).input_offset - 8 - 8 - 1


def test_an_old_format_file_cut_anywhere_is_one_line_and_not_sniffed(tmp_path, old_fasttext):
    data = old_fasttext.read_bytes()
    layout = _layout(old_fasttext)
    for cut in [4, 30, OLD_HEADER_BYTES - 1, OLD_HEADER_BYTES + 3, layout.input_offset - 5,
                layout.input_offset + 100, len(data) - 10, len(data) - 1]:
        path = tmp_path / f"cut{cut}.bin"
        path.write_bytes(data[:cut])
        assert sniff(path) != "fasttext"
        _refused(path, r"truncated|ends (before|inside)|neither fastText's magic number")


# Offsets in the old header: dim, ws, bucket, minn; then the dictionary's nwords.
@pytest.mark.parametrize("at, fmt, value, pattern", [
    (0, "<i", 9, r"input matrix is .* × 8, but the header needs .* × 9"),
    (0, "<i", 2**31 - 1, r"neither fastText's magic number nor an old fastText header"),
    (4, "<i", -5, r"neither fastText's magic number nor an old fastText header"),
    (32, "<i", 2001, r"the header needs 2,0\d\d × 8"),
    (32, "<i", 2**30, r"the header needs 1,073,7\d\d,\d\d\d × 8"),
    (36, "<i", 7, r"neither fastText's magic number nor an old fastText header"),  # minn > maxn
    (60, "<i", 2**20, r"neither fastText's magic number|dictionary entries"),
    (64, "<i", 1, r"neither fastText's magic number"),  # labels the entries do not count
])
def test_an_old_format_header_that_lies_is_one_line_and_not_sniffed(tmp_path, old_fasttext, at, fmt, value, pattern):
    path = tmp_path / "lies.bin"
    path.write_bytes(_patched(old_fasttext.read_bytes(), at, fmt, value))
    assert sniff(path) != "fasttext"
    _refused(path, pattern)
    with pytest.raises(EmbvizError) as info:
        open_checkpoint(str(path), "cpu")
    assert "\n" not in str(info.value)
