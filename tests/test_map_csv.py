"""The project command's CSV: written a chunk at a time, the same bytes csv.writer wrote a row at a time."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from embviz.cli import map_csv

TRICKY = ["plain", "a,b", 'say "hi"', '"', "line\nbreak", "cr\rhere", "\r\n", "", " lead", "tab\there", "%d %s",
          "x\x1fy", "\x00", "é,ü", "🙂", ",", '""', "end,"]


def row_by_row(ids, coords, texts) -> str:
    """What the command wrote before: one csv.writer row per point."""
    out = io.StringIO(newline="")
    writer = csv.writer(out)
    writer.writerow(["id", "token", "x", "y"])
    for i, (x, y) in zip(ids.tolist(), coords.tolist()):
        writer.writerow([i, texts[i], f"{x:.6g}", f"{y:.6g}"])
    return out.getvalue()


@pytest.mark.parametrize("chunk", [1, 3, 1 << 16])
def test_the_same_text_as_a_row_at_a_time(monkeypatch, chunk):
    monkeypatch.setattr(map_csv, "CHUNK_ROWS", chunk)
    rng = np.random.default_rng(3)
    texts = TRICKY * 3
    ids = rng.permutation(len(texts))[:40].astype(np.int64)
    coords = (rng.normal(size=(40, 2)) * 10.0 ** rng.integers(-7, 8, size=(40, 1))).astype(np.float32)
    coords[0] = [0.0, -0.0]
    coords[1] = [1e-5, 123456789.0]
    assert "".join(map_csv.map_csv(ids, coords, texts)) == row_by_row(ids, coords, texts)


def test_csv_reads_back_every_token_exactly():
    ids = np.arange(len(TRICKY))
    text = "".join(map_csv.map_csv(ids, np.zeros((len(ids), 2), np.float32), TRICKY))
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert [r[1] for r in rows[1:]] == TRICKY


def test_no_rows_is_the_header():
    assert "".join(map_csv.map_csv(np.zeros(0, np.int64), np.zeros((0, 2), np.float32), [])) == "id,token,x,y\r\n"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list(',"\r\n\x1fab é')), max_size=6), min_size=1, max_size=12))
def test_any_tokens(texts):
    ids = np.arange(len(texts))[::-1].copy()
    coords = np.linspace(-3, 3, 2 * len(texts), dtype=np.float32).reshape(-1, 2)
    assert "".join(map_csv.map_csv(ids, coords, texts)) == row_by_row(ids, coords, texts)
