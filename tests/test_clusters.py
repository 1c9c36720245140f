"""Token kinds and clusters (core), their requests, the `clusters` command and the new map state in a session."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from embviz.core.maps.cluster_names import (
    FUNCTION_WORDS, NAME_CHARS, dictionary, is_whole_word, name_of, told_apart, trait_of,
)
from embviz.core.table.dictionary import stop_words
from embviz.core.maps.clusters import graph_clusters, hdbscan_clusters, kmeans_clusters
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


@pytest.mark.parametrize("method", ["graph", "kmeans"])
def test_clusters_of_smollm2_keep_the_word_sets_together(default_model, method):
    """At k = 50 each method does at least as well as scikit-learn's MiniBatchKMeans with its
    defaults on the unit rows (5 of 7 weekdays, 11 of 12 months, 4 of 10 number words)."""
    from bench.cluster_quality import wordset_ids, wordset_scores

    found = (graph_clusters if method == "graph" else kmeans_clusters)(default_model, 50)
    scores = wordset_scores(found.assignment, wordset_ids(default_model))
    share = {name: kept / total for name, (kept, total) in scores.items()}
    assert scores["weekdays"][0] >= 5 and scores["months"][0] >= 11 and share["numbers"] >= 0.4, scores
    assert 45 <= len(found.clusters) <= 55 if method == "graph" else len(found.clusters) == 50
    assert max(c.size for c in found.clusters) < 0.2 * 49152  # not one giant cluster that holds every set


@pytest.mark.parametrize("method", ["graph", "kmeans"])
def test_clusters_of_smollm2_are_named_by_central_whole_words(default_model, method):
    found = (graph_clusters if method == "graph" else kmeans_clusters)(default_model, 50)
    assert found.ids.tolist() == list(range(49152)) and sum(c.size for c in found.clusters) == 49152
    assert [c.size for c in found.clusters] == sorted((c.size for c in found.clusters), reverse=True)
    assert np.bincount(found.assignment).tolist() == [c.size for c in found.clusters]
    vocab = default_model.vocab
    kinds = token_kinds(vocab)
    for c, cluster in enumerate(found.clusters):
        assert all(found.assignment[i] == c for i in cluster.examples)  # examples are members
        assert len(cluster.label) <= NAME_CHARS or len(cluster.label.split(" ")) == 1
        words = np.flatnonzero((found.assignment == c) & np.array([is_whole_word(k, t, dictionary()) for k, t in zip(kinds, vocab.texts)]))
        assert len(words) > 0 or not cluster.readable
        if cluster.readable and not cluster.label.startswith(FUNCTION_WORDS):  # every word of the name is one of the cluster's whole words, uncut
            assert all(vocab.id_of(" " + w) in set(words.tolist()) for w in cluster.label.split(" "))
    readable = found.largest_readable()
    assert len(readable) == 5 and readable == sorted(readable) and all(found.clusters[c].readable for c in readable)
    assert (graph_clusters if method == "graph" else kmeans_clusters)(default_model, 50) is found  # cached per model and k


def test_weekdays_share_a_readable_cluster_in_smollm2(default_model):
    found = graph_clusters(default_model, 50)
    vocab = default_model.vocab
    weekdays = {found.cluster_of(vocab.id_of(" " + day)) for day in ("Monday", "Tuesday", "Friday", "Sunday")}
    assert len(weekdays) == 1
    name = found.clusters[weekdays.pop()].label
    assert found.clusters[found.cluster_of(vocab.id_of(" Monday"))].readable and not name.startswith("fragments")


def test_a_name_is_whole_words_fitted_or_fragments():
    texts = [" Monday", "abilistic", " Tuesday", " extraordinarily", " monday", " Fri", "~~~~", " 7", "<s>"]
    labels = ["␣" + t[1:] if t.startswith(" ") else t for t in texts]
    kinds = np.array([WORD, CONTINUATION, WORD, WORD, WORD, WORD, PUNCTUATION, NUMBER, SPECIAL])
    name = lambda ranked: name_of(np.array(ranked), kinds, texts, labels)  # noqa: E731
    # Fragments are skipped while whole words exist; "monday" repeats "Monday"; the long word
    # does not fit after two others, so a shorter one further down takes its place.
    assert name([1, 0, 2, 3, 4, 5]) == ("Monday Tuesday Fri", True)
    assert name([3, 1, 0]) == ("extraordinarily Monday", True)
    # A piece, signs and a number share nothing: named as pieces, by what is readable of them.
    assert name([1, 6, 7, 8]) == ("pieces: abilistic ~~~~ 7", False)
    assert name([8]) == ("byte pieces: <s>", False)  # nothing readable: said so, with the token's label
    long = [" Pneumonoultramicroscopicsilicovolcanoconiosis"]
    assert name_of(np.array([0]), np.array([WORD]), long, long) == (long[0].strip(), True)  # longer than the room, but whole
    assert is_whole_word(WORD, " Monday") and not is_whole_word(CONTINUATION, "abilistic") and not is_whole_word(WORD, " don't")


def test_a_word_is_a_common_dictionary_word_and_a_cluster_of_pieces_says_so():
    words = frozenset({"monday", "struggle", "a", "in"})
    assert is_whole_word(WORD, " Monday", words) and is_whole_word(WORD, " a", words)
    assert not is_whole_word(WORD, " strugg", words) and not is_whole_word(WORD, " H", words)
    texts = [" strugg", " dismant", " enthus", " advoc", " Monday"]
    labels = ["␣" + t[1:] for t in texts]
    kinds = np.array([WORD] * 5)
    # One word among five central tokens is under a quarter: the cluster is its pieces.
    assert name_of(np.arange(5), kinds, texts, labels, words) == ("pieces: strugg dismant advoc", False)
    assert name_of(np.array([4, 0, 1]), kinds, texts, labels, words) == ("Monday", True)


@pytest.mark.default_model
def test_the_largest_smollm2_clusters_are_named_by_dictionary_words_or_as_pieces(default_model):
    words = dictionary()
    assert words is not None and "monday" in words and "strugg" not in words and "amput" not in words
    found = graph_clusters(default_model, 50)
    for cluster in found.clusters[:10]:
        if cluster.readable and not cluster.label.startswith(FUNCTION_WORDS):
            assert all(w.lower() in words for w in cluster.label.split(" ")), cluster.label
    assert sum(c.readable for c in found.clusters[:10]) >= 5
    named = [c.label for c in found.clusters if c.label]
    assert len(set(named)) == len(named)  # no two clusters drawn under one name
    assert sum(name.startswith(FUNCTION_WORDS + ": ") for name in named) >= 2  # the glue, told apart
    # The coarse groups: a few, named the same way, each the union of whole fine clusters.
    assert 2 <= len(found.coarse) <= 8 and sum(c.size for c in found.coarse) == 49152
    assert np.bincount(found.coarse_of, weights=[c.size for c in found.clusters]).tolist() == [c.size for c in found.coarse]
    assert all(c.readable or not c.label.startswith("fragments") for c in found.coarse)


def test_whole_words_only_keeps_the_word_starts(default_model, toy4, spells):
    vocab = default_model.vocab
    keep = vocab.mask(words_only=True)
    assert keep.sum() == 25_845 and np.count_nonzero(token_kinds(vocab) == WORD) == 31_664
    assert keep[vocab.id_of(" Monday")] and not keep[vocab.id_of("abilistic")] and not keep[vocab.id_of("ervoir")]
    assert not keep[vocab.id_of("7")] and not keep[vocab.id_of(" \n")] and not keep[vocab.id_of("<|endoftext|>")]
    # The first pieces of longer words are word starts, not words: " amput" of " amputation".
    for piece in (" amput", " chees", " strugg", " pancreat", " Gor"):
        assert token_kinds(vocab)[vocab.id_of(piece)] == WORD and not keep[vocab.id_of(piece)], piece
    for word in (" cheese", " giraffe", " a", " in", " cat", " Mughal"):
        assert keep[vocab.id_of(word)], word
    # No space marker: every word is whole; <eos> is special.
    assert toy4.vocab.mask(words_only=True).tolist() == [True] * 4
    assert spells.vocab.mask(words_only=True).tolist() == [False, True, True, True, True]


def test_pieces_are_named_by_what_they_share_or_left_unnamed():
    assert trait_of(["\n   ", "\r\n      ", "\n\n  "], [PUNCTUATION] * 3) == "line breaks and indents"
    assert trait_of(["     ", "          "], [PUNCTUATION] * 2) == "runs of spaces"
    assert trait_of([" B", " P", " D", "H", " L"], [WORD, WORD, WORD, CONTINUATION, WORD]) == "single letters"
    assert trait_of(["----", "--------", "---"], [PUNCTUATION] * 3) == "runs of -"
    assert trait_of(["”).", "\"),", "”),", "\")."], [PUNCTUATION] * 4) == "punctuation: ) ” ."  # ties in order of appearance
    assert trait_of([" 7", "12", " 1999"], [NUMBER] * 3) == "numbers"
    assert trait_of([" strugg", " dismant", "MetaInfoClass", " 7"], [WORD, WORD, CONTINUATION, NUMBER]) == ""


def test_stop_words_name_no_cluster():
    texts = [" the", " in", " a", " is", " Monday", " more", " Tuesday", " Friday", " of"]
    labels = ["␣" + t[1:] for t in texts]
    kinds = np.array([WORD] * len(texts))
    words = frozenset(t.strip().lower() for t in texts)
    assert {"the", "in", "more"} <= stop_words() and "five" not in stop_words()  # numbers are a topic
    # Mostly stop words at the centre: the language's glue, not a topic.
    assert name_of(np.arange(len(texts)), kinds, texts, labels, words) == (FUNCTION_WORDS, True)
    # A few among words: skipped, never in a name.
    assert name_of(np.array([4, 5, 0, 6, 7]), kinds, texts, labels, words) == ("Monday Tuesday Friday", True)


@pytest.mark.default_model
def test_smollm2_clusters_at_k20_read_as_topics(default_model):
    """What `embviz clusters --k 20` shows a class: no stop word and no piece of a word in a
    name, the pieces' clusters named by what they share or as pieces, and every coarse name that
    holds a cluster's words in that cluster's order."""
    found = graph_clusters(default_model, 20)
    stop, words = stop_words(), dictionary()
    for cluster in found.clusters + found.coarse:
        assert not cluster.label.startswith("fragments"), cluster.label
        if cluster.readable and cluster.label != FUNCTION_WORDS:
            assert all(w.lower() not in stop and w.lower() in words for w in cluster.label.split(" ")), cluster.label
    labels = [c.label for c in found.clusters]
    # Two clusters of white space are numbered apart: their examples have nothing to print.
    assert {"punctuation: ) \" .", "single letters", "runs of -"} <= set(labels)
    assert any(name.startswith("line breaks and indents") for name in labels)
    assert any(name.startswith("runs of spaces") for name in labels)
    assert next(c.label for c in found.clusters if default_model.vocab.id_of(" five") in c.examples) == "five eight six"
    for g, group in enumerate(found.coarse):
        for c in np.flatnonzero(found.coarse_of == g):
            if sorted(found.clusters[c].label.casefold().split(" ")) == sorted(group.label.casefold().split(" ")):
                assert group.label == found.clusters[c].label


def test_clusters_report_progress_and_cancel(toy4, default_model):
    def stop_at(stage_start):
        def progress(fraction, stage, preview):
            seen.append((fraction, stage))
            if stage.startswith(stage_start):
                raise Cancelled()
        return progress

    seen = []
    with pytest.raises(Cancelled):
        kmeans_clusters(default_model, 7, stop_at("k-means"))
    assert seen == [(0.0, "k-means of 49,152 directions")]
    assert "clusters:kmeans:7:0" not in default_model.cache  # a cancelled run is not cached
    seen = []
    with pytest.raises(Cancelled):
        graph_clusters(default_model, 7, stop_at("Leiden"))
    assert "clusters:graph:7:0" not in default_model.cache
    with pytest.raises(EmbvizError, match="from 2 to 4"):
        kmeans_clusters(toy4, 5)
    for clusters in (kmeans_clusters, graph_clusters):
        pairs = {tuple(sorted(c.label.split())) for c in clusters(toy4, 2).clusters}
        assert pairs == {("cat", "dog"), ("car", "truck")}, clusters


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
    assert found.method == "graph" and found.largest_readable == [0, 1]  # the default; both named by whole words
    assert found.codes.tolist() == [found.clusters.index(next(c for c in found.clusters if 3 in c.examples)),
                                    found.clusters.index(next(c for c in found.clusters if 1 in c.examples))]
    assert len(found.coarse) == len(found.clusters) == len(found.coarse_of)  # two clusters are already few: no merging
    with pytest.raises(EmbvizError, match="kind, id or norm"):
        run_request(toy4, rq.PointValues(by="colour", ids=ids), None)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "embviz", *args], capture_output=True, text=True, timeout=600)


def test_clusters_command_json_on_smollm2(default_model):
    proc = run_cli("clusters", "--k", "20", "--of", " Monday", " Tuesday", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    expect = graph_clusters(default_model, 20)  # the default method; the same seed: the same clusters
    count = len(expect.clusters)
    assert 18 <= count <= 22  # the resolution is searched down from 1 (46 clusters) to come near k
    assert set(out) == {"k", "clusters", "of", "table"} and out["table"] == "input" and out["k"] == 20 and len(out["clusters"]) == count
    assert [set(c) for c in out["clusters"]] == [{"cluster", "size", "label", "examples"}] * count
    assert sum(c["size"] for c in out["clusters"]) == 49152
    assert [c["cluster"] for c in out["clusters"]] == list(range(count))
    assert [c["label"] for c in out["clusters"]] == [c.label for c in expect.clusters]
    monday, tuesday = out["of"]
    monday_id = default_model.vocab.id_of(" Monday")
    assert monday == {"token": " Monday", "id": monday_id, "cluster": expect.cluster_of(monday_id)}
    assert tuesday["token"] == " Tuesday" and tuesday["cluster"] == monday["cluster"]
    assert [c["size"] for c in out["clusters"]] == [c.size for c in expect.clusters]


def test_clusters_command_text_and_messages():
    proc = run_cli("--model", "toy4", "clusters", "--method", "kmeans", "--k", "2", "--of", "cat")
    assert proc.returncode == 0, proc.stderr
    assert "2 clusters (k-means, k = 2) of 4 rows" in proc.stdout and "cat (id 0) is in cluster" in proc.stdout
    proc = run_cli("--model", "toy4", "clusters", "--k", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert sorted(c["label"] for c in json.loads(proc.stdout)["clusters"]) == ["car truck", "cat dog"]
    proc = run_cli("--model", "toy4", "clusters", "--k", "2", "--of", "zebra")
    assert proc.returncode == 2 and "'zebra' is not in the vocabulary" in proc.stderr and "Traceback" not in proc.stderr
    proc = run_cli("--model", "toy4", "clusters", "--k", "9")
    assert proc.returncode == 2 and "from 2 to 4 (got 9)" in proc.stderr
    proc = run_cli("--model", "toy4", "clusters", "--method", "hdbscan")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr


def test_session_keeps_colour_by_clusters_and_selection(tmp_path):
    from embviz.state.session import ModelRef, Session, SessionError, load_session, save_session
    from embviz.state.tabs import MapState, NeighboursState

    ref = ModelRef(source="toy4", name="toy4", fingerprint={"vocab_size": 4, "dim": 2})
    state = MapState(colour_by="cluster", cluster_method="hdbscan", clusters_k=12, selection=[3, 1])
    path = save_session(Session(model=ref, states={"map": state, "neighbours": NeighboursState(query=[0, 2])}), tmp_path / "s.embviz")
    back = load_session(path)
    assert (back["map"].colour_by, back["map"].cluster_method, back["map"].clusters_k, back["map"].selection) == ("cluster", "hdbscan", 12, [3, 1])
    assert back["neighbours"].query == [0, 2]
    bad = save_session(Session(model=ref, states={"map": MapState(selection=[7])}), tmp_path / "bad.embviz")
    with pytest.raises(SessionError, match="map.selection is not a list of token ids"):
        load_session(bad)
    bad = save_session(Session(model=ref, states={"map": MapState(colour_by="rainbow")}), tmp_path / "bad2.embviz")
    with pytest.raises(SessionError, match="colour_by"):
        load_session(bad)


def test_graph_clusters_find_planted_groups_and_come_near_k():
    import torch

    from embviz.core.model import EmbeddingModel
    from embviz.core.table.vocab import vocabulary_from_words

    rng = np.random.default_rng(3)
    groups, n = 12, 1200
    rows = rng.normal(size=(groups, 32))[np.arange(n) % groups] * 3 + rng.normal(size=(n, 32))
    words = ["".join(chr(97 + i // 26 ** p % 26) for p in range(3)) for i in range(n)]  # "aaa", "baa", …: letters only
    model = EmbeddingModel(name="planted", source="test", table=torch.tensor(rows, dtype=torch.float32),
                           vocab=vocabulary_from_words(words), device=torch.device("cpu"), storage_dtype="float32", kind="table")
    found = graph_clusters(model, groups)
    assert len(found.clusters) == groups and [c.size for c in found.clusters] == [n // groups] * groups
    assert all(len(set(found.assignment[g::groups])) == 1 for g in range(groups))  # each planted group is one cluster
    for c, cluster in enumerate(found.clusters):  # a word-level vocabulary: every word is whole
        assert cluster.readable and all(found.cluster_of(model.vocab.id_of(w)) == c for w in cluster.label.split(" "))
    assert len(graph_clusters(model, 4).clusters) == groups  # 12 unconnected parts share no edge to merge by


def test_kmeans_and_hdbscan_fitted_in_a_child_match_the_same_fit_here(default_model, toy4):
    from embviz.core.device import compute_threads
    from embviz.core.maps.cluster_fit import hdbscan_fit, kmeans_fit
    from embviz.core.maps.clusters import NOISE, _named
    from embviz.core.table.similarity import unit_table

    units = unit_table(toy4, centered=True).cpu().numpy()
    here = _named(toy4, "kmeans", 2, np.arange(4), kmeans_fit(units, 2, 0, compute_threads()), units)
    child = kmeans_clusters(toy4, 2)
    assert np.array_equal(child.assignment, here.assignment)
    assert [c.label for c in child.clusters] == [c.label for c in here.clusters]
    rng = np.random.default_rng(1)
    coords = np.vstack([rng.normal(0, 0.2, (60, 2)), rng.normal(4, 0.3, (50, 2)), rng.uniform(-10, 10, (8, 2))])
    ids = np.arange(len(coords)) % toy4.vocab_size
    found = hdbscan_clusters(toy4, ids, coords, min_cluster_size=6)
    labels = hdbscan_fit(coords, 6)
    # The same partition, numbered by size in the child's result.
    assert np.array_equal(found.assignment == NOISE, labels == -1)
    pairs = {(int(a), int(b)) for a, b in zip(found.assignment, labels)}
    assert len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs})


def test_kmeans_of_the_default_model_in_a_child_matches_the_fit_here(default_model):
    from embviz.core.device import compute_threads
    from embviz.core.maps.cluster_fit import kmeans_fit
    from embviz.core.table.similarity import unit_table

    units = unit_table(default_model, centered=True).cpu().numpy()
    found = kmeans_clusters(default_model, 12, seed=3)
    here = kmeans_fit(units, 12, 3, compute_threads())
    # Renumbered by size: the same partition of all 49,152 rows.
    pairs = set(zip(found.assignment.tolist(), here.tolist()))
    assert len(pairs) == 12 == len({a for a, _ in pairs}) == len({b for _, b in pairs})


def test_a_coarse_name_with_a_clusters_words_reads_as_that_cluster():
    from embviz.core.maps.clusters import Cluster, _worded_as

    members = [Cluster(9, "Mughal Kabul Sultan", [], True), Cluster(5, "changed changing Change", [], True)]
    assert _worded_as(Cluster(20, "Sultan Mughal Kabul", [], True), members).label == "Mughal Kabul Sultan"
    assert _worded_as(Cluster(20, "changing change changed", [], True), members).label == "changed changing Change"
    assert _worded_as(Cluster(20, "Kabul Delhi Sultan", [], True), members).label == "Kabul Delhi Sultan"


def test_a_name_given_twice_is_told_apart_by_each_clusters_examples():
    names = [FUNCTION_WORDS, "Monday Friday", FUNCTION_WORDS, "pieces: ab", "pieces: ab", "numbers", FUNCTION_WORDS]
    examples = [[" the", " a", " of"], [" Monday"], ["\n", " in", " on"], [" ab"], [" ab"], [" 7"], [" in", " on"]]
    # Names that show their examples already, or whose examples are alike, are numbered by size.
    assert told_apart(names, examples) == [
        "function words: the a of", "Monday Friday", "function words: in on (1)", "pieces: ab (1)", "pieces: ab (2)",
        "numbers", "function words: in on (2)"]


@pytest.mark.default_model
@pytest.mark.parametrize("k", [20, 50, 100])
def test_every_smollm2_cluster_has_a_name_of_its_own(default_model, k):
    """The largest clusters at k = 50 were once left without a name, and two were both
    "function words": every cluster, fine and coarse, is named, and no name is given twice."""
    found = graph_clusters(default_model, k)
    for level in (found.clusters, found.coarse):
        labels = [c.label for c in level]
        assert all(label.strip() for label in labels), labels
        assert len(set(labels)) == len(labels), [name for name in labels if labels.count(name) > 1]
