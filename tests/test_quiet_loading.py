"""Opening models prints no progress bars of transformers' (embviz.core.lm.causal_lm.quiet_loading)."""

from __future__ import annotations

import pytest


@pytest.fixture
def progress_bars_on():
    """transformers' bars on, as where it was imported before embviz.core set its environment."""
    from transformers.utils import logging as hf_logging

    hf_logging.enable_progress_bar()  # huggingface_hub's own bars stay off, and warns so
    yield
    hf_logging.disable_progress_bar()


@pytest.mark.filterwarnings("ignore:Cannot enable progress bars")
def test_building_the_full_model_prints_no_progress_bar(tmp_path, capfd, progress_bars_on):
    from conftest import make_tiny_model
    from embviz.core import open_checkpoint

    make_tiny_model(tmp_path / "tiny")
    model = open_checkpoint(str(tmp_path / "tiny"), "cpu")
    capfd.readouterr()
    model.load_language_model()
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "%|" not in err, err


@pytest.mark.filterwarnings("ignore:Cannot enable progress bars")
def test_quiet_loading_silences_the_gguf_bar_too_and_then_restores_the_bars(capfd, progress_bars_on):
    from transformers import modeling_gguf_pytorch_utils as gguf
    from transformers.utils import logging as hf_logging

    from embviz.core.lm.causal_lm import quiet_loading

    with quiet_loading():
        list(gguf.tqdm(range(3), desc="Converting and de-quantizing GGUF tensors..."))
        list(hf_logging.tqdm(range(3), desc="Loading weights"))
    assert capfd.readouterr().err == ""
    assert hf_logging.is_progress_bar_enabled()
    list(gguf.tqdm(range(3), desc="after"))  # the module's own tqdm again
    assert "after" in capfd.readouterr().err
