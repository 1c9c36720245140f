"""The untied head's rows as a table: neighbours and the map read them, a tied model refuses."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from embviz.bridge import requests as rq
from embviz.bridge.handlers import run_request
from embviz.core import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.output_table import TIED, output_table
from embviz.core.table.vocab import Vocabulary


def _model(tied: bool) -> EmbeddingModel:
    g = torch.Generator().manual_seed(0)
    table, head = torch.randn(40, 8, generator=g), torch.randn(40, 8, generator=g)
    words = [f"w{i}" for i in range(40)]
    vocab = Vocabulary(words, list(words))
    return EmbeddingModel("toy", "toy", table, vocab, torch.device("cpu"), "float32", "table",
                          head=None if tied else head)


def test_neighbours_of_the_output_table_are_the_heads_cosines() -> None:
    model = _model(tied=False)
    view = run_request(model, rq.Neighbours(query=3, k=5, table="output"))
    head = torch.nn.functional.normalize(model.head, dim=1)
    cos = (head @ head[3]).numpy()
    cos[3] = -np.inf
    expected = np.argsort(-cos)[:5]
    assert [h.id for h in view.hits] == expected.tolist()
    np.testing.assert_allclose([h.score for h in view.hits], cos[expected], atol=1e-5)
    assert output_table(model).cache is not model.cache


def test_a_tied_model_has_one_table() -> None:
    with pytest.raises(EmbvizError, match="tied"):
        run_request(_model(tied=True), rq.Neighbours(query=3, k=5, table="output"))
    assert TIED.count(".") == 1


# --- a real untied transformers model, through the command line ------------------------------


@pytest.fixture(scope="module")
def untied(tmp_path_factory):
    from conftest import make_tiny_model

    from transformers import AutoTokenizer

    folder = tmp_path_factory.mktemp("untied")
    model = make_tiny_model(folder, arch="llama", tied=False)
    tok = AutoTokenizer.from_pretrained(str(folder))
    ids = {}
    for word in (" king", " the", " and", " capital", "day", "man", "kin", "pit"):  # odd one out matches bare words here
        (ids[word],) = tok.encode(word, add_special_tokens=False)  # each one token of the tiny vocabulary
    return folder, model.get_input_embeddings().weight.detach().float(), model.lm_head.weight.detach().float(), ids


def _cli(*args: str) -> dict:
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "embviz", *args, "--json"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _units(rows: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.normalize(rows, dim=1)


def _cosines(rows: torch.Tensor, query: int) -> np.ndarray:
    unit = _units(rows)
    return (unit @ unit[query]).numpy()


def test_neighbours_through_the_cli_read_the_chosen_table(untied):
    folder, embedding, head, ids = untied
    king = ids[" king"]
    answers = {}
    for table, rows in (("input", embedding), ("output", head)):
        found = _cli("--model", str(folder), "neighbors", " king", "--k", "5", "--table", table)["results"]
        cos = _cosines(rows, king)
        np.testing.assert_allclose([h["score"] for h in found], cos[[h["id"] for h in found]], atol=1e-5)
        rest = np.delete(cos, [king] + [h["id"] for h in found])
        assert min(h["score"] for h in found) >= rest.max() - 1e-6  # the true top five, not five rows
        answers[table] = [h["id"] for h in found]
    assert answers["input"] != answers["output"]  # two random tables: the choice changes the answer


def test_the_map_of_the_output_table_is_pca_of_the_head_not_the_cached_input_map(untied, tmp_path):
    import csv

    from sklearn.decomposition import PCA

    folder, embedding, head, _ = untied
    for table, rows in (("input", embedding), ("output", head)):  # input first: its map is kept on disk
        out = tmp_path / f"{table}.csv"
        _cli("--model", str(folder), "project", "--method", "pca", "--out", str(out), "--table", table)
        with out.open(newline="", encoding="utf-8") as f:
            lines = list(csv.reader(f))[1:]
        drawn = np.array([[float(r[2]), float(r[3])] for r in lines])

        def ids_in(_: object, lines: list = lines) -> list[int]:
            return [int(r[0]) for r in lines]

        unit = torch.nn.functional.normalize(rows.double(), dim=1).numpy()  # the map is of the rows' directions
        expected = PCA(n_components=2).fit_transform(unit[ids_in(out)])
        for axis in range(2):  # each component up to its sign
            a, b = drawn[:, axis], expected[:, axis]
            assert min(np.abs(a - b).max(), np.abs(a + b).max()) < 1e-3 * np.abs(b).max(), (table, axis)


def test_an_analogy_over_the_output_table_is_the_heads_arithmetic(untied):
    folder, _, head, ids = untied
    a, b, c = ids[" king"], ids[" the"], ids[" and"]  # A − B + C: king − the + and
    found = _cli("--model", str(folder), "analogy", " king", " the", " and", "--k", "3", "--table", "output")
    unit = torch.nn.functional.normalize(head, dim=1)
    target = unit[a] - unit[b] + unit[c]
    scores = (unit @ torch.nn.functional.normalize(target, dim=0)).numpy()
    scores[[a, b, c]] = -np.inf
    best = int(np.argmax(scores))
    assert found["results"][0]["id"] == best
    assert found["results"][0]["score"] == pytest.approx(float(scores[best]), abs=1e-5)


def test_similarity_through_the_cli_is_the_cosine_of_the_chosen_tables_rows(untied):
    folder, embedding, head, ids = untied
    king, capital = ids[" king"], ids[" capital"]
    scores = {}
    for table, rows in (("input", embedding), ("output", head)):
        found = _cli("--model", str(folder), "similarity", " king", " capital", "--table", table)
        assert found["table"] == table
        unit = _units(rows)
        assert found["score"] == pytest.approx(float(unit[king] @ unit[capital]), abs=1e-5)
        scores[table] = found["score"]
    assert abs(scores["input"] - scores["output"]) > 1e-3


def test_odd_one_out_over_the_output_table_is_the_heads_arithmetic(untied):
    folder, embedding, head, ids = untied
    words = ["day", "man", "kin", "pit"]
    found = _cli("--model", str(folder), "odd-one-out", *words, "--table", "output")
    assert found["table"] == "output" and found["ids"] == [ids[w] for w in words]

    def to_others(rows: torch.Tensor) -> list[float]:  # each word's cosine to the mean of the others' unit rows
        unit = _units(rows.double())[[ids[w] for w in words]]
        means = [torch.cat([unit[:n], unit[n + 1:]]).mean(dim=0) for n in range(len(words))]
        return [float(unit[n] @ mean / mean.norm()) for n, mean in enumerate(means)]

    np.testing.assert_allclose(found["cosine_to_others"], to_others(head), atol=1e-5)
    assert not np.allclose(found["cosine_to_others"], to_others(embedding), atol=1e-3)
    unit = _units(head.double())[[ids[w] for w in words]]
    assert found["outsider"] == words[int(torch.argmin(unit @ unit.sum(dim=0)))]  # gensim's rule: lowest cosine to the mean


def test_kmeans_clusters_of_the_output_table_are_sklearns_on_the_heads_directions(untied):
    from sklearn.cluster import MiniBatchKMeans

    folder, embedding, head, _ = untied
    found = _cli("--model", str(folder), "clusters", "--method", "kmeans", "--k", "4", "--table", "output")
    assert found["table"] == "output"
    texts = run_request(None, rq.LoadModel(source=str(folder), device="cpu")).vocab.texts
    for rows, same in ((head, True), (embedding, False)):
        centred = rows - rows.mean(dim=0)  # core clusters the mean-centred unit rows with sklearn's defaults
        labels = MiniBatchKMeans(4, random_state=0).fit_predict(_units(centred).numpy())
        sizes = np.bincount(labels, minlength=4)
        members = [{texts[i] for i in np.flatnonzero(labels == c)} for c in range(4)]  # texts: byte pieces share some
        matched = all(any(set(c["examples"]) <= m and size == c["size"] for m, size in zip(members, sizes))
                      for c in found["clusters"])
        assert (sorted(sizes, reverse=True) == [c["size"] for c in found["clusters"]] and matched) is same


def test_every_table_command_names_the_table_it_read(untied, tmp_path, capsys):
    import json

    from embviz.cli import main

    folder = str(untied[0])
    commands = [["neighbors", " king", "--k", "2"], ["analogy", " king", " the", " and", "--k", "2"],
                ["project", "--out", str(tmp_path / "map.csv")], ["similarity", " king", " the"],
                ["odd-one-out", "day", "man", "kin"], ["clusters", "--method", "kmeans", "--k", "3"]]
    for table in ("input", "output"):
        for command in commands:
            assert main(["--model", folder, *command, "--table", table, "--json"]) == 0
            assert json.loads(capsys.readouterr().out)["table"] == table, command
    texts = {}
    for table in ("input", "output"):
        assert main(["--model", folder, "similarity", " king", " the", "--table", table]) == 0
        texts[table] = capsys.readouterr().out.splitlines()
    assert texts["output"][0] == "(the output head's rows)" and [len(t) for t in texts.values()] == [1, 2]  # input: as ever


@pytest.mark.parametrize("command", [["similarity", "cat", "dog"], ["odd-one-out", "cat", "dog", "car"], ["clusters"]])
def test_each_new_table_command_refuses_the_head_of_a_tied_model(command, capsys):
    from embviz.cli import main

    assert main(["--model", "toy4", *command, "--table", "output"]) == 2
    assert capsys.readouterr().err.strip() == f"embviz: {TIED}"


def test_the_output_table_of_a_tied_model_is_refused_in_one_sentence(tmp_path):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "embviz", "--model", "toy4", "neighbors", "cat", "--table", "output"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0 and TIED in proc.stderr and "Traceback" not in proc.stderr


def test_the_neighbours_tab_offers_the_head_only_where_the_model_has_one(qtbot, window, untied):
    from helpers import wait_for

    folder, _, head, ids = untied
    panel = window.neighbours
    window.open_model(str(folder))
    wait_for(qtbot, lambda: not panel.table_choice.isHidden(), 60_000)  # untied: two tables
    window.tabs.setCurrentWidget(panel)
    panel.k.setValue(5)
    panel.hide_special.setChecked(False)  # every row, as the arithmetic below ranks them
    panel.word.setText("␣king")
    panel.run()
    wait_for(qtbot, lambda: "␣king" in panel.heading.text() and panel.table.rowCount() == 5, 30_000)
    embedding_ids = list(panel.table.ids)
    panel.table_choice.setCurrentIndex(panel.table_choice.findData("output"))
    wait_for(qtbot, lambda: "output head" in panel.heading.text() and panel.table.rowCount() == 5, 30_000)
    cos = _cosines(head, ids[" king"])
    cos[ids[" king"]] = -np.inf
    assert list(panel.table.ids) == np.argsort(-cos)[:5].tolist() != embedding_ids
    assert panel.state.table == "output"
    window.open_model("toy4")  # tied: one table, and the choice goes back to it
    wait_for(qtbot, lambda: panel.table_choice.isHidden(), 60_000)
    assert panel.state.table == "input" and not panel.table_choice.two_tables


def test_the_map_and_analogies_read_the_chosen_table_and_a_session_keeps_it(qtbot, window, untied, tmp_path):
    from helpers import wait_for
    from sklearn.decomposition import PCA

    folder, embedding, head, ids = untied
    panel = window.map_panel
    window.open_model(str(folder))
    wait_for(qtbot, lambda: panel.state.projection is not None and not panel.table_choice.isHidden(), 60_000)
    assert panel.state.projection.table == "input" and "output" not in panel.status.text()
    window.tabs.setCurrentWidget(panel)
    panel.table_choice.setCurrentIndex(panel.table_choice.findData("output"))  # a PCA: redrawn at once
    wait_for(qtbot, lambda: panel.state.projection is not None and panel.state.projection.table == "output", 60_000)
    assert "of the output head" in panel.status.text()
    drawn = panel.state.projection
    unit = torch.nn.functional.normalize(head.double(), dim=1).numpy()
    expected = PCA(n_components=2).fit_transform(unit[drawn.ids])
    for axis in range(2):  # each component up to its sign
        a, b = drawn.coords[:, axis], expected[:, axis]
        assert min(np.abs(a - b).max(), np.abs(a + b).max()) < 1e-3 * np.abs(b).max(), axis
    panel.colour_by.setCurrentIndex(panel.colour_by.findData("norm"))  # the lengths of the mapped table's rows
    lengths = head.norm(dim=1).numpy()[drawn.ids]
    wait_for(qtbot, lambda: panel.view.colour_legend_entries()[:1] == [f"row length {lengths.max():.3g} (high)"], 30_000)

    analogies = window.analogies
    window.tabs.setCurrentWidget(analogies)
    analogies.hide_special.setChecked(False)  # every row, as the arithmetic below ranks them
    analogies.k.setValue(3)
    analogies.table_choice.setCurrentIndex(analogies.table_choice.findData("output"))
    analogies.set_words("␣king", "␣the", "␣and")
    wait_for(qtbot, lambda: "output head" in analogies.heading.text() and analogies.table.rowCount() == 3, 30_000)
    a, b, c = ids[" king"], ids[" the"], ids[" and"]
    rows = torch.nn.functional.normalize(head, dim=1)
    scores = (rows @ torch.nn.functional.normalize(rows[a] - rows[b] + rows[c], dim=0)).numpy()
    scores[[a, b, c]] = -np.inf
    assert list(analogies.table.ids) == np.argsort(-scores)[:3].tolist()

    path = window.save_session(tmp_path / "head.embviz")
    window.open_model("toy4")  # tied: one table, and every choice goes back to it
    wait_for(qtbot, lambda: panel.table_choice.isHidden() and analogies.table_choice.isHidden(), 60_000)
    assert panel.state.table == analogies.state.table == "input"
    window.set_projector(True)
    window.controls_action.setChecked(True)  # the drawer's controls shown: still no second table to choose
    assert analogies.table_choice.isHidden()
    window.set_projector(False)
    assert window.open_session(path)
    wait_for(qtbot, lambda: panel.state.projection is not None and panel.state.projection.table == "output", 60_000)
    assert analogies.state.table == "output" and not analogies.table_choice.isHidden()
    np.testing.assert_array_equal(panel.state.projection.coords, drawn.coords)  # the saved map, not a new one
