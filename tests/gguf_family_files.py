"""Tiny GGUF files of transformers' GGUF families, written with the gguf package's own writer.

The metadata keys are the ones transformers reads (its GGUF_CONFIG_MAPPING, reversed); the model is
a random one of the config transformers itself rebuilds from those keys, and its tensors go under
the names transformers maps back (get_gguf_hf_weights_map, reversed). Values are written as the
model holds them, not as llama.cpp would convert them: the tests compare two readers of one file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

# Sizes by transformers' config name; only the names the family's GGUF mapping lists are written.
SIZES = {
    "max_position_embeddings": 128, "n_ctx": 128, "num_hidden_layers": 2, "n_layer": 2, "hidden_size": 64,
    "n_embd": 64, "intermediate_size": 128, "feed_forward_length": 256, "head_dim": 16, "rope_theta": 10000.0,
    "num_attention_heads": 4, "n_head": 4, "num_key_value_heads": 2, "rms_norm_eps": 1e-6, "layer_norm_epsilon": 1e-5,
    "layer_norm_eps": 1e-5, "norm_epsilon": 1e-5, "norm_eps": 1e-5, "sliding_window": 64,
}
# GPT-2's Conv1D weights are stored transposed by llama.cpp (its TensorProcessor transposes them back).
_GPT2_TRANSPOSED = ("attn_qkv.weight", "ffn_down.weight", "ffn_up.weight", "attn_output.weight")


def byte_level_vocabulary() -> tuple[list[str], list[int], list[str]]:
    """A gpt2-kind tokenizer: the 256 byte symbols, a few merges and one control token."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    symbols = list(bytes_to_unicode().values())
    merges = ["Ġ t", "h e", "Ġt he", "Ġ c", "a t", "Ġc at"]
    tokens = symbols + ["Ġt", "he", "Ġthe", "Ġc", "at", "Ġcat", "<|endoftext|>"]
    return tokens, [1] * (len(tokens) - 1) + [3], merges


def sentencepiece_vocabulary() -> tuple[list[str], list[int], list[float]]:
    """A llama-kind (SentencePiece) tokenizer: control tokens, the 256 byte pieces and a few words."""
    words = ["▁", "▁the", "▁cat", "t", "h", "e", "c", "a", "▁t", "he", "at"]
    tokens = ["<pad>", "<eos>", "<bos>", "<unk>"] + [f"<0x{b:02X}>" for b in range(256)] + words
    types = [3, 3, 3, 2] + [6] * 256 + [1] * len(words)
    scores = [0.0] * 260 + [-float(i) for i in range(len(words))]
    return tokens, types, scores


def write_family_gguf(path: Path, architecture: str, qtype: str = "F32", tied: bool = True,
                      sentencepiece: bool = False, name: str | None = None, seed: int = 0) -> Path:
    """A GGUF of `architecture` (llama.cpp's name) with 2-D weights stored as `qtype` (F32, F16 or
    Q8_0). llama.cpp writes Mistral as llama named "mistral"."""
    import gguf
    from transformers.integrations.ggml import GGUF_CONFIG_MAPPING

    if sentencepiece:
        tokens, types, scores = sentencepiece_vocabulary()
        merges, bos, eos = None, 2, 1
    else:
        (tokens, types, merges), scores = byte_level_vocabulary(), None
        bos = eos = len(tokens) - 1
    metadata = {f"{architecture}.{key}": SIZES[name] for key, name in GGUF_CONFIG_MAPPING[architecture].items()
                if name in SIZES}
    if f"{architecture}.vocab_size" in {f"{architecture}.{key}" for key in GGUF_CONFIG_MAPPING[architecture]}:
        metadata[f"{architecture}.vocab_size"] = len(tokens)

    def write(tensors: dict[str, np.ndarray]) -> None:
        writer = gguf.GGUFWriter(str(path), architecture)
        writer.add_name(name or f"tiny {architecture}")
        for key, value in metadata.items():
            (writer.add_float32 if isinstance(value, float) else writer.add_uint32)(key, value)
        writer.add_tokenizer_model("llama" if sentencepiece else "gpt2")
        writer.add_token_list(tokens)
        writer.add_token_types(types)
        if scores is not None:
            writer.add_token_scores(scores)
        if merges is not None:
            writer.add_token_merges(merges)
        writer.add_bos_token_id(bos)
        writer.add_eos_token_id(eos)
        writer.add_pad_token_id(eos)  # transformers' defaults (Phi-3's 32000) lie outside a tiny vocabulary
        for tensor_name, values in tensors.items():
            _add_tensor(writer, tensor_name, values, qtype)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()

    write({})  # the metadata alone, for transformers to rebuild the config the model is made of
    model = _random_model(path, tied, seed)
    write(_gguf_tensors(model, architecture))
    return path


def _random_model(path: Path, tied: bool, seed: int):
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(str(path.parent), gguf_file=path.name)
    config.tie_word_embeddings = tied and config.tie_word_embeddings
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    with torch.no_grad():  # norms and biases away from their 1s and 0s, so that a wrong offset shows
        for param in model.parameters():
            param.normal_(0.0, 0.2 if param.ndim > 1 else 0.5)
    return model.eval()


def _gguf_tensors(model, architecture: str) -> dict[str, np.ndarray]:
    from transformers.modeling_gguf_pytorch_utils import TENSOR_PROCESSORS, TensorProcessor, get_gguf_hf_weights_map

    processor = TENSOR_PROCESSORS.get(architecture, TensorProcessor)(config=model.config.to_dict())
    gguf_names = {hf: name for name, hf in get_gguf_hf_weights_map(model, processor).items()}
    head = model.get_output_embeddings()
    tied_head = model.config.tie_word_embeddings and head is not None
    tensors = {}
    for hf_name, tensor in model.state_dict().items():
        if hf_name not in gguf_names or (tied_head and gguf_names[hf_name] == "output.weight"):
            continue
        values = tensor.detach().numpy()
        name = gguf_names[hf_name]
        if architecture == "gpt2" and name.endswith(_GPT2_TRANSPOSED):
            values = values.T
        tensors[name] = np.ascontiguousarray(values, dtype=np.float32)
    return tensors


def _add_tensor(writer, name: str, values: np.ndarray, qtype: str) -> None:
    from gguf.constants import GGMLQuantizationType
    from gguf.quants import quantize

    kind = GGMLQuantizationType[qtype]
    if values.ndim < 2 or kind == GGMLQuantizationType.F32 or (kind == GGMLQuantizationType.Q8_0 and values.shape[-1] % 32):
        writer.add_tensor(name, values)  # llama.cpp keeps 1-D tensors (norms, biases) in F32
    elif kind == GGMLQuantizationType.F16:
        writer.add_tensor(name, values.astype(np.float16))
    else:
        writer.add_tensor(name, quantize(values, kind), raw_dtype=kind)
