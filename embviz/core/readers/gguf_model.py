"""The full transformers model of a GGUF file, built in seconds.

transformers' own GGUF load takes ~30 s for SmolLM2-135M: it parses the file twice with
`gguf.GGUFReader` (an object per token and merge), and rebuilds llama.cpp's tensor-name map once
per module of the model (397 times). Here the header is the one `gguf_file` already parsed, the
config is rebuilt from it exactly as `load_gguf_checkpoint` rebuilds it, the name map is built
once, each tensor is de-quantised by the `gguf` package's numpy de-quantisers and then undone by
transformers' own per-architecture TensorProcessor (llama's q/k permutation, Gemma's norm offset,
BLOOM's qkv layout, GPT-2's transposes), and the weights are assigned to a model created with
empty parameters. The result equals transformers' own load (tests/test_gguf_families.py).

Only the architectures that test checks take this path (FAST_ARCHITECTURES); the others that
transformers can build still go through its own loader.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import torch

from embviz.core.errors import EmbvizError, first_line
from embviz.core.readers.gguf_file import GGUFHeader, TensorInfo, tensor_bytes
from embviz.core.readers.regular_file import shown

# GGUF architectures whose fast build equals transformers' own load, each checked on a tiny file
# in tests/test_gguf_families.py. The rest that transformers can build (its newer loader's qwen35
# and lfm2; mixture-of-experts, Mamba, t5, gpt-oss, MiniMax, Gemma 4) are left to its own loader.
FAST_ARCHITECTURES = frozenset({
    "llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3", "gpt2", "falcon", "stablelm", "starcoder2", "bloom",
    "nemotron",
})

# transformers' model_type → llama.cpp's architecture name, for the fast architectures where they
# differ (transformers' get_gguf_hf_weights_map renames them the same way).
_LLAMA_CPP_NAMES = {"gemma3_text": "gemma3"}


def _parsed(value: Any) -> Any:
    """A metadata value as transformers reads it: a one-item array becomes its item."""
    return value[0] if isinstance(value, list) and len(value) == 1 else value


def gguf_config(fields: dict[str, Any], tensor_names: list[str]) -> dict[str, Any]:
    """The config dict `load_gguf_checkpoint(path)["config"]` gives, from the header already read
    (transformers' own reads the whole file's metadata with gguf.GGUFReader: 4 s for SmolLM2)."""
    from transformers.integrations import GGUF_CONFIG_DEFAULTS_MAPPING, GGUF_CONFIG_MAPPING

    architecture = str(fields.get("general.architecture"))
    updated = architecture
    if architecture == "llama" and fields.get("general.name") == "mistral":
        updated = "mistral"  # llama.cpp writes Mistral as llama; transformers tells them apart by this name
    config: dict[str, Any] = {}
    if architecture == "stablelm":
        config["use_qkv_bias"] = any(bias in name for name in tensor_names
                                     for bias in ("attn_q.bias", "attn_k.bias", "attn_v.bias"))
        config["use_parallel_residual"] = not any("ffn_norm" in name for name in tensor_names)
    config["tie_word_embeddings"] = "output.weight" not in tensor_names or architecture in ("falcon", "bloom")
    defaults: dict[str, dict[str, Any]] = GGUF_CONFIG_DEFAULTS_MAPPING
    for key, default in defaults.get(updated, defaults.get(architecture) or {}).items():
        config.setdefault(key, default)
    mapping: dict[str, dict[str, Any]] = GGUF_CONFIG_MAPPING  # type: ignore[assignment]  # its values are dicts
    for gguf_key, raw in fields.items():
        gguf_key = gguf_key.replace(architecture, updated)
        prefix, _, config_key = gguf_key.partition(".")
        value: Any = _parsed(raw)
        if isinstance(value, str) and architecture in value:
            value = value.replace(architecture, updated)
        renamed = mapping.get(prefix, {}).get(config_key, -1)
        if renamed is not None and renamed != -1:
            config[renamed] = value
    if config.get("model_type") == "gemma3":
        config["model_type"] = "gemma3_text"  # a Gemma 3 GGUF holds the text model alone
    if "vocab_size" not in config and "tokenizer.ggml.tokens" in fields:
        config["vocab_size"] = len(fields["tokenizer.ggml.tokens"])
    return config


def build_gguf_model(path: Path, header: GGUFHeader) -> Any:
    """The float32 transformers causal LM of a GGUF file whose architecture is in FAST_ARCHITECTURES."""
    # The de-quantising starts first, on two threads: numpy lets go of the interpreter in its
    # array steps, so it runs beside transformers' imports (2 s and more) instead of after them.
    pool = ThreadPoolExecutor(max_workers=2)
    try:
        pending = [(info.name, pool.submit(dequantized, path, info)) for info in header.tensors.values()]
        model, processor = _empty_model(path, header)
        state = _state_dict(pending, processor, gguf_to_hf_names(model, processor))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # after a failure, nothing more is de-quantised
    _check_complete(path, model, state)
    model.load_state_dict(state, strict=False, assign=True)
    model.tie_weights()  # the head was tied to the meta embedding the state dict replaced
    model.eval()
    return model


def _empty_model(path: Path, header: GGUFHeader) -> tuple[Any, Any]:
    """The model with its parameters on the meta device (its buffers, the rotary frequencies, are
    real), and transformers' TensorProcessor for its architecture."""
    from accelerate import init_empty_weights
    from transformers import AutoModelForCausalLM, CONFIG_MAPPING
    from transformers.modeling_gguf_pytorch_utils import TENSOR_PROCESSORS, TensorProcessor

    architecture = str(header.fields.get("general.architecture"))
    config_dict = gguf_config(header.fields, list(header.tensors))
    try:
        config = CONFIG_MAPPING[config_dict["model_type"]].from_dict(config_dict)
        config.dtype = torch.float32
        with init_empty_weights():
            model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    except (KeyError, ValueError, TypeError, RuntimeError) as exc:
        raise EmbvizError(f"{shown(path.name)}: transformers cannot build its {architecture} model "
                          f"({first_line(exc)}).") from exc
    processor: Any = TENSOR_PROCESSORS.get(architecture, TensorProcessor)
    return model, processor(config=config_dict)


