"""A model's fingerprint: the vocabulary's digest is the same however it is fed to the hash."""

from __future__ import annotations

import hashlib

import pytest

from embviz.core import fingerprint


@pytest.mark.parametrize("count", [0, 1, 2, 8191, 8192, 8193, 20000])
def test_the_labels_digest_equals_one_join_of_all_labels(count):
    labels = [f"w{i}" if i % 7 else f"␣é{i}\ud800" for i in range(count)]  # a lone surrogate, as odd vocabularies hold
    whole = hashlib.sha256("\n".join(labels).encode("utf-8", "surrogatepass")).hexdigest()
    assert fingerprint.labels_sha256(labels) == whole


def test_an_empty_label_at_a_piece_boundary_still_counts(monkeypatch):
    monkeypatch.setattr(fingerprint, "_LABELS_PER_PIECE", 2)
    labels = ["a", "b", "", "c", ""]
    assert fingerprint.labels_sha256(labels) == hashlib.sha256("\n".join(labels).encode()).hexdigest()
    assert fingerprint.labels_sha256(["a", "b"]) != fingerprint.labels_sha256(["a", "b", ""])
