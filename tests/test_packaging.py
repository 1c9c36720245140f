"""A wheel built from the repository works outside the checkout: its assets travel with it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHECK = """
import embviz
from embviz.core.resources import assets_dir
from embviz.core import open_checkpoint
from embviz.core.table.analogy_benchmark import read_questions
from embviz.state.word_sets import preset_word_sets
print(embviz.__file__)
print(assets_dir())
print(open_checkpoint("spells", "cpu").vocab.labels)
print(len(read_questions()), sorted(preset_word_sets())[:2])
"""


def test_the_wheel_carries_its_assets_and_runs_outside_the_checkout(tmp_path):
    # Built from a copy: setuptools leaves build/ beside the sources, which must not be the checkout.
    source = tmp_path / "source"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "__pycache__", ".hypothesis", ".pytest_cache", "docs"))
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(source)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = dist.glob("embviz-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for shipped in ("embviz/assets/wordsets.json", "embviz/assets/lessons/spells.safetensors",
                    "embviz/assets/analogies/questions-words.txt", "embviz/assets/weat/weat_tests.json"):
        assert shipped in names
    assert any(n.endswith("licenses/LICENSE") for n in names) and any(n.endswith("licenses/assets/analogies/NOTICE") for n in names)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, timeout=600)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-c", CHECK], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    module, assets, labels, questions = out.stdout.splitlines()[:4]
    assert module.startswith(str(site)) and assets.startswith(str(site))
    assert labels == "['<eos>', 'I', 'cast', 'heal', 'fireball']"
    assert questions.startswith("19544 ")