def gguf_to_hf_names(model: Any, processor: Any) -> dict[str, str]:
    """GGUF tensor name → the model's parameter name: transformers' get_gguf_hf_weights_map with
    llama.cpp's name map built once instead of once per module."""
    from gguf import MODEL_ARCH_NAMES, get_tensor_name_map

    model_type = _LLAMA_CPP_NAMES.get(model.config.model_type, model.config.model_type)
    arch = next((key for key, value in MODEL_ARCH_NAMES.items() if value == model_type), None)
    if arch is None:
        raise EmbvizError(f"The gguf package does not know the architecture {model_type}.")
    name_map = get_tensor_name_map(arch, model.config.num_hidden_layers)

    def walk(module: torch.nn.Module, qual_name: str) -> dict[str, str]:
        found: dict[str, str] = {}
        for hf_name in module.state_dict():
            hf_name = processor.preprocess_name(hf_name)
            name, suffix = hf_name, ""
            if hf_name.endswith((".weight", ".bias")):
                name, suffix = hf_name.rsplit(".", 1)
                suffix = "." + suffix
            gguf_name = name_map.get_name(name)
            if gguf_name is None:
                processor.perform_fallback_tensor_mapping(found, suffix, qual_name, hf_name)
            else:
                found[gguf_name + suffix] = qual_name + hf_name
        # A child's own names reach what the whole model's names do not (BLOOM is converted from BloomModel).
        for child_name, child in module.named_children():
            for key, value in walk(child, f"{qual_name}{child_name}.").items():
                found.setdefault(key, value)
        return found

    return walk(model, "")


