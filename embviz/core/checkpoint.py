"""One entry point for every checkpoint format."""

from __future__ import annotations

from pathlib import Path

import torch

from embviz.core.device import pick_device
from embviz.core.errors import EmbvizError, ProgressFn, no_progress
from embviz.core.model import EmbeddingModel
from embviz.core.default_model import default_model_path
from embviz.core.lessons import example_path, lesson_path
from embviz.core.readers.gguf import open_gguf
from embviz.core.readers.hf_folder import is_hf_folder, open_hf_folder
from embviz.core.readers.hub import looks_like_hub_id, resolve_hub_id
from embviz.core.readers.regular_file import require_regular, shown
from embviz.core.readers.sniff import WORD_VECTOR_KINDS, sniff
from embviz.core.readers.state_dict import open_state_dict
from embviz.core.readers.word_vectors import TEXT_SUFFIXES, open_word_vectors

STATE_DICT_SUFFIXES = (".safetensors", ".pt", ".pth", ".bin")
HF_WEIGHT_NAMES = ("model.safetensors", "pytorch_model.bin")


def open_checkpoint(
    source: str | Path | None = None,
    device: str | torch.device | None = "auto",
    progress: ProgressFn = no_progress,
) -> EmbeddingModel:
    """Open any supported checkpoint; None means the default model.

    `source` may be a Hugging Face folder, a .gguf file, a .safetensors/.pt state
    dict, word vectors, a hub id, a lesson name ("spells", "toy4") or an example name
    ("glove-6b-50d").
    """
    dev = device if isinstance(device, torch.device) else pick_device(device)
    text = "" if source is None else str(source).strip()
    progress(0.0, "Opening", None)
    if not text:
        path = default_model_path()
    elif (lesson := lesson_path(text)) is not None:
        model = open_state_dict(lesson, dev, name=f"lesson:{text.removeprefix('lesson:').lower()}")
        progress(1.0, "Ready", None)
        return model
    elif (example := example_path(text)) is not None:
        path = example
    else:
        path = Path(text).expanduser()
    if not _exists(path):
        if looks_like_hub_id(text):
            model = open_hf_folder(resolve_hub_id(text, progress), dev, name=text, progress=progress)
            progress(1.0, "Ready", None)
            return model
        raise EmbvizError(f"No such file or folder: {shown(text)}")
    model = _open_path(path, dev, progress)
    progress(1.0, "Ready", None)
    return model


def _exists(path: Path) -> bool:
    """Whether `path` names something; a name the system cannot even look up is refused."""
    try:
        path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:  # a name too long, a loop of links: no file could be there
        raise EmbvizError(f"{shown(path.name)[:80]} cannot be opened: {exc.strerror or exc}.") from None
    return True


def _open_path(path: Path, device: torch.device, progress: ProgressFn) -> EmbeddingModel:
    if path.is_dir():
        if not is_hf_folder(path):
            raise EmbvizError(f"{shown(path)} is not a model folder: it has no config.json or weights files.")
        return open_hf_folder(path, device, progress=progress)
    if require_regular(path).stat().st_size == 0:
        raise EmbvizError(f"{shown(path.name)} is empty (0 bytes).")
    suffix = path.suffix.lower()
    if suffix == ".gguf":
        return open_gguf(path, device, progress)
    name = path.name.lower()
    kind = sniff(path)  # the content first: gensim writes no suffix, and .bin is three formats
    if kind in WORD_VECTOR_KINDS or (kind is None and (suffix == ".npy" or name.endswith(TEXT_SUFFIXES))):
        return open_word_vectors(path, device, progress)
    if kind == "gguf":
        return open_gguf(path, device, progress)
    if suffix in STATE_DICT_SUFFIXES or kind == "torch":
        # A weights file inside a Hugging Face folder opens as the whole folder.
        if path.name in HF_WEIGHT_NAMES and (path.parent / "config.json").is_file():
            return open_hf_folder(path.parent, device, progress=progress)
        return open_state_dict(path, device)
    raise EmbvizError(
        f"{shown(path.name)}: unsupported file type '{suffix or '(none)'}'. embviz opens model folders, "
        ".gguf, .safetensors, .pt/.bin files, word vectors (.txt, .vec, word2vec or fastText .bin, .npy, gensim's files), "
        "hub ids and the lesson models."
    )
