"""Hostile checkpoints: gensim pickles, GGUF and safetensors headers, model folders, paths.

`case` cases are safe to open in the test process once the readers are right. `ISOLATED` cases
crashed, hung or ate gigabytes before they were; tests/test_hostile_isolated.py opens each in a
child process with a time and memory limit, so a regression fails a test instead of pytest.
"""

from __future__ import annotations

import json
import os
import pickle
import struct
from pathlib import Path

import numpy as np

from tests.hostile_corpus import CASES, Case, Maker, case

ISOLATED: dict[str, Case] = {}


def isolated(name: str, expect: str):
    def register(make: Maker) -> Maker:
        if name in ISOLATED or name in CASES:
            raise ValueError(f"duplicate hostile case {name!r}")
        ISOLATED[name] = Case(name, expect, make)
        return make
    return register


# --- gensim pickles, written opcode by opcode where pickle itself would refuse -----------------
try:
    _RECONSTRUCT = np._core.multiarray._reconstruct
except AttributeError:  # numpy < 2
    _RECONSTRUCT = np.core.multiarray._reconstruct


class _Reduce:
    """Pickles as `func(*args)` then BUILD with `state`: any object a pickle can describe."""

    def __init__(self, func, args, state=None):
        self.func, self.args, self.state = func, args, state

    def __reduce__(self):
        return (self.func, self.args) if self.state is None else (self.func, self.args, self.state)


def _fragment(obj) -> bytes:
    """The opcodes of one object (protocol 3: no frames, and bytes need no global)."""
    return pickle.dumps(obj, 3)[2:-1]


def _keyed_vectors(folder: Path, name: str, **values: bytes) -> Path:
    """A gensim KeyedVectors pickle whose attributes are the given opcode fragments."""
    body = b"}"  # EMPTY_DICT, then key, value, SETITEM for each attribute
    for key, value in values.items():
        body += _fragment(key) + value + b"s"
    path = folder / name
    path.write_bytes(b"\x80\x03cgensim.models.keyedvectors\nKeyedVectors\n)\x81" + body + b"b.")
    return path


_TWO_VECTORS = _fragment(np.zeros((2, 3), np.float32))


@isolated("ck_gensim_forged_object_pointer", r"word list holds something other than text")
def gensim_forged_pointer(folder: Path) -> Path:
    # A structured dtype with an object field, its flags cleared so numpy takes raw bytes for it:
    # the "word" holds a pointer the file chose.
    dtype = _Reduce(np.dtype, ("V8", False, True), (3, "|", None, ("a",), {"a": (np.dtype("O"), 0)}, 8, 1, 0))
    word = _Reduce(_RECONSTRUCT, (np.ndarray, (0,), b"b"), (1, (1,), dtype, False, struct.pack("<Q", 0xDEADBEEF)))
    return _keyed_vectors(folder, "pointer.kv", index_to_key=_fragment([word, "b"]), vectors=_TWO_VECTORS)


@isolated("ck_gensim_huge_array_in_few_bytes", r"array without its data")
def gensim_huge_array(folder: Path) -> Path:
    vectors = _Reduce(_RECONSTRUCT, (np.ndarray, (3, 200_000_000), np.dtype("f4")))
    return _keyed_vectors(folder, "huge.kv", index_to_key=_fragment(["a", "b", "c"]), vectors=_fragment(vectors))


@isolated("ck_gensim_word_of_shared_references", r"word list holds something other than text")
def gensim_shared_references(folder: Path) -> Path:
    # An object array of 2·10⁸ slots, each a reference to the one None: 1.6 GB from a few bytes.
    word = _Reduce(_RECONSTRUCT, (np.ndarray, (2 * 10**8,), np.dtype("O")))
    return _keyed_vectors(folder, "shared.kv", index_to_key=_fragment([word, "b"]), vectors=_TWO_VECTORS)


@isolated("ck_gensim_memo_index_bomb", r"word list holds something other than text")
def gensim_memo_index_bomb(folder: Path) -> Path:
    # LONG_BINPUT with an index of 2³¹−1: the C unpickler grows its memo array to twice that.
    word = b"N" + b"r" + struct.pack("<I", 0x7FFFFFFF)
    return _keyed_vectors(folder, "memo.kv", index_to_key=b"]" + word + b"a", vectors=_TWO_VECTORS)


@case("ck_gensim_array_without_data", r"array without its data")
def gensim_array_without_data(folder: Path) -> Path:
    vectors = _Reduce(_RECONSTRUCT, (np.ndarray, (2, 3), np.dtype("f4")))  # no state: uninitialised memory
    return _keyed_vectors(folder, "nodata.kv", index_to_key=_fragment(["a", "b"]), vectors=_fragment(vectors))


