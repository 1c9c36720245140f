"""Core operations on small tables with known answers."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from embviz.core import Cancelled, EmbvizError
from embviz.core.table.analogy import analogy
from embviz.core.table.analogy_benchmark import Question, evaluate, read_questions
from embviz.core.maps.projection import project, select_rows
from embviz.core.readers.assemble import assemble
from embviz.core.table.similarity import cosine_scores, nearest_neighbours, similarity
from embviz.core.table.vocab import vocabulary_from_words, visible


def table_model(rows, words=None):
    table = torch.tensor(rows, dtype=torch.float32)
    words = words or [f"w{i}" for i in range(len(rows))]
    return assemble(name="t", source="t", table=table, vocab=vocabulary_from_words(words), device=torch.device("cpu"), kind="table")


def random_model(n=400, d=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return table_model(torch.randn(n, d, generator=g).tolist())


def test_neighbours_exclude_self_and_match_brute_force():
    model = random_model()
    hits = nearest_neighbours(model, 7, k=5)
    assert 7 not in [h.id for h in hits]
    t = model.table / model.table.norm(dim=1, keepdim=True)
    brute = (t @ t[7]).numpy()
    brute[7] = -np.inf
    assert [h.id for h in hits] == list(np.argsort(-brute, kind="stable")[:5])
    assert hits[0].score == pytest.approx(float(brute.max()), abs=1e-6)


def test_ties_are_ordered_by_id():
    model = table_model([[1, 0], [0, 1], [0, 2], [0, 3], [1, 1]])
    hits = nearest_neighbours(model, 1, k=3)
    assert [h.id for h in hits] == [2, 3, 4]
    assert hits[0].score == hits[1].score == pytest.approx(1.0)


def test_filter_keeps_true_ids():
    model = random_model()
    keep = np.zeros(model.vocab_size, dtype=bool)
    keep[100:200] = True
    hits = nearest_neighbours(model, 7, k=10, keep=keep)
    assert all(100 <= h.id < 200 for h in hits)
    assert hits[0].score == pytest.approx(float(cosine_scores(model, 7)[100:200].max()), abs=1e-6)


def test_centering_changes_scores_and_is_the_cosine_of_centred_rows():
    model = table_model([[5, 1], [5, 2], [5, -1], [6, 0]])
    plain = similarity(model, 0, 2)
    centred = similarity(model, 0, 2, centered=True)
    x = model.table - model.table.mean(0)
    expected = float(x[0] @ x[2] / (x[0].norm() * x[2].norm()))
    assert centred == pytest.approx(expected, abs=1e-6) and abs(plain - centred) > 0.5


def test_zero_and_nan_rows_do_not_divide_by_zero():
    model = table_model([[1, 0], [0, 0], [float("nan"), 1], [1, 1]])
    assert any("all zeros" in n and "ids 1" in n for n in model.notes)
    assert any("NaN" in n and "ids 2" in n for n in model.notes)
    scores = cosine_scores(model, 0)
    assert torch.isfinite(scores).all()
    assert float(scores[1]) == 0.0 and float(scores[2]) == 0.0
    with pytest.raises(EmbvizError, match="all zeros"):
        nearest_neighbours(model, 1)
    with pytest.raises(EmbvizError, match="NaN"):
        nearest_neighbours(model, 2)


def test_k_bounds():
    model = random_model(20)
    assert len(nearest_neighbours(model, 0, k=1000)) == 19
    for bad in (0, -3):
        with pytest.raises(EmbvizError, match="at least 1"):
            nearest_neighbours(model, 0, k=bad)


# king − man + woman, built so that without exclusion an input ("woman") wins.
ROYAL = {
    "king": [1.0, 1.0, 0.0, 0.1], "man": [0.0, 1.0, 0.0, 0.0], "woman": [0.0, 0.0, 1.0, 0.0],
    "queen": [0.6, 0.0, 0.5, 0.6], "apple": [0.0, -1.0, -1.0, 1.0], "prince": [1.0, 0.6, 0.0, 0.5],
}


def test_analogy_exclude_toggle_and_input_ranks():
    words = list(ROYAL)
    model = table_model(list(ROYAL.values()), words)
    king, man, woman, queen = (words.index(w) for w in ("king", "man", "woman", "queen"))
    off = analogy(model, king, man, woman, k=3, exclude_inputs=False)
    on = analogy(model, king, man, woman, k=3, exclude_inputs=True)
    assert off.results[0].id == woman  # the seeds' point: without the rule an input wins
    assert off.results[1].id == queen
    assert on.results[0].id == queen
    assert not {king, man, woman} & {h.id for h in on.results}
    assert on.excluded_ids == sorted([king, man, woman])
    ranks = {r.role: r.rank for r in on.input_ranks}
    assert ranks == {"A": 4, "B": 5, "C": 1}
    # 3CosAdd equals cosine with the normalised target.
    t = model.table / model.table.norm(dim=1, keepdim=True)
    target = t[king] - t[man] + t[woman]
    assert on.results[0].score == pytest.approx(float(t[queen] @ target / target.norm()), abs=1e-6)


def test_analogy_vector_inputs_are_excluded_too():
    words = list(ROYAL)
    model = table_model(list(ROYAL.values()), words)
    king_vec = model.table[words.index("king")] * 3.0  # same direction, another length
    result = analogy(model, king_vec, words.index("man"), words.index("woman"), k=3)
    assert words.index("king") in result.excluded_ids
    assert result.results[0].token == "queen"


def test_analogy_3cosmul():
    words = list(ROYAL)
    model = table_model(list(ROYAL.values()), words)
    result = analogy(model, 0, 1, 2, k=1, method="mul")
    t = model.table / model.table.norm(dim=1, keepdim=True)
    cos = lambda i: (t @ t[i] + 1) / 2  # noqa: E731
    scores = cos(0) * cos(2) / (cos(1) + 1e-3)
    scores[[0, 1, 2]] = -np.inf
    assert result.results[0].id == int(torch.argmax(scores))


def test_benchmark_matches_a_loop_over_questions():
    model = random_model(60, 8, seed=3)
    rng = np.random.default_rng(0)
    questions = [Question("s1" if i < 30 else "s2", tuple(f"w{j}" for j in rng.choice(60, 4, replace=False))) for i in range(50)]
    # Make a third of them answerable exactly.
    for q in questions[::3]:
        a, b, c, d = (int(w[1:]) for w in q.words)
        model.table[d] = model.table[b] / model.table[b].norm() - model.table[a] / model.table[a].norm() + model.table[c] / model.table[c].norm()
    model.cache.clear()
    result = evaluate(model, questions, batch=7)
    excluded = included = 0
    for q in questions:
        a, b, c, d = (int(w[1:]) for w in q.words)
        inc = analogy(model, b, a, c, k=1, exclude_inputs=False).results[0].id
        exc = analogy(model, b, a, c, k=1, exclude_inputs=True).results[0].id
        included += inc == d
        excluded += exc == d
    assert result.kept == 50 and result.total == 50
    assert result.accuracy_excluded == pytest.approx(excluded / 50)
    assert result.accuracy_included == pytest.approx(included / 50)
    assert {s.name for s in result.sections} == {"s1", "s2"}
    assert result.accuracy_excluded > 0.2  # the planted answers are found


def test_benchmark_file_has_19544_questions_in_14_sections():
    questions = read_questions()
    assert len(questions) == 19544
    assert len({q.section for q in questions}) == 14


def test_pca_matches_sklearn_up_to_sign():
    from sklearn.decomposition import PCA

    model = random_model(500, 12)
    proj = project(model, "pca", normalize=False)
    ref = PCA(2, svd_solver="full").fit_transform(model.table.numpy())
    for axis in range(2):
        sign = np.sign(np.dot(proj.coords[:, axis], ref[:, axis]))
        np.testing.assert_allclose(proj.coords[:, axis] * sign, ref[:, axis], atol=1e-3)
    assert proj.ids.tolist() == list(range(500))
    assert 0 < proj.explained[1] <= proj.explained[0] < 1


def test_default_pca_of_unit_rows_matches_sklearn_over_several_chunks(monkeypatch):
    """The map's default path scales raw rows by 1/‖row‖ chunk by chunk, without a unit
    table: it must equal PCA of the normalised rows."""
    from sklearn.decomposition import PCA

    from embviz.core.maps import projection
    from embviz.core.table.similarity import UNIT_TABLE

    monkeypatch.setattr(projection, "_CHUNK", 64)  # 500 rows: eight chunks, the last one short
    g = torch.Generator().manual_seed(5)
    table = torch.randn(500, 12, generator=g) * (0.1 + 10 * torch.rand(500, 1, generator=g)) + 0.3
    model = table_model(table.tolist())
    proj = project(model, "pca")
    assert UNIT_TABLE not in model.cache  # the chunked path was the one taken
    units = table.numpy() / np.linalg.norm(table.numpy(), axis=1, keepdims=True)
    ref = PCA(2, svd_solver="full").fit(units)
    expected = ref.transform(units)
    for axis in range(2):
        sign = np.sign(np.dot(proj.coords[:, axis], expected[:, axis]))
        np.testing.assert_allclose(proj.coords[:, axis] * sign, expected[:, axis], atol=1e-4)
    np.testing.assert_allclose(proj.explained, ref.explained_variance_ratio_, rtol=1e-4)


def test_non_finite_logits_keep_the_other_probabilities_finite():
    from embviz.core.lm.logits import next_token_logits

    words = ["a", "b", "c", "d", "e"]
    table = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5], [2.0, 0.0]])
    head = torch.tensor([[1.0, 0.0], [float("nan"), 0.0], [0.0, 1.0], [float("inf"), 0.0], [-1.0, 0.0]])
    model = assemble(name="t", source="t", table=table, vocab=vocabulary_from_words(words), device=torch.device("cpu"),
                     kind="embedding+linear", head=head)
    result = next_token_logits(model, "a", k=5)
    assert result.bad_ids == [1, 3] and any("NaN or +Inf" in n and "1, 3" in n for n in result.notes)
    assert [r.token for r in result.results] == ["a", "c", "e"]  # the bad ones are not ranked
    probs = [r.prob for r in result.results]
    assert all(np.isfinite(probs)) and sum(probs) == pytest.approx(1.0)
    assert probs[0] == pytest.approx(np.exp(1) / (np.exp(1) + 1 + np.exp(-1)))
    assert result.path == "direct"  # embedding + linear has only the direct path


def test_projection_subset_keeps_true_ids_and_one_column_table():
    model = random_model(300)
    keep = np.zeros(300, dtype=bool)
    keep[::3] = True
    ids = select_rows(model, limit=50, keep=keep)
    proj = project(model, "pca", ids)
    assert proj.ids.tolist() == list(range(0, 150, 3))
    thin = table_model([[float(i)] for i in range(1, 6)])
    assert project(thin, "pca", normalize=False).coords.shape == (5, 2)


def test_tsne_reports_progress_with_previews_and_cancels():
    model = random_model(200, 10)
    seen = []

    def progress(fraction, stage, preview):
        seen.append((fraction, preview))

    proj = project(model, "tsne", progress=progress)
    previews = [p for _, p in seen if isinstance(p, np.ndarray) and p.shape == (200, 2)]
    assert len(previews) >= 10
    assert [f for f, _ in seen] == sorted(f for f, _ in seen) and seen[-1][0] == 1.0
    assert proj.coords.shape == (200, 2) and np.isfinite(proj.coords).all()
    calls = []

    def cancel_after_three(fraction, stage, preview):
        calls.append(fraction)
        if len(calls) > 3:
            raise Cancelled()

    with pytest.raises(Cancelled):
        project(model, "tsne", progress=cancel_after_three)
    assert len(calls) == 4


def test_tsne_on_too_few_rows_is_a_message():
    with pytest.raises(EmbvizError, match="at least 10 rows"):
        project(random_model(5), "tsne")
    assert any("Perplexity lowered" in n for n in project(random_model(40), "tsne").notes)


def _arcs(clusters=5, per=40, dim=16, seed=7):
    """`clusters` groups of `per` rows: each an arc in a plane of its own around a centre of
    its own, so a row's true cosine neighbours are its neighbours along its arc."""
    rng = np.random.default_rng(seed)
    axes = np.linalg.qr(rng.normal(size=(dim, dim)))[0]
    t = np.linspace(0, 1.2, per)[:, None]
    rows = [axes[c] + 0.3 * (np.cos(t) * axes[2 * c + 5] + np.sin(t) * axes[2 * c + 6])
            + rng.normal(scale=0.01, size=(per, dim)) for c in range(clusters)]
    return np.vstack(rows).astype(np.float32), np.repeat(np.arange(clusters), per)


