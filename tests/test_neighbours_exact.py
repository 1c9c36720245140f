"""Every row's k nearest rows by the bf16 sieve and the float64 verdict: the same lists as a
float64 brute force, ties to the lower position, on one thread or two, through crowded rows;
the sieve's margin holds for this machine's bf16 products; a cancel stops it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from embviz.core.errors import Cancelled
from embviz.core.table import neighbours
from embviz.core.table.neighbours import BLOCK, REL, nearest_exact, self_neighbours


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def brute_force(x: np.ndarray, k: int) -> np.ndarray:
    """Float64 cosines, rounded far below any real gap so that equal rows tie, then the
    k best by score, ties to the lower position."""
    scores = np.round(x.astype(np.float64) @ x.astype(np.float64).T, 12)
    np.fill_diagonal(scores, -np.inf)
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def test_several_tiles_match_a_float64_brute_force_on_one_thread_or_two():
    x = unit(np.random.default_rng(0).standard_normal((2 * BLOCK + 300, 24)))
    x[700] = x[5]  # equal rows: a tie that only the positions break
    x[1100] = x[5]
    want = brute_force(x, 12)
    for threads in (1, 2):
        got = self_neighbours(torch.from_numpy(x), 12, threads=threads)
        assert (got == want).all()
    assert got[5][:2].tolist() == [700, 1100]
    assert (nearest_exact(torch.from_numpy(x), 1100, 12) == want[1100]).all()


def test_rows_with_too_many_near_equal_scores_are_done_in_full_and_still_exact(monkeypatch):
    rng = np.random.default_rng(1)
    base = rng.standard_normal(16)
    x = unit(np.vstack([base + 1e-4 * rng.standard_normal((500, 16)), rng.standard_normal((300, 16))]))
    crowded = []
    real = neighbours._kernels().crowded_rows

    def spy(x, rows, *rest):
        crowded.extend(rows.tolist())
        return real(x, rows, *rest)

    monkeypatch.setattr(neighbours._kernels(), "crowded_rows", spy)
    got = self_neighbours(torch.from_numpy(x), 5)
    assert len(crowded) > 100  # the clump's rows all score within the margin of each other
    assert (got == brute_force(x, 5)).all()


@pytest.mark.parametrize("width", [8, 50, 576])
def test_the_sieve_margin_holds_for_this_machines_bf16_products(width):
    rng = np.random.default_rng(width)
    rows = rng.standard_normal((700, width)) * rng.uniform(0.01, 10, (1, width))  # uneven components
    rows[:50] += 3 * rows[50]  # and some high cosines, where the product's own rounding is largest
    x = unit(rows)
    low = torch.from_numpy(x).to(torch.bfloat16)
    approx = torch.mm(low, low.T).to(torch.float32).numpy().astype(np.float64)
    exact = x.astype(np.float64) @ x.astype(np.float64).T
    bound = neighbours._bounds(x, low.to(torch.float32).numpy())
    margin = bound[:, None] + REL * np.abs(approx)
    assert (np.abs(exact - approx) <= margin).all()
    assert np.abs(exact - approx).max() > 0.1 * margin.min()  # the products really are bf16's


def test_a_cancel_at_a_progress_report_stops_it_and_restores_the_thread_count():
    x = unit(np.random.default_rng(2).standard_normal((3 * BLOCK, 8)))
    before = torch.get_num_threads()
    reports = []

    def cancel_third(fraction, stage, preview):
        reports.append(fraction)
        if len(reports) == 3:
            raise Cancelled()

    with pytest.raises(Cancelled):
        self_neighbours(torch.from_numpy(x), 5, cancel_third, (0.0, 0.5), "neighbours in A", threads=2)
    assert len(reports) == 3 and reports[0] == 0.0 and reports == sorted(reports) and reports[-1] < 0.5
    assert torch.get_num_threads() == before


def test_k_must_leave_a_row_to_spare():
    with pytest.raises(ValueError):
        self_neighbours(torch.from_numpy(unit(np.ones((5, 3)) + np.eye(5, 3))), 5)


def test_every_all_rows_search_gives_one_graph_ties_to_the_lower_row():
    """The maps' graph (knn.self_top_k), on either path and any chunking, is the sieve's: the
    same positions, tied rows in row order (issue 35: two processes' graphs of one table
    ordered tied neighbours differently)."""
    from embviz.core.errors import no_progress
    from embviz.core.maps import knn

    rng = np.random.default_rng(4)
    x = unit(rng.standard_normal((300, 16)))
    x[40:48] = x[7]  # eight copies of row 7: tied with each other, and for every other row
    x[200:203] = -x[7]
    rows = torch.from_numpy(x)
    sieve = self_neighbours(rows, 12, threads=1)
    for threads in (1, 3):
        positions, cosines = knn.self_top_k(rows, 12, no_progress, (0.0, 1.0), "", threads=threads)
        assert (positions == sieve).all()
    for block in (300 * 7, 300 * 64, 300 * 300):  # the device path's chunks, here on the CPU
        assert (knn._device_nearest(rows, 12, no_progress, (0.0, 1.0), "", block) == sieve).all()
    assert sieve[7, :8].tolist() == [40, 41, 42, 43, 44, 45, 46, 47]  # its copies, lowest first
    assert sieve[40, :8].tolist() == [7, 41, 42, 43, 44, 45, 46, 47]
    np.testing.assert_allclose(cosines, np.take_along_axis(x @ x.T, positions, axis=1), atol=1e-6)