@case("ck_gensim_array_data_too_short", r"in 4 bytes instead of 24")
def gensim_array_data_too_short(folder: Path) -> Path:
    vectors = _Reduce(_RECONSTRUCT, (np.ndarray, (0,), b"b"), (1, (2, 3), np.dtype("f4"), False, b"\0" * 4))
    return _keyed_vectors(folder, "short.kv", index_to_key=_fragment(["a", "b"]), vectors=_fragment(vectors))


@case("ck_gensim_word_nested_deep", r"word list holds something other than text")
def gensim_word_nested_deep(folder: Path) -> Path:
    depth = 100_000
    nested = b"]" * depth + b"a" * (depth - 1)  # each list appended to the one below it
    return _keyed_vectors(folder, "deep.kv", index_to_key=b"]" + nested + b"a" + _fragment("b") + b"a",
                          vectors=_TWO_VECTORS)


@case("ck_gensim_words_not_text", r"word list holds something other than text")
def gensim_words_not_text(folder: Path) -> Path:
    return _keyed_vectors(folder, "numbers.kv", index_to_key=_fragment([1, 2]), vectors=_TWO_VECTORS)


@case("ck_gensim_vectors_not_an_array", r"without a word list and vectors")
def gensim_vectors_not_an_array(folder: Path) -> Path:
    return _keyed_vectors(folder, "text.kv", index_to_key=_fragment(["a", "b"]), vectors=_fragment("vectors"))


@case("ck_gensim_object_array", r"not plain numbers")
def gensim_object_array(folder: Path) -> Path:
    return _keyed_vectors(folder, "objects.kv", index_to_key=_fragment(["a", "b"]),
                          vectors=_fragment(np.array([[1.0, "x"], [2.0, "y"]], dtype=object)))


@case("ck_gensim_class_attribute_a_number", r"is a KeyedVectors whose word list holds something other than text")
def gensim_class_attribute(folder: Path) -> Path:
    # The record's own attribute named like the class it stands for: the name comes from the class.
    return _keyed_vectors(folder, "cls.kv", gensim_class=_fragment(5), index_to_key=_fragment([1, 2]),
                          vectors=_TWO_VECTORS)


@case("ck_gensim_object_scalar", r"builds a numpy scalar of 'O8', not a plain number")
def gensim_object_scalar(folder: Path) -> Path:
    try:
        scalar = np._core.multiarray.scalar
    except AttributeError:  # numpy < 2
        scalar = np.core.multiarray.scalar
    alpha = _fragment(_Reduce(scalar, (np.dtype("O"), struct.pack("<Q", 0xDEADBEEF))))
    return _keyed_vectors(folder, "scalar.kv", index_to_key=_fragment(["a", "b"]), vectors=_TWO_VECTORS, alpha=alpha)


@case("ck_gensim_reconstruct_a_record_class", r"builds an array of gensim\.utils\.SaveLoad, not a numpy array")
def gensim_reconstruct_record(folder: Path) -> Path:
    # _reconstruct(SaveLoad, (0,), b"b"): numpy would build an instance of the class the file names.
    record = (b"c" + _RECONSTRUCT.__module__.encode() + b"\n_reconstruct\n(cgensim.utils\nSaveLoad\n"
              + _fragment((0,)) + _fragment(b"b") + b"tR")
    return _keyed_vectors(folder, "record.kv", index_to_key=_fragment(["a", "b"]), vectors=_TWO_VECTORS, extra=record)


# --- GGUF, written field by field --------------------------------------------------------------
def _gguf_string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack("<Q", len(raw)) + raw