def test_umap_keeps_the_true_neighbours_and_the_clusters_the_same_for_a_seed():
    from scipy.spatial import cKDTree

    from embviz.core.maps.knn import neighbour_preservation

    rows, labels = _arcs()
    n = len(rows)
    ids = np.arange(n)
    model = table_model(rows)
    proj = project(model, "umap", seed=0)
    coords = proj.coords
    assert coords.shape == (n, 2) and np.isfinite(coords).all() and (proj.ids == ids).all()
    # Faithful: it keeps most of each row's 10 nearest rows by cosine in all 16 dimensions (0.89
    # when written), far more than PCA's two axes (0.27) or the same points shuffled (0.05).
    kept = neighbour_preservation(model, ids, coords, k=10, sample=n).share
    pca_kept = neighbour_preservation(model, ids, project(model, "pca").coords, k=10, sample=n).share
    assert kept >= 0.6 and kept > 2 * pca_kept, (kept, pca_kept)
    # The planted clusters land together: a row's 10 nearest points on the map are of its cluster.
    _, near = cKDTree(coords).query(coords, k=11)
    assert (labels[near[:, 1:]] == labels[:, None]).mean() >= 0.95
    # The same rows and seed give the same map. (On a fresh model: a second UMAP of the same
    # model starts from a PCA of the unit table the first one built, which differs from the
    # first PCA in the last bits, and its layout differs.)
    again = project(table_model(rows), "umap", seed=0).coords
    np.testing.assert_array_equal(again, coords)


