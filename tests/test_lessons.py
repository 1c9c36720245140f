"""The lessons' exact numbers, from the lesson models that ship in assets/."""

import math

import torch

from embviz.core.lm.logits import direct_logits, next_token_logits, softmax
from embviz.core.table.similarity import similarity
from embviz.core.readers.assemble import assemble
from embviz.core.table.vocab import vocabulary_from_ids


def test_spells_logits_at_cast_are_exact(spells):
    cast = spells.vocab.resolve("cast")
    assert cast == 2
    logits = direct_logits(spells, spells.table[cast])
    assert logits.tolist() == [0.0, 0.5, 0.0, 1.0, 2.0]
    result = next_token_logits(spells, "I cast", k=5)
    assert result.results[0].token == "fireball"
    assert [t for _, t in result.tokens] == ["I", "cast"]


def test_spells_same_id_same_logits_regardless_of_context(spells):
    a = next_token_logits(spells, "I cast", k=5)
    b = next_token_logits(spells, "heal fireball cast", k=5)
    assert [r.logit for r in a.results] == [r.logit for r in b.results]


def test_spells_table_shape_and_head(spells):
    assert (spells.vocab_size, spells.dim) == (5, 2)
    assert not spells.tied
    assert spells.head.shape == (5, 2)


def test_toy4_dot_and_cosine(toy4):
    cat, dog, car, truck = (toy4.vocab.resolve(w) for w in ("cat", "dog", "car", "truck"))
    assert float(toy4.table[cat] @ toy4.table[dog]) == 12.0
    assert float(toy4.table[car] @ toy4.table[truck]) == 9.0
    assert math.isclose(similarity(toy4, cat, dog), 12 / 13, rel_tol=1e-6)
    assert round(similarity(toy4, cat, dog), 3) == 0.923
    assert round(similarity(toy4, cat, car), 3) == 0.263


def test_toy4_as_output_head(toy4):
    assert toy4.tied
    logits = direct_logits(toy4, torch.tensor([1.0, 2.0, 0.0]))
    assert logits.tolist() == [8.0, 7.0, 2.0, 1.0]
    denominator = float(torch.exp(logits).sum())
    assert round(denominator, 1) == 4087.7
    probs = softmax(logits)
    assert math.isclose(float(probs[0]), math.exp(8) / denominator, rel_tol=1e-6)


def test_seed_002_row_lookup_is_zero_based_and_ordered():
    table = torch.arange(18, dtype=torch.float32).reshape(6, 3)
    model = assemble(name="t", source="t", table=table, vocab=vocabulary_from_ids(6), device=torch.device("cpu"), kind="table")
    rows = model.rows([2, 3, 5, 1])
    assert rows.shape == (4, 3)
    assert rows.tolist() == [table[2].tolist(), table[3].tolist(), table[5].tolist(), table[1].tolist()]


def test_temperature_sharpens_and_flattens(toy4):
    logits = direct_logits(toy4, torch.tensor([1.0, 2.0, 0.0]))
    cold, warm = softmax(logits, 0.5), softmax(logits, 2.0)
    assert float(cold[0]) > float(softmax(logits)[0]) > float(warm[0])
