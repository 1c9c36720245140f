"""gensim's saved KeyedVectors (`.kv`) and Word2Vec / FastText models (`.model`), read
without gensim and without running the pickle, and recognised by their content whatever
their name (gensim itself puts no suffix on them).

gensim saves with pickle, and `KeyedVectors.load` would run whatever a file asks. Here
the pickle goes through an unpickler that builds only inert records for gensim's
classes and plain containers; any other global (`os.system`, …) is refused before
anything is called. numpy is never asked to build anything from the pickle: an array
stays a record of its shape, dtype and bytes until the one array embviz needs is checked
(plain numbers, no object fields, exactly shape × item size bytes) and made from them. Big arrays that gensim stored beside the pickle
(`NAME.vectors.npy`, `NAME.wv.vectors.npy`) are read with `allow_pickle=False`.

The one call a pickle may make is `_codecs.encode(text, 'latin1')`: pickle protocol 2 has no
opcode for bytes, so Python writes every bytes object (an array's data, inline) as that call.
Any other arguments to it are refused.
"""

from __future__ import annotations

from typing import Any

import _compat_pickle
import io
import pickle
from pathlib import Path

import numpy as np

from embviz.core.errors import EmbvizError, first_line
from embviz.core.readers.bounded import read_npz_array
from embviz.core.readers.fasttext_ngrams import MAX_NGRAM, compose
from embviz.core.readers.regular_file import open_regular, plain_dtype, read_bounded, require_regular, shown

MAX_PICKLE_BYTES = 8 << 30
# numpy's own names for the dtype strings of plain numbers, as a pickled dtype gives them.
_PLAIN_DTYPES = frozenset(f"{kind}{size}" for kind in "fiu" for size in (1, 2, 4, 8)) - {"f1"} | {"b1"}


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


class _PickledDtype:
    """`numpy.dtype(spec, align, copy)` and its state, as the file gave them; made a real
    dtype by `_dtype` only once they are proved to describe plain numbers."""

    def __init__(self, spec: object = None, *args: object) -> None:
        self.spec: object = spec
        self.state: object = None

    def __setstate__(self, state: object) -> None:
        self.state = state


class _PickledArray:
    """`numpy.ndarray` as pickled (`_reconstruct(ndarray, …)` then its state): nothing is
    allocated until `_array` has checked the shape, the type and the data against each other."""

    def __init__(self, *args: object) -> None:
        self.state: object = None

    def __setstate__(self, state: object) -> None:
        self.state = state


class _PickledScalar:
    """A numpy scalar of a plain number type (a model's learning rate, say): never needed, never built."""

    def __init__(self, dtype: object = None, *args: object) -> None:
        if not isinstance(dtype, _PickledDtype) or dtype.spec not in _PLAIN_DTYPES:
            spec = str(getattr(dtype, "spec", type(dtype).__name__))[:40]
            raise pickle.UnpicklingError(f"it builds a numpy scalar of {spec!r}, not a plain number")


def _reconstruct(cls: object = None, *args: object) -> _PickledArray:
    if cls is not _PickledArray:  # a record class, a subclass: objects numpy would build from the file
        raise pickle.UnpicklingError(f"it builds an array of {getattr(cls, 'gensim_class', '') or type(cls).__name__}, "
                                     "not a numpy array")
    return _PickledArray()


def _latin1_bytes(*args: object) -> bytes:
    """`_codecs.encode(text, 'latin1')`, protocol 2's bytes, and nothing else that function does."""
    if len(args) != 2 or not isinstance(args[0], str) or args[1] != "latin1":
        raise pickle.UnpicklingError("it calls _codecs.encode other than as pickle writes bytes")
    try:
        return args[0].encode("latin1")
    except UnicodeEncodeError:
        raise pickle.UnpicklingError("it calls _codecs.encode on text that is not bytes") from None


_ALLOWED = {
    ("numpy", "ndarray"): _PickledArray,
    ("numpy", "dtype"): _PickledDtype,
    ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy.core.multiarray", "scalar"): _PickledScalar,
    ("numpy._core.multiarray", "scalar"): _PickledScalar,
    ("_codecs", "encode"): _latin1_bytes,
}
# Names a gensim model refers to that are read as inert records (nothing is called):
# a model's random generator, its hash function, its counters.
_INERT_BUILTINS = {"set", "frozenset", "list", "dict", "tuple", "int", "float", "str", "bytes", "bool", "hash", "complex"}
_INERT_COLLECTIONS = {"OrderedDict", "defaultdict", "Counter", "deque"}


