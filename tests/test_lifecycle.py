"""The model lifecycle through the compute worker and the window: one model at a time,
every request ends exactly once, every job stoppable, every screen current."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest
import torch
from safetensors.torch import save_file

from embviz.bridge import requests as rq
from embviz.bridge import registry
from embviz.bridge import handlers
from embviz.bridge.worker import ComputeWorker
from helpers import wait_until_idle

END_SIGNALS = ("finished", "failed", "cancelled")


@pytest.fixture
def worker(qtbot):
    w = ComputeWorker()
    yield w
    w.shutdown()


class Ends:
    """Every end signal of a worker, by request id."""

    def __init__(self, worker: ComputeWorker) -> None:
        self.events: list[tuple[str, str, int, object]] = []
        worker.finished.connect(lambda ch, rid, res: self.events.append(("finished", ch, rid, res)))
        worker.failed.connect(lambda ch, rid, msg: self.events.append(("failed", ch, rid, msg)))
        worker.cancelled.connect(lambda ch, rid: self.events.append(("cancelled", ch, rid, None)))

    def of(self, rid: int) -> list[tuple[str, object]]:
        return [(kind, payload) for kind, _, r, payload in self.events if r == rid]

    def ended(self, rid: int) -> bool:
        return bool(self.of(rid))

    def kind(self, rid: int) -> str:
        (kind, _), = self.of(rid)
        return kind


def load(qtbot, worker, source, ends: Ends | None = None):
    ends = ends or Ends(worker)
    rid = worker.submit(rq.LoadModel(source=source, device="cpu"))
    qtbot.waitUntil(lambda: ends.ended(rid), timeout=120_000)
    assert ends.kind(rid) == "finished", ends.of(rid)
    return ends.of(rid)[0][1]


def random_table(tmp_path, rows=5000, dim=16, name="table") -> str:
    path = tmp_path / f"{name}.safetensors"
    save_file({"embedding.weight": torch.randn(rows, dim, generator=torch.Generator().manual_seed(rows))}, str(path))
    return str(path)


def word_model(tmp_path, words: list[str]) -> str:
    """An embedding + linear model of the lessons' kind with the given words."""
    path = tmp_path / "words.safetensors"
    gen = torch.Generator().manual_seed(1)
    n = len(words)
    save_file({"embedding.weight": torch.randn(n, 4, generator=gen), "linear.weight": torch.randn(n, 4, generator=gen)}, str(path))
    (tmp_path / "words.vocab.json").write_text(json.dumps(words), encoding="utf-8")
    return str(path)


# --- the worker ---------------------------------------------------------------------------------

def test_a_switch_during_a_running_tsne_ends_it_and_installs_the_new_model(qtbot, worker, tmp_path):
    ends = Ends(worker)
    first = load(qtbot, worker, random_table(tmp_path), ends)
    previews = []
    worker.progressed.connect(lambda ch, rid, f, stage, preview: isinstance(preview, tuple) and previews.append(rid))
    tsne = worker.submit(rq.Project(method="tsne"))
    qtbot.waitUntil(lambda: tsne in previews, timeout=120_000)  # it is iterating
    assert not ends.ended(tsne)
    switch = worker.submit(rq.LoadModel(source="toy4", device="cpu"))
    qtbot.waitUntil(lambda: ends.ended(tsne) and ends.ended(switch), timeout=60_000)
    assert ends.kind(tsne) == "cancelled"
    assert ends.kind(switch) == "finished"
    summary = ends.of(switch)[0][1]
    assert summary.generation == first.generation + 1 == worker.generation
    assert worker.model.name == "lesson:toy4" and summary.labels == ["cat", "dog", "car", "truck"]


