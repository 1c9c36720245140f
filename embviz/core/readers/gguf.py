"""GGUF files (llama.cpp), read without converting the model.

Only the embedding table (and an untied output head) is de-quantised, by the `gguf`
package's de-quantisers; the labels come from the file's own tokenizer metadata. That table is
cached as safetensors, keyed on the file's content, and mapped (not read) by a later open; an
entry that does not hold a table is read again from the file, with a note.
The full model (transformers, which de-quantises every tensor) is built only for
next-token logits, after a check that its float32 size fits in memory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import torch

from embviz.core.seal import DamagedEntry
from embviz.core.cache import Source, cache_root, discard_damaged, entry_folder, keep_in_cache
from embviz.core.device import ensure_fits_in_ram
from embviz.core.errors import EmbvizError, ProgressFn, first_line, no_progress
from embviz.core.model import EmbeddingModel
from embviz.core.readers.assemble import assemble
from embviz.core.readers.cached_table import GGUF_FOLDER, GGUF_FORMAT as CACHE_FORMAT, check_meta
from embviz.core.readers.gguf_file import TensorInfo, read_header, vocabulary_from_gguf
from embviz.core.readers.gguf_model import FAST_ARCHITECTURES, build_gguf_model, dequantized, placed_language_model, writable
from embviz.core.readers.regular_file import open_regular, shown
from embviz.core.seal import Sealed

GGUF_MAGIC = b"GGUF"
TABLE_NAME = "token_embd.weight"
HEAD_NAME = "output.weight"


@dataclass
class GGUFTable:
    """What the map needs from a GGUF file, as read once and cached."""

    table: torch.Tensor  # (V, D) float32
    head: torch.Tensor | None
    meta: dict[str, Any]  # architecture, context length, parameter count, tokens, …


def _check_magic(path: Path) -> None:
    try:
        with open_regular(path) as f:
            magic = f.read(4)
    except OSError as exc:
        raise EmbvizError(f"Cannot read {shown(path)}: {exc.strerror or exc}.") from exc
    if magic != GGUF_MAGIC:
        raise EmbvizError(f"{shown(path.name)} is not a GGUF file (it does not start with 'GGUF').")


def _field(fields: dict[str, Any], key: str, kind: type, name: str) -> Any:
    """A metadata value of the kind a GGUF writer gives it, None when absent; refused otherwise."""
    value = fields.get(key)
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool) != (kind is bool)):
        raise EmbvizError(f"{name} is corrupt: its {key} is not {_KIND_WORDS[kind]}.")
    return value


def _list_field(fields: dict[str, Any], key: str, kind: type, name: str) -> list[Any]:
    """A metadata list whose items are all of `kind` (never bools for numbers); [] when absent."""
    items = _field(fields, key, list, name) or []
    if not all(isinstance(item, kind) and not isinstance(item, bool) for item in items):
        raise EmbvizError(f"{name} is corrupt: its {key} is not a list of {_KIND_WORDS[kind]}s.")
    return items


_KIND_WORDS = {str: "text", int: "number", list: "a list", bool: "true or false"}


def _dequantize(path: Path, info: TensorInfo) -> torch.Tensor:
    return torch.from_numpy(writable(dequantized(path, info)))


def read_gguf_table(path: Path, progress: ProgressFn = no_progress) -> GGUFTable:
    """The embedding table, an untied head and the metadata, from the file itself."""
    from gguf.constants import GGMLQuantizationType

    progress(0.1, "Reading the GGUF header and tokenizer", None)
    header = read_header(path)
    fields, tensors = header.fields, header.tensors
    if TABLE_NAME not in tensors:
        found = ", ".join(shown(t)[:80] for t in list(tensors)[:8]) or "none"
        raise EmbvizError(f"{shown(path.name)} has no embedding table ({TABLE_NAME}); its tensors include: {found}.")
    embd = tensors[TABLE_NAME]
    if len(embd.shape) != 2 or min(embd.shape) < 1:
        raise EmbvizError(f"{shown(path.name)}: {TABLE_NAME} has shape {list(embd.shape)}, not columns × rows.")
    head_info = tensors.get(HEAD_NAME)
    if head_info is not None and head_info.shape != embd.shape:
        raise EmbvizError(f"{shown(path.name)}: the output head is {list(head_info.shape)} but the table is {list(embd.shape)}.")
    ensure_fits_in_ram(embd.n_elements * 4 * (2 if head_info is not None else 1), "The embedding table")
    progress(0.4, "De-quantising the embedding table", None)
    table = _dequantize(path, embd)
    head = None
    if head_info is not None:
        progress(0.6, "De-quantising the output head", None)
        head = _dequantize(path, head_info)
    name = shown(path.name)
    architecture = _field(fields, "general.architecture", str, name) or ""
    context = _field(fields, f"{architecture}.context_length", int, name)
    meta = {
        "name": _field(fields, "general.name", str, name),
        "architecture": architecture,
        "context_length": context if context and context > 0 else None,
        "total_params": int(sum(t.n_elements for t in tensors.values())),
        "storage_dtype": GGMLQuantizationType(embd.type_id).name,
        "tokenizer_model": _field(fields, "tokenizer.ggml.model", str, name),
        "tokens": _list_field(fields, "tokenizer.ggml.tokens", str, name),
        "token_types": _list_field(fields, "tokenizer.ggml.token_type", int, name),
    }
    return GGUFTable(table, head, meta)


def _load_cached(folder: Path, source: Source) -> GGUFTable | None:
    """The entry's table (mapped by safetensors, copy-on-write) and metadata, checked against the
    entry's seal; None when there is no entry, DamagedEntry when it does not hold what it should."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    if not folder.is_dir() and not folder.is_symlink():
        return None
    try:
        sealed = Sealed(folder, source.sha256)
        meta = sealed.json("meta.json")
        if not isinstance(meta, dict):
            raise DamagedEntry("its metadata is not a record")
        why = check_meta(meta)
        if why is not None:
            raise DamagedEntry(why)
        tensors = load_file(str(sealed.check("table.safetensors")))
    except (OSError, ValueError, SafetensorError) as exc:  # DamagedEntry is a ValueError
        raise DamagedEntry(first_line(exc)) from exc
    table, head = tensors.get("table"), tensors.get("head")
    if (table is None or table.ndim != 2 or table.dtype != torch.float32
            or (head is not None and head.shape != table.shape)):
        raise DamagedEntry("it does not hold a float32 table")
    if source.hashed_now:
        sealed.add_stamp(source.stamp)
    return GGUFTable(table, head, meta)


