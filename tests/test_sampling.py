"""Sampling: top-k and top-p exactly as transformers' warpers, the seeded draw, Step, the
errors, and the logits tab's Draw."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

from embviz.core.errors import EmbvizError
from embviz.core.lm.logits import prompt_logits
from embviz.core.lm.sampling import (draw, filter_scores, kept_distribution, grown_text, sample_text, top_k_filter, top_p_filter)

FRANCE = "The capital of France is"


def _hf(logits: torch.Tensor, temperature: float, top_k: int, top_p: float) -> torch.Tensor:
    """The scores `generate` samples from, with its warpers in its order (it adds none that is off)."""
    scores = logits[None].float()
    ids = torch.zeros((1, 1), dtype=torch.long)
    warpers = [TemperatureLogitsWarper(temperature)] if temperature != 1.0 else []
    warpers += [TopKLogitsWarper(top_k)] if top_k else []
    warpers += [TopPLogitsWarper(top_p)] if top_p < 1 else []
    for warper in warpers:
        scores = warper(ids, scores)
    return scores[0]


def _tied(seed: int, n: int = 400) -> torch.Tensor:
    """Random logits rounded to a coarse grid: many ties, also at the k-th value."""
    g = torch.Generator().manual_seed(seed)
    return torch.round(torch.randn(n, generator=g) * 3) / 2


CASES = [(1.0, 5, 1.0), (1.0, 0, 0.9), (0.7, 0, 0.9), (0.7, 40, 0.9), (1.3, 17, 0.5), (0.5, 1, 1.0),
         (2.0, 0, 0.05), (1.0, 400, 0.999), (0.7, 3, 0.99)]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("temperature", "top_k", "top_p"), CASES)
def test_kept_set_and_probabilities_equal_transformers(seed, temperature, top_k, top_p):
    logits = _tied(seed)
    ours = filter_scores(logits, temperature, top_k, top_p)
    theirs = _hf(logits, temperature, top_k, top_p)
    assert torch.equal(torch.isfinite(ours), torch.isfinite(theirs))
    assert torch.equal(ours, theirs)
    kept, probs = kept_distribution(logits, temperature, top_k, top_p)
    assert torch.equal(probs, torch.softmax(theirs, dim=-1))
    assert abs(float(probs.sum()) - 1) < 1e-5 and float(probs[~kept].sum()) == 0.0


def test_ties_at_the_kth_logit_are_kept():
    logits = torch.tensor([3.0, 2.0, 2.0, 2.0, 1.0, 0.0])
    kept = torch.isfinite(top_k_filter(logits, 2))
    assert kept.tolist() == [True, True, True, True, False, False]  # three tie at the 2nd value
    assert torch.equal(kept, torch.isfinite(TopKLogitsWarper(2)(None, logits[None])[0]))


def test_top_p_keeps_at_least_one_and_removes_at_or_below_the_threshold():
    logits = torch.log(torch.tensor([0.5, 0.3, 0.2]))
    assert torch.isfinite(top_p_filter(logits, 0.01)).tolist() == [True, False, False]  # the top one, always
    # Ascending cumulative sums 0.2, 0.5, 1.0: with p = 0.5 the 0.2 and 0.3 are removed only where ≤ 0.5.
    ours = torch.isfinite(top_p_filter(logits, 0.5))
    assert torch.equal(ours, torch.isfinite(TopPLogitsWarper(0.5)(None, logits[None])[0]))
    assert torch.isfinite(top_p_filter(logits, 0.85)).tolist() == [True, True, True]


@pytest.fixture(scope="module")
def france(default_model):
    return prompt_logits(default_model, FRANCE).logits


@pytest.mark.parametrize(("temperature", "top_k", "top_p"), [(0.7, 0, 0.9), (1.0, 50, 1.0), (1.0, 50, 0.95),
                                                             (1.5, 0, 0.8), (0.7, 2, 0.9)])
def test_real_logits_equal_transformers(france, temperature, top_k, top_p):
    theirs = _hf(france, temperature, top_k, top_p)
    kept, probs = kept_distribution(france, temperature, top_k, top_p)
    assert torch.equal(kept, torch.isfinite(theirs))
    assert torch.equal(probs, torch.softmax(theirs, dim=-1))


def test_france_at_t07_top_p09(default_model, france):
    result = sample_text(default_model, FRANCE, k=10, temperature=0.7, top_p=0.9, list_kept=50)
    kept, probs = kept_distribution(france, 0.7, 0, 0.9)
    assert result.kept_count == int(kept.sum()) and result.kept_count >= 1
    assert [t.id for t in result.kept] == torch.argsort(probs, descending=True, stable=True)[:result.kept_count].tolist()[:50]
    assert result.results[0].token == "␣Paris"
    assert result.kept_probs[0] == pytest.approx(float(probs[result.results[0].id]))
    assert result.kept_probs[0] > result.results[0].prob  # renormalised over fewer tokens
    # The kept set holds at least top-p of the probability, and all but its least likely token less.
    assert result.kept_mass >= 0.9 - 1e-6
    assert result.kept_mass - min(t.prob for t in result.kept) < 0.9 + 1e-6
    assert sum(result.kept_probs[i] > 0 for i in range(10)) == min(10, result.kept_count)
    # ␣Paris alone holds 95.5 % at T = 0.7: top-p 0.9 keeps it only, so every draw is ␣Paris.
    assert result.kept_count == 1 and result.kept_mass == pytest.approx(0.955, abs=5e-4)
    assert result.kept_probs[0] == 1.0
    wider = sample_text(default_model, FRANCE, temperature=1.0, top_p=0.9, list_kept=3)
    assert wider.kept_count == 10 and wider.kept_mass == pytest.approx(0.9026, abs=5e-4)
    assert [t.kept_prob for t in wider.kept] == pytest.approx([0.8559, 0.0715, 0.0138], abs=2e-4)


def test_seeded_draw_is_reproducible_and_is_torch_multinomial(france):
    _, probs = kept_distribution(france, 1.0, 0, 0.95)
    ids = [draw(probs, seed) for seed in range(20)]
    assert ids == [draw(probs, seed) for seed in range(20)]
    expected = [int(torch.multinomial(probs, 1, generator=torch.Generator().manual_seed(s))[0]) for s in range(20)]
    assert ids == expected
    assert all(probs[i] > 0 for i in ids)
    assert len(set(ids)) > 1  # top-p 0.95 keeps more than one candidate, and 20 seeds find them


def test_step_grows_the_text_reproducibly(default_model):
    one = sample_text(default_model, FRANCE, temperature=1.0, top_p=0.95, seed=7, steps=3)
    two = sample_text(default_model, FRANCE, temperature=1.0, top_p=0.95, seed=7, steps=3)
    assert [d.id for d in one.drawn] == [d.id for d in two.drawn] and len(one.drawn) == 3
    assert [d.seed for d in one.drawn] == [7, 8, 9]
    assert one.last is not None and len(one.last.tokens) == len(one.tokens) + 2
    # One step at a time, seed + i each, gives the same text as three steps at once.
    prompt: list[str | int] = [FRANCE]
    for i in range(3):
        step = sample_text(default_model, prompt, temperature=1.0, top_p=0.95, seed=7 + i, steps=1)
        assert step.drawn[0].id == one.drawn[i].id
        assert step.drawn[0].kept_prob == pytest.approx(one.drawn[i].kept_prob, abs=1e-4)  # a cached prefix rounds apart
        prompt.append(step.drawn[0].id)
    assert all(0 < d.kept_prob <= 1 and d.prob <= d.kept_prob for d in one.drawn)
    assert grown_text(FRANCE, one.drawn) == grown_text(FRANCE, two.drawn) != FRANCE


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"top_k": -1}, "Top-k must be a whole number ≥ 0"), ({"top_p": 0.0}, "Top-p must be above 0"),
    ({"top_p": 1.5}, "Top-p must be above 0"), ({"top_p": float("nan")}, "Top-p must be above 0"),
    ({"seed": -3, "steps": 1}, "The seed must be"), ({"steps": 10_000}, "Steps must be"),
])
def test_bad_input_is_one_sentence(default_model, kwargs, words):
    with pytest.raises(EmbvizError, match=words) as info:
        sample_text(default_model, FRANCE, **kwargs)
    assert "\n" not in str(info.value) and str(info.value).endswith(".")


def test_empty_text_is_one_sentence(default_model):
    with pytest.raises(EmbvizError, match="Type some text first"):
        sample_text(default_model, "  ", top_p=0.9, steps=1)


def test_draw_in_the_logits_tab(qtbot, smol, default_model):
    panel = smol.logits
    smol.tabs.setCurrentWidget(panel)
    panel.state.temperature = 1.0  # at 0.7, top-p 0.9 keeps ␣Paris alone
    panel.state.top_p = 0.9
    panel.state.seed = 3
    panel.set_text(FRANCE)
    qtbot.waitUntil(lambda: panel.last is not None and panel.last.kept_count is not None, timeout=180_000)
    shown = panel.last
    kept = shown.kept_count
    assert kept == 10  # ␣Paris 77.3 %, ␣the 6.5 %, … up to 90.3 %
    # The bars mark the kept set: each bar's renormalised probability, 0 for a dropped one.
    assert panel.kept_marks() == [p > 0 for p in shown.kept_probs]
    assert panel.kept_marks()[0] and f"{kept:,} tokens are kept" in panel.caption.text()
    # A second bar a row: the renormalised probability, "dropped" beside a filtered one.
    assert len(panel.prob_chart.series) == 2
    after = panel.prob_chart.series[1][2]
    assert after == pytest.approx([100 * p for p in shown.kept_probs])
    assert sum(after) <= 100 + 1e-3 and all((a > 0) == m for a, m in zip(after, panel.kept_marks()))
    panel.draw_button.click()
    qtbot.waitUntil(lambda: panel.last is not None and bool(panel.last.drawn), timeout=180_000)
    drawn = panel.last.drawn[0]
    assert panel.prompt.parts[-1] == (drawn.text, drawn.id)
    assert panel.prompt.text == FRANCE + drawn.text
    assert panel.text.toPlainText() == FRANCE + drawn.text
    assert f"Drew {drawn.token}" in panel.drew.text() and "top-p 0.9" in panel.drew.text()
    assert panel.state.seed == 4  # the next draw uses the next seed
    expected = sample_text(default_model, FRANCE, temperature=1.0, top_p=0.9, seed=3, steps=1)
    assert drawn.id == expected.drawn[0].id


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "embviz", *args], capture_output=True, text=True, timeout=600)


def test_cli_steps_json(default_model):
    proc = _cli("logits", FRANCE, "--top-p", "0.9", "--steps", "2", "--seed", "0", "--k", "5", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    expected = sample_text(default_model, FRANCE, k=5, top_p=0.9, seed=0, steps=2, list_kept=1000)
    assert out["kept_count"] == expected.kept_count == 10 and len(out["kept"]) == 10
    assert [t["id"] for t in out["kept"]] == [t.id for t in expected.kept]
    assert sum(t["kept_prob"] for t in out["kept"]) == pytest.approx(1.0, abs=1e-5)
    assert out["kept"][0]["label"] == "␣Paris" and out["kept"][0]["kept_prob"] == pytest.approx(0.8559, abs=2e-4)
    assert [s["id"] for s in out["steps"]] == [d.id for d in expected.drawn]
    assert [s["seed"] for s in out["steps"]] == [0, 1] and out["drawn"] == out["steps"][0]
    assert out["text"] == FRANCE + "".join(s["token"] for s in out["steps"])


def test_cli_bad_filter_is_one_line():
    words = "Top-p must be above 0"  # the other bad inputs are the core's, tested above
    proc = _cli("--model", "spells", "logits", "I cast", "--top-p", "1.5", "--sample")
    assert proc.returncode != 0 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in proc.stderr