def test_a_burst_of_requests_each_end_exactly_once(qtbot, worker, tmp_path):
    ends = Ends(worker)
    load(qtbot, worker, "toy4", ends)
    words = ["cat", "dog", "car", "truck", "zebra"]
    ids = [worker.submit(rq.Neighbours(query=words[i % 5], k=2)) for i in range(20)]
    ids += [worker.submit(rq.Analogy(a="cat", b="dog", c="car")) for _ in range(5)]
    ids += [worker.submit(rq.Project(method="pca")) for _ in range(3)]
    ids.append(worker.submit(rq.Search(pattern="c")))
    qtbot.waitUntil(lambda: all(ends.ended(rid) for rid in ids), timeout=60_000)
    wait_until_idle(qtbot, worker)  # nothing ends twice, even late: nothing is left to end
    counts = Counter(r for _, _, r, _ in ends.events)
    assert all(counts[rid] == 1 for rid in ids), counts
    # The newest of each channel is answered; the rest were replaced, and say so.
    assert ends.kind(ids[19]) == "failed"  # "zebra" is not in the vocabulary
    assert ends.kind(ids[24]) == "finished" and ends.kind(ids[27]) == "finished"
    # An older request the worker reached before it was replaced ends as it would alone.
    for i, rid in enumerate(ids[:19]):
        alone = "failed" if words[i % 5] == "zebra" else "finished"
        assert ends.kind(rid) in {"cancelled", alone}, (words[i % 5], ends.of(rid))


def test_back_to_back_loads_install_only_the_last(qtbot, worker, tmp_path, monkeypatch):
    ends = Ends(worker)
    installed = []
    worker.finished.connect(lambda ch, rid, res: ch == "load" and installed.append(res.info["name"]))
    reading, release = threading.Event(), threading.Event()
    real_open = registry.HANDLERS[rq.LoadModel]

    def first_is_slow(model, request, progress):
        if request.source.endswith("big.safetensors"):
            reading.set()
            release.wait(30)  # still reading when the other two are asked for
        return real_open(model, request, progress)

    monkeypatch.setitem(registry.HANDLERS, rq.LoadModel, first_is_slow)
    big, small = random_table(tmp_path, 2000, 16, "big"), random_table(tmp_path, 300, 8, "small")
    first = worker.submit(rq.LoadModel(source=big, device="cpu"))
    assert reading.wait(30)
    second = worker.submit(rq.LoadModel(source=small, device="cpu"))
    third = worker.submit(rq.LoadModel(source="spells", device="cpu"))
    release.set()
    qtbot.waitUntil(lambda: all(ends.ended(r) for r in (first, second, third)), timeout=60_000)
    assert [ends.kind(r) for r in (first, second, third)] == ["cancelled", "cancelled", "finished"]
    assert installed == ["lesson:spells"] and worker.model.name == "lesson:spells" and worker.generation == 1


@pytest.mark.parametrize("pause_at", ["midway", "after reading, before installing"])
def test_a_cancelled_load_is_never_installed(qtbot, worker, tmp_path, monkeypatch, pause_at):
    from conftest import make_tiny_model

    make_tiny_model(tmp_path / "tiny")
    ends = Ends(worker)
    load(qtbot, worker, "toy4", ends)
    before = worker.model
    paused, release = threading.Event(), threading.Event()
    real_open = registry.HANDLERS[rq.LoadModel]

    def pause():
        paused.set()
        release.wait(30)

    def paused_open(current, request, progress):
        def report(fraction, stage="", preview=None):
            if pause_at == "midway" and stage == "Reading the embedding table":
                pause()
            progress(fraction, stage, preview)

        model = real_open(current, request, report)
        if pause_at != "midway":
            pause()  # the model is read; the worker has not installed it yet
        return model

    monkeypatch.setitem(registry.HANDLERS, rq.LoadModel, paused_open)
    rid = worker.submit(rq.LoadModel(source=str(tmp_path / "tiny"), device="cpu"))
    assert paused.wait(30)
    worker.cancel("load")
    release.set()
    qtbot.waitUntil(lambda: ends.ended(rid), timeout=30_000)
    assert ends.kind(rid) == "cancelled"
    assert worker.model is before and worker.generation == 1


