"""Hostile cache folders: a clean cache made by opening a source file, then altered on disk the way
a full disk, an interrupted copy, a sync tool, another version or a second process would.

Each `@cache_case(name, kind, note)` registers an alteration `alter(entry, other, cache)` of the
entry made for source A (`other`: the same kind of entry for source B, of the same shape).
tests/test_hostile_corpus.py opens A again and asks the question `kind` names; the answer must equal
the clean cache's, and the model's notes must match `note` (None: no note, e.g. an index that only
cost a hash). `isolated` cases hung or ate gigabytes before they were handled: they are asked in a
child process with a time and memory limit.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

Alter = Callable[[Path, Path, Path], None]
KINDS = ("words", "gguf", "pca", "knn")
WORDS = [f"w{i}" for i in range(40)]
DAMAGED = r"cached copy of a\.\w+ was damaged"


@dataclass(frozen=True)
class CacheCase:
    name: str
    kind: str  # the question asked: "words"/"gguf" an open's table, labels and neighbours; "pca", "knn" a map's
    note: str | None  # a regex one of the notes must match
    alter: Alter
    isolated: bool


CACHE_CASES: dict[str, CacheCase] = {}


def cache_case(name: str, kind: str, note: str | None = DAMAGED, isolated: bool = False) -> Callable[[Alter], Alter]:
    assert kind in KINDS

    def register(alter: Alter) -> Alter:
        if name in CACHE_CASES:
            raise ValueError(f"duplicate hostile cache case {name!r}")
        CACHE_CASES[name] = CacheCase(name, kind, note, alter, isolated)
        return alter
    return register


# --- the sources and the questions -----------------------------------------------------------
def source(folder: Path, kind: str, which: str) -> Path:
    """Source `which` ("a" or "b") for a case of `kind`: the same shape, other numbers."""
    seed = 0 if which == "a" else 1
    if kind == "gguf":
        from tests.test_hostile import tiny_gguf

        tiny_gguf(folder / f"{which}.gguf", table=np.random.default_rng(seed).normal(size=(6, 8)).astype(np.float32))
        return folder / f"{which}.gguf"
    vecs = np.random.default_rng(seed).normal(size=(len(WORDS), 7)).astype(np.float32)
    path = folder / f"{which}.txt"
    path.write_text("".join(w + " " + " ".join(f"{x:.7g}" for x in v) + "\n" for w, v in zip(WORDS, vecs)),
                    encoding="utf-8")
    return path


def _sha(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


def ask(path: Path, kind: str) -> dict:
    """The answer to the case's question about source `path` (opened with the cache as it is) and
    the model's notes; the maps must be kept however small (KEEP_ROWS and DISK_ROWS set to 0)."""
    from embviz.core import open_checkpoint
    from embviz.core.maps import knn, projection
    from embviz.core.table.similarity import nearest_neighbours

    model = open_checkpoint(str(path), "cpu")
    answer: dict = {"notes": list(model.notes)}
    if kind in ("words", "gguf"):
        answer.update(table=_sha(model.table.numpy()), labels=list(model.vocab.labels),
                      neighbours=[[h.id for h in nearest_neighbours(model, row, k=5)] for row in (0, 3, 5)])
    elif kind == "pca":
        projected = projection.project(model, "pca")
        answer.update(coords=_sha(projected.coords), explained=projected.explained)
    else:
        positions, cosines = knn.table_knn(model, np.arange(model.vocab_size), 5)
        answer.update(positions=positions.tolist(), cosines=_sha(cosines))
    return answer


def entry_of(cache: Path, kind: str) -> Path:
    """The one entry the clean open made for the case's question."""
    folder = {"words": "word-vectors", "gguf": "gguf", "pca": "maps", "knn": "knn"}[kind]
    entries = [p for p in (cache / folder).iterdir() if not p.name.startswith(".")]
    assert len(entries) == 1, entries
    return entries[0]


# --- helpers for the alterations ---------------------------------------------------------------
def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _link(path: Path, target: Path | str) -> None:
    path.unlink()
    path.symlink_to(target)


