"""Tables as files: what File ▸ Export table and Export map coordinates write (Qt-free)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence


def rows_to_text(headers: Sequence[str], rows: Sequence[Sequence[object]], delimiter: str = ",") -> str:
    """CSV (or, with a tab, what a spreadsheet pastes); tokens keep their exact text."""
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator="\n")
    writer.writerow(headers)
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
    return out.getvalue()


def map_rows(ids: Sequence[int], coords: Sequence[Sequence[float]], texts: Sequence[str],
             sets: dict[str, Sequence[int]]) -> tuple[list[str], list[list[object]]]:
    """(headers, rows) of a map: id, the token's exact text, x, y and the word sets it is in."""
    member: dict[int, list[str]] = {}
    for name, set_ids in sets.items():
        for i in set_ids:
            member.setdefault(int(i), []).append(name)
    rows = [[int(i), texts[int(i)] if int(i) < len(texts) else "", float(x), float(y), ";".join(member.get(int(i), []))]
            for i, (x, y) in zip(ids, coords)]
    return ["id", "token", "x", "y", "word_sets"], rows
