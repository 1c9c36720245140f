"""A map's coordinates as CSV (id, token, x, y, and z for a 3-D map), written in chunks of rows formatted at once.

The bytes are those of `csv.writer` (its default dialect) with x and y as `f"{v:.6g}"`: a token
holding a comma, a quote or a line break is quoted, its quotes doubled. At two million rows a
`writerow` per row was most of the command's writing time; here one `%` formats a chunk of rows
in C, and the few tokens that need quoting are found by a scan of their text joined.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from embviz.core.table.joined_text import join_texts

AXES = ("x", "y", "z")
CHUNK_ROWS = 1 << 16
_NEEDS_QUOTES = ',"\r\n'  # csv.QUOTE_MINIMAL's characters: the delimiter, the quote, the line ending's
_VALUE = ",%.6g"  # %.6g formats a float exactly as format(v, ".6g")


def quoted_tokens(tokens: list[str]) -> list[str]:
    """The tokens as CSV fields: those with a comma, a quote or a line break quoted."""
    text = join_texts(tokens)
    hits = []
    for char in _NEEDS_QUOTES:  # str.find runs in C: one pass per character, a step of Python per hit
        at = text.joined.find(char)
        while at >= 0:
            hits.append(at)
            at = text.joined.find(char, at + 1)
    if not hits:
        return tokens
    out = list(tokens)
    for row in text.texts_at(hits).tolist():
        out[row] = '"' + out[row].replace('"', '""') + '"'
    return out


def map_csv(ids: np.ndarray, coords: np.ndarray, texts: Sequence[str]) -> Iterator[str]:
    """The CSV text of a map (2 or 3 columns of coordinates), a chunk of rows at a time, header first."""
    dims = coords.shape[1]
    yield ",".join(("id", "token") + AXES[:dims]) + "\r\n"
    line = "%d,%s" + _VALUE * dims + "\r\n"
    width = 2 + dims
    id_list = np.asarray(ids, dtype=np.int64).tolist()
    tokens = quoted_tokens(list(map(texts.__getitem__, id_list)))
    columns = [coords[:, axis].tolist() for axis in range(dims)]
    for start in range(0, len(id_list), CHUNK_ROWS):
        stop = min(start + CHUNK_ROWS, len(id_list))
        fields: list[object] = [None] * (width * (stop - start))
        fields[0::width], fields[1::width] = id_list[start:stop], tokens[start:stop]
        for axis, column in enumerate(columns):
            fields[2 + axis::width] = column[start:stop]
        yield (line * (stop - start)) % tuple(fields)
