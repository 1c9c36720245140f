"""gensim's saved KeyedVectors (`.kv`) and Word2Vec / FastText models (`.model`), read
without gensim and without running the pickle.

gensim saves with pickle, and `KeyedVectors.load` would run whatever a file asks. Here
the pickle goes through an unpickler that builds only inert records for gensim's
classes, plain containers and numpy arrays; any other global (`os.system`, …) is refused
before anything is called. Big arrays that gensim stored beside the pickle
(`NAME.vectors.npy`, `NAME.wv.vectors.npy`) are read with `allow_pickle=False`.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import numpy as np

from embviz.core.errors import EmbvizError, first_line
from embviz.core.readers.bounded import read_npz_array
from embviz.core.readers.regular_file import require_regular

SUFFIXES = (".kv", ".model", ".wv", ".w2v")
MAX_PICKLE_BYTES = 8 << 30

try:
    _numpy_core = np._core.multiarray
except AttributeError:  # numpy < 2
    _numpy_core = np.core.multiarray

_NUMPY = {
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("numpy.core.multiarray", "_reconstruct"): _numpy_core._reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _numpy_core._reconstruct,
    ("numpy.core.multiarray", "scalar"): _numpy_core.scalar,
    ("numpy._core.multiarray", "scalar"): _numpy_core.scalar,
}
# Names a gensim model refers to that are read as inert records (nothing is called):
# a model's random generator, its hash function, its counters.
_INERT_BUILTINS = {"set", "frozenset", "list", "dict", "tuple", "int", "float", "str", "bytes", "bool", "hash", "complex"}
_INERT_COLLECTIONS = {"OrderedDict", "defaultdict", "Counter", "deque"}


class GensimRecord:
    """Stands in for one gensim object (or a random generator inside a model): the
    pickled attributes, no behaviour."""

    gensim_class = ""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.__dict__["_args"] = args

    def __setstate__(self, state: object) -> None:
        if isinstance(state, tuple) and len(state) == 2 and isinstance(state[0], dict):
            state = {**state[0], **(state[1] or {})}  # (dict, slots)
        if isinstance(state, dict):
            self.__dict__.update(state)

    # An inert OrderedDict / deque still receives its items.
    def __setitem__(self, key: object, value: object) -> None:
        self.__dict__.setdefault("_items", {})[key] = value

    def append(self, value: object) -> None:
        self.__dict__.setdefault("_list", []).append(value)

    def extend(self, values: object) -> None:
        self.__dict__.setdefault("_list", []).extend(values)


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in _NUMPY:
            return _NUMPY[(module, name)]
        if (module == "gensim" or module.startswith(("gensim.", "numpy.random"))
                or (module == "builtins" and name in _INERT_BUILTINS)
                or (module == "collections" and name in _INERT_COLLECTIONS)):
            return type(name, (GensimRecord,), {"gensim_class": f"{module}.{name}"})
        raise pickle.UnpicklingError(f"it asks for {module}.{name}, which a gensim vector file never needs")


def is_gensim_file(path: Path) -> bool:
    """A pickle (protocol 2+) that names gensim in its first kilobytes."""
    if path.suffix.lower() not in SUFFIXES:
        return False
    try:
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return len(head) > 2 and head[0] == 0x80 and b"gensim" in head


def read_keyed_vectors(path: Path) -> tuple[list[str], np.ndarray, list[str]]:
    """(words, table, notes) of a gensim file, its vectors in id order."""
    if path.stat().st_size > MAX_PICKLE_BYTES:
        raise EmbvizError(f"{path.name} is over {MAX_PICKLE_BYTES >> 30} GB: not a gensim vector file embviz reads.")
    try:
        root = _SafeUnpickler(io.BytesIO(path.read_bytes())).load()
    except pickle.UnpicklingError as exc:
        raise EmbvizError(f"{path.name} was not read: {exc}. embviz never runs code from a file.") from exc
    except Exception as exc:  # noqa: BLE001 - a damaged pickle can fail in many ways
        raise EmbvizError(f"{path.name} is not a readable gensim file ({type(exc).__name__}: {first_line(exc)}).") from exc
    kv, prefix = _keyed_vectors(root, path)
    words = kv.__dict__.get("index_to_key")
    if words is None:
        words = kv.__dict__.get("index2word")  # gensim 3
    vectors = kv.__dict__.get("vectors")
    if vectors is None:
        vectors = kv.__dict__.get("syn0")  # gensim < 3.8
    if vectors is None:
        vectors = _stored_beside(kv, prefix, path)
    if not isinstance(words, list) or not isinstance(vectors, np.ndarray):
        raise EmbvizError(f"{path.name} is a {kv.gensim_class.rsplit('.', 1)[-1]} without a word list and vectors.")
    if vectors.ndim != 2 or not np.issubdtype(vectors.dtype, np.floating) or vectors.shape[0] != len(words):
        raise EmbvizError(f"{path.name} holds {len(words):,} words but a {vectors.dtype} table of shape {list(vectors.shape)}.")
    if vectors.shape[0] == 0 or vectors.shape[1] == 0:
        raise EmbvizError(f"{path.name} holds an empty table ({vectors.shape[0]} × {vectors.shape[1]}).")
    notes = [f"Read from gensim's {kv.gensim_class.rsplit('.', 1)[-1]} without running its pickle."]
    return [str(w) for w in words], np.require(vectors, np.float32, ["C", "W", "O"]), notes


def _keyed_vectors(root: object, path: Path) -> tuple[GensimRecord, str]:
    """The KeyedVectors record (the file itself, or a model's `wv`) and the file-name
    prefix of the arrays gensim stored beside it."""
    if isinstance(root, GensimRecord):
        if {"index_to_key", "index2word"} & root.__dict__.keys():
            return root, str(path)
        wv = root.__dict__.get("wv")
        if isinstance(wv, GensimRecord):
            return wv, f"{path}.wv"
    raise EmbvizError(f"{path.name} is a gensim file without word vectors in it.")


def _stored_beside(kv: GensimRecord, prefix: str, path: Path) -> np.ndarray:
    stored = kv.__dict__.get("__numpys") or []
    for name in ("vectors", "syn0"):
        if name not in stored:
            continue
        npy, npz = Path(f"{prefix}.{name}.npy"), Path(f"{prefix}.{name}.npz")
        try:
            # exists(), not is_file(): a pipe by that name is refused by require_regular, not passed over.
            if npy.exists():
                return np.load(require_regular(npy), mmap_mode="r", allow_pickle=False)
            if npz.exists():
                return read_npz_array(npz, "val.npy")
        except (OSError, ValueError) as exc:
            raise EmbvizError(f"{npy.name} beside {path.name} is not readable: {first_line(exc)}") from exc
        raise EmbvizError(f"{path.name} keeps its vectors in {npy.name}, which is not beside it.")
    raise EmbvizError(f"{path.name} has no vectors in it or beside it.")
