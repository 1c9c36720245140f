"""Readers: a file laid out exactly is read whatever its words hold, duplicates get the same note in
every word-vector format, and a GGUF whose tokenizer lists more tokens than its table has rows is
opened without that tokenizer."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from embviz.core import EmbvizError, open_checkpoint
from tests.hostile_corpus.checkpoints import _gguf, _gguf_string
from tests.hostile_corpus.word_vectors import w2v_binary

MORE_THAN_ONCE = "1 words appear more than once; a search by name finds the first of each."


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))


def test_a_word2vec_binary_with_a_newline_and_a_nul_in_its_words_is_read_exactly(tmp_path):
    rows = np.arange(9, dtype=np.float32).reshape(3, 3) + 0.5
    path = tmp_path / "odd.bin"
    path.write_bytes(w2v_binary([(b"new\nline", rows[0]), (b"n\x00ul", rows[1]), (b"plain", rows[2])], dim=3))
    for _ in range(2):  # as read, then from the cache
        model = open_checkpoint(str(path), "cpu")
        assert model.vocab.texts == ["new\nline", "n\x00ul", "plain"]
        np.testing.assert_array_equal(model.table.numpy(), rows)


def test_without_newlines_a_word_with_a_control_character_is_still_refused(tmp_path):
    rows = np.arange(9, dtype=np.float32).reshape(3, 3) + 0.5
    path = tmp_path / "gensim.bin"
    path.write_bytes(w2v_binary([(b"one", rows[0]), (b"t\x00wo", rows[1]), (b"three", rows[2])], dim=3, newline=False))
    with pytest.raises(EmbvizError, match="do not line up"):
        open_checkpoint(str(path), "cpu")


def test_duplicate_words_get_a_note_in_a_word2vec_binary_and_a_npy_vocabulary(tmp_path):
    rows = np.arange(9, dtype=np.float32).reshape(3, 3)
    binary = tmp_path / "twice.bin"
    binary.write_bytes(w2v_binary([(b"a", rows[0]), (b"b", rows[1]), (b"a", rows[2])], dim=3))
    np.save(tmp_path / "table.npy", rows)
    (tmp_path / "table.vocab.txt").write_text("a\nb\na\n", encoding="utf-8")
    for path in (binary, tmp_path / "table.npy"):
        model = open_checkpoint(str(path), "cpu")
        assert MORE_THAN_ONCE in model.notes and model.vocab.id_of("a") == 0


def test_a_gguf_listing_more_tokens_than_rows_is_opened_without_its_tokenizer(tmp_path):
    n = 200_000
    tokens = (_gguf_string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, n + 1) + struct.pack("<Q", 0) * n
              + _gguf_string("zzz"))
    arch = _gguf_string("general.architecture") + struct.pack("<I", 8) + _gguf_string("llama")
    model = open_checkpoint(str(_gguf(tmp_path, "empty.gguf", [arch, tokens], [("token_embd.weight", (4, 2))])), "cpu")
    assert not model.vocab.has_tokenizer
    assert "The tokenizer lists 200,001 tokens; the table has 2 rows. Its tokenizer is not used, so text cannot be typed." \
        in model.notes
    with pytest.raises(EmbvizError, match="'zzz' is not in the vocabulary"):
        model.vocab.resolve("zzz")
