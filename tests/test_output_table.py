"""The untied head's rows as a table: neighbours and the map read them, a tied model refuses."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from embviz.bridge import requests as rq
from embviz.bridge.handlers import run_request
from embviz.core import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.output_table import TIED, output_table
from embviz.core.table.vocab import Vocabulary


def _model(tied: bool) -> EmbeddingModel:
    g = torch.Generator().manual_seed(0)
    table, head = torch.randn(40, 8, generator=g), torch.randn(40, 8, generator=g)
    words = [f"w{i}" for i in range(40)]
    vocab = Vocabulary(words, list(words))
    return EmbeddingModel("toy", "toy", table, vocab, torch.device("cpu"), "float32", "table",
                          head=None if tied else head)


def test_neighbours_of_the_output_table_are_the_heads_cosines() -> None:
    model = _model(tied=False)
    view = run_request(model, rq.Neighbours(query=3, k=5, table="output"))
    head = torch.nn.functional.normalize(model.head, dim=1)
    cos = (head @ head[3]).numpy()
    cos[3] = -np.inf
    expected = np.argsort(-cos)[:5]
    assert [h.id for h in view.hits] == expected.tolist()
    np.testing.assert_allclose([h.score for h in view.hits], cos[expected], atol=1e-5)
    assert output_table(model).cache is not model.cache


def test_a_tied_model_has_one_table() -> None:
    with pytest.raises(EmbvizError, match="tied"):
        run_request(_model(tied=True), rq.Neighbours(query=3, k=5, table="output"))
    assert TIED.count(".") == 1