class _SafeUnpickler(pickle._Unpickler):
    """The pure-Python unpickler, about 4× slower than the C one (2.7 s instead of 0.7 s for
    400,000 words), because its memo is a dict: the C unpickler sizes its memo array by the largest
    index a file names, so 12 bytes (`LONG_BINPUT 0x7fffffff`) make it allocate 32 GB. It is also
    iterative, so no nesting reaches the stack."""

    def find_class(self, module: str, name: str) -> Any:
        # Python 3 writes protocol 2 with Python 2's names (`__builtin__.long`): read as Python 3's, as pickle does.
        if getattr(self, "proto", 0) < 3:
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            else:
                module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        if (module, name) in _ALLOWED:
            return _ALLOWED[(module, name)]
        if (module == "gensim" or module.startswith(("gensim.", "numpy.random"))
                or (module == "builtins" and name in _INERT_BUILTINS)
                or (module == "collections" and name in _INERT_COLLECTIONS)):
            return type(name, (GensimRecord,), {"gensim_class": f"{module}.{name}"})
        raise pickle.UnpicklingError(f"it asks for {module}.{name}, which a gensim vector file never needs")


def is_gensim_pickle(head: bytes) -> bool:
    """The first kilobytes of a pickle (protocol 2+) that names gensim, whatever the file's name."""
    return len(head) > 2 and head[0] == 0x80 and b"gensim" in head


def is_gensim_file(path: Path) -> bool:
    """A regular file whose first kilobytes are a gensim pickle's."""
    try:
        with open_regular(path) as f:
            head = f.read(4096)
    except EmbvizError:
        return False
    return is_gensim_pickle(head)


def read_keyed_vectors(path: Path) -> tuple[list[str], np.ndarray, list[str]]:
    """(words, table, notes) of a gensim file, its vectors in id order."""
    name = path.name
    root = _unpickle(path)
    kv, prefix = _keyed_vectors(root, path)
    words = kv.__dict__.get("index_to_key")
    if words is None:
        words = kv.__dict__.get("index2word")  # gensim 3
    vectors = kv.__dict__.get("vectors")
    if vectors is None:
        vectors = kv.__dict__.get("syn0")  # gensim < 3.8
    kind = type(kv).gensim_class.rsplit(".", 1)[-1]  # the class's: a pickled attribute may shadow it
    if not isinstance(words, list) or not (vectors is None or isinstance(vectors, _PickledArray)):
        raise EmbvizError(f"{shown(name)} is a {kind} without a word list and vectors.")
    if not all(isinstance(w, str) for w in words):
        raise EmbvizError(f"{shown(name)} is a {kind} whose word list holds something other than text.")
    composed = vectors is None and kind == "FastTextKeyedVectors"  # gensim keeps its parts, not its vectors
    if composed:
        table = _fasttext_vectors(kv, prefix, path, words)
    else:
        table = _stored_beside(kv, prefix, path) if vectors is None else _array(vectors, name)
    vectors = table
    if vectors.ndim != 2 or not np.issubdtype(vectors.dtype, np.floating) or vectors.shape[0] != len(words):
        raise EmbvizError(f"{shown(name)} holds {len(words):,} words but a {vectors.dtype} table of shape {list(vectors.shape)}.")
    if vectors.shape[0] == 0 or vectors.shape[1] == 0:
        raise EmbvizError(f"{shown(name)} holds an empty table ({vectors.shape[0]} × {vectors.shape[1]}).")
    notes = [f"Read from gensim's {kind} without running its pickle."]
    if composed:
        notes.append("Each word's vector is the mean of its own row and its character n-grams' rows, as gensim gives it.")
    return list(words), np.require(vectors, np.float32, ["C", "W", "O"]), notes


def _unpickle(path: Path) -> object:
    name = path.name
    data = read_bounded(path, MAX_PICKLE_BYTES, "its pickle", lambda _size: f"{shown(name)} is over "
                        f"{MAX_PICKLE_BYTES >> 30} GB: not a gensim vector file embviz reads.")
    try:
        return _SafeUnpickler(io.BytesIO(data), encoding="latin1").load()  # gensim's own: Python 2 pickles keep their bytes
    except pickle.UnpicklingError as exc:
        raise EmbvizError(f"{shown(name)} was not read: {first_line(exc)}. embviz never runs code from a file.") from None
    except (EOFError, ValueError, TypeError, KeyError, IndexError, AttributeError, MemoryError, OverflowError) as exc:
        # A damaged pickle fails in any of these ways inside the unpickler, before anything is used.
        raise EmbvizError(f"{shown(name)} is not a readable gensim file ({type(exc).__name__}: {first_line(exc)}).") from None


def _dtype(pickled: object, name: str) -> np.dtype:
    """The dtype a pickle describes, if it is a plain number type with no fields or sub-arrays."""
    if not isinstance(pickled, _PickledDtype) or pickled.spec not in _PLAIN_DTYPES:
        spec = getattr(pickled, "spec", type(pickled).__name__)
        raise EmbvizError(f"{shown(name)} holds an array of {str(spec)[:40]!r}, not plain numbers; embviz refuses it.")
    dtype = np.dtype(pickled.spec)
    state = pickled.state
    if state is not None:
        # (version, byte order, sub-array, names, fields, item size, alignment, flags)
        if not isinstance(state, tuple) or len(state) < 5 or any(part is not None for part in state[2:5]) \
                or state[1] not in ("<", ">", "|", "="):
            raise EmbvizError(f"{shown(name)} holds an array type that is not plain numbers; embviz refuses it.")
        if state[1] == ">":
            dtype = dtype.newbyteorder(">")
    return plain_dtype(dtype, name)


