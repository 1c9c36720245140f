"""Hugging Face model folders: config.json, (sharded) safetensors or pytorch_model.bin,
tokenizer files. Only the embedding table (and an untied head) is read at open; the
full model is loaded on the first request for logits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from embviz.core.lm.causal_lm import HFLanguageModel, quiet_loading
from embviz.core.device import GPU_HEADROOM, ensure_fits_in_ram, free_bytes
from embviz.core.errors import EmbvizError, ProgressFn, first_line, no_progress
from embviz.core.model import EmbeddingModel
from embviz.core.readers.assemble import assemble
from embviz.core.readers.names import find_embedding, find_head, find_head_bias
from embviz.core.readers.regular_file import read_json, require_regular, shown
from embviz.core.readers.torch_pickle import load_torch_state_dict
from embviz.core.readers.safetensors_file import load_tensor, read_sharded_headers, total_parameters
from embviz.core.table.vocab import Vocabulary, vocabulary_from_ids, vocabulary_from_tokenizer

# What broken tokenizer files make transformers and sentencepiece raise. The tokenizers library
# (Rust) raises a bare `Exception`, caught by its exact type below.
_TOKENIZER_ERRORS = (OSError, ValueError, KeyError, TypeError, RuntimeError, ImportError, RecursionError)
# What transformers raises for a model folder it cannot build: missing or damaged files, an
# unknown architecture, a missing optional package.
_MODEL_ERRORS = (OSError, ValueError, KeyError, RuntimeError, ImportError, NotImplementedError)
HALF_DTYPES = (torch.bfloat16, torch.float16)  # kept as they are stored: widening doubles the model's size
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.json", "tokenizer.model", "spiece.model")


def is_hf_folder(folder: Path) -> bool:
    return folder.is_dir() and (
        (folder / "config.json").is_file()
        or any(folder.glob("*.safetensors"))
        or (folder / "pytorch_model.bin").is_file()
    )


def read_config(folder: Path) -> dict[str, Any]:
    path = folder / "config.json"
    if not path.exists():
        return {}
    config = read_json(path)
    if not isinstance(config, dict):
        raise EmbvizError(f"{shown(path)} does not hold a configuration object.")
    return config


def context_length_of(config: dict[str, Any]) -> int | None:
    nested = config.get("text_config")
    text_config: dict[str, Any] = nested if isinstance(nested, dict) else {}
    for key in ("max_position_embeddings", "n_positions", "n_ctx", "seq_length"):
        for source in (config, text_config):
            value = source.get(key)
            if isinstance(value, int) and value > 0:
                return value
    return None


def load_vocabulary(folder: Path, size: int) -> tuple[Vocabulary, str | None]:
    """The vocabulary of a table of `size` rows, and why text is off when it is.

    With a tokenizer.json, labels come from the `tokenizers` library alone and the
    transformers tokenizer (an import of about a second) loads on the first encode.
    """
    if not any((folder / f).is_file() for f in TOKENIZER_FILES):
        return vocabulary_from_ids(size), "This checkpoint has no tokenizer files, so tokens are shown by id and text cannot be typed."
    try:
        for name in TOKENIZER_FILES:
            if (folder / name).exists():
                require_regular(folder / name)  # the libraries would block on a FIFO
        if (folder / "tokenizer.json").is_file():
            from tokenizers import Tokenizer

            def full_tokenizer() -> Any:
                from transformers import PreTrainedTokenizerFast

                return PreTrainedTokenizerFast.from_pretrained(str(folder))

            return vocabulary_from_tokenizer(Tokenizer.from_file(str(folder / "tokenizer.json")), size, full_tokenizer), None
        from transformers import AutoTokenizer

        return vocabulary_from_tokenizer(AutoTokenizer.from_pretrained(str(folder)), size), None
    except (EmbvizError, *_TOKENIZER_ERRORS) as exc:
        return vocabulary_from_ids(size), f"The tokenizer could not be loaded ({type(exc).__name__}: {first_line(exc, 160)})."
    except Exception as exc:  # noqa: BLE001 - only the tokenizers library's bare Exception; anything else is a bug
        if type(exc) is not Exception:
            raise
        return vocabulary_from_ids(size), f"The tokenizer could not be loaded ({first_line(exc, 160)})."


def load_hf_language_model(
    folder: Path, device: torch.device, total_params: int | None, gguf_file: str | None = None,
    dtype: torch.dtype = torch.float32,
) -> HFLanguageModel:
    """The full model in `dtype`: a bfloat16 or float16 checkpoint stays in its own dtype, so
    that it fits where transformers' own load fits and computes what the model computes."""
    from transformers import AutoModelForCausalLM

    need = (total_params or 0) * torch.finfo(dtype).bits // 8
    target = device
    if device.type != "cpu" and need:
        free = free_bytes(device)
        if free is not None and need > GPU_HEADROOM * free:
            target = torch.device("cpu")
    if target.type == "cpu" and need:
        ensure_fits_in_ram(need, "The full model (for next-token logits)")
    try:
        extra = {"gguf_file": gguf_file} if gguf_file else {}
        with quiet_loading():
            model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=dtype, **extra)
    except _MODEL_ERRORS as exc:
        raise EmbvizError(f"The full model could not be loaded for logits: {first_line(exc)}") from exc
    model.eval()
    return place_language_model(model, target)


