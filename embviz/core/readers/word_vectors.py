"""Word vectors: GloVe text (no header), word2vec / fastText text (a `V D` header),
word2vec binary (.bin, .bin.gz: recognised by content, since .bin is PyTorch's too), a
.npy table (C or Fortran order) with its vocabulary beside it, and gensim's saved
KeyedVectors / Word2Vec files (read without running their pickle). They have no output layer,
so no logits; every other panel works.

Text is parsed at C speed: the numbers of all lines go to numpy in one call. The parsed
table is cached (keyed on the file's content), so a later open skips the parse.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import torch

from embviz.core.cache import cache_root, content_key, keep_in_cache
from embviz.core.device import ensure_fits_in_ram
from embviz.core.errors import EmbvizError, ProgressFn, first_line, no_progress
from embviz.core.model import EmbeddingModel
from embviz.core.readers.assemble import assemble
from embviz.core.readers.gensim_file import is_gensim_file, read_keyed_vectors
from embviz.core.table.vocab import vocabulary_from_words

TEXT_SUFFIXES = (".txt", ".vec", ".txt.gz", ".vec.gz")
BINARY_SUFFIXES = (".bin", ".bin.gz")
CACHE_FORMAT = "word-vectors-1"
NO_LOGITS = ("Next-token logits are off: word vectors have no output layer to score a next word. "
             "The map, neighbours and analogies work.")
_HEADER = re.compile(rb"^\s*(\d+)\s+(\d+)\s*$")


def _suffix(path: Path) -> str:
    name = path.name.lower()
    return ".".join([""] + name.split(".")[-2:]) if name.endswith(".gz") else path.suffix.lower()


def _read_bytes(path: Path) -> bytes:
    try:
        if path.name.lower().endswith(".gz"):
            with gzip.open(path, "rb") as f:
                return f.read()
        return path.read_bytes()
    except (OSError, EOFError) as exc:
        raise EmbvizError(f"{path.name} could not be read: {first_line(exc)}.") from exc


def is_word2vec_binary(path: Path) -> bool:
    """A `V D` text header followed by binary floats (PyTorch's .bin is a zip or a pickle)."""
    try:
        opener = gzip.open if path.name.lower().endswith(".gz") else open
        with opener(path, "rb") as f:
            head = f.read(64)
    except (OSError, EOFError):
        return False
    line = head.split(b"\n", 1)[0]
    return b"\n" in head and _HEADER.match(line) is not None


def parse_text(data: bytes, name: str) -> tuple[list[str], np.ndarray, list[str]]:
    """(words, table, notes) from `word v1 … vD` lines, with or without a `V D` header."""
    lines = data.split(b"\n")
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise EmbvizError(f"{name} is empty: no word vectors in it.")
    header = _HEADER.match(lines[0])
    declared = None
    if header:
        declared = (int(header.group(1)), int(header.group(2)))
        lines = lines[1:]
        start_line = 2
    else:
        start_line = 1
    if not lines:
        raise EmbvizError(f"{name} has a header but no vectors.")
    words: list[bytes] = []
    rests: list[bytes] = []
    for line in lines:
        word, _, rest = line.rstrip().partition(b" ")
        words.append(word)
        rests.append(rest)
    dim = declared[1] if declared else len(rests[0].split())
    if dim < 1:
        raise EmbvizError(f"{name}, line {start_line}: a word with no numbers after it.")
    if declared and declared[0] != len(lines):
        raise EmbvizError(f"{name}: the header says {declared[0]:,} words, but the file has {len(lines):,} lines of vectors"
                          + (" (is it truncated?)" if len(lines) < declared[0] else "") + ".")
    ensure_fits_in_ram(len(lines) * dim * 4, "The word vectors")
    flat = _floats_by_pyarrow(rests, dim)
    if flat is None:
        flat = _floats(b" ".join(rests))
    if flat is None or flat.size != len(lines) * dim:
        bad = _first_bad_line(rests, dim)
        raise EmbvizError(f"{name}, line {bad + start_line}: expected {dim} numbers after the word, "
                          f"found {_describe(rests[bad])}.")
    notes: list[str] = []
    texts = [w.decode("utf-8", errors="replace") for w in words]
    if any("\ufffd" in t for t in texts):
        notes.append("Some words are not valid UTF-8; their bad bytes are shown as �.")
    duplicates = len(texts) - len(set(texts))
    if duplicates:
        notes.append(f"{duplicates:,} words appear more than once; a search by name finds the first of each.")
    return texts, flat.reshape(len(lines), dim), notes


def _floats_by_pyarrow(rests: list[bytes], dim: int) -> np.ndarray | None:
    """The numbers of every line through pyarrow's CSV reader (3× numpy's on 2 cores),
    when pyarrow is installed; None when it is not, or when a line is not `dim` numbers
    (then numpy's reader and the line-by-line check give the message)."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
    except ImportError:
        return None
    names = [f"c{i}" for i in range(dim)]
    try:
        table = pcsv.read_csv(
            pa.py_buffer(b"\n".join(r.strip() for r in rests)),
            read_options=pcsv.ReadOptions(column_names=names),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False, escape_char=False),
            convert_options=pcsv.ConvertOptions(column_types={n: pa.float32() for n in names}),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, ValueError):
        return None
    if table.num_rows != len(rests) or table.num_columns != dim or any(c.null_count for c in table.columns):
        return None
    out = np.empty((len(rests), dim), dtype=np.float32)
    for i, column in enumerate(table.columns):
        out[:, i] = column.to_numpy()
    return out.reshape(-1)


def _floats(buffer: bytes) -> np.ndarray | None:
    """Every number in the buffer, parsed by numpy's C reader in one call; None when a
    token is not a number."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy only warns when it stops at a bad token
        try:
            return np.fromstring(buffer, dtype=np.float32, sep=" ")
        except (ValueError, DeprecationWarning):
            return None


def _first_bad_line(rests: list[bytes], dim: int) -> int:
    for i, rest in enumerate(rests):
        tokens = rest.split()
        if len(tokens) != dim:
            return i
        try:
            [float(t) for t in tokens]
        except ValueError:
            return i
    return len(rests) - 1


def _describe(rest: bytes) -> str:
    tokens = rest.split()
    for t in tokens:
        try:
            float(t)
        except ValueError:
            return f"'{t.decode('utf-8', errors='replace')[:20]}', which is not a number"
    return f"{len(tokens)}"


def parse_word2vec_binary(data: bytes, name: str) -> tuple[list[str], np.ndarray, list[str]]:
    """word2vec's binary format: `V D\\n`, then per word its bytes, a space, D float32."""
    first = data.split(b"\n", 1)[0]
    header = _HEADER.match(first)
    if not header:
        raise EmbvizError(f"{name} does not start with a `words dimensions` header.")
    count, dim = int(header.group(1)), int(header.group(2))
    if dim < 1 or count < 1:
        raise EmbvizError(f"{name}: the header says {count} words of {dim} numbers.")
    offset = len(first) + 1
    # Each entry takes at least a one-byte word, a space and 4·D bytes: refuse counts the file cannot hold.
    if count * (2 + 4 * dim) > len(data) - offset:
        raise EmbvizError(f"{name} is truncated or its header lies: {count:,} words of {dim} numbers "
                          f"need more than the {len(data) - offset:,} bytes that follow.")
    ensure_fits_in_ram(count * dim * 4, "The word vectors")
    table = np.empty((count, dim), dtype=np.float32)
    words: list[bytes] = []
    pos = offset
    row_bytes = 4 * dim
    for i in range(count):
        space = data.find(b" ", pos, pos + 4096)
        if space < 0 or space + 1 + row_bytes > len(data):
            raise EmbvizError(f"{name} is truncated or corrupt at word {i + 1:,} of {count:,}.")
        words.append(data[pos:space].lstrip(b"\n"))
        table[i] = np.frombuffer(data, dtype="<f4", count=dim, offset=space + 1)
        pos = space + 1 + row_bytes
    texts = [w.decode("utf-8", errors="replace") for w in words]
    notes = ["Some words are not valid UTF-8; their bad bytes are shown as �."] if any("\ufffd" in t for t in texts) else []
    return texts, table, notes


def _npy_vocabulary(path: Path, rows: int) -> list[str]:
    """The words of a .npy table: X.vocab.txt / X.vocab.json / vocab.txt (one per line),
    or a one-column parquet index beside it (the GloVe example's)."""
    for candidate in (path.with_suffix(".vocab.txt"), path.with_suffix(".vocab.json"), path.parent / "vocab.txt"):
        if candidate.is_file():
            text = candidate.read_text(encoding="utf-8", errors="replace")
            words = json.loads(text) if candidate.suffix == ".json" else text.rstrip("\n").split("\n")
            break
    else:
        parquets = sorted(path.parent.glob("*.parquet"))
        if not parquets:
            raise EmbvizError(f"{path.name} has no vocabulary beside it: add {path.stem}.vocab.txt (one word per line).")
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:
            raise EmbvizError(f"The vocabulary of {path.name} is a parquet file: install pyarrow to read it.") from exc
        words = [str(w) for w in pq.read_table(parquets[0]).column(0).to_pylist()]
    if not isinstance(words, list) or len(words) != rows:
        raise EmbvizError(f"{path.name} has {rows:,} rows but its vocabulary lists {len(words) if isinstance(words, list) else 0:,} words.")
    return [str(w) for w in words]


def _read(path: Path) -> tuple[list[str], np.ndarray, list[str]]:
    suffix = _suffix(path)
    if is_gensim_file(path):
        return read_keyed_vectors(path)
    if suffix == ".npy":
        try:
            array = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise EmbvizError(f"{path.name} is not a readable .npy table: {first_line(exc)}") from exc
        if array.ndim != 2 or min(array.shape) < 1 or not np.issubdtype(array.dtype, np.floating):
            raise EmbvizError(f"{path.name} holds a {array.dtype} array of shape {list(array.shape)}, not a rows × columns table.")
        words = _npy_vocabulary(path, array.shape[0])
        # An owned, writable C-order copy: a Fortran-ordered file becomes rows here, and the
        # map of the file is not kept open.
        return words, np.require(array, np.float32, ["C", "W", "O"]), []
    data = _read_bytes(path)
    if suffix in BINARY_SUFFIXES:
        return parse_word2vec_binary(data, path.name)
    return parse_text(data, path.name)


def open_word_vectors(path: Path, device: torch.device, progress: ProgressFn = no_progress) -> EmbeddingModel:
    path = Path(path)
    folder = cache_root() / "word-vectors" / content_key(path, CACHE_FORMAT)
    try:
        words = json.loads((folder / "words.json").read_text(encoding="utf-8"))
        table = np.load(folder / "table.npy", allow_pickle=False)
        notes = json.loads((folder / "notes.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        progress(0.1, "Reading the word vectors", None)
        words, table, notes = _read(path)
        if _suffix(path) != ".npy":  # a .npy is already as fast to open as the cache
            progress(0.7, "Caching the table for the next open", None)
            def write(scratch: Path) -> None:
                np.save(scratch / "table.npy", table)
                (scratch / "words.json").write_text(json.dumps(words), encoding="utf-8")
                (scratch / "notes.json").write_text(json.dumps(notes), encoding="utf-8")

            keep_in_cache(folder.parent, folder.name, write)
    progress(0.9, "Indexing the words", None)
    vocab = vocabulary_from_words(words)
    return assemble(name=path.name, source=str(path), table=torch.from_numpy(table), vocab=vocab, device=device,
                    kind="table", notes=list(notes), lm_unavailable_reason=NO_LOGITS)