def _write_table(parts: GGUFTable) -> Callable[[Path], None]:
    def write(scratch: Path) -> None:
        from safetensors.torch import save_file

        tensors = {"table": parts.table} if parts.head is None else {"table": parts.table, "head": parts.head}
        save_file(tensors, str(scratch / "table.safetensors"))
        (scratch / "meta.json").write_text(json.dumps(parts.meta), encoding="utf-8")

    return write


def _write_model(model: Any) -> Callable[[Path], None]:
    """The de-quantised model as a plain Hugging Face folder (transformers refuses to
    save_pretrained a model it loaded from GGUF)."""

    def write(scratch: Path) -> None:
        from safetensors.torch import save_file

        tied = bool(getattr(model.config, "tie_word_embeddings", False))
        tensors, seen = {}, set()
        for name, tensor in model.state_dict().items():
            if (tied and name == "lm_head.weight") or tensor.data_ptr() in seen:
                continue  # tied weights are saved once
            seen.add(tensor.data_ptr())
            tensors[name] = tensor.detach().cpu().contiguous()
        save_file(tensors, str(scratch / "model.safetensors"), metadata={"format": "pt"})
        config = model.config.to_dict()
        config.pop("quantization_config", None)
        (scratch / "config.json").write_text(json.dumps(config, indent=1), encoding="utf-8")

    return write


def _tokenizer_loader(path: Path) -> Callable[[], Any]:
    """The transformers tokenizer, converted from the file's own metadata (0.4 s for SmolLM2)."""

    def load() -> Any:
        from transformers import TokenizersBackend

        # The backend class itself: AutoTokenizer first rebuilds the model's config with
        # gguf.GGUFReader (7 s here) only to choose a class, which for GGUF is this one's
        # conversion all the same (tests/test_gguf_families.py compares their encodings).
        return TokenizersBackend.from_pretrained(str(path.parent), gguf_file=path.name)

    return load