def _gguf(folder: Path, name: str, kv: list[bytes], tensors: list[tuple[str, tuple[int, ...]]]) -> Path:
    """A GGUF v3 file: `kv` are whole encoded metadata entries; each tensor is F32 and all share
    one zero-filled data block."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kv)) + b"".join(kv)
    for tname, shape in tensors:
        out += _gguf_string(tname) + struct.pack("<I", len(shape)) + struct.pack(f"<{len(shape)}Q", *shape)
        out += struct.pack("<IQ", 0, 0)  # F32, offset 0
    out += b"\0" * (-len(out) % 32)
    n = max((int(np.prod(shape)) for _, shape in tensors), default=0)
    path = folder / name
    path.write_bytes(out + b"\0" * (4 * n))
    return path


def _kv_string_array(key: str, items: list[str]) -> bytes:
    return _gguf_string(key) + struct.pack("<IIQ", 9, 8, len(items)) + b"".join(_gguf_string(s) for s in items)


_TABLE = [("token_embd.weight", (4, 2))]


@case("ck_gguf_duplicate_tensor", r"lists the tensor token_embd\.weight twice")
def gguf_duplicate_tensor(folder: Path) -> Path:
    return _gguf(folder, "twice.gguf", [], _TABLE * 2)


@case("ck_gguf_duplicate_key", r"lists the metadata key general\.name twice")
def gguf_duplicate_key(folder: Path) -> Path:
    entry = _gguf_string("general.name") + struct.pack("<I", 8) + _gguf_string("x")
    return _gguf(folder, "twice.gguf", [entry, entry], _TABLE)


@case("ck_gguf_arrays_nested_deep", r"nested arrays deeper than")
def gguf_arrays_nested_deep(folder: Path) -> Path:
    depth = 5000
    value = struct.pack("<IQ", 9, 1) * depth + struct.pack("<IQ", 0, 0)
    return _gguf(folder, "deep.gguf", [_gguf_string("x") + struct.pack("<I", 9) + value], _TABLE)


@case("ck_gguf_token_types_as_text", r"tokenizer\.ggml\.token_type is not a list of numbers")
def gguf_token_types_as_text(folder: Path) -> Path:
    kv = [_kv_string_array("tokenizer.ggml.tokens", ["a", "b"]), _kv_string_array("tokenizer.ggml.token_type", ["1", "x"])]
    return _gguf(folder, "types.gguf", kv, [("token_embd.weight", (4, 2))])


@case("ck_gguf_tokens_not_text", r"tokenizer\.ggml\.tokens is not a list of texts")
def gguf_tokens_not_text(folder: Path) -> Path:
    tokens = _gguf_string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 4, 2) + struct.pack("<II", 1, 2)
    return _gguf(folder, "tokens.gguf", [tokens], [("token_embd.weight", (4, 2))])


@case("ck_gguf_more_tokens_than_the_file_holds", r"truncated or corrupt")
def gguf_token_count_lies(folder: Path) -> Path:
    tokens = _gguf_string("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 1_500_000_000)
    return _gguf(folder, "lies.gguf", [tokens], _TABLE)


# --- safetensors and folders -------------------------------------------------------------------
def _safetensors(path: Path, header: bytes, data: bytes = b"") -> Path:
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)
    return path


@case("ck_safetensors_header_nested_deep", r"not a valid safetensors file")
def safetensors_nested_deep(folder: Path) -> Path:
    depth = 150_000
    header = b'{"__metadata__": ' + b"[" * depth + b"]" * depth + b"}"
    return _safetensors(folder / "deep.safetensors", header)


@case("ck_safetensors_overlapping_tensors", r"not a valid safetensors file")
def safetensors_overlapping(folder: Path) -> Path:
    header = json.dumps({"embedding.weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
                         "head.weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}).encode()
    return _safetensors(folder / "overlap.safetensors", header, b"\0" * 16)


@case("ck_shard_index_outside_the_folder", r"names a shard outside")
def shard_outside_folder(folder: Path) -> Path:
    model = folder / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    weight_map = {"embed_tokens.weight": "../x.safetensors", "lm_head.weight": "model-1.safetensors"}
    (model / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    for path in (folder / "x.safetensors", model / "model-1.safetensors"):
        header = {path.stem.replace("x", "embed_tokens") + ".weight": {"dtype": "F32", "shape": [1, 1], "data_offsets": [0, 4]}}
        _safetensors(path, json.dumps(header).encode(), b"\0" * 4)
    return model


@case("ck_vocab_json_not_json", r"vocab\.json is not valid JSON")
def vocab_not_json(folder: Path) -> Path:
    header = json.dumps({"embedding.weight": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}).encode()
    _safetensors(folder / "weights.safetensors", header, b"\0" * 16)
    (folder / "vocab.json").write_text("[" * 100_000)
    return folder / "weights.safetensors"


# --- paths ---------------------------------------------------------------------------------------
@case("ck_missing_path_with_a_newline", r"No such file or folder: .*two\\nlines")
def missing_path_with_newline(folder: Path) -> Path:
    return folder / "two\nlines.safetensors"


@case("ck_hub_id_too_long", r"too long")
def hub_id_too_long(folder: Path) -> Path:
    return Path("someone/" + "m" * 300)


# --- non-regular files: they hung a reader that opened them --------------------------------------
def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _folder_with(folder: Path, weights: str) -> Path:
    model = folder / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    _fifo(model / weights)
    return model


@isolated("ck_fifo_model_safetensors", r"model\.safetensors is a pipe")
def fifo_model_safetensors(folder: Path) -> Path:
    return _folder_with(folder, "model.safetensors")


@isolated("ck_fifo_pytorch_model_shard", r"pytorch_model-1\.bin is a pipe")
def fifo_pytorch_shard(folder: Path) -> Path:
    return _folder_with(folder, "pytorch_model-1.bin")


@isolated("ck_fifo_gensim_file", r"words\.kv is a pipe")
def fifo_gensim(folder: Path) -> Path:
    return _fifo(folder / "words.kv")
