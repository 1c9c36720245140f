"""Steering and a direction through the layers (embviz.core.lm.steering), against transformers'
own forward pass: the steered logits against a plain pass with a hook written here, the
per-layer projections against `output_hidden_states`; on the default model and on every family
of the tiny-model zoo (tests/zoo.py) that embviz reads exactly."""

from __future__ import annotations

import gc
import json
import math

import pytest
import torch

import zoo
from test_zoo import built

from embviz.core.errors import EmbvizError
from embviz.core.lm.steering import direction_layers, steer

DOCTOR = "The doctor said that"


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


# --- the default model ------------------------------------------------------------------------------

def test_steering_smollm2_is_its_own_forward_with_a_hook(default_model):
    hf = default_model.language_model().model
    check_against_reference(default_model, hf, DOCTOR, " he", " she", 10, 2.0)  # layer 0's pre-hook: the zoo


def test_steering_toward_she_raises_she_after_the_doctor(default_model):
    result = steer(default_model, DOCTOR, "he", "she", 10, 2.0, k=5)
    he, she = result.watched
    assert (he.label, she.label) == ("␣he", "␣she")
    assert she.prob_after > 2 * she.prob_before and he.prob_after < he.prob_before / 10
    assert result.after[0].id == she.id


def test_alpha_zero_is_the_unsteered_pass_bit_for_bit(default_model):
    result = steer(default_model, DOCTOR, "he", "she", 12, 0.0, k=10)
    assert [(s.id, s.logit, s.prob) for s in result.after] == [(s.id, s.logit, s.prob) for s in result.before]
    assert all(w.logit_after == w.logit_before for w in result.watched)
    hf = default_model.language_model().model
    ids = default_model.vocab.encode_for_model(DOCTOR)
    with torch.no_grad():
        plain = hf(input_ids=torch.tensor([ids]), use_cache=False).logits[0, -1].float()
    torch.testing.assert_close(torch.tensor([s.logit for s in result.before]), plain[[s.id for s in result.before]],
                               atol=1e-5, rtol=1e-5)


def test_the_projection_per_layer_is_hidden_states_dotted_with_the_direction(default_model):
    result = direction_layers(default_model, DOCTOR, "he", "she", position=-2)
    hf = default_model.language_model().model
    ids = default_model.vocab.encode_for_model(DOCTOR)
    with torch.no_grad():
        hidden = hf(input_ids=torch.tensor([ids]), use_cache=False, output_hidden_states=True).hidden_states
    direction = unit_direction(default_model, " he", " she")
    blocks = len(blocks_of(hf))
    assert len(result.projections) == blocks + 1 and result.position == len(ids) - 2
    # hidden_states[-1] is after the final norm in Llama-like models; the lens's last layer is before it.
    for layer in range(blocks):
        want = float(hidden[layer][0, -2].double() @ direction)
        assert math.isclose(result.projections[layer], want, rel_tol=1e-5, abs_tol=1e-5), layer
    last = float(reference_stream(hf, ids)[-1, -2] @ direction)
    assert math.isclose(result.projections[-1], last, rel_tol=1e-5, abs_tol=1e-5)


@pytest.mark.parametrize("call, message", [
    (lambda m: steer(m, DOCTOR, "he", "she", 31, 1.0), "Layer 31 does not exist"),
    (lambda m: steer(m, DOCTOR, "he", "she", -1, 1.0), "Layer -1 does not exist"),
    (lambda m: steer(m, DOCTOR, "he", "she", 3, float("nan")), "finite"),
    (lambda m: steer(m, DOCTOR, "he", "she", 3, float("inf")), "finite"),
    (lambda m: steer(m, "", "he", "she", 3, 1.0), "Type some text first"),
    (lambda m: steer(m, DOCTOR, "he", "antidisestablishmentarianism", 3, 1.0), "tokens"),
    (lambda m: direction_layers(m, "   ", "he", "she"), "Type some text first"),
    (lambda m: direction_layers(m, DOCTOR, "he", "she", position=9), "Position 9 is outside"),
    (lambda m: direction_layers(m, DOCTOR, "he", "he"), "zero vector"),
    (lambda m: steer(m, DOCTOR, "he", "she", 3, 1.0, watch=["he she"]), "not one token"),
])
def test_bad_input_is_one_sentence(default_model, call, message):
    with pytest.raises(EmbvizError) as caught:
        call(default_model)
    text = str(caught.value)
    assert message in text and "\n" not in text and text.endswith("."), text


def test_the_command_line_steers_and_reads_the_layers(default_model, capsys):
    from embviz.cli import main

    def run(*args: str) -> dict:
        assert main(["--device", "cpu", *args, "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    found = run("steer", DOCTOR, "--from", "he", "--to", "she", "--layer", "10", "--alpha", "2", "--k", "3",
                "--watch", " he", " she")
    assert {"layer", "alpha", "alpha_units", "scale", "before", "after", "watch"} <= found.keys()
    assert found["layer"] == 10 and found["alpha"] == 2.0 and len(found["before"]) == len(found["after"]) == 3
    assert [w["token"] for w in found["watch"]] == [" he", " she"]
    assert found["watch"][1]["prob_after"] > found["watch"][1]["prob_before"]
    layers = run("direction-layers", DOCTOR, "--from", "he", "--to", "she", "--position", "1")
    assert layers["position"] == 1 and len(layers["layers"]) == 31
    assert main(["--device", "cpu", "steer", DOCTOR, "--from", "he", "--to", "she", "--layer", "99", "--alpha", "1"]) == 2
    assert capsys.readouterr().err.startswith("embviz: Layer 99 does not exist")


# --- every family of the zoo ------------------------------------------------------------------------

# Families whose steering embviz refuses: blocks not found (hrm_text, longcat_flash), blocks
# run more than once a pass (dory), an embedding narrower than the blocks (opt).
REFUSED = {"dory", "hrm_text", "longcat_flash", "opt"}
ZOO_TEXT = "paris is the capital of france . the king and the"


@pytest.fixture(scope="module")
def zoo_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("steer-zoo")


@pytest.mark.zoo
@pytest.mark.parametrize("family", zoo.families())
def test_each_family_steers_exactly_or_says_why_not(family, zoo_folder):
    """Every family whose lens is exact steers exactly; any other steers exactly or refuses
    in one sentence naming the family (dory, hrm_text, longcat_flash, opt: REFUSED)."""
    from embviz.core import open_checkpoint

    specimen = built(family, zoo_folder / family)
    try:
        model = open_checkpoint(str(specimen.folder), "cpu")
        hf = specimen.hf
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
    finally:
        del specimen
        gc.collect()


def steerable_blocks(model) -> list[torch.nn.Module]:
    """embviz's refusal, or its blocks, with the residual width checked against the table's."""
    from embviz.core.lm.steering import check_width, steerable

    lm = model.language_model()
    blocks = steerable(lm)
    check_width(model, lm, int(lm.uncached_residual_stream(model.vocab.encode_for_model("the man")).shape[-1]))
    return blocks
