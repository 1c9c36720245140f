"""GGUF files of other families: the fast build of the full model (embviz.core.readers.gguf_model)
against transformers' own `from_pretrained(..., gguf_file=...)` on the same file, tensor for tensor
and logit for logit; the tokenizer against AutoTokenizer's; the whole open-and-predict path."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from embviz.core import EmbvizError, open_checkpoint
from embviz.core.lm.logits import next_token_logits
from embviz.core.readers.gguf_file import read_header
from embviz.core.readers.gguf_model import FAST_ARCHITECTURES, build_gguf_model, gguf_config, gguf_to_hf_names
from tests.gguf_family_files import write_family_gguf

# (llama.cpp architecture, how its 2-D weights are stored, head tied, SentencePiece tokenizer)
FAMILIES = {
    "llama": ("Q8_0", True, False), "qwen2": ("F16", False, False), "qwen3": ("Q8_0", True, False),
    "gemma2": ("Q8_0", True, True), "gemma3": ("F32", True, True), "phi3": ("Q8_0", False, False),
    "gpt2": ("Q8_0", True, False), "falcon": ("F16", True, False), "stablelm": ("Q8_0", False, False),
    "starcoder2": ("Q8_0", True, False), "bloom": ("Q8_0", True, False), "nemotron": ("F32", False, False),
}
IDS = [[260, 5, 99, 200, 3, 71, 258], [1, 2, 3]]
TEXTS = ["the cat", " the  cat\n", "hé the 🙂", ""]


@pytest.fixture(scope="module")
def family_files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("gguf-families")
    return {arch: write_family_gguf(folder / f"{arch}.gguf", arch, qtype, tied, sentencepiece, seed=i)
            for i, (arch, (qtype, tied, sentencepiece)) in enumerate(FAMILIES.items())}


def transformers_model(path: Path):
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch.float32).eval()


def test_every_fast_architecture_is_checked_here():
    assert set(FAMILIES) == FAST_ARCHITECTURES


@pytest.mark.parametrize("arch", list(FAMILIES))
def test_the_fast_model_is_transformers_own_load(family_files, arch):
    from transformers.modeling_gguf_pytorch_utils import (
        TENSOR_PROCESSORS, TensorProcessor, get_gguf_hf_weights_map, load_gguf_checkpoint,
    )

    path = family_files[arch]
    header = read_header(path)
    config = gguf_config(header.fields, list(header.tensors))
    assert config == load_gguf_checkpoint(str(path), return_tensors=False)["config"]
    fast, reference = build_gguf_model(path, header), transformers_model(path)
    processor = TENSOR_PROCESSORS.get(arch, TensorProcessor)(config=config)
    assert gguf_to_hf_names(fast, processor) == get_gguf_hf_weights_map(reference, processor)
    ours, theirs = fast.state_dict(), reference.state_dict()
    assert list(ours) == list(theirs)
    assert [name for name in ours if not torch.equal(ours[name], theirs[name])] == []
    assert fast.config.tie_word_embeddings == reference.config.tie_word_embeddings
    if fast.config.tie_word_embeddings:
        assert fast.get_output_embeddings().weight is fast.get_input_embeddings().weight
    for ids in IDS:
        with torch.no_grad():
            a, b = fast(torch.tensor([ids])).logits, reference(torch.tensor([ids])).logits
        assert a.shape == b.shape and torch.allclose(a, b, rtol=0, atol=1e-5)
        assert a.abs().max() > 0.1  # a real forward pass, not zeros on both sides


@pytest.mark.parametrize("arch", ["llama", "gemma2", "qwen2"])
def test_the_tokenizer_encodes_as_autotokenizer_does(family_files, arch):
    from transformers import AutoTokenizer

    from embviz.core.readers.gguf import _tokenizer_loader

    path = family_files[arch]
    ours, reference = _tokenizer_loader(path)(), AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    for special in (False, True):
        assert [ours.encode(t, add_special_tokens=special) for t in TEXTS] == \
               [reference.encode(t, add_special_tokens=special) for t in TEXTS]
    assert len(ours.encode("the cat", add_special_tokens=False)) < len("the cat")  # the merges are used


@pytest.mark.parametrize("arch", ["qwen2", "gpt2", "gemma3"])
def test_opening_a_family_gguf_gives_its_table_then_its_next_token(family_files, tmp_path, monkeypatch, arch):
    import embviz.core.readers.hf_folder as hf_folder

    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))

    def no_transformers_load(*args, **kwargs):
        raise AssertionError("went through transformers' own GGUF loader")

    monkeypatch.setattr(hf_folder, "load_hf_language_model", no_transformers_load)
    path = family_files[arch]
    model = open_checkpoint(str(path), "cpu")
    reference = transformers_model(path)
    assert not model.lm_loaded and model.kind == "transformer"
    assert torch.equal(model.table, reference.get_input_embeddings().weight)
    result = next_token_logits(model, "the cat", k=5)
    ids = [i for i, _ in result.tokens]
    with torch.no_grad():
        expected = reference(torch.tensor([ids])).logits[0, -1]
    assert [r.id for r in result.results] == expected.topk(5).indices.tolist()
    assert [r.logit for r in result.results] == pytest.approx(expected.topk(5).values.tolist(), abs=1e-5)
    assert not list((tmp_path / "cache").glob("gguf/*/model"))  # rebuilt in seconds: no 4-bytes-a-weight copy kept


def test_a_gguf_missing_a_weight_is_refused_in_one_sentence(tmp_path):
    import gguf

    full = read_header(write_family_gguf(tmp_path / "full.gguf", "qwen2"))
    path = tmp_path / "cut.gguf"
    writer = gguf.GGUFWriter(str(path), "qwen2")
    for key, value in full.fields.items():
        if key.startswith("qwen2.") and isinstance(value, int):
            writer.add_uint32(key, value)
    writer.add_token_list(full.fields["tokenizer.ggml.tokens"])
    for name, info in full.tensors.items():
        if name != "blk.1.ffn_down.weight":
            from embviz.core.readers.gguf_model import dequantized

            writer.add_tensor(name, dequantized(tmp_path / "full.gguf", info))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(EmbvizError, match=r"^cut\.gguf has no tensor for the model's model\.layers\.1\.mlp\.down_proj\.weight\.$"):
        build_gguf_model(path, read_header(path))


def _table_only_gguf(folder, architecture: str):
    """A GGUF of `architecture` that holds a tokenizer of three tokens and its table, nothing else."""
    import gguf
    import numpy as np

    path = folder / f"{architecture}.gguf"
    writer = gguf.GGUFWriter(str(path), architecture)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(["a", "b", "c"])
    writer.add_tensor("token_embd.weight", np.ones((3, 32), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_an_architecture_transformers_cannot_build_is_said_in_one_sentence(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))
    model = open_checkpoint(str(_table_only_gguf(tmp_path, "rwkv7")), "cpu")
    assert model.lm_loader is None and model.table.shape == (3, 32)
    assert model.lm_unavailable_reason == ("Next-token logits are off: transformers cannot run the GGUF architecture "
                                           "'rwkv7'. The map, neighbours and analogies work.")


@pytest.mark.parametrize("architecture", ["qwen2moe", "qwen3moe", "gpt-oss", "minimax-m2"])
def test_llama_cpp_names_that_transformers_renames_are_offered_to_it(tmp_path, monkeypatch, architecture):
    """llama.cpp writes `qwen2moe` where transformers' table says `qwen2_moe`: its loader renames
    these four before looking them up, so they must not be refused by name."""
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))
    model = open_checkpoint(str(_table_only_gguf(tmp_path, architecture)), "cpu")
    assert model.table.shape == (3, 32)
    assert model.lm_loader is not None and model.lm_unavailable_reason is None


@pytest.mark.default_model
def test_the_default_model_built_fast_is_transformers_own_load():
    from embviz.core.default_model import default_model_path

    path = default_model_path()
    fast, reference = build_gguf_model(path, read_header(path)), transformers_model(path)
    ours, theirs = fast.state_dict(), reference.state_dict()
    assert [name for name in theirs if not torch.equal(ours[name], theirs[name])] == []
    ids = torch.tensor([[504, 3458, 282, 4649, 314]])  # "The capital of France is"
    with torch.no_grad():
        assert torch.allclose(fast(ids).logits, reference(ids).logits, rtol=0, atol=1e-5)


@pytest.mark.parametrize("qtype", ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K",
                                   "IQ4_NL", "IQ4_XS", "IQ2_XXS", "IQ3_S", "BF16", "F16", "F32"])
def test_dequantising_many_rows_a_step_gives_the_gguf_packages_values(tmp_path, qtype, monkeypatch):
    import numpy as np
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType
    from gguf.quants import dequantize

    from embviz.core.readers import gguf_model
    from embviz.core.readers.gguf_file import TensorInfo

    monkeypatch.setattr(gguf_model, "_STEP_VALUES", 1024)  # several steps, the last one short
    kind = GGMLQuantizationType[qtype]
    block, size = GGML_QUANT_SIZES[kind]
    rows, cols = 37, 2 * 256
    raw = np.random.default_rng(0).integers(0, 256, (rows, cols // block * size), dtype=np.uint8)
    path = tmp_path / "raw.bin"
    raw.tofile(path)
    with np.errstate(all="ignore"):  # random scales make infinities and NaNs, the same on both sides
        values = gguf_model.dequantized(path, TensorInfo("t", (cols, rows), kind.value, 0, raw.nbytes))
        expected = dequantize(raw, kind)
    assert values.shape == (rows, cols) and values.dtype == np.float32
    assert np.array_equal(values, expected, equal_nan=True)