def test_visible_labels():
    assert visible(" king") == "␣king"
    assert visible("\n") == "↵"
    assert visible("a\x00") == "a\\x00"
    assert visible("") == "∅"


def test_table_knn_is_exact_cosine_over_every_dimension_and_kept(monkeypatch):
    from embviz.core.maps import knn
    from embviz.core.maps.knn import table_knn

    model = random_model(n=300, d=7, seed=5)
    ids = np.arange(300)
    positions, cosines = table_knn(model, ids, 5)
    unit = model.table / model.table.norm(dim=1, keepdim=True)
    cos = unit @ unit.T
    cos.fill_diagonal_(-float("inf"))
    ref = torch.topk(cos, 5)
    assert (positions == ref.indices.numpy()).all()
    np.testing.assert_allclose(cosines, ref.values.numpy(), atol=1e-5)
    # Kept for the model: a second map of the same rows (fewer neighbours too) skips it.
    monkeypatch.setattr(knn, "self_top_k", lambda *a, **k: pytest.fail("computed again"))
    again, _ = table_knn(model, ids, 3)
    assert (again == positions[:, :3]).all()
    # A subset: positions index into it, true ids never renumbered.
    monkeypatch.undo()
    some = np.array([7, 3, 250, 11, 90, 42])
    sub, _ = table_knn(model, some, 2)
    sub_cos = cos[some][:, some]
    assert (sub == torch.topk(sub_cos, 2).indices.numpy()).all()


