"""Compare of a model's input table with its own output head (an untied tiny Llama): the
numbers against an independent computation, the command line, a tied model's refusal, and
File ▸ Compare with… ▸ Its own output table in the window, kept by a session."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch

from embviz.bridge import requests as rq
from embviz.bridge.handlers import run_request
from embviz.core import EmbvizError, open_checkpoint
from embviz.core.output_table import TIED

K = 5


@pytest.fixture(scope="module")
def untied(tmp_path_factory):
    from conftest import make_tiny_model

    folder = tmp_path_factory.mktemp("untied")
    model = make_tiny_model(folder, arch="llama", tied=False)
    return folder, model.get_input_embeddings().weight.detach().float(), model.lm_head.weight.detach().float()


def expected(embedding: torch.Tensor, head: torch.Tensor, ids: np.ndarray, k: int = K) -> dict:
    """Computed here, not by embviz: each shared token's k nearest by cosine among the shared
    rows of each table, their Jaccard; linear CKA through the n × n Gram matrices (HSIC);
    the mean cosine distance after the best rotation of the input rows onto the head's."""
    index = torch.as_tensor(ids)
    x = torch.nn.functional.normalize(embedding[index], dim=1)
    y = torch.nn.functional.normalize(head[index], dim=1)
    near, clear = [], np.ones(len(ids), bool)
    for rows in (x, y):
        cos = rows @ rows.T
        cos.fill_diagonal_(-torch.inf)  # a token is not its own neighbour
        top = torch.topk(cos, k + 1, dim=1)
        near.append(top.indices[:, :k].numpy())
        clear &= (top.values[:, k - 1] - top.values[:, k]).numpy() > 1e-5  # no near-tie at the k-th place
    jaccard = np.array([len(set(a) & set(b)) / len(set(a) | set(b)) for a, b in zip(*near)])
    xd, yd = x.double().numpy(), y.double().numpy()
    centre = np.eye(len(ids)) - 1.0 / len(ids)
    gram_x, gram_y = centre @ xd @ xd.T @ centre, centre @ yd @ yd.T @ centre
    cka = (gram_x * gram_y).sum() / np.sqrt((gram_x * gram_x).sum() * (gram_y * gram_y).sum())
    u, _, vt = np.linalg.svd(xd.T @ yd)
    procrustes = float((1.0 - ((xd @ u @ vt) * yd).sum(axis=1)).mean())
    return {"near": near, "jaccard": jaccard, "clear": clear, "cka": float(cka), "procrustes": procrustes}


def test_the_input_table_against_its_own_head_is_the_independent_computation(untied):
    folder, embedding, head = untied
    model = open_checkpoint(str(folder), "cpu")
    pair = run_request(model, rq.LoadComparison(against="output"))
    view = run_request(pair, rq.Compare(k=K, tokens=[" king"]))
    assert view.names == (f"{model.name} (input table)", f"{model.name} (output table)")
    assert pair.a is model and pair.b.name == view.names[1]  # the first model itself, no second file
    # One vocabulary: every token that takes part is shared, each with itself.
    vocab = model.vocab
    taking_part = [i for i in range(model.vocab_size) if i not in vocab.special_ids | vocab.partial_ids
                   and vocab.texts[i].strip()]
    assert view.ids_a.tolist() == view.ids_b.tolist() == taking_part
    assert view.only_a == view.only_b == model.vocab_size - len(taking_part)
    want = expected(embedding, head, view.ids_a)
    assert want["clear"].mean() > 0.9  # the check below covers nearly every token
    clear = want["clear"]
    np.testing.assert_array_equal(view.jaccard[clear], want["jaccard"][clear])
    for side, near in zip((view.neighbours_a, view.neighbours_b), want["near"]):
        assert [set(r) for r in side[clear]] == [set(r) for r in near[clear]]
    assert view.cka == pytest.approx(want["cka"], abs=1e-6)
    assert view.procrustes_mean == pytest.approx(want["procrustes"], abs=1e-6)
    # " king"'s dominoes: its neighbours in both tables, only in the input's, only in the head's.
    king = taking_part.index(vocab.texts.index(" king"))
    texts = lambda positions: {vocab.texts[view.ids_a[p]] for p in positions}  # noqa: E731
    in_a, in_b = (texts(near[king]) for near in want["near"])
    (found,) = view.tokens
    assert found.token == " king" and found.jaccard == pytest.approx(len(in_a & in_b) / len(in_a | in_b))
    assert {t for t, _ in found.common} == in_a & in_b
    assert {t for t, _ in found.only_a} == in_a - in_b and {t for t, _ in found.only_b} == in_b - in_a


