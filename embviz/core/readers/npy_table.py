"""A .npy table (C or Fortran order) and the vocabulary beside it: X.vocab.txt, X.vocab.json or
vocab.txt (one word per line), or the one parquet file in its folder (the GloVe example's).

Every side file is opened as a regular file and must list exactly as many words as the table
has rows; a parquet index is checked from its metadata (row count, the size of its word
column) before anything of it is read.
"""

from __future__ import annotations

import json
from typing import Any
from pathlib import Path

import numpy as np

from embviz.core.errors import EmbvizError, first_line
from embviz.core.readers.regular_file import open_regular, read_bounded, require_regular, shown
from embviz.core.readers.word_text import MAX_WORD_BYTES, duplicate_notes

# Names that mark a parquet column as the words when there is more than one text column.
WORD_COLUMNS = ("word", "words", "token", "tokens")
# A word of MAX_WORD_BYTES escaped as \uXXXX in JSON takes six times as many bytes, plus quotes and a comma.
_MOST_BYTES_PER_WORD = 6 * MAX_WORD_BYTES + 4


def read_npy_table(path: Path) -> tuple[list[str], np.ndarray, list[str]]:
    """(words, table, notes) of a .npy table and its vocabulary."""
    require_regular(path)
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise EmbvizError(f"{shown(path.name)} is not a readable .npy table: {first_line(exc)}") from exc
    if array.ndim != 2 or min(array.shape) < 1 or not np.issubdtype(array.dtype, np.floating):
        raise EmbvizError(f"{shown(path.name)} holds a {array.dtype} array of shape {list(array.shape)}, not a rows × columns table.")
    words = npy_vocabulary(path, array.shape[0])
    # An owned, writable C-order copy: a Fortran-ordered file becomes rows here, and the
    # map of the file is not kept open.
    return words, np.require(array, np.float32, ["C", "W", "O"]), duplicate_notes(words)


def npy_vocabulary(path: Path, rows: int) -> list[str]:
    """The `rows` words of the .npy table at `path`, from the file beside it."""
    for candidate in (path.with_suffix(".vocab.txt"), path.with_suffix(".vocab.json"), path.parent / "vocab.txt"):
        # exists(), not is_file(): a pipe or a folder by that name is refused, not passed over.
        if candidate.exists():
            return _listed_words(candidate, path, rows)
    parquets = sorted(path.parent.glob("*.parquet"))
    if not parquets:
        raise EmbvizError(f"{shown(path.name)} has no vocabulary beside it: add {shown(path.stem)}.vocab.txt (one word per line).")
    if len(parquets) > 1:
        listed = ", ".join(shown(p.name) for p in parquets[:3]) + (", …" if len(parquets) > 3 else "")
        raise EmbvizError(f"{shown(path.name)} has {len(parquets)} parquet files beside it ({listed}); embviz will not pick one: "
                          f"keep only its vocabulary, or add {shown(path.stem)}.vocab.txt.")
    return _parquet_words(parquets[0], path, rows)


def _listed_words(candidate: Path, path: Path, rows: int) -> list[str]:
    data = read_bounded(candidate, rows * _MOST_BYTES_PER_WORD + 16, "its words",
                        lambda size: f"{shown(candidate.name)} is {size:,} bytes, more than {rows:,} words "
                                     f"(the rows of {shown(path.name)}) can take.")
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if candidate.suffix == ".json":
        try:
            words = json.loads(text)
        except ValueError as exc:
            raise EmbvizError(f"{shown(candidate.name)} is not valid JSON: {first_line(exc)}.") from exc
        if not isinstance(words, list):
            raise EmbvizError(f"{shown(candidate.name)} is not a JSON list of words.")
    else:
        words = text.rstrip("\n").split("\n")
    if len(words) != rows:
        raise EmbvizError(f"{shown(path.name)} has {rows:,} rows but its vocabulary lists {len(words):,} words.")
    return [str(w) for w in words]


def _parquet_words(parquet: Path, path: Path, rows: int) -> list[str]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise EmbvizError(f"The vocabulary of {shown(path.name)} is a parquet file: install pyarrow to read it.") from exc
    with open_regular(parquet) as f:
        try:
            index = pq.ParquetFile(f)
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise EmbvizError(f"{shown(parquet.name)} (beside {shown(path.name)}) is not a readable parquet file: "
                              f"{first_line(exc)}.") from exc
        if index.metadata.num_rows != rows:
            raise EmbvizError(f"{shown(path.name)} has {rows:,} rows but {shown(parquet.name)} lists "
                              f"{index.metadata.num_rows:,} words.")
        column = _word_column(index.schema_arrow, parquet)
        _check_column_size(index.metadata, column, rows, parquet)
        try:
            # One thread: pyarrow's pool beside torch's aborted the process at exit.
            values = index.read(columns=[column], use_threads=False).column(0).to_pylist()
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise EmbvizError(f"{shown(parquet.name)} is a damaged parquet file: {first_line(exc)}.") from exc
    if len(values) != rows or any(v is None for v in values):
        raise EmbvizError(f"{shown(parquet.name)}: its column '{column}' does not hold {rows:,} words (some are missing).")
    return [str(v) for v in values]


def _word_column(schema: Any, parquet: Path) -> str:
    """The one text column, or the one text column named like words; refused when that is not one column."""
    import pyarrow as pa

    if not schema.names:
        raise EmbvizError(f"{shown(parquet.name)} has no columns, so no words.")
    texts = [field.name for field in schema if pa.types.is_string(field.type) or pa.types.is_large_string(field.type)]
    if len(texts) == 1:
        return str(texts[0])
    named = [name for name in texts if name.lower() in WORD_COLUMNS]
    if len(named) == 1:
        return str(named[0])
    if not texts:
        kinds = ", ".join(f"{field.name} ({field.type})" for field in list(schema)[:4])
        raise EmbvizError(f"{shown(parquet.name)} has no column of text to read words from (its columns: {kinds}).")
    raise EmbvizError(f"{shown(parquet.name)} has {len(texts)} text columns ({', '.join(texts[:4])}); embviz will not guess "
                      "which holds the words: name it 'word' or 'token'.")


def _check_column_size(metadata: Any, column: str, rows: int, parquet: Path) -> None:
    """What the word column says it expands to, against what `rows` words can take."""
    claimed = sum(group.column(j).total_uncompressed_size
                  for group in (metadata.row_group(g) for g in range(metadata.num_row_groups))
                  for j in range(group.num_columns) if group.column(j).path_in_schema == column)
    if claimed > rows * _MOST_BYTES_PER_WORD + 2**20:
        raise EmbvizError(f"{shown(parquet.name)} says its {rows:,} words take {claimed:,} bytes, more than "
                          f"{rows:,} words can; the file is corrupt.")