def test_neighbour_preservation_counts_the_true_neighbours_a_map_keeps():
    from embviz.core.maps.knn import neighbour_preservation

    # A 20 × 20 grid on a sphere's small patch, rotated into 9 dimensions: its true
    # neighbours are its grid neighbours, so the grid itself keeps all of them.
    g = np.stack(np.meshgrid(np.arange(20.0), np.arange(20.0)), -1).reshape(-1, 2) * 0.01
    rows = np.hstack([g, np.ones((400, 1))])  # unit-ish rows whose cosines follow the grid distances
    q, _ = np.linalg.qr(np.random.default_rng(0).normal(size=(9, 9)))
    model = table_model((np.hstack([rows, np.zeros((400, 6))]) @ q).astype(np.float32))
    ids = np.arange(400)
    faithful = neighbour_preservation(model, ids, g, k=4, sample=400)
    assert faithful.share > 0.9 and (faithful.k, faithful.sample, faithful.rows) == (4, 400, 400)
    shuffled = g[np.random.default_rng(1).permutation(400)]
    assert neighbour_preservation(model, ids, shuffled, k=4, sample=400).share < 0.1
    sampled = neighbour_preservation(model, ids, g, k=4, sample=100)
    assert sampled.sample == 100 and sampled.share > 0.9
    assert "keeps" in sampled.caption() and "100 sampled rows" in sampled.how_measured()