def test_a_tied_model_has_no_head_to_compare_with():
    model = open_checkpoint("toy4", "cpu")
    with pytest.raises(EmbvizError) as refused:
        run_request(model, rq.LoadComparison(against="output"))
    assert str(refused.value) == TIED and TIED.count(".") == 1
    proc = subprocess.run([sys.executable, "-m", "embviz", "--model", "toy4", "compare", "--against", "output"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0 and proc.stderr.strip() == f"embviz: {TIED}"


def test_the_command_line_compares_with_the_head(untied):
    folder, embedding, head = untied
    proc = subprocess.run([sys.executable, "-m", "embviz", "--model", str(folder), "compare", "--against", "output",
                           "--k", str(K), "--json"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    model = open_checkpoint(str(folder), "cpu")
    view = run_request(run_request(model, rq.LoadComparison(against="output")), rq.Compare(k=K))
    want = expected(embedding, head, view.ids_a)
    assert found["k"] == K and found["shared"] == view.shared == view.ids_a.size
    if want["clear"].all():
        assert found["mean_jaccard"] == pytest.approx(float(want["jaccard"].mean()), abs=1e-9)
    assert found["mean_jaccard"] == pytest.approx(view.mean_jaccard, abs=1e-9)
    assert found["cka"] == pytest.approx(want["cka"], abs=1e-6)


@pytest.mark.parametrize("args, sentence", [
    ([], "one of the arguments --with --against is required"),
    (["--with", "toy4", "--against", "output"], "argument --against: not allowed with argument --with"),
])
def test_compare_takes_a_second_model_or_the_head_not_both(capsys, args, sentence):
    from embviz.cli.parser import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["compare", *args])
    assert sentence in capsys.readouterr().err


def test_the_menu_entry_fills_the_compare_tab_and_a_session_keeps_it(qtbot, window, untied, tmp_path):
    from helpers import menu_action, wait_for

    from embviz.state.tabs import OWN_OUTPUT
    from embviz.ui.window_compare import OWN_OUTPUT_TITLE

    folder, embedding, head = untied
    panel = window.compare
    compare_menu = menu_action(window.menuBar(), "Compare with…").menu()
    own = menu_action(compare_menu, OWN_OUTPUT_TITLE)
    window.open_model(str(folder))
    wait_for(qtbot, lambda: window.summary is not None and not window.summary.info["tied"], 60_000)
    panel.state.k = K
    compare_menu.aboutToShow.emit()
    assert own.isEnabled()
    own.trigger()
    wait_for(qtbot, lambda: panel.view is not None and panel.table.rowCount() > 0, 60_000)
    name = window.summary.info["name"]
    assert window.tabs.currentWidget() is panel and panel.state.source == OWN_OUTPUT
    assert panel.source.text().startswith(f"A is {name} (input table), B is {name} (output table): they share ")
    want = expected(embedding, head, panel.view.ids_a)
    assert panel.view.cka == pytest.approx(want["cka"], abs=1e-6)
    np.testing.assert_array_equal(panel.view.jaccard[want["clear"]], want["jaccard"][want["clear"]])
    shown = panel.view.jaccard.copy()
    path = window.save_session(tmp_path / "own.embviz")

    window.open_model("toy4")  # tied: the pairing is dropped, and the entry is off and says why
    wait_for(qtbot, lambda: window.summary.info["vocab_size"] == 4, 60_000)
    assert window.worker.comparison is None and panel.view is None and panel.state.source is None
    compare_menu.aboutToShow.emit()
    assert not own.isEnabled() and own.toolTip() == TIED
    window.open_comparison(OWN_OUTPUT)  # asked all the same (a lesson, a script): refused in one sentence
    wait_for(qtbot, lambda: panel.message.text(), 30_000)
    assert panel.message.text() == TIED and window.summary.info["vocab_size"] == 4 and panel.view is None

    assert window.open_session(path)
    wait_for(qtbot, lambda: panel.view is not None and panel.state.source == OWN_OUTPUT, 60_000)
    assert window.summary.info["name"] == name and panel.view.k == K
    np.testing.assert_array_equal(panel.view.jaccard, shown)


# --- two models' output heads ----------------------------------------------------------------


@pytest.fixture(scope="module")
def second_untied(tmp_path_factory):
    """Another untied tiny Llama of the same tokenizer: the same embedding, a head of its own."""
    from conftest import make_tiny_model

    folder = tmp_path_factory.mktemp("untied_b")
    model = make_tiny_model(folder, arch="llama", tied=False)
    torch.manual_seed(1)
    with torch.no_grad():
        model.lm_head.weight.normal_(std=0.02)
    model.save_pretrained(folder)
    return folder, model.lm_head.weight.detach().float()


def test_two_models_heads_are_compared_token_by_token(untied, second_untied, capsys):
    from embviz.cli import main

    folder, _, head = untied
    folder_b, head_b = second_untied
    model = open_checkpoint(str(folder), "cpu")
    pair = run_request(model, rq.LoadComparison(source=str(folder_b), device="cpu", tables="output"))
    view = run_request(pair, rq.Compare(k=K))
    assert all(name.endswith("(output table)") for name in view.names)
    want = expected(head, head_b, view.ids_a)
    assert want["clear"].mean() > 0.9
    np.testing.assert_array_equal(view.jaccard[want["clear"]], want["jaccard"][want["clear"]])
    assert view.cka == pytest.approx(want["cka"], abs=1e-6)
    inputs = run_request(run_request(model, rq.LoadComparison(source=str(folder_b), device="cpu")), rq.Compare(k=K))
    assert inputs.mean_jaccard == 1.0 != view.mean_jaccard  # the same embedding, two heads
    assert main(["--model", str(folder), "compare", "--with", str(folder_b), "--table", "output", "--k", str(K),
                 "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["table"] == "output" and found["mean_jaccard"] == pytest.approx(view.mean_jaccard, abs=1e-12)
    with pytest.raises(EmbvizError, match=r"toy4.*output head is its input table \(tied\)"):
        run_request(model, rq.LoadComparison(source="toy4", device="cpu", tables="output"))


def test_the_compare_tabs_table_choice_pairs_the_heads_and_a_session_keeps_it(qtbot, window, untied, second_untied,
                                                                            tmp_path):
    from helpers import wait_for

    folder, _, head = untied
    folder_b, head_b = second_untied
    panel = window.compare
    window.open_model(str(folder))
    wait_for(qtbot, lambda: window.summary is not None and not panel.table_choice.isHidden(), 60_000)
    panel.state.k = K
    window.open_comparison(str(folder_b))
    wait_for(qtbot, lambda: panel.view is not None and panel.view.mean_jaccard == 1.0, 60_000)  # one embedding
    panel.table_choice.setCurrentIndex(panel.table_choice.findData("output"))
    wait_for(qtbot, lambda: panel.view is not None and panel.view.names[0].endswith("(output table)"), 60_000)
    want = expected(head, head_b, panel.view.ids_a)
    np.testing.assert_array_equal(panel.view.jaccard[want["clear"]], want["jaccard"][want["clear"]])
    shown = panel.view.jaccard.copy()
    path = window.save_session(tmp_path / "heads.embviz")
    window.open_model("toy4")
    wait_for(qtbot, lambda: window.summary.info["vocab_size"] == 4 and panel.table_choice.isHidden(), 60_000)
    assert panel.state.table == "input"
    assert window.open_session(path)
    wait_for(qtbot, lambda: panel.view is not None and panel.view.names[1].endswith("(output table)"), 60_000)
    np.testing.assert_array_equal(panel.view.jaccard, shown)
