"""The references the steering tests check embviz against: a plain transformers pass with a
hook written here (no embviz code but the model's own list of blocks), and each zoo family's
check, which tests/test_zoo.py runs on the specimen it builds for its other views."""

from __future__ import annotations

import math

import pytest
import torch

import zoo

from embviz.core.errors import EmbvizError
from embviz.core.lm.steering import direction_layers, steer


# --- the references: no embviz code but the model's own list of blocks ----------------------------

def unit_direction(model, start: str, end: str) -> torch.Tensor:
    """unit(unit(row of end) − unit(row of start)), float64, from the table itself."""
    ids = [model.vocab.id_of(w) for w in (start, end)]
    rows = model.table[torch.tensor(ids)].double().cpu()
    rows = rows / rows.norm(dim=1, keepdim=True)
    d = rows[1] - rows[0]
    return d / d.norm()


def blocks_of(hf) -> list[torch.nn.Module]:
    return zoo.hf_layers(hf)


def reference_stream(hf, ids: list[int]) -> torch.Tensor:
    """(layers + 1, T, D) float64: block 1's input, then every block's output (tests/zoo.py's hooks)."""
    return zoo.reference_stream(hf, blocks_of(hf), ids).double()


@torch.no_grad()
def reference_steered(hf, ids: list[int], layer: int, vector: torch.Tensor) -> torch.Tensor:
    """The last position's logits with `vector` added at every position after `layer`, by a
    hook of this test's own on the model's own block."""
    layers = blocks_of(hf)
    if layer == 0:
        def pre(_m, args, kwargs):
            if args:
                return (args[0] + vector.to(args[0].dtype), *args[1:]), kwargs
            return args, {**kwargs, "hidden_states": kwargs["hidden_states"] + vector.to(kwargs["hidden_states"].dtype)}
        handle = layers[0].register_forward_pre_hook(pre, with_kwargs=True)
    else:
        def post(_m, _args, output):
            if isinstance(output, (tuple, list)):
                return type(output)([output[0] + vector.to(output[0].dtype), *output[1:]])
            return output + vector.to(output.dtype)
        handle = layers[layer - 1].register_forward_hook(post)
    try:
        return hf(input_ids=torch.tensor([ids]), use_cache=False).logits[0, -1].float()
    finally:
        handle.remove()


def reference_scale(stream: torch.Tensor, layer: int) -> float:
    rows = stream[layer, 1:] if stream.shape[1] > 1 else stream[layer]
    return float(rows.norm(dim=-1).mean())


def check_against_reference(model, hf, text: str, start: str, end: str, layer: int, alpha: float) -> None:
    ids = model.vocab.encode_for_model(text)
    direction = unit_direction(model, start, end)
    scale = reference_scale(reference_stream(hf, ids), layer)
    result = steer(model, text, start, end, layer, alpha, k=5, watch=[start, end])
    assert math.isclose(result.scale, scale, rel_tol=1e-6)
    want = reference_steered(hf, ids, layer, direction * (alpha * scale))
    probs = torch.softmax(want.double(), -1)
    assert [s.id for s in result.after] == want.topk(5).indices.tolist()
    got = torch.tensor([s.logit for s in result.after])
    torch.testing.assert_close(got, want[[s.id for s in result.after]], atol=1e-5, rtol=1e-5)
    for w in result.watched:
        assert abs(w.logit_after - float(want[w.id])) <= 1e-5 + 1e-5 * abs(float(want[w.id])), w  # as assert_close
        assert math.isclose(w.prob_after, float(probs[w.id]), rel_tol=1e-4, abs_tol=1e-7)


# --- every family of the zoo ------------------------------------------------------------------------

# Families whose steering embviz refuses: blocks not found (hrm_text, longcat_flash), blocks
# run more than once a pass (dory), an embedding narrower than the blocks (opt).
REFUSED = {"dory", "hrm_text", "longcat_flash", "opt"}
ZOO_TEXT = "paris is the capital of france . the king and the"


def check_family_steering(family: str, model, hf) -> None:
    """Every family whose blocks embviz finds steers exactly (at layers 0, 1 and the last, and
    not at all at α = 0) and reads its direction through the layers exactly; the others
    (REFUSED) refuse in one sentence naming the family. Run on test_zoo's specimen of each
    family, so that the zoo's tiny models are built once for every view."""
    try:
        blocks = len(steerable_blocks(model))
    except EmbvizError as exc:
        assert family in REFUSED, f"{family} refused: {exc}"
        assert family in str(exc) and "\n" not in str(exc) and str(exc).endswith(".")
        for call in (lambda: steer(model, ZOO_TEXT, "man", "day", 1, 0.5),
                     lambda: direction_layers(model, ZOO_TEXT, "man", "day")):
            with pytest.raises(EmbvizError, match=family):
                call()
        return
    assert family not in REFUSED, f"{family} steers now: take it out of REFUSED"
    for layer in (0, 1, blocks):
        check_against_reference(model, hf, ZOO_TEXT, "man", "day", layer, 0.5)
    zero = steer(model, ZOO_TEXT, "man", "day", 1, 0.0)
    assert [(s.id, s.logit) for s in zero.after] == [(s.id, s.logit) for s in zero.before]
    found = direction_layers(model, ZOO_TEXT, "man", "day")
    want = reference_stream(hf, model.vocab.encode_for_model(ZOO_TEXT))[:, -1] @ unit_direction(model, "man", "day")
    torch.testing.assert_close(torch.tensor(found.projections, dtype=torch.float64), want, atol=1e-5, rtol=1e-5)


def steerable_blocks(model) -> list[torch.nn.Module]:
    """embviz's refusal, or its blocks, with the residual width checked against the table's."""
    from embviz.core.lm.steering import check_width, steerable

    lm = model.language_model()
    blocks = steerable(lm)
    check_width(model, lm, int(lm.uncached_residual_stream(model.vocab.encode_for_model("the man")).shape[-1]))
    return blocks