def test_tsne_and_umap_take_their_graph_from_the_full_table(monkeypatch):
    """The graph is asked of the full table (3 × perplexity neighbours for t-SNE), even
    for a table whose loud first 60 dimensions fill PCA-50, and the maps keep more of
    the table's neighbours than PCA does."""
    from embviz.core.maps import projection
    from embviz.core.maps.knn import neighbour_preservation

    rng = np.random.default_rng(3)
    labels = np.repeat(np.arange(6), 60)
    rows = rng.normal(size=(360, 120)) * np.r_[np.full(60, 3.0), np.full(60, 0.05)]  # loud first 60 dims
    rows[:, 60:66] += np.eye(6)[labels] * 1.5  # clusters in quiet dimensions
    model = table_model(rows.astype(np.float32))
    calls = []
    real = projection.table_knn
    monkeypatch.setattr(projection, "table_knn", lambda *a, **k: calls.append(a[2]) or real(*a, **k))
    ids = np.arange(360)
    tsne = project(model, "tsne")
    assert calls == [90]  # 3 × perplexity neighbours, from the full table
    pca_kept = neighbour_preservation(model, ids, project(model, "pca").coords).share
    assert neighbour_preservation(model, ids, tsne.coords).share > pca_kept
    umap = project(model, "umap")
    assert calls[-1] == 14  # umap-learn's 15 counts the row itself
    assert neighbour_preservation(model, ids, umap.coords).share > max(0.2, pca_kept)


def _tsne_affinities(x: np.ndarray):
    from openTSNE.affinity import PerplexityBasedNN

    return PerplexityBasedNN(x, perplexity=30, method="exact", random_state=0, verbose=False)


def test_torch_tsne_gradient_matches_opentsne():
    """Our objective is openTSNE's math: on the same grid the gradients agree to rounding."""
    from openTSNE.tsne import kl_divergence_fft

    from embviz.core.maps.tsne_gradient import TorchObjective

    rng = np.random.default_rng(0)
    P = _tsne_affinities(rng.normal(size=(1500, 10))).P  # noqa: N806 - t-SNE's name for the affinities
    y = rng.normal(size=(1500, 2)) * 5  # a span under 50 units: both use the 50-box grid
    fft = {"n_interpolation_points": 3, "min_num_intervals": 50, "ints_in_interval": 1}
    kl_ref, g_ref = kl_divergence_fft(y, P, 1, fft, should_eval_error=True)
    for torch_attractive in (False, True):
        kl, g = TorchObjective("cpu", torch_attractive)(y, P, should_eval_error=True)
        np.testing.assert_allclose(g, g_ref, rtol=1e-7, atol=1e-9 * np.abs(g_ref).max())
        assert kl == pytest.approx(kl_ref, rel=1e-7)


def test_repulsive_gradient_on_a_wide_map_is_as_accurate_as_opentsne():
    """On a sparse map 400 boxes wide (a grid of another size than openTSNE picks), the
    interpolation error against the exact O(n²) sum is no worse than openTSNE's own."""
    from openTSNE import _tsne

    from embviz.core.maps.tsne_gradient import repulsive_gradient

    y = torch.from_numpy(np.random.default_rng(1).normal(size=(3000, 2)) * 60)
    q = 1 / (1 + torch.cdist(y, y) ** 2)
    q.fill_diagonal_(0)
    z_exact = float(q.sum())
    exact = (y * (q * q).sum(1, keepdim=True) - (q * q) @ y) / z_exact
    theirs = np.zeros((3000, 2))
    z_theirs = _tsne.estimate_negative_gradient_fft_2d(y.numpy().copy(), theirs, 3, 50, 1, 1)
    ours, z_ours = repulsive_gradient(y)

    def error(gradient: torch.Tensor) -> float:
        return float((gradient - exact).norm(dim=1).mean() / exact.norm(dim=1).mean())

    assert error(ours) <= 1.05 * error(-torch.from_numpy(theirs)) and error(ours) < 0.05
    assert abs(z_ours / z_exact - 1) <= 1.05 * abs(z_theirs / z_exact - 1)


def test_tsne_with_the_torch_objective_separates_clusters():
    from openTSNE import TSNEEmbedding

    from embviz.core.maps.tsne_gradient import TorchObjective

    rng = np.random.default_rng(2)
    labels = np.repeat(np.arange(3), 200)
    x = rng.normal(size=(600, 10)) + 8 * np.eye(10)[labels]
    init = rng.normal(size=(600, 2)) * 1e-4
    embedding = TSNEEmbedding(init, _tsne_affinities(x), negative_gradient_method=TorchObjective("cpu", True), random_state=0, verbose=False)
    embedding = embedding.optimize(250, exaggeration=12, momentum=0.5, inplace=True)
    embedding = embedding.optimize(250, momentum=0.8, inplace=True)
    coords = torch.from_numpy(np.asarray(embedding))
    d = torch.cdist(coords, coords)
    d.fill_diagonal_(float("inf"))
    nearest = d.argmin(1).numpy()
    assert (labels[nearest] == labels).mean() > 0.98
    assert np.isfinite(coords.numpy()).all()
