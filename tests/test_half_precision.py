"""A bfloat16 checkpoint's full model stays bfloat16 (it is not widened to twice its size),
and every view is still the model's own arithmetic: the logits equal transformers' own
bfloat16 load, the lens's last row is the model's answer, attribution adds up."""

from __future__ import annotations

import pytest
import torch

from embviz.core import open_checkpoint
from embviz.core.lm.attribution import attribute
from embviz.core.lm.lens import logit_lens
from embviz.core.lm.logits import next_token_logits

from conftest import make_tokenizer

TEXT = "paris is the capital of france . the king"


@pytest.fixture(scope="module", params=[torch.bfloat16, torch.float16])
def half(request, tmp_path_factory):
    from transformers import LlamaConfig, LlamaForCausalLM

    folder = tmp_path_factory.mktemp("half")
    tok = make_tokenizer(folder)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=3,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                         tie_word_embeddings=False)
    model = LlamaForCausalLM(config).eval()
    with torch.no_grad():
        model.lm_head.weight.mul_(20)  # logits of tens, where rounding would show
    model.to(request.param).save_pretrained(str(folder))
    return folder, request.param


def test_the_full_model_keeps_its_stored_dtype_and_its_logits(half):
    from transformers import AutoModelForCausalLM

    folder, dtype = half
    model = open_checkpoint(str(folder), "cpu")
    lm = model.language_model()
    assert {p.dtype for p in lm.model.parameters()} == {dtype}
    theirs = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype).eval()
    ids = model.vocab.encode_for_model(TEXT)
    with torch.no_grad():
        want = theirs(input_ids=torch.tensor([ids])).logits[0, -1].float()
    result = next_token_logits(model, TEXT, k=5)
    assert [r.id for r in result.results] == want.topk(5).indices.tolist()
    assert [r.logit for r in result.results] == pytest.approx(want[[r.id for r in result.results]].tolist(), abs=1e-6)


def test_the_lens_and_attribution_stay_exact_in_half_precision(half):
    folder, dtype = half
    model = open_checkpoint(str(folder), "cpu")
    logits = model.language_model().last_logits(model.vocab.encode_for_model(TEXT))
    lens = logit_lens(model, TEXT, k=3)
    top = logits.topk(3)
    assert lens.cells.ids[-1, -1].tolist() == top.indices.tolist()
    assert lens.cells.logits[-1, -1].tolist() == pytest.approx(top.values.tolist(), abs=1e-6)
    result = attribute(model, TEXT)
    assert result.logit == pytest.approx(float(top.values[0]), abs=1e-6)
    # The parts are float32 products of the stored weights; the model's own sum rounds each
    # block's add to its 8 (bfloat16) or 11 (float16) bits.
    assert sum(p.value for p in result.parts) == pytest.approx(result.logit, rel=0.05)
    for block in {h.block for h in result.heads}:
        attention = next(p.value for p in result.parts if p.block == block and p.kind == "attention")
        assert sum(h.value for h in result.heads if h.block == block) == pytest.approx(attention, rel=0.05, abs=0.05)
