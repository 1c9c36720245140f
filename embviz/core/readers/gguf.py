"""GGUF files (llama.cpp), de-quantised once by transformers and cached as a
Hugging Face folder (safetensors) so that later opens take about a second."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import torch

from embviz.core.errors import EmbvizError, ProgressFn, first_line, no_progress
from embviz.core.model import EmbeddingModel
from embviz.core.readers.hf_folder import open_hf_folder

GGUF_MAGIC = b"GGUF"
_CACHE_VERSION = "1"


def cache_root() -> Path:
    override = os.environ.get("EMBVIZ_CACHE_DIR")
    if override:
        return Path(override)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("embviz"))


def cache_key(path: Path) -> str:
    """Size, mtime and a hash of the first MiB (header + metadata): cheap and specific."""
    st = path.stat()
    h = hashlib.sha256()
    h.update(f"{_CACHE_VERSION}|{st.st_size}|{st.st_mtime_ns}|".encode())
    with path.open("rb") as f:
        h.update(f.read(1 << 20))
    return h.hexdigest()[:24]


def _check_magic(path: Path) -> None:
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as exc:
        raise EmbvizError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    if magic != GGUF_MAGIC:
        raise EmbvizError(f"{path.name} is not a GGUF file (it does not start with 'GGUF').")


def _convert(path: Path, out: Path, progress: ProgressFn) -> None:
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        progress(0.05, "Reading the GGUF tokenizer (first open only)", None)
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        progress(0.3, "De-quantising the GGUF weights (first open only)", None)
        model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32)
    except EmbvizError:
        raise
    except Exception as exc:
        raise EmbvizError(f"{path.name} could not be read as a GGUF model: {first_line(exc)}") from exc
    progress(0.8, "Caching the converted weights", None)
    state = model.state_dict()
    tied = bool(getattr(model.config, "tie_word_embeddings", False))
    seen: set[int] = set()
    tensors = {}
    for name, tensor in state.items():
        if tied and name == "lm_head.weight":
            continue
        if tensor.data_ptr() in seen and name.endswith("lm_head.weight"):
            continue
        seen.add(tensor.data_ptr())
        tensors[name] = tensor.contiguous()
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt", "source": path.name})
    config = model.config.to_dict()
    config.pop("quantization_config", None)
    (out / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")
    tokenizer.save_pretrained(str(out))


def open_gguf(path: Path, device: torch.device, progress: ProgressFn = no_progress) -> EmbeddingModel:
    path = Path(path)
    _check_magic(path)
    folder = cache_root() / "gguf" / cache_key(path)
    if not (folder / "config.json").is_file():
        folder.parent.mkdir(parents=True, exist_ok=True)
        # Convert into a scratch folder and rename: a crash mid-write never leaves a half cache.
        scratch = Path(tempfile.mkdtemp(prefix=".convert-", dir=folder.parent))
        try:
            _convert(path, scratch, progress)
            try:
                scratch.rename(folder)
            except OSError:
                if not (folder / "config.json").is_file():
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    model = open_hf_folder(folder, device, name=path.name, progress=progress)
    model.source = str(path)
    return model
