"""Lesson 004's two measures side by side, and the stricter exclusion rule."""

from __future__ import annotations

import pytest

from embviz.bridge import requests as rq
from embviz.core.table.analogy import analogy, variants_of
from embviz.core.table.similarity import nearest_neighbours, scores_of
from embviz.bridge.handlers import run_request
from embviz.core.errors import no_progress

from test_core import table_model


def test_toy4_shows_the_lessons_dot_product_and_cosine_side_by_side(toy4):
    view = run_request(toy4, rq.Neighbours(query="cat", k=3, hide_special=False), no_progress)
    assert [h.token for h in view.hits] == ["dog", "car", "truck"]
    assert view.dots[0] == pytest.approx(12.0) and view.cosines[0] == pytest.approx(12 / 13, abs=1e-6)  # 0.923
    assert view.cosines[1] == pytest.approx(3 / (13 ** 0.5 * 10 ** 0.5), abs=1e-6)  # cat·car: 0.263
    assert view.query_length == pytest.approx(13 ** 0.5) and view.lengths[0] == pytest.approx(13 ** 0.5)


def test_ranking_by_dot_product_lets_a_long_row_win():
    # "long" points 60° away from "q" but is ten times as long; "near" points almost the same way.
    model = table_model([[1.0, 0.0], [0.99, 0.14], [5.0, 8.66], [0.0, -1.0]], ["q", "near", "long", "away"])
    assert [h.token for h in nearest_neighbours(model, 0, 2)] == ["near", "long"]
    assert [h.token for h in nearest_neighbours(model, 0, 2, by="dot")] == ["long", "near"]
    cosines, dots, lengths = scores_of(model, 0, [2])
    assert dots[0] == pytest.approx(5.0) and cosines[0] == pytest.approx(0.5, abs=1e-3) and lengths[0] == pytest.approx(10, abs=1e-2)


@pytest.mark.default_model
def test_excluding_variants_stops_paris_minus_france_plus_italy_answering_paris(default_model):
    model = default_model
    paris = model.vocab.id_of(" Paris")
    assert {model.vocab.texts[i] for i in variants_of(model, paris)} == {" Paris", "Paris"}  # SmolLM2 has no " paris"
    ids = [model.vocab.id_of(w) for w in (" Paris", " France", " Italy")]
    plain = analogy(model, *ids, k=3)
    strict = analogy(model, *ids, k=3, exclude_variants=True)
    assert plain.results[0].text.strip().casefold() in {"paris", "italy", "france"}  # the complaint
    banned = {"paris", "italy", "france"}
    assert all(h.text.strip().casefold() not in banned for h in strict.results)
    assert strict.exclude_variants and not plain.exclude_variants
    assert strict.results[0].text == " Milan"  # a city in Italy (Rome is not in the top 3 of this small model)