def test_a_quick_request_in_flight_during_a_load_never_answers_for_the_new_model(qtbot, worker, monkeypatch):
    ends = Ends(worker)
    load(qtbot, worker, "toy4", ends)
    inside, release = threading.Event(), threading.Event()
    real_run = handlers.run_request

    def held(model, request, progress):
        if isinstance(request, rq.Neighbours):
            inside.set()
            release.wait(30)
        return real_run(model, request, progress)

    monkeypatch.setattr(handlers, "run_request", held)  # what the worker runs, looked up per job
    rid = worker.submit(rq.Neighbours(query=1, k=2))
    assert inside.wait(30)
    load(qtbot, worker, "spells", ends)  # completes while the lookup is inside
    release.set()
    qtbot.waitUntil(lambda: ends.ended(rid), timeout=30_000)
    assert ends.kind(rid) == "cancelled"
    # A request stamped with the old generation never runs on the new model.
    stale = rq.Neighbours(query=1, k=2)
    stale.generation = 1
    stale_id = worker.submit(stale)
    fresh_id = worker.submit(rq.Analogy(a=1, b=1, c=2, k=1, exclude_inputs=False))
    qtbot.waitUntil(lambda: ends.ended(stale_id) and ends.ended(fresh_id), timeout=30_000)
    assert ends.kind(stale_id) == "cancelled"
    assert ends.of(fresh_id)[0][1].input_labels == ["I", "I", "cast"]  # spells' vocabulary


def test_the_language_model_loads_on_its_own_lane(qtbot, worker, tmp_path, monkeypatch):
    from conftest import make_tiny_model

    folder = tmp_path / "tiny"
    make_tiny_model(folder)
    ends = Ends(worker)
    summary = load(qtbot, worker, str(folder), ends)
    assert summary.lm_needed
    # Logits on the quick lane never build the model: they say it is not loaded yet.
    logits = worker.submit(rq.Logits(text="the king"))
    qtbot.waitUntil(lambda: ends.ended(logits), timeout=30_000)
    assert ends.kind(logits) == "failed" and "not loaded yet" in ends.of(logits)[0][1]
    inside, release = threading.Event(), threading.Event()
    host = worker.model.lm_host  # the window's language model is built in a child process
    real_start = host.start

    def slow_start(progress):
        inside.set()
        release.wait(30)
        return real_start(progress)

    host.start = slow_start
    lm = worker.submit(rq.LoadLanguageModel())
    assert inside.wait(30)
    lookup = worker.submit(rq.Neighbours(query=5, k=3))
    qtbot.waitUntil(lambda: ends.ended(lookup), timeout=10_000)  # answered while the model builds
    assert ends.kind(lookup) == "finished" and not ends.ended(lm)
    release.set()
    qtbot.waitUntil(lambda: ends.ended(lm), timeout=60_000)
    assert ends.kind(lm) == "finished" and worker.model.lm_loaded
    logits = worker.submit(rq.Logits(text="the king"))
    qtbot.waitUntil(lambda: ends.ended(logits), timeout=30_000)
    assert ends.kind(logits) == "finished" and ends.of(logits)[0][1].path == "full"


def test_a_language_model_load_cancelled_installs_nothing(qtbot, worker, tmp_path):
    from conftest import make_tiny_model

    folder = tmp_path / "tiny"
    make_tiny_model(folder)
    ends = Ends(worker)
    load(qtbot, worker, str(folder), ends)
    inside, release = threading.Event(), threading.Event()
    host = worker.model.lm_host
    real_start = host.start
    host.start = lambda progress: (inside.set(), release.wait(30), real_start(progress))[2]
    lm = worker.submit(rq.LoadLanguageModel())
    assert inside.wait(30)
    worker.cancel(rq.LoadLanguageModel.channel)
    release.set()
    qtbot.waitUntil(lambda: ends.ended(lm), timeout=60_000)
    assert ends.kind(lm) == "cancelled" and not worker.model.lm_loaded


def test_a_catastrophic_regex_times_out_with_a_message(qtbot, worker, tmp_path):
    ends = Ends(worker)
    load(qtbot, worker, word_model(tmp_path, ["cat", "a" * 40 + "!", "dog"]), ends)
    bad = worker.submit(rq.Search(pattern="(a|aa)+$", regex=True))
    qtbot.waitUntil(lambda: ends.ended(bad), timeout=30_000)
    assert ends.kind(bad) == "failed"
    assert "took longer than" in ends.of(bad)[0][1] and "(a|aa)+$" in ends.of(bad)[0][1]
    good = worker.submit(rq.Search(pattern="^d", regex=True))  # the lane is free again
    qtbot.waitUntil(lambda: ends.ended(good), timeout=10_000)
    assert ends.of(good) == [("finished", [2])]


