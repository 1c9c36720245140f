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


def attribution_rows(a, b=None) -> tuple[list[str], list[list[object]]]:
    """(headers, rows) of an attribution: each part (block, kind), then each head (block,
    head) with its value; with prompt B beside it, A's, B's and B − A. Blank block: a bias
    no block wrote; kind "attention bias": the attention's output bias, which no head wrote."""
    def keyed(result) -> dict[tuple[object, str, object], float]:
        parts = {(p.block, p.kind, None): p.value for p in result.parts}
        heads = {(h.block, "head" if h.head is not None else "attention bias", h.head): h.value for h in result.heads}
        return parts | heads

    values_a = keyed(a)
    if b is None:
        return ["block", "kind", "head", "value"], [[*key, value] for key, value in values_a.items()]
    values_b = keyed(b)  # the same model: the same parts
    return (["block", "kind", "head", "A", "B", "B − A"],
            [[*key, value, values_b[key], values_b[key] - value] for key, value in values_a.items()])
