"""Hub ids: what a download would fetch, its progress and cancel, and the offline message."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import psutil
import pytest

from embviz.core.child import run_in_child
from embviz.core.readers.hub import DownloadPlan, files_to_fetch, looks_like_hub_id

REPO_LISTING = {
    "config.json": 700, "generation_config.json": 130, "tokenizer.json": 2_100_000, "tokenizer_config.json": 3_700,
    "vocab.json": 800_000, "merges.txt": 466_000, "model.safetensors": 269_060_552, "pytorch_model.bin": 269_100_000,
    "onnx/model.onnx": 500_000_000, "README.md": 3_000, ".gitattributes": 1_500, "runs/events.txt": 10,
}


def test_a_download_fetches_configs_tokenizer_and_one_weights_format():
    wanted = files_to_fetch(REPO_LISTING)
    assert sorted(wanted) == ["config.json", "generation_config.json", "merges.txt", "model.safetensors",
                              "tokenizer.json", "tokenizer_config.json", "vocab.json"]
    plan = DownloadPlan("org/name", "abc", tuple(sorted(wanted)), sum(wanted.values()))
    assert plan.describe() == "Downloading 7 file(s), 272.4 MB, from the hub"
    only_bin = {k: v for k, v in REPO_LISTING.items() if k != "model.safetensors"}
    assert "pytorch_model.bin" in files_to_fetch(only_bin)


def test_hub_ids_are_told_from_paths():
    assert looks_like_hub_id("HuggingFaceTB/SmolLM2-135M")
    assert not looks_like_hub_id("models/model.gguf")
    assert not looks_like_hub_id("just-a-name")


@pytest.mark.parametrize("offline", [True, False], ids=["HF_HUB_OFFLINE", "no-network"])
def test_an_uncached_hub_id_offline_is_one_clear_line(tmp_path, offline):
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "EMBVIZ_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("HF_HUB_OFFLINE", None)
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    else:  # nothing listens here, so the hub cannot be reached, with or without a network
        env.update(HF_ENDPOINT="http://127.0.0.1:9", HTTPS_PROXY="", HTTP_PROXY="")
    done = subprocess.run([sys.executable, "-m", "embviz", "--model", "someone/not-cached-model", "info"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert "not in the local Hugging Face cache" in lines[0]
    assert ("HF_HUB_OFFLINE" in lines[0]) == offline
    if not offline:
        assert "cannot be reached" in lines[0]


class _StopPressedError(Exception):
    pass


def test_a_download_in_the_child_reports_measured_progress_and_dies_on_cancel():
    seen: list[tuple[float, str]] = []
    ticks = iter(range(100))

    def measure() -> tuple[float, str]:
        n = next(ticks)
        return n / 10, f"{n} MB so far"

    def progress(fraction: float, stage: str, _preview) -> None:
        seen.append((fraction, stage))
        if len(seen) == 3:
            raise _StopPressedError()  # the user pressed Cancel

    began = time.monotonic()
    before = {c.pid for c in psutil.Process().children(recursive=True)}
    with pytest.raises(_StopPressedError):
        run_in_child(time.sleep, (60,), progress, "Downloading", measure=measure)
    assert time.monotonic() - began < 30
    assert seen == [(0.0, "0 MB so far"), (0.1, "1 MB so far"), (0.2, "2 MB so far")]
    left = [c for c in psutil.Process().children(recursive=True) if c.pid not in before]
    assert not any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in left)
