"""Every file in gensim's own test data that one of gensim's loaders opens as word vectors opens
in embviz too, with gensim's words in gensim's order, its vectors, its top-5 neighbours and (for
fastText's .bin) its out-of-vocabulary vectors. The files are found by trying gensim's loaders
on each, so a gensim release that adds one is tested without editing a list here."""

from __future__ import annotations

import importlib.util
import logging
import os
import shutil
import struct
import warnings
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from embviz.core import EmbvizError, open_checkpoint
from embviz.core.table.similarity import nearest_neighbours

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gensim") is None,
                                reason="the files are gensim's own test data (the dev extra installs gensim)")

# Bigger files are left out to keep the test fast (gensim's test data has none today).
MAX_BYTES = 50 * 2**20
# As many as gensim 4.3's test data holds, less a few: fewer means discovery broke, not gensim.
FLOOR = 20
# Files embviz cannot read yet (none today): still refused in one sentence; the test fails
# once one opens, so the set cannot go stale.
NOT_YET: set[str] = set()
OOV = ["qqqzzz", "governmentally", "é", "x"]

def _test_data() -> Path:
    import gensim

    return Path(gensim.__file__).parent / "test" / "test_data"

def _could_be_facebook(path: str) -> bool:
    """Whether the file has as many NULs as its would-be fastText header claims words: gensim's
    fastText loader reads a word byte by byte until a NUL, forever at the file's end."""
    data = Path(path).read_bytes()
    at = 64 if data[:4] == struct.pack("<i", 793712314) else 56
    if len(data) < at + 4:
        return False
    claimed = struct.unpack_from("<i", data, at)[0]
    return 0 < claimed <= data.count(b"\0", at)

def _loaders(path: str) -> list[tuple[str, Callable[[], Any]]]:
    from gensim.models import FastText, KeyedVectors, Word2Vec
    from gensim.models.fasttext import load_facebook_vectors

    facebook = [("facebook", lambda: load_facebook_vectors(path))] if _could_be_facebook(path) else []
    return facebook + [
            ("kv", lambda: KeyedVectors.load(path)),
            ("w2v", lambda: Word2Vec.load(path).wv),
            ("ft", lambda: FastText.load(path).wv),
            ("text", lambda: KeyedVectors.load_word2vec_format(path, binary=False)),
            ("binary", lambda: KeyedVectors.load_word2vec_format(path, binary=True))]

def _discover() -> list[tuple[Path, str, Any]]:
    """(file, loader, gensim's vectors) of every file a gensim loader opens as word vectors."""
    found = []
    logging.disable(logging.CRITICAL)  # gensim logs every failed try
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for path in sorted(_test_data().iterdir()):
                if not path.is_file() or path.suffix == ".npy" or path.stat().st_size > MAX_BYTES:
                    continue
                for how, load in _loaders(str(path)):
                    try:
                        kv = load()
                    except Exception:  # noqa: BLE001 - not this loader's file: try the next
                        continue
                    if len(getattr(kv, "index_to_key", [])):
                        found.append((path, how, kv))
                        break
    finally:
        logging.disable(logging.NOTSET)
    return found

@pytest.fixture(scope="module")
def gensim_files():
    return _discover()

@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))

def test_enough_files_are_found(gensim_files):
    skipped = [p.name for p in _test_data().iterdir() if p.is_file() and p.stat().st_size > MAX_BYTES]
    assert len(gensim_files) >= FLOOR, f"only {len(gensim_files)} files found (over 50 MB, skipped: {skipped})"

def _same_rows(words: list[str], keys: list[str]) -> np.ndarray:
    """Rows whose word is gensim's: all of them, except words that are not UTF-8, which embviz
    shows with U+FFFD and gensim with backslash escapes (and then hashes the escapes' n-grams)."""
    assert len(words) == len(keys)
    same = np.array([a == b for a, b in zip(words, keys)])
    assert all("\ufffd" in w for w, s in zip(words, same) if not s), "words differ, not by their UTF-8"
    return same

def test_every_file_opens_as_gensim_loads_it(gensim_files):
    failed = []
    for path, how, kv in gensim_files:
        if path.name in NOT_YET:
            with pytest.raises(EmbvizError) as info:  # still refused, in one sentence; read, it leaves the list
                open_checkpoint(str(path), "cpu")
            assert "\n" not in str(info.value)
            continue
        try:
            _check_like_gensim(path, how, kv)
        except (AssertionError, EmbvizError) as exc:
            failed.append(f"{path.name}: {str(exc).strip().splitlines()[0]}")
    assert not failed, "\n".join(failed)

def _check_like_gensim(path: Path, how: str, kv: Any) -> None:
    model = open_checkpoint(str(path), "cpu")
    keys = list(kv.index_to_key)
    same = _same_rows(list(model.vocab.texts), keys)
    table = model.table.numpy()
    np.testing.assert_allclose(table[same], kv.vectors[: len(keys)][same], rtol=0, atol=1e-6, err_msg=path.name)
    for index in [i for i in np.flatnonzero(same)[:3] if np.linalg.norm(table[i]) > 0]:
        want = kv.most_similar(keys[index], topn=5)
        got = nearest_neighbours(model, int(index), 5)
        np.testing.assert_allclose([h.score for h in got], [s for _, s in want], rtol=0, atol=1e-4,
                                   err_msg=f"{path.name}: {keys[index]}")
        scores = [s for _, s in want]
        for rank, (word, score) in enumerate(want):  # a tie may come in either order
            if all(abs(score - other) > 1e-4 for j, other in enumerate(scores) if j != rank):
                assert got[rank].text == word, f"{path.name}: {keys[index]} rank {rank}"
    if how == "facebook":
        for word in OOV:
            np.testing.assert_allclose(model.subwords.vector(word), kv[word], rtol=0, atol=1e-6,
                                       err_msg=f"{path.name}: {word}")

def test_a_native_file_without_its_side_file_is_one_sentence(tmp_path):
    source = _test_data() / "word2vec_pre_kv_sep_py3"
    assert (source.parent / (source.name + ".syn0.npy")).is_file()
    shutil.copy(source, tmp_path / source.name)
    with pytest.raises(EmbvizError) as info:
        open_checkpoint(str(tmp_path / source.name), "cpu")
    message = str(info.value)
    assert "\n" not in message and message.count(". ") == 0 and os.fspath(tmp_path) not in message, message
