"""Steering and a direction through the layers (embviz.core.lm.steering), against transformers'
own forward pass: the steered logits against a plain pass with a hook written here, the
per-layer projections against `output_hidden_states`, on the default model. Every family of the
tiny-model zoo is checked in tests/test_zoo.py, on the specimen it builds for its other views
(tests/steering_reference.py)."""

from __future__ import annotations

import json
import math

import pytest
import torch

from steering_reference import blocks_of, check_against_reference, reference_stream, unit_direction

from embviz.core.errors import EmbvizError
from embviz.core.lm.steering import direction_layers, steer

DOCTOR = "The doctor said that"


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
