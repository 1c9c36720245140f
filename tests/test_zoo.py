"""Every decoder-only family of the installed transformers, as a tiny random model built here,
checked view by view against transformers' own forward pass (tests/zoo.py): each view is
exact, or refuses in one sentence that names the family; none is wrong and none crashes.
docs/families.md is this run's table (`python tests/zoo.py --markdown docs/families.md`)."""

from __future__ import annotations

import gc

import pytest

import zoo
from conftest import make_tokenizer
from steering_reference import check_family_steering

# Every view exact (docs/families.md): a family that stops being exact fails here.
EXACT = {
    "afmoe", "apertus", "apertus1p5_text", "arcee", "axk2", "biogpt", "bitnet", "bloom", "codegen", "cohere",
    "cohere2", "cohere2_moe", "ctrl", "cwm", "deepseek_v2", "deepseek_v3", "deepseek_v32", "diffllama", "doge",
    "ernie4_5", "ernie4_5_moe", "exaone", "exaone4", "exaone_moe", "falcon", "flex_olmo", "flint", "gemma",
    "gemma2", "gemma3_text", "gemma4_unified_text", "glm", "glm4", "glm4_moe", "glm4_moe_lite", "glm_moe_dsa",
    "gpt-sw3", "gpt2", "gpt_bigcode", "gpt_neo", "gpt_neox", "gpt_oss", "gptj", "granite", "granite_swa",
    "granitemoe", "granitemoe_swa", "granitemoeshared", "helium", "hunyuan_v1_dense", "hunyuan_v1_moe", "hy_v3",
    "hyperclovax", "internlm3", "iquestcoder", "jais2", "kolibri1", "laguna", "lara_mini", "lfm2", "llama",
    "llama4_text", "mellum", "mimo_v2_flash", "minicpm3", "minimax_m2", "ministral", "ministral3", "mistral",
    "mixtral", "mpt", "nanochat", "nemotron", "olmo", "olmo2", "olmo3", "olmo_hybrid", "olmoe", "persimmon", "phi",
    "phi3", "phimoe", "qwen2", "qwen2_moe", "qwen3", "qwen3_5_moe_text", "qwen3_5_text", "qwen3_moe", "qwen3_next",
    "sarvam_moe", "seed_oss", "smollm3", "solar_open", "stablelm", "starcoder2", "vaultgemma", "xglm",
}


def built(family: str, folder):
    """The family's tiny model, or the test skipped where transformers cannot build it small
    (a family that is exact must still build)."""
    try:
        return zoo.build(family, folder, make_tokenizer)
    except Exception as exc:  # noqa: BLE001 - transformers' own failure to build it small
        assert family not in EXACT, f"{family} no longer builds: {exc}"
        pytest.skip(f"transformers cannot build {family} small offline: {str(exc).splitlines()[0][:120]}")


@pytest.fixture(scope="module")
def zoo_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("zoo")


def test_the_zoo_holds_every_family_the_issue_names_and_fifty_exact():
    families = set(zoo.families())
    assert EXACT <= families
    assert len(EXACT) >= 50
    named = {"gemma2", "gemma3_text", "qwen3", "qwen3_moe", "llama", "llama4_text", "gpt_oss", "deepseek_v3", "smollm3",
             "olmo2", "olmo3", "phi3", "mistral", "mixtral", "granite", "cohere", "cohere2", "starcoder2", "gpt2",
             "gpt_neox", "bloom", "gptj", "gpt_neo", "minicpm3", "exaone4", "glm4", "openai-gpt", "opt", "falcon",
             "mpt", "dbrx", "xglm", "biogpt", "mamba", "falcon_mamba", "rwkv", "recurrent_gemma", "jetmoe",
             "qwen3_5_text", "nemotron", "olmo"}
    assert named <= families


@pytest.mark.zoo
@pytest.mark.parametrize("family", zoo.families())
def test_each_view_is_exact_or_one_sentence(family, zoo_folder):
    from embviz.core import open_checkpoint

    specimen = built(family, zoo_folder / family)
    try:
        row = zoo.check(specimen, lambda folder: open_checkpoint(str(folder), "cpu"))
        check_family_steering(family, open_checkpoint(str(specimen.folder), "cpu"), specimen.hf)
    finally:
        del specimen
        gc.collect()
    bad = {view: result for view, result in row.views.items() if result.startswith(("WRONG", "CRASH"))}
    assert not bad
    for view, result in row.views.items():
        if result != "exact":
            assert "\n" not in result and result.endswith("."), (view, result)
    if family in EXACT:
        assert row.status() == "exact", row.views


@pytest.mark.zoo
@pytest.mark.parametrize("family", ["gemma2", "rwkv", "opt"])
def test_the_command_line_answers_in_json_or_one_line_on_each_family(family, zoo_folder):
    """The CLI's language-model commands on a family whose logits are capped (Gemma 2, every view
    exact) and two that refuse a view (RWKV: attribution; OPT: drift)."""
    import json
    import subprocess
    import sys

    folder = zoo_folder / f"cli-{family}"
    zoo.build(family, folder, make_tokenizer)
    text = "paris is the capital of"
    commands = [["logits", text], ["lens", text], ["attribute", text], ["attention", text, "--block", "1"],
                ["pin", text, " the"], ["drift", "king", "the king and the queen", "a king of france"]]
    refused = set()
    for command in commands:
        proc = subprocess.run([sys.executable, "-m", "embviz", "--model", str(folder), "--device", "cpu", *command,
                               "--json"], capture_output=True, text=True, timeout=600)
        if proc.returncode == 0:
            json.loads(proc.stdout)
        else:
            lines = [line for line in proc.stderr.splitlines() if line.startswith("embviz: ")]
            assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
            assert family in lines[0], lines[0]
            refused.add(command[0])
    want = {"gemma2": set(), "rwkv": {"attribute", "attention"}, "opt": {"drift"}}[family]
    assert refused == want
