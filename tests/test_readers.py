"""Every loader, on tiny real checkpoints that the tests write themselves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from embviz.core import EmbvizError, open_checkpoint
from embviz.core.lm.logits import next_token_logits
from embviz.core.readers import safetensors_file
from tests.conftest import make_tiny_model


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory) -> tuple[Path, object]:
    folder = tmp_path_factory.mktemp("gpt2")
    return folder, make_tiny_model(folder, "gpt2", tied=True)


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory) -> tuple[Path, object]:
    folder = tmp_path_factory.mktemp("llama")
    return folder, make_tiny_model(folder, "llama", tied=False)


def test_gpt2_folder_table_labels_and_full_logits(gpt2_dir):
    folder, hf = gpt2_dir
    model = open_checkpoint(folder, "cpu")
    assert torch.equal(model.table, hf.transformer.wte.weight.detach())
    assert model.tied and model.kind == "transformer"
    assert model.context_length == 64
    the = model.vocab.id_of(" the")
    assert the is not None and model.vocab.label(the) == "␣the"
    assert model.total_params == sum(p.numel() for p in hf.parameters())
    # The full forward pass agrees with transformers' own.
    result = next_token_logits(model, "the king and the", k=3)
    ids = model.vocab.tokenizer.encode("the king and the")
    with torch.no_grad():
        expected = hf(torch.tensor([ids])).logits[0, -1]
    top = torch.topk(expected, 3)
    assert [r.id for r in result.results] == top.indices.tolist()
    assert result.results[0].logit == pytest.approx(float(top.values[0]), abs=1e-4)
    assert result.results[0].prob == pytest.approx(float(torch.softmax(expected, -1)[top.indices[0]]), abs=1e-6)


def test_llama_untied_head_is_read(llama_dir):
    folder, hf = llama_dir
    model = open_checkpoint(folder, "cpu")
    assert not model.tied
    assert torch.equal(model.head, hf.lm_head.weight.detach())
    assert torch.equal(model.table, hf.model.embed_tokens.weight.detach())
    share = model.vocab_size * model.dim / model.total_params
    assert model.embedding_share == pytest.approx(share) and model.head_share == pytest.approx(share)


def test_sharded_safetensors_reads_only_the_table(tmp_path, monkeypatch):
    hf = make_tiny_model(tmp_path, "llama", tied=False, shard="20KB")
    shards = list(tmp_path.glob("model-*.safetensors"))
    assert len(shards) > 2 and (tmp_path / "model.safetensors.index.json").is_file()
    loaded = []
    real = safetensors_file.load_tensor
    monkeypatch.setattr(safetensors_file, "load_tensor", lambda info, dtype=None: loaded.append(info.name) or real(info, dtype))
    import embviz.core.readers.hf_folder as hf_folder

    monkeypatch.setattr(hf_folder, "load_tensor", safetensors_file.load_tensor)
    model = open_checkpoint(tmp_path, "cpu")
    assert sorted(loaded) == ["lm_head.weight", "model.embed_tokens.weight"]
    assert torch.equal(model.table, hf.model.embed_tokens.weight.detach())
    assert model.total_params == sum(p.numel() for p in hf.parameters())


def test_pytorch_model_bin_folder(tmp_path):
    hf = make_tiny_model(tmp_path, "gpt2", safetensors=False)
    assert (tmp_path / "pytorch_model.bin").is_file()
    model = open_checkpoint(tmp_path, "cpu")
    assert torch.equal(model.table, hf.transformer.wte.weight.detach())


def test_weights_file_inside_a_folder_opens_the_folder(gpt2_dir):
    folder, _ = gpt2_dir
    model = open_checkpoint(folder / "model.safetensors", "cpu")
    assert model.kind == "transformer" and model.vocab.tokenizer is not None


def test_plain_state_dict_with_vocab_file(tmp_path):
    emb = torch.nn.Embedding(4, 3)
    head = torch.nn.Linear(3, 4)
    torch.save({"emb.weight": emb.weight.data, "head.weight": head.weight.data, "head.bias": head.bias.data}, tmp_path / "m.pt")
    (tmp_path / "m.vocab.json").write_text(json.dumps(["a", "b", "c", "d"]))
    model = open_checkpoint(tmp_path / "m.pt", "cpu")
    assert model.kind == "embedding+linear"
    assert torch.equal(model.table, emb.weight.data)
    result = next_token_logits(model, "a b", k=4)
    expected = head(emb.weight[1]).detach()
    assert [r.logit for r in result.results] == pytest.approx(sorted(expected.tolist(), reverse=True))


def test_safetensors_state_dict_without_vocab_uses_ids(tmp_path):
    save_file({"embedding.weight": torch.randn(6, 4)}, str(tmp_path / "t.safetensors"))
    model = open_checkpoint(tmp_path / "t.safetensors", "cpu")
    assert model.vocab.labels[3] == "#3"
    assert any("vocabulary file" in n for n in model.notes)


def test_hub_id_from_local_cache(tmp_path, monkeypatch, gpt2_dir):
    folder, hf = gpt2_dir
    cache = tmp_path / "hub"
    snap = cache / "models--someone--tiny-gpt2" / "snapshots" / "0123456789abcdef0123456789abcdef01234567"
    snap.mkdir(parents=True)
    for f in folder.iterdir():
        (snap / f.name).write_bytes(f.read_bytes())
    (cache / "models--someone--tiny-gpt2" / "refs").mkdir()
    (cache / "models--someone--tiny-gpt2" / "refs" / "main").write_text(snap.name)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_CACHE", str(cache))
    model = open_checkpoint("someone/tiny-gpt2", "cpu")
    assert model.name == "someone/tiny-gpt2"
    assert torch.equal(model.table, hf.transformer.wte.weight.detach())


def test_hub_id_not_cached_and_offline_is_a_clear_message(tmp_path, monkeypatch):
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(c, "HF_HUB_OFFLINE", True)
    with pytest.raises(EmbvizError, match="not in the local Hugging Face cache"):
        open_checkpoint("nobody/not-a-model", "cpu")


def test_lesson_names(spells, toy4):
    assert spells.name == "lesson:spells" and toy4.name == "lesson:toy4"
    assert open_checkpoint("lesson:toy4", "cpu").vocab_size == 4


def test_device_choice_and_bad_device():
    from embviz.core.device import pick_device

    expected = "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
    assert pick_device("auto").type == expected
    assert pick_device("cpu").type == "cpu"
    with pytest.raises(EmbvizError):
        pick_device("tpu9")
    if not torch.cuda.is_available():
        with pytest.raises(EmbvizError, match="CUDA"):
            pick_device("cuda")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_gpu_path_matches_the_cpu(gpt2_dir):
    """Table, PCA, neighbours, t-SNE, the analogy benchmark and logits on CUDA agree with the CPU."""
    import numpy as np
    from openTSNE.affinity import PerplexityBasedNN

    from embviz.core.table.analogy_benchmark import Question, evaluate
    from embviz.core.maps.knn import table_knn
    from embviz.core.maps.projection import project
    from embviz.core.table.similarity import nearest_neighbours, unit_table
    from embviz.core.maps.tsne_gradient import TorchObjective

    folder, _ = gpt2_dir
    cpu, gpu = open_checkpoint(folder, "cpu"), open_checkpoint(folder, "cuda")
    assert gpu.table.device.type == "cuda"
    assert [h.id for h in nearest_neighbours(gpu, 5, 5)] == [h.id for h in nearest_neighbours(cpu, 5, 5)]
    np.testing.assert_allclose(np.abs(project(gpu, "pca").coords), np.abs(project(cpu, "pca").coords), atol=1e-3)
    torch.testing.assert_close(unit_table(gpu).cpu(), unit_table(cpu))
    x = torch.randn(700, 20, generator=torch.Generator().manual_seed(0))
    ids = np.arange(cpu.vocab_size)
    assert (table_knn(gpu, ids, 10)[0] == table_knn(cpu, ids, 10)[0]).mean() > 0.999  # float ties may swap
    y = np.random.default_rng(0).normal(size=(700, 2)) * 20
    P = PerplexityBasedNN(x.numpy(), perplexity=30, method="exact", random_state=0, verbose=False).P  # noqa: N806 - t-SNE's name for the affinities
    kl_gpu, grad_gpu = TorchObjective("cuda")(y, P, should_eval_error=True)
    kl_cpu, grad_cpu = TorchObjective("cpu", torch_attractive=True)(y, P, should_eval_error=True)
    np.testing.assert_allclose(grad_gpu, grad_cpu, rtol=1e-6, atol=1e-9 * np.abs(grad_cpu).max())
    assert kl_gpu == pytest.approx(kl_cpu, rel=1e-6)
    tsne = project(gpu, "tsne")
    assert tsne.coords.shape == (gpu.vocab_size, 2) and np.isfinite(tsne.coords).all()
    words = [w.strip() for w in cpu.vocab.texts[50:90] if w.strip().isalpha()][:8]
    questions = [Question("s", (words[i], words[i + 1], words[i + 2], words[i + 3])) for i in range(len(words) - 3)]
    assert evaluate(gpu, questions).as_dict() == evaluate(cpu, questions).as_dict()
    a = next_token_logits(cpu, "the king and the", k=5)
    b = next_token_logits(gpu, "the king and the", k=5)
    assert [r.id for r in a.results] == [r.id for r in b.results]
    assert a.results[0].logit == pytest.approx(b.results[0].logit, abs=1e-3)
