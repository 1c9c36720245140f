"""One display rule for tokens in every tokenizer kind: text as text with ␣ for a leading or
trailing space, ↵ and ⇥ for newlines and tabs, and the bytes of a piece that is only part
of a UTF-8 character as their hex in ⟨…⟩ — the labels every tab, map, CSV and JSON show."""

from __future__ import annotations

import pytest

from embviz.core import open_checkpoint
from embviz.core.table.vocab import bytes_label

from conftest import make_tiny_model
from gguf_family_files import write_family_gguf


@pytest.mark.parametrize(("raw", "label"), [
    (b" king", "␣king"), (b" \xe6", "␣⟨E6⟩"), (b"\xe6\x9d", "⟨E6 9D⟩"), (b"a\xc3", "a⟨C3⟩"),
    (b"\xf0\x9f", "⟨F0 9F⟩"), (" 🙂".encode(), "␣🙂"), (b"\xe4 \xba", "⟨E4⟩␣⟨BA⟩"), ("東京".encode(), "東京"),
])
def test_bytes_are_shown_as_text_where_they_decode_and_as_hex_where_they_do_not(raw, label):
    assert bytes_label(raw) == label


def test_byte_level_bpe_shows_spaces_bytes_cjk_and_emoji(tmp_path):
    make_tiny_model(tmp_path, arch="gpt2")  # byte-level BPE (Ġ for a space) trained on text with 東京 and 🙂
    model = open_checkpoint(str(tmp_path), "cpu")
    vocab = model.vocab
    labels = [vocab.label(i) for i in vocab.encode(" the king 東京 🙂\n")]
    assert labels[:2] == ["␣the", "␣king"]
    assert "↵" in labels
    assert not any("Ġ" in label or "Ċ" in label for label in labels)
    # Every piece of 東京 and 🙂 is its text, or its bytes in hex: never a replacement character.
    assert all("\ufffd" not in label for label in labels)
    assert any("⟨" in label for label in labels) or "東京" in "".join(labels)


def test_sentencepiece_shows_its_space_marker_and_byte_pieces(tmp_path):
    path = write_family_gguf(tmp_path / "sp.gguf", "llama", sentencepiece=True)
    model = open_checkpoint(str(path), "cpu")
    vocab = model.vocab
    first_byte = 4  # after <pad>, <eos>, <bos>, <unk>: <0x00> … <0xFF>
    assert vocab.label(first_byte + 0xE6) == "⟨E6⟩"  # the first byte of 東 alone
    assert vocab.label(first_byte + 0x20) == "␣"  # the byte piece of a space
    words = [i for i in range(vocab.size) if vocab.texts[i].startswith(" ")]
    assert words and all(vocab.label(i).startswith("␣") and "▁" not in vocab.label(i) for i in words)
