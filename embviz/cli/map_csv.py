"""A map's coordinates as CSV (id, token, x, y), written in chunks of rows formatted at once.

The bytes are those of `csv.writer` (its default dialect) with x and y as `f"{v:.6g}"`: a token
holding a comma, a quote or a line break is quoted, its quotes doubled. At two million rows a
`writerow` per row was most of the command's writing time; here one `%` formats a chunk of rows
in C, and the few tokens that need quoting are found by a scan of their text joined.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

HEADER = "id,token,x,y\r\n"
CHUNK_ROWS = 1 << 16
_NEEDS_QUOTES = ',"\r\n'  # csv.QUOTE_MINIMAL's characters: the delimiter, the quote, the line ending's
_SEPARATOR = "\x1f"  # joins the tokens for the scan: not one of the characters above, so never a false hit
_LINE = "%d,%s,%.6g,%.6g\r\n"  # %.6g formats a float exactly as format(v, ".6g")


def quoted_tokens(tokens: list[str]) -> list[str]:
    """The tokens as CSV fields: those with a comma, a quote or a line break quoted."""
    joined = _SEPARATOR.join(tokens)
    hits = []
    for char in _NEEDS_QUOTES:  # str.find runs in C: one pass per character, a step of Python per hit
        at = joined.find(char)
        while at >= 0:
            hits.append(at)
            at = joined.find(char, at + 1)
    if not hits:
        return tokens
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    starts = np.concatenate(([0], np.cumsum(lengths[:-1] + 1)))  # where each token begins in `joined`
    out = list(tokens)
    for row in np.unique(np.searchsorted(starts, hits, side="right") - 1).tolist():
        out[row] = '"' + out[row].replace('"', '""') + '"'
    return out


def map_csv(ids: np.ndarray, coords: np.ndarray, texts: Sequence[str]) -> Iterator[str]:
    """The CSV text of a map, a chunk of rows at a time, header first."""
    yield HEADER
    id_list = np.asarray(ids, dtype=np.int64).tolist()
    tokens = quoted_tokens(list(map(texts.__getitem__, id_list)))
    xs, ys = coords[:, 0].tolist(), coords[:, 1].tolist()
    for start in range(0, len(id_list), CHUNK_ROWS):
        stop = min(start + CHUNK_ROWS, len(id_list))
        fields: list[object] = [None] * (4 * (stop - start))
        fields[0::4], fields[1::4] = id_list[start:stop], tokens[start:stop]
        fields[2::4], fields[3::4] = xs[start:stop], ys[start:stop]
        yield (_LINE * (stop - start)) % tuple(fields)