def _flip_byte(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x40
    path.write_bytes(bytes(data))


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _table_in(entry: Path) -> Path:
    return entry / ("table.npy" if (entry / "table.npy").exists() else "table.safetensors")


# --- 1. silent wrong answers -------------------------------------------------------------------
@cache_case("cache_words_table_byte_changed", "words")
def words_table_byte(entry: Path, other: Path, cache: Path) -> None:
    _flip_byte(entry / "table.npy", (entry / "table.npy").stat().st_size - 3)


@cache_case("cache_words_two_lines_swapped", "words")
def words_lines_swapped(entry: Path, other: Path, cache: Path) -> None:
    words = (entry / "words.txt").read_text(encoding="utf-8").split("\n")
    words[1], words[2] = words[2], words[1]
    (entry / "words.txt").write_text("\n".join(words), encoding="utf-8")


@cache_case("cache_words_norms_all_ones", "words")
def words_norms_ones(entry: Path, other: Path, cache: Path) -> None:
    np.save(entry / "norms.npy", np.ones(len(WORDS), dtype=np.float32))


@cache_case("cache_words_table_links_to_another_models", "words")
def words_table_link(entry: Path, other: Path, cache: Path) -> None:
    _link(entry / "table.npy", other / "table.npy")


@cache_case("cache_words_entries_swapped", "words")
def words_entries_swapped(entry: Path, other: Path, cache: Path) -> None:
    aside = entry.with_name("aside")
    entry.rename(aside)
    other.rename(entry)
    aside.rename(other)


@cache_case("cache_index_names_another_files_hash", "words", note=None)
def index_lies(entry: Path, other: Path, cache: Path) -> None:
    index = json.loads((cache / "hashes.json").read_text(encoding="utf-8"))
    a, b = (next(k for k in index if k.endswith(f"{x}.txt")) for x in "ab")
    index[a]["sha256"] = index[b]["sha256"]
    (cache / "hashes.json").write_text(json.dumps(index), encoding="utf-8")


@cache_case("cache_gguf_table_of_another_model", "gguf")
def gguf_table_replaced(entry: Path, other: Path, cache: Path) -> None:
    (entry / "table.safetensors").write_bytes((other / "table.safetensors").read_bytes())


@cache_case("cache_gguf_table_cut_to_two_rows", "gguf")
def gguf_table_cut(entry: Path, other: Path, cache: Path) -> None:
    from safetensors.numpy import save_file

    save_file({"table": np.ones((2, 3), dtype=np.float32)}, str(entry / "table.safetensors"))


@cache_case("cache_gguf_tokens_reordered", "gguf")
def gguf_tokens_reordered(entry: Path, other: Path, cache: Path) -> None:
    meta = json.loads((entry / "meta.json").read_text(encoding="utf-8"))
    meta["tokens"] = meta["tokens"][::-1]
    (entry / "meta.json").write_text(json.dumps(meta), encoding="utf-8")


@cache_case("cache_pca_map_negated", "pca", note=None)
def pca_negated(entry: Path, other: Path, cache: Path) -> None:
    with np.load(entry / "pca.npz") as kept:
        coords, ratio = kept["coords"], kept["ratio"]
    np.savez(entry / "pca.npz", coords=-coords, ratio=ratio)


@cache_case("cache_knn_graph_shuffled", "knn", note=None)
def knn_shuffled(entry: Path, other: Path, cache: Path) -> None:
    with np.load(entry / "graph.npz") as kept:
        positions, cosines = kept["positions"], kept["cosines"]
    np.savez(entry / "graph.npz", positions=np.random.default_rng(0).permutation(positions), cosines=cosines)


# --- 2. hangs and memory: a pipe, a link to /dev/zero, an archive that expands ------------------
for _kind, _name in (("words", "table.npy"), ("words", "words.txt"), ("words", "norms.npy"),
                     ("gguf", "table.safetensors"), ("knn", "graph.npz")):
    cache_case(f"cache_{_kind}_{_name.replace('.', '_')}_is_a_pipe", _kind, note=DAMAGED if _kind != "knn" else None,
               isolated=True)(lambda entry, other, cache, _name=_name: _fifo(entry / _name))


@cache_case("cache_index_is_a_pipe", "words", note=None, isolated=True)
def index_fifo(entry: Path, other: Path, cache: Path) -> None:
    _fifo(cache / "hashes.json")


for _kind, _name in (("words", "words.txt"), ("words", "notes.json"), ("gguf", "meta.json")):
    cache_case(f"cache_{_kind}_{_name.replace('.', '_')}_links_to_dev_zero", _kind, isolated=True)(
        lambda entry, other, cache, _name=_name: _link(entry / _name, "/dev/zero"))


@cache_case("cache_index_links_to_dev_zero", "words", note=None, isolated=True)
def index_dev_zero(entry: Path, other: Path, cache: Path) -> None:
    _link(cache / "hashes.json", "/dev/zero")


@cache_case("cache_knn_graph_expands_to_gigabytes", "knn", note=None, isolated=True)
def knn_bomb(entry: Path, other: Path, cache: Path) -> None:
    import zipfile

    # One member that claims and expands to 1.3 GB of zeros, from a few megabytes.
    with zipfile.ZipFile(entry / "graph.npz", "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open("positions.npy", "w", force_zip64=True) as member:
            header = "{'descr': '<i4', 'fortran_order': False, 'shape': (40, 8000000), }"
            member.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", 118) + header.ljust(117).encode() + b"\n")
            zeros = bytes(1 << 24)
            for _ in range(40 * 8_000_000 * 4 // len(zeros)):
                member.write(zeros)


# --- 4. tracebacks: JSON nested deep, fields of the wrong type ----------------------------------
@cache_case("cache_words_notes_nested_deep", "words")
def notes_deep(entry: Path, other: Path, cache: Path) -> None:
    (entry / "notes.json").write_text(_nested(100_000), encoding="utf-8")


@cache_case("cache_index_nested_deep", "words", note=None)
def index_deep(entry: Path, other: Path, cache: Path) -> None:
    (cache / "hashes.json").write_text(_nested(100_000), encoding="utf-8")


@cache_case("cache_gguf_meta_nested_deep", "gguf")
def meta_deep(entry: Path, other: Path, cache: Path) -> None:
    (entry / "meta.json").write_text(_nested(100_000), encoding="utf-8")


@cache_case("cache_gguf_meta_tokens_a_number", "gguf")
def meta_tokens_number(entry: Path, other: Path, cache: Path) -> None:
    meta = json.loads((entry / "meta.json").read_text(encoding="utf-8"))
    (entry / "meta.json").write_text(json.dumps({**meta, "tokens": 5}), encoding="utf-8")


@cache_case("cache_gguf_meta_total_params_text", "gguf")
def meta_params_text(entry: Path, other: Path, cache: Path) -> None:
    meta = json.loads((entry / "meta.json").read_text(encoding="utf-8"))
    (entry / "meta.json").write_text(json.dumps({**meta, "total_params": "x"}), encoding="utf-8")


@cache_case("cache_knn_graph_of_another_table", "knn", note=None)
def knn_of_another_table(entry: Path, other: Path, cache: Path) -> None:
    for name in ("graph.npz", "seal.json"):  # whole and sealed, but another table's
        (entry / name).write_bytes((other / name).read_bytes())