def _state_dict(pending: list[tuple[str, Future[Any]]], processor: Any, names: dict[str, str]) -> dict[str, torch.Tensor]:
    """The model's tensors, each undone by transformers' TensorProcessor as its values arrive."""
    parsed: dict[str, dict[str, torch.Tensor]] = {"tensors": {}}
    for name, values in pending:
        result = processor.process(weights=values.result(), name=name, tensor_key_mapping=names,
                                   parsed_parameters=parsed)
        if result.name in names:
            parsed["tensors"][names[result.name]] = torch.from_numpy(writable(result.weights))
    return parsed["tensors"]


def dequantized(path: Path, info: TensorInfo) -> np.ndarray:
    """The tensor as float32 values in numpy's order (GGUF lists the fastest axis first)."""
    import gguf.quants
    from gguf.constants import GGMLQuantizationType

    qtype = GGMLQuantizationType(info.type_id)
    raw = tensor_bytes(path, info)
    quant = getattr(gguf.quants, qtype.name, None)
    try:
        if hasattr(quant, "dequantize_rows"):
            values = _by_rows(raw, quant, info.shape[0])
        else:  # F32 and F16: a view and a cast
            values = gguf.quants.dequantize(raw, qtype)
    except (NotImplementedError, ValueError, TypeError) as exc:
        raise EmbvizError(f"{shown(path.name)}: the tensor {shown(info.name)[:80]} is stored as {qtype.name}, "
                          f"which embviz cannot de-quantise ({first_line(exc)}).") from exc
    return values.reshape(tuple(reversed(info.shape)))


_STEP_VALUES = 1 << 22  # 16 MB of float32: the temporaries of one step stay small


def _by_rows(raw: np.ndarray, quant: Any, cols: int) -> np.ndarray:
    """gguf's own block arithmetic over many rows a step: `gguf.quants.dequantize` takes 16 rows a
    step, and its per-step overhead was a third of SmolLM2's 0.8 s of de-quantising here."""
    quant.init_grid()  # the lattice of the IQ types; nothing for the others
    out = np.empty((raw.shape[0], cols), dtype=np.float32)
    step = max(1, _STEP_VALUES // cols)
    for start in range(0, raw.shape[0], step):
        out[start : start + step] = quant.dequantize_rows(raw[start : start + step])
    return out


def writable(values: np.ndarray) -> np.ndarray:
    """float32 and writable, copied only when it is not (an F32 tensor comes back as a read-only
    view of the mapped file), in the memory layout it has: GPT-2's transposed weights stay
    column-major, as in transformers' own load, so that the products sum in the same order."""
    if values.dtype == np.float32 and values.flags.writeable:
        return values
    return np.array(values, dtype=np.float32, order="K")


def placed_language_model(model: Any, device: torch.device, total_params: int | None) -> Any:
    """The model on `device` when its float32 weights take under 80% of the device's free memory,
    else on the CPU, wrapped for embviz."""
    from embviz.core.device import GPU_HEADROOM, free_bytes
    from embviz.core.readers.hf_folder import place_language_model

    free = free_bytes(device) if device.type != "cpu" else None
    cpu = free is not None and (total_params or 0) * 4 > GPU_HEADROOM * free
    return place_language_model(model, torch.device("cpu") if cpu else device)


def _check_complete(path: Path, model: Any, state: dict[str, torch.Tensor]) -> None:
    """Every parameter and buffer the model expects, in its shape: a GGUF that lacks one would
    otherwise leave it on the meta device, and fail later with no clear reason."""
    tied = _tied_names(model)
    for name, tensor in model.state_dict().items():
        if name in state:
            if tuple(state[name].shape) != tuple(tensor.shape):
                raise EmbvizError(f"{shown(path.name)}: its tensor for {name} is {list(state[name].shape)}, "
                                  f"where the model needs {list(tensor.shape)}.")
        elif tensor.is_meta and name not in tied:
            raise EmbvizError(f"{shown(path.name)} has no tensor for the model's {name}.")


def _tied_names(model: Any) -> set[str]:
    """The head's parameter names when the config ties it to the embedding (tie_weights fills them)."""
    head = model.get_output_embeddings()
    if not getattr(model.config, "tie_word_embeddings", False) or head is None:
        return set()
    return {f"{name}.weight" for name, module in model.named_modules() if module is head}