def test_umap_is_cancelled_at_once_and_leaves_no_process(qtbot, worker, tmp_path):
    import psutil

    ends = Ends(worker)
    load(qtbot, worker, random_table(tmp_path, 2000), ends)
    stages = []
    worker.progressed.connect(lambda ch, rid, f, stage, preview: stages.append(stage))
    rid = worker.submit(rq.Project(method="umap"))
    qtbot.waitUntil(lambda: any(s.startswith("UMAP: running") for s in stages), timeout=60_000)
    children = psutil.Process().children(recursive=True)
    assert children  # UMAP runs in a child process
    worker.cancel("project")
    qtbot.waitUntil(lambda: ends.ended(rid), timeout=10_000)
    assert ends.kind(rid) == "cancelled"
    psutil.wait_procs(children, timeout=5)
    assert not any(c.is_running() and c.status() != psutil.STATUS_ZOMBIE for c in children)


# --- the window -----------------------------------------------------------------------------------

@pytest.mark.default_model
def test_word_set_ticks_and_map_agree_after_add_and_untick_in_flight(qtbot, window):
    panel = window.map_panel
    window.open_model(None)
    qtbot.waitUntil(lambda: panel.view.ids.size == 49152, timeout=120_000)
    panel.show_word_set("weekdays")
    qtbot.waitUntil(lambda: "weekdays" in panel.view.word_set_names(), timeout=30_000)
    panel.add_word_set("planets", ["Mars", "Venus", "Earth"])
    qtbot.waitUntil(lambda: "planets" in panel.view.word_set_names(), timeout=30_000)
    ticked = {panel.sets.item(i).text() for i in range(panel.sets.count()) if panel.sets.item(i).checkState().value}
    assert ticked == {"weekdays", "planets"} == set(panel.view.word_set_names())
    legend = [label.text for _, label in panel.view.legend.items]
    assert any("weekdays" in t for t in legend) and any("planets" in t for t in legend)
    # Untick while the lookup is on its way: the answer, when it comes, is not drawn.
    panel.show_word_set("months")
    panel.show_word_set("months", on=False)
    qtbot.waitUntil(lambda: not panel.sets_waiting(), timeout=30_000)
    wait_until_idle(qtbot, window.worker)  # the unticked lookup has answered (or been dropped) by now
    assert "months" not in panel.view.word_set_names() and not panel.word_sets.is_ticked("months")
    assert set(panel.view.word_set_names()) == {"weekdays", "planets"} and panel.view.legend.isVisible()
    panel.show_word_set("weekdays", on=False)
    panel.show_word_set("planets", on=False)
    assert panel.view.word_set_names() == [] and not panel.view.legend.isVisible()  # no empty legend frame


@pytest.mark.default_model
def test_clicking_a_byte_piece_bar_appends_exactly_that_id(qtbot, window):
    panel = window.logits
    window.open_model(None)
    qtbot.waitUntil(lambda: window.summary is not None, timeout=120_000)
    window.tabs.setCurrentWidget(panel)
    panel.set_text("I love pizza 🍕🍕")
    qtbot.waitUntil(lambda: bool(panel.results), timeout=300_000)
    top = panel.results[0]
    assert top.token == "⟨F0 9F⟩"  # two bytes of an emoji: its text is "�"
    panel.append_token(0)
    assert panel.text.toPlainText() == "I love pizza 🍕🍕" + top.text
    qtbot.waitUntil(lambda: panel.shown_id == panel.asking.id and "⟨F0 9F⟩" in panel.tokens.text(), timeout=60_000)
    assert panel.tokens.text().endswith("⟨F0 9F⟩")
    # Typing after it keeps the id; an edit before it turns the prompt back into text.
    panel.text.moveCursor(panel.text.textCursor().MoveOperation.End)
    panel.text.insertPlainText("x")
    assert panel.prompt.request_prompt()[-2:] == [top.id, "x"]
    panel.set_text("hello")
    assert panel.prompt.request_prompt() == "hello"


