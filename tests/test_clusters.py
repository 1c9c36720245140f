"""Token kinds and clusters (core), their requests, the `clusters` command and the new map state in a session."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from embviz.core.maps.clusters import NAME_CHARS, _short, hdbscan_clusters, kmeans_clusters
from embviz.core.errors import Cancelled, EmbvizError
from embviz.core.table.token_kinds import BYTE, CONTINUATION, NUMBER, PUNCTUATION, SPECIAL, WORD, token_kinds


def test_token_kinds_of_real_smollm2_tokens(default_model):
    vocab = default_model.vocab
    kinds = token_kinds(vocab)
    of = lambda text: kinds[vocab.id_of(text)]  # noqa: E731
    assert of(" king") == WORD and of(" Monday") == WORD
    assert of("ing") == CONTINUATION and of("Hello") == CONTINUATION
    assert of("7") == NUMBER and of(".") == PUNCTUATION and of(" \n") == PUNCTUATION and of("!!") == PUNCTUATION
    assert of("<|endoftext|>") == SPECIAL
    assert kinds[sorted(vocab.partial_ids)[0]] == BYTE
    assert np.count_nonzero(kinds == SPECIAL) == len(vocab.special_ids) == 17
    assert np.count_nonzero(kinds == BYTE) >= len(vocab.partial_ids)


def test_token_kinds_of_the_lesson_models(toy4, spells):
    assert token_kinds(toy4.vocab).tolist() == [WORD] * 4  # cat, dog, car, truck: whole words
    assert token_kinds(spells.vocab).tolist() == [SPECIAL, WORD, WORD, WORD, WORD]  # <eos>, I, cast, heal, fireball


def test_kmeans_on_smollm2_sizes_sum_to_the_rows_and_names_are_central(default_model):
    found = kmeans_clusters(default_model, 50)
    assert found.ids.tolist() == list(range(49152)) and len(found.clusters) == 50
    assert sum(c.size for c in found.clusters) == 49152
    assert [c.size for c in found.clusters] == sorted((c.size for c in found.clusters), reverse=True)
    assert np.bincount(found.assignment).tolist() == [c.size for c in found.clusters]
    vocab = default_model.vocab
    kinds = token_kinds(vocab)
    for c, cluster in enumerate(found.clusters):
        assert all(found.assignment[i] == c for i in cluster.examples)  # examples are members
        assert all(kinds[i] not in (BYTE, SPECIAL) for i in cluster.examples)
        assert cluster.label == " ".join(_short(vocab.label(i)) for i in cluster.examples[:3])
        assert all(len(part) <= NAME_CHARS for part in cluster.label.split(" "))
    # The name is what lies closest to the cluster's mean direction.
    from embviz.core.table.similarity import unit_table

    units = unit_table(default_model, centered=True).numpy()
    members = np.flatnonzero(found.assignment == 0)
    centre = units[members].mean(0)
    best = members[np.argmax(units[members] @ centre)]
    assert found.clusters[0].examples[0] == best or kinds[best] in (BYTE, SPECIAL)
    assert kmeans_clusters(default_model, 50) is found  # cached per model and k


def test_kmeans_reports_progress_and_cancels_between_batches(toy4, default_model):
    seen = []

    def stop_at_third(fraction, stage, preview):
        seen.append((fraction, stage))
        if len(seen) == 3:
            raise Cancelled()

    with pytest.raises(Cancelled):
        kmeans_clusters(default_model, 7, stop_at_third)
    assert seen[0][1] == "k-means, pass 1 of 5" and seen[0][0] < seen[2][0] < 1
    assert "clusters:kmeans:7:0" not in default_model.cache  # a cancelled run is not cached
    with pytest.raises(EmbvizError, match="from 2 to 4"):
        kmeans_clusters(toy4, 5)
    pairs = {tuple(sorted(c.label.split())) for c in kmeans_clusters(toy4, 2).clusters}
    assert pairs == {("cat", "dog"), ("car", "truck")}


def test_hdbscan_of_a_map_finds_its_blobs(toy4):
    rng = np.random.default_rng(0)
    coords = np.vstack([rng.normal(0, 0.1, (40, 2)), rng.normal(5, 0.1, (40, 2)), [[20, 20]]])
    ids = np.arange(81) % 4  # the rows behind the points: only their names depend on them
    found = hdbscan_clusters(toy4, ids, coords, min_cluster_size=5)
    assert len(found.clusters) == 2 and [c.size for c in found.clusters] == [40, 40]
    assert found.assignment[-1] == -1  # the lone point is noise
    assert len(set(found.assignment[:40])) == 1 and found.assignment[0] != found.assignment[40]
    with pytest.raises(EmbvizError, match="at least 10"):
        hdbscan_clusters(toy4, ids[:5], coords[:5])


def test_point_values_and_clusters_requests(toy4):
    from embviz.bridge import requests as rq
    from embviz.bridge.handlers import run_request

    ids = np.array([3, 1])
    norms = run_request(toy4, rq.PointValues(by="norm", ids=ids), None)
    assert norms.values.tolist() == pytest.approx(toy4.table[[3, 1]].norm(dim=1).tolist())
    assert run_request(toy4, rq.PointValues(by="id", ids=ids), None).values.tolist() == [3.0, 1.0]
    found = run_request(toy4, rq.Clusters(k=2, ids=ids), lambda *a: None)
    assert found.codes.tolist() == [found.clusters.index(next(c for c in found.clusters if 3 in c.examples)),
                                    found.clusters.index(next(c for c in found.clusters if 1 in c.examples))]
    with pytest.raises(EmbvizError, match="kind, id or norm"):
        run_request(toy4, rq.PointValues(by="colour", ids=ids), None)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "embviz", *args], capture_output=True, text=True, timeout=600)


def test_clusters_command_json_on_smollm2(default_model):
    proc = run_cli("clusters", "--k", "20", "--of", " Monday", " Tuesday", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["k"] == 20 and len(out["clusters"]) == 20
    assert [set(c) for c in out["clusters"]] == [{"cluster", "size", "label", "examples"}] * 20
    assert sum(c["size"] for c in out["clusters"]) == 49152
    assert [c["cluster"] for c in out["clusters"]] == list(range(20))
    monday, tuesday = out["of"]
    expect = kmeans_clusters(default_model, 20)
    monday_id = default_model.vocab.id_of(" Monday")
    assert monday == {"token": " Monday", "id": monday_id, "cluster": expect.cluster_of(monday_id)}
    assert tuesday["token"] == " Tuesday" and 0 <= tuesday["cluster"] < 20
    assert [c["size"] for c in out["clusters"]] == [c.size for c in expect.clusters]  # the same seed: the same clusters


def test_clusters_command_text_and_messages():
    proc = run_cli("--model", "toy4", "clusters", "--k", "2", "--of", "cat")
    assert proc.returncode == 0, proc.stderr
    assert "2 clusters (k-means, k = 2) of 4 rows" in proc.stdout and "cat (id 0) is in cluster" in proc.stdout
    proc = run_cli("--model", "toy4", "clusters", "--k", "2", "--of", "zebra")
    assert proc.returncode == 2 and "'zebra' is not in the vocabulary" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("--model", "toy4", "clusters", "--k", "9")
    assert proc.returncode == 2 and "from 2 to 4 (got 9)" in proc.stderr


def test_session_keeps_colour_by_clusters_and_selection(tmp_path):
    from embviz.state.session import ModelRef, Session, SessionError, load_session, save_session
    from embviz.state.tabs import MapState, NeighboursState

    ref = ModelRef(source="toy4", name="toy4", fingerprint={"vocab_size": 4, "dim": 2})
    state = MapState(colour_by="cluster", cluster_method="hdbscan", clusters_k=12, selection=[3, 1])
    path = save_session(Session(model=ref, map=state, neighbours=NeighboursState(query=[0, 2])), tmp_path / "s.embviz")
    back = load_session(path)
    assert (back.map.colour_by, back.map.cluster_method, back.map.clusters_k, back.map.selection) == ("cluster", "hdbscan", 12, [3, 1])
    assert back.neighbours.query == [0, 2]
    bad = save_session(Session(model=ref, map=MapState(selection=[7])), tmp_path / "bad.embviz")
    with pytest.raises(SessionError, match="map.selection is not a list of token ids"):
        load_session(bad)
    bad = save_session(Session(model=ref, map=MapState(colour_by="rainbow")), tmp_path / "bad2.embviz")
    with pytest.raises(SessionError, match="colour_by"):
        load_session(bad)