def _array(pickled: _PickledArray, name: str) -> np.ndarray:
    """A pickled array made real only when its data holds exactly shape × item size bytes."""
    state = pickled.state
    if not isinstance(state, tuple) or len(state) != 5:
        raise EmbvizError(f"{shown(name)} holds an array without its data.")
    _, shape, dtype, fortran, data = state
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0 for n in shape):
        raise EmbvizError(f"{shown(name)} holds an array with an impossible shape.")
    dtype = _dtype(dtype, name)
    if isinstance(data, str):  # a Python 2 pickle's bytes, decoded as latin1 (numpy undoes it the same way)
        data = data.encode("latin1")
    if not isinstance(data, (bytes, bytearray)):
        raise EmbvizError(f"{shown(name)} holds an array without its data.")
    count = 1
    for n in shape:
        count *= n
    if count * dtype.itemsize != len(data):
        raise EmbvizError(f"{shown(name)} holds an array of shape {list(shape)[:4]} ({dtype}) in {len(data):,} bytes "
                          f"instead of {count * dtype.itemsize:,}; the file is corrupt.")
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran is True else "C")


def _keyed_vectors(root: object, path: Path) -> tuple[GensimRecord, str]:
    """The KeyedVectors record (the file itself, or a model's `wv`) and the file-name
    prefix of the arrays gensim stored beside it."""
    if isinstance(root, GensimRecord):
        if {"index_to_key", "index2word"} & root.__dict__.keys():
            return root, str(path)
        wv = root.__dict__.get("wv")
        if isinstance(wv, GensimRecord):
            return wv, f"{path}.wv"
    raise EmbvizError(f"{shown(path.name)} is a gensim file without word vectors in it.")


def _fasttext_vectors(kv: GensimRecord, prefix: str, path: Path, words: list[str]) -> np.ndarray:
    """A gensim FastText's word vectors from the parts it saves (`vectors_vocab`, `vectors_ngrams`),
    composed as its `adjust_vectors` does on loading."""
    def part(attr: str) -> np.ndarray:
        inline = kv.__dict__.get(attr)
        array = _array(inline, path.name) if isinstance(inline, _PickledArray) else _stored_beside(kv, prefix, path, (attr,))
        return np.require(array, np.float32, ["C"])

    minn, maxn, bucket = (kv.__dict__.get(key) for key in ("min_n", "max_n", "bucket"))
    vocab, ngrams = part("vectors_vocab"), part("vectors_ngrams")
    if not all(isinstance(n, int) and 0 <= n <= MAX_NGRAM for n in (minn, maxn)) or not isinstance(bucket, int) \
            or vocab.ndim != 2 or ngrams.shape != (bucket, vocab.shape[1]) or vocab.shape[0] != len(words):
        raise EmbvizError(f"{shown(path.name)} is a gensim FastText whose parts do not fit together "
                          f"(words {vocab.shape}, n-grams {ngrams.shape}, {bucket!r} buckets); it is corrupt.")
    assert isinstance(minn, int) and isinstance(maxn, int)  # for mypy: checked above
    out = np.empty(vocab.shape, dtype=np.float32)
    compose(out, vocab, ngrams, [w.encode("utf-8", errors="surrogatepass") for w in words], minn, maxn)
    return out


def _stored_beside(kv: GensimRecord, prefix: str, path: Path, names: tuple[str, ...] = ("vectors", "syn0")) -> np.ndarray:
    stored = kv.__dict__.get("__numpys")
    for name in names:
        if not isinstance(stored, list) or name not in stored:
            continue
        npy, npz = Path(f"{prefix}.{name}.npy"), Path(f"{prefix}.{name}.npz")
        if npy.exists():
            return _load_npy(npy)
        if npz.exists():
            return _load_npz(npz)
        raise EmbvizError(f"{shown(path.name)} keeps its vectors in {shown(npy.name)}, which is not beside it.")
    raise EmbvizError(f"{shown(path.name)} has no vectors in it or beside it.")


def _load_npy(npy: Path) -> np.ndarray:
    try:
        array = np.load(require_regular(npy), mmap_mode="r", allow_pickle=False)  # a FIFO is refused first
    except (OSError, ValueError) as exc:
        raise EmbvizError(f"{shown(npy.name)} is not readable: {first_line(exc)}") from None
    plain_dtype(array.dtype, npy.name)
    return np.asarray(array) if not isinstance(array, np.ndarray) else array




def _load_npz(npz: Path) -> np.ndarray:
    array = read_npz_array(npz, "val.npy")  # sizes checked against a stated bound before reading
    plain_dtype(array.dtype, npz.name)
    return array