# llama.cpp's names that transformers' GGUF loader renames before it looks them up
# (transformers.modeling_gguf_pytorch_utils.load_gguf_checkpoint).
TRANSFORMERS_NAMES = {"qwen2moe": "qwen2_moe", "qwen3moe": "qwen3_moe", "gpt-oss": "gpt_oss", "minimax-m2": "minimax_m2"}


def transformers_runs(architecture: str) -> bool:
    """Whether transformers' GGUF loader takes llama.cpp's `architecture`."""
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    return (architecture in GGUF_SUPPORTED_ARCHITECTURES
            or TRANSFORMERS_NAMES.get(architecture) in GGUF_SUPPORTED_ARCHITECTURES)


def _language_model(path: Path, meta: dict[str, Any], device: torch.device,
                    folder: Path) -> tuple[Callable[[], Any] | None, str | None]:
    """(loader, None) when transformers can run this GGUF here, else (None, why not)."""
    architecture = meta.get("architecture") or "unknown"
    if not transformers_runs(architecture):
        return None, (f"Next-token logits are off: transformers cannot run the GGUF architecture '{architecture}'. "
                      "The map, neighbours and analogies work.")
    total = meta.get("total_params")
    try:
        ensure_fits_in_ram(int(total or 0) * 4, "The full model, as float32,")
    except EmbvizError as exc:
        return None, f"Next-token logits are off: {exc} The map, neighbours and analogies work."
    if architecture in FAST_ARCHITECTURES:
        return lambda: placed_language_model(build_gguf_model(path, read_header(path)), device, total), None

    def load() -> Any:
        from embviz.core.readers.hf_folder import load_hf_language_model

        saved = folder / "model"
        try:
            sealed = Sealed(saved, None)
            if "config.json" in sealed:
                return load_hf_language_model(sealed.check_all(), device, total)
        except DamagedEntry as exc:
            discard_damaged(saved, shown(path.name), exc)
        lm = load_hf_language_model(path.parent, device, total, gguf_file=path.name)
        # transformers' own GGUF load takes tens of seconds (it parses the file twice and maps
        # every tensor name once per module); kept as safetensors, the next session loads it in seconds.
        keep_in_cache(folder, "model", _write_model(lm.model))
        return lm

    return load, None


def open_gguf(path: Path, device: torch.device, progress: ProgressFn = no_progress) -> EmbeddingModel:
    path = Path(path)
    _check_magic(path)
    progress(0.02, "Checking the file", None)
    folder, source = entry_folder(path, cache_root() / GGUF_FOLDER, CACHE_FORMAT)
    try:
        parts, damage = _load_cached(folder, source), None
    except DamagedEntry as exc:
        parts, damage = None, discard_damaged(folder, shown(path.name), exc)
    cache_note = None
    if parts is None:
        parts = read_gguf_table(path, progress)
        progress(0.8, "Caching the table for the next open", None)
        cache_note = keep_in_cache(folder.parent, folder.name, _write_table(parts), source)
    progress(0.9, "Reading the token labels", None)
    meta = parts.meta
    rows, listed = parts.table.shape[0], len(meta.get("tokens") or [])
    # A tokenizer with more tokens than the table has rows would give ids the table lacks (and
    # building it from a hostile list of millions takes a minute and gigabytes): text is not typed.
    typed = 0 < listed <= rows
    vocab = vocabulary_from_gguf(meta, rows, _tokenizer_loader(path) if typed else None)
    notes = [note for note in (cache_note, damage) if note]
    if listed and listed != rows:
        notes.append(f"The tokenizer lists {listed:,} tokens; the table has {rows:,} rows."
                     + ("" if typed else " Its tokenizer is not used, so text cannot be typed."))
    lm_loader: Callable[[], Any] | None
    lm_reason: str | None
    if not listed:
        lm_loader, lm_reason = None, "This GGUF has no tokenizer, so text cannot be typed."
    elif not typed:
        lm_loader, lm_reason = None, f"The tokenizer lists {listed:,} tokens but the table has {rows:,} rows, so text cannot be typed."
    else:
        lm_loader, lm_reason = _language_model(path, meta, device, folder)
    return assemble(
        name=path.name, source=str(path), table=parts.table, vocab=vocab, device=device, kind="transformer",
        head=parts.head, total_params=meta.get("total_params"),
        context_length=meta.get("context_length"),
        notes=notes, lm_loader=lm_loader, lm_unavailable_reason=lm_reason, storage_dtype=meta.get("storage_dtype"),
    )