@pytest.mark.default_model
def test_a_switch_leaves_nothing_of_the_old_model_on_screen(qtbot, window):
    from PySide6.QtCore import QPointF

    window.open_model(None)
    view = window.map_panel.view
    qtbot.waitUntil(lambda: view.ids.size == 49152, timeout=120_000)
    window.logits.set_text("The capital of France is")
    window.analogies.set_words("king", "man", "woman")
    window.map_panel.show_word_set("weekdays")
    qtbot.waitUntil(lambda: bool(window.logits.results and window.analogies.table.rowCount() and view._arrows
                                 and "weekdays" in view.word_set_names()), timeout=300_000)
    token = window.summary.labels.index("␣Monday")
    x, y = view.position_of(token).tolist()
    view.vb.setRange(xRange=(x - 0.01, x + 0.01), yRange=(y - 0.01, y + 0.01), padding=0)
    qtbot.waitUntil(lambda: view.mode == "points", timeout=10_000)  # zoomed in: the points drawn
    view._on_mouse_moved(view.vb.mapViewToScene(QPointF(float(x), float(y))))
    assert view.hover_text.isVisible()
    window.show_message("a message about SmolLM2")

    window.open_model("spells")
    qtbot.waitUntil(lambda: "lesson:spells" in window.model_label.full_text, timeout=60_000)
    assert "SmolLM2" not in window.message.full_text  # only the new model's own notes
    assert not view.hover_text.isVisible() and view._arrows == [] and view._selected == []
    # The analogy is asked again of the new model: its busy heading, never the old answer's.
    assert window.analogies.heading.text() in ("A − B + C = ?", "Solving the analogy…")
    assert window.analogies.table.rowCount() == 0 and window.neighbours.table.rowCount() == 0
    # The logits and analogy inputs are asked again of the new model; SmolLM2's answers never show.
    qtbot.waitUntil(lambda: bool(window.logits.message.text() or window.logits.results), timeout=30_000)
    assert all(r.token != "␣Paris" for r in window.logits.results)
    qtbot.waitUntil(lambda: window.analogies.message.text() != "", timeout=30_000)
    assert window.analogies.heading.text() == "A − B + C = ?"  # spells has no king: no answer heading
    assert window.analogies.table.rowCount() == 0 and view._arrows == []
    # The weekdays stay ticked and are looked up in the new vocabulary (none are words there).
    qtbot.waitUntil(lambda: "weekdays" in view.word_set_names(), timeout=30_000)
    assert len(view._sets["weekdays"][1]) == 0


def test_clear_cache_reports_the_size_and_empties_the_folder(qtbot, worker, tmp_path, monkeypatch):
    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache" / "gguf" / "entry").mkdir(parents=True)
    (tmp_path / "cache" / "gguf" / "entry" / "table.safetensors").write_bytes(b"x" * 5000)
    ends = Ends(worker)
    size = worker.submit(rq.CacheSize())  # no model needed
    qtbot.waitUntil(lambda: ends.ended(size), timeout=10_000)
    assert ends.of(size) == [("finished", 5000)]
    cleared = worker.submit(rq.ClearCache())
    qtbot.waitUntil(lambda: ends.ended(cleared), timeout=10_000)
    assert ends.of(cleared) == [("finished", 5000)] and not any((tmp_path / "cache").iterdir())


def test_file_clear_cache_asks_with_the_size_then_clears(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setenv("EMBVIZ_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache" / "word-vectors").mkdir(parents=True)
    (tmp_path / "cache" / "word-vectors" / "table.npy").write_bytes(b"x" * (3 << 20))
    window.ask_to_clear_cache()
    qtbot.waitUntil(lambda: any(isinstance(w, QMessageBox) and w.isVisible() for w in window.findChildren(QMessageBox)),
                    timeout=10_000)
    (box,) = [w for w in window.findChildren(QMessageBox) if w.isVisible()]
    assert "holds 3 MB" in box.text()
    box.button(QMessageBox.StandardButton.Yes).click()
    qtbot.waitUntil(lambda: "Cache cleared: 3 MB freed." in window.message.full_text, timeout=10_000)
    assert not any((tmp_path / "cache").iterdir())
