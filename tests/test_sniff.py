"""Files told by their content: word vectors, gensim's files and PyTorch checkpoints open with no
suffix or the wrong one; gensim's protocol-2 pickles (bytes as `_codecs.encode`) open, and no
other use of that call does."""

from __future__ import annotations

import gzip
import importlib.util

import numpy as np
import pytest

from embviz.core import EmbvizError, open_checkpoint
from embviz.core.readers.sniff import sniff_bytes
from tests.hostile_corpus.checkpoints import _TWO_VECTORS, _keyed_vectors
from tests.test_word_vectors import VECS, WORDS, binary, text_lines

needs_gensim = pytest.mark.skipif(importlib.util.find_spec("gensim") is None,
                                  reason="gensim writes the files these tests read (the dev extra installs it)")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))


def _opens_as_the_words(path) -> None:
    model = open_checkpoint(str(path), "cpu")
    assert model.vocab.labels == WORDS and model.kind == "table"
    np.testing.assert_allclose(model.table.numpy(), VECS, atol=1e-6)


@pytest.mark.parametrize("name, content", [
    ("vectors", binary()),
    ("vectors.txt", binary()),  # binary behind a text suffix
    ("vectors", ("6 5\n" + "\n".join(text_lines()) + "\n").encode()),
    ("vectors.bin", ("6 5\n" + "\n".join(text_lines()) + "\n").encode()),  # text behind word2vec's .bin
    ("glove", ("\n".join(text_lines()) + "\n").encode()),
    ("glove.data", ("\n".join(text_lines()) + "\n").encode()),
    ("vectors.gz", gzip.compress(binary())),
])
def test_word_vectors_open_by_their_content(tmp_path, name, content):
    (tmp_path / name).write_bytes(content)
    _opens_as_the_words(tmp_path / name)


def test_a_pytorch_zip_without_a_suffix_is_a_state_dict(tmp_path):
    import torch

    torch.save({"embedding.weight": torch.randn(4, 3)}, tmp_path / "weights")
    assert open_checkpoint(str(tmp_path / "weights"), "cpu").kind == "embedding+linear"


@pytest.mark.skipif(importlib.util.find_spec("gguf") is None, reason="the gguf package is not installed")
def test_a_gguf_without_a_suffix_is_a_gguf(tmp_path):
    from tests.test_hostile import tiny_gguf

    tiny_gguf(tmp_path / "model")
    model = open_checkpoint(str(tmp_path / "model"), "cpu")
    assert model.vocab_size == 6 and model.vocab.has_tokenizer


def test_what_the_first_bytes_say():
    assert sniff_bytes(b"PK\x03\x04rest") == "torch"
    assert sniff_bytes(b"\x80\x02}q\x00.") == "torch"
    assert sniff_bytes(b"GGUF\x03\x00\x00\x00") == "gguf"
    assert sniff_bytes(b"2 3\nword 1 2 3\n") == "word-text"
    assert sniff_bytes(b"2 3\nword \x00\x00\x80?\x00\x00\x80?\x00\x00\x80?\n") == "word2vec-binary"
    assert sniff_bytes(b"word 1.5e-3 -2 nan\n") == "word-text"
    assert sniff_bytes(b"hello world\n") is None and sniff_bytes(b"") is None


@needs_gensim
@pytest.mark.parametrize("protocol", [2, 4])
@pytest.mark.parametrize("sep_limit", [10**9, 1], ids=["inline", "vectors-beside"])
def test_gensim_keyed_vectors_without_a_suffix(tmp_path, protocol, sep_limit):
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=VECS.shape[1])
    kv.add_vectors(WORDS, VECS)
    kv.save(str(tmp_path / "words"), sep_limit=sep_limit, pickle_protocol=protocol)
    assert (tmp_path / "words.vectors.npy").is_file() == (sep_limit == 1)
    if protocol == 2 and sep_limit > 1:
        assert b"c_codecs\nencode\n" in (tmp_path / "words").read_bytes()  # the call this test is about
    model = open_checkpoint(str(tmp_path / "words"), "cpu")
    assert model.vocab.labels == WORDS
    np.testing.assert_array_equal(model.table.numpy(), VECS)


@needs_gensim
def test_a_gensim_word2vec_model_without_a_suffix(tmp_path):
    from gensim.models import Word2Vec

    trained = Word2Vec([["king", "queen", "man", "woman"], ["man", "woman", "child"]] * 20, vector_size=8,
                       min_count=1, seed=1, workers=1)
    trained.save(str(tmp_path / "w2v"), pickle_protocol=2)
    model = open_checkpoint(str(tmp_path / "w2v"), "cpu")
    assert model.vocab.labels == list(trained.wv.index_to_key)
    np.testing.assert_array_equal(model.table.numpy(), trained.wv.vectors)


def _kv_calling(folder, call: bytes):
    """A KeyedVectors pickle whose word list holds what `call` (opcodes that leave one value) gives."""
    return _keyed_vectors(folder, "odd.kv", index_to_key=b"]" + call + b"a", vectors=_TWO_VECTORS)


@pytest.mark.parametrize("call, message", [
    (b"c_codecs\nencode\nX\x03\x00\x00\x00abcX\x05\x00\x00\x00utf-8\x86R", "calls _codecs.encode other than"),
    (b"c_codecs\nencode\nX\x03\x00\x00\x00abcX\x06\x00\x00\x00latin1X\x06\x00\x00\x00strict\x87R",
     "calls _codecs.encode other than"),
    (b"c_codecs\nencode\nK\x01X\x06\x00\x00\x00latin1\x86R", "calls _codecs.encode other than"),
    (b"c_codecs\nencode\nX\x03\x00\x00\x00\xe2\x82\xacX\x06\x00\x00\x00latin1\x86R", "on text that is not bytes"),
    (b"c_codecs\ndecode\nC\x03abcX\x06\x00\x00\x00latin1\x86R", "asks for _codecs.decode"),
])
def test_codecs_encode_is_accepted_only_as_pickle_writes_bytes(tmp_path, call, message):
    with pytest.raises(EmbvizError, match=message):
        open_checkpoint(str(_kv_calling(tmp_path, call)), "cpu")


def test_codecs_encode_as_pickle_writes_it_gives_bytes(tmp_path):
    """The call accepted gives real bytes: a word list holding them is refused as not text, by the reader."""
    path = _kv_calling(tmp_path, b"c_codecs\nencode\nX\x03\x00\x00\x00abcX\x06\x00\x00\x00latin1\x86R")
    with pytest.raises(EmbvizError, match="word list holds something other than text"):
        open_checkpoint(str(path), "cpu")