def place_language_model(model: Any, target: torch.device) -> HFLanguageModel:
    """The model on `target`, or on the CPU when the move runs out of the device's memory."""
    try:
        model.to(target)
    except (RuntimeError, torch.OutOfMemoryError):
        target = torch.device("cpu")
        model.to(target)
    return HFLanguageModel(model, target)


def open_hf_folder(
    folder: Path, device: torch.device, name: str | None = None, progress: ProgressFn = no_progress
) -> EmbeddingModel:
    folder = Path(folder)
    config = read_config(folder)
    progress(0.1, "Reading the tensor table", None)
    notes: list[str] = []
    head = head_bias = None
    if any(folder.glob("*.safetensors")):
        infos = read_sharded_headers(folder)
        shapes = {n: i.shape for n, i in infos.items()}
        table_name = find_embedding(shapes)
        ensure_fits_in_ram(infos[table_name].numel * 4, "The embedding table")
        progress(0.3, "Reading the embedding table", None)
        table = load_tensor(infos[table_name])
        head_name = None if config.get("tie_word_embeddings") is True else find_head(shapes, table.shape)
        if head_name:
            progress(0.5, "Reading the output head", None)
            head = load_tensor(infos[head_name])
            bias_name = find_head_bias(shapes, head_name, table.shape[0])
            head_bias = load_tensor(infos[bias_name]) if bias_name else None
        total = total_parameters(infos)
    else:
        bins = sorted(folder.glob("pytorch_model*.bin"))
        if not bins:
            raise EmbvizError(f"{shown(folder)} has no weights: expected model.safetensors, shards, or pytorch_model.bin.")
        state: dict[str, torch.Tensor] = {}
        for path in bins:
            state.update(load_torch_state_dict(path))
        shapes = {n: tuple(t.shape) for n, t in state.items()}
        table_name = find_embedding(shapes)
        table = state[table_name]
        head_name = None if config.get("tie_word_embeddings") is True else find_head(shapes, table.shape)
        if head_name:
            head = state[head_name]
            bias_name = find_head_bias(shapes, head_name, table.shape[0])
            head_bias = state[bias_name] if bias_name else None
        total = sum(t.numel() for t in state.values())
    if head is not None and torch.equal(head, table):
        head = None  # saved twice but tied
    _check_config(config, table.shape, notes)
    progress(0.6, "Loading the tokenizer", None)
    vocab, why_not = load_vocabulary(folder, table.shape[0])
    if why_not:
        notes.append(why_not)
    lm_reason = None
    lm_loader = None
    if not config:
        lm_reason = "This folder has no config.json, so the full model cannot be built; the map and neighbours still work."
    elif not vocab.has_tokenizer:
        lm_reason = "Next-token logits are off: " + (why_not or "no tokenizer.")
    else:
        dtype = table.dtype if table.dtype in HALF_DTYPES else torch.float32
        lm_loader = lambda: load_hf_language_model(folder, device, total, dtype=dtype)  # noqa: E731
    return assemble(
        name=name or folder.name, source=str(folder), table=table, vocab=vocab, device=device,
        kind="transformer" if config else "table", head=head, head_bias=head_bias, total_params=total,
        context_length=context_length_of(config), notes=notes, lm_loader=lm_loader, lm_unavailable_reason=lm_reason,
    )


def _check_config(config: dict[str, Any], shape: torch.Size, notes: list[str]) -> None:
    vocab = config.get("vocab_size")
    width = config.get("hidden_size", config.get("n_embd", config.get("d_model")))
    # OPT's and ALBERT's tables are narrower than the blocks, projected in and out.
    narrower = {config.get(key) for key in ("word_embed_proj_dim", "embedding_size")}
    if isinstance(width, int) and width != shape[1] and shape[1] not in narrower:
        raise EmbvizError(
            f"config.json says the model width is {width}, but the embedding table is {shape[0]:,} × {shape[1]:,}: "
            "the config and the weights do not belong together."
        )
    if isinstance(vocab, int) and vocab != shape[0]:
        notes.append(f"config.json says vocab_size {vocab:,}; the table has {shape[0]:,} rows (using the table).")
