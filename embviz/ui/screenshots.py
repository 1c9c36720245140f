"""`embviz screenshot --out DIR`: open the real window, drive each panel with the
lessons' demos, save one PNG per panel, save the session as DIR/demo.embviz and
re-open it in a fresh window, exit."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from embviz.core.errors import EmbvizError
from embviz.ui.screenshots_rooms import _answered, _directions_answered, directions_tab, judgement_tabs, steering_tab

DEMO_SETS = ("weekdays", "months", "numbers")
TSNE_ROWS = 3000  # t-SNE's live picture on the first ids: a preview in seconds, not the minutes of every row
TSNE_SHOWN_AT = 0.7  # far enough into the optimising for the map to have shape
WAIT_S = 600.0  # the longest wait for one picture: past it, the demo says what it waited for and ends


def _wait(app, done, what: str, timeout: float | None = None) -> None:
    deadline = time.monotonic() + (WAIT_S if timeout is None else timeout)
    while not done():
        app.processEvents()
        if time.monotonic() > deadline:
            raise EmbvizError(f"Timed out waiting for {what}.")
        time.sleep(0.02)
    for _ in range(5):  # let the last repaint land
        app.processEvents()
        time.sleep(0.02)


def _go_to_step(app, window, i: int) -> None:
    """Lesson step `i` set up, as a teacher would click it, and drawn."""
    from embviz.state.lesson_tour import STEPS

    step = STEPS[i]
    tabs = {"map": lambda: window.map_panel.view.ids.size > 0, "neighbours": lambda: window.neighbours.table.rowCount() > 0,
            "analogies": lambda: window.analogies.table.rowCount() > 0,
            "logits": lambda: bool(window.logits.results) or bool(window.logits.message.text()),
            "attribution": lambda: window.attribution.pattern is not None or bool(window.attribution.message.text()),
            "compare": lambda: window.compare.dominoes.columns[1].rowCount() > 0 or bool(window.compare.message.text()),
            "drift": lambda: window.drift.result is not None or bool(window.drift.message.text()),
            "directions": _directions_answered(window.panel_named("directions")),
            **{key: _answered(window.panel_named(key)) for key in ("similarities", "odd-one-out")}}
    window.go_to_step(i)
    asks_numbers = "rows" in step.setup or step.setup.get("shapes")
    _wait(app, lambda: window.summary is not None and not window.load_progress.isVisible() and tabs[step.tab]()
          and ("analogy" not in step.setup or tabs["analogies"]())  # step 8 shows the analogy on the map
          and (not asks_numbers or "Working" not in window.lessons.numbers.text() and window.lessons.numbers.text()),
          f"lesson step {i + 1}")


def _lesson_steps(app, window, save) -> None:
    """Help ▸ Lessons, each step as a teacher would click it: lesson_01.png, lesson_02.png…
    (in projector mode where a lesson opens in it: a small screen or large text)."""
    from embviz.state.lesson_tour import STEPS

    window.show_lessons()
    for i in range(len(STEPS)):
        _go_to_step(app, window, i)
        save(f"lesson_{i + 1:02d}")
    window.lessons_dock.hide()


def _projector_pictures(demo: Demo) -> None:
    """Projector mode (F5): projector_lesson.png (the lesson's caption band under the logits
    of "The capital of France is"), then projector_map.png and projector_logits.png with the
    tabs' controls folded and the bars' numbers printed."""
    from embviz.state.lesson_tour import STEPS

    window = demo.window
    window.set_projector(True)
    demo.wait(lambda: True, "the full screen")
    window.show_lessons()
    _go_to_step(demo.app, window, next(i for i, s in enumerate(STEPS)
                                       if "France" in s.setup.get("logits", "") and not s.setup.get("shapes")))
    demo.save("projector_lesson")
    window.lessons_dock.close()
    for name, panel in (("projector_map", window.map_panel), ("projector_logits", window.logits)):
        window.tabs.setCurrentWidget(panel)
        demo.wait(lambda: True, "the tab")
        demo.save(name)
    window.set_projector(False)


def _tsne_live(app, window, save) -> str | None:
    """tsne_live.png: t-SNE part-way, its map moving and the progress bar running; then cancelled,
    and the map's rows as they were (the lessons open the default model again with them). None,
    or why this model has no such picture (too few rows for a t-SNE)."""
    panel = window.map_panel
    subset, limit = panel.state.subset, panel.state.limit
    saved: list[float] = []  # the fractions of the previews saved so far

    def on_preview(_channel: str, rid: int, fraction: float, stage: str, preview) -> None:
        # Saved as each preview arrives (after the tab has drawn it), until one far enough in:
        # one event loop turn can take the last previews and the result together, and on a
        # fast machine there are few previews at all.
        live = rid == panel.drawing.id and isinstance(preview, tuple) and "optimising" in stage
        if live and (not saved or saved[-1] < TSNE_SHOWN_AT):
            saved.append(fraction)
            save("tsne_live")

    window.worker.progressed.connect(on_preview)
    window.tabs.setCurrentWidget(panel)
    panel.method.setCurrentIndex(panel.method.findData("tsne"))  # first: a slow method waits for Draw map
    panel.subset.setCurrentIndex(panel.subset.findData("first"))
    panel.limit.setValue(TSNE_ROWS)
    panel.run_projection()
    _wait(app, lambda: saved and saved[-1] >= TSNE_SHOWN_AT or panel.progress.isHidden(), "t-SNE's live picture")
    window.worker.progressed.disconnect(on_preview)
    failed = None
    if saved:
        panel.cancel_button.click()
        _wait(app, lambda: panel.progress.isHidden(), "the t-SNE to stop")
    elif panel.status.text().startswith("Map failed: "):  # e.g. too few rows: the model cannot show one
        failed = panel.status.text().removeprefix("Map failed: ")
    else:
        raise EmbvizError(f"No live t-SNE picture to save: {panel.status.text()}")
    panel.subset.setCurrentIndex(panel.subset.findData(subset))
    panel.limit.setValue(limit)
    panel.method.setCurrentIndex(panel.method.findData("pca"))  # last: one PCA of those rows
    _wait(app, lambda: panel.progress.isHidden() and panel.view.ids.size > 0, "the PCA map again")
    return failed


def _zoom_around(app, view, token_id: int, count: int) -> None:
    """Zoom (centred on `token_id`) until about `count` points are in view."""
    import numpy as np

    centre = view.position_of(token_id)
    if centre is None:
        return
    aspect = max(view.vb.width(), 1.0) / max(view.vb.height(), 1.0)
    reach = np.maximum(np.abs(view.coords[:, 0] - centre[0]) / aspect, np.abs(view.coords[:, 1] - centre[1]))
    r = float(np.partition(reach, min(count, len(reach) - 1))[min(count, len(reach) - 1)])
    x, y = float(centre[0]), float(centre[1])
    view.vb.setRange(xRange=(x - r * aspect, x + r * aspect), yRange=(y - r, y + r), padding=0)
    _wait(app, lambda: not view._label_timer.isActive(), "the zoom's labels")


def _colour_by(app, panel, save) -> None:
    """colour_by_kind.png, then clusters.png (the neighbour graph's, the coarse groups named
    at their centres), clusters_zoom.png (zoomed in: the fine clusters' names) and
    clusters_zoom_tokens.png (further in: the tokens), then back to plain."""
    view = panel.view
    panel.colour_by.setCurrentIndex(panel.colour_by.findData("kind"))
    _wait(app, lambda: view.colour_codes() is not None, "the token kinds")
    view.fit()  # with room for the colours' key
    _wait(app, lambda: True, "the fit")
    save("colour_by_kind")
    for name in DEMO_SETS:  # the clusters' names alone: the sets' labels would crowd them out
        panel.show_word_set(name, False)
    panel.colour_by.setCurrentIndex(panel.colour_by.findData("cluster"))
    _wait(app, lambda: view.colour_codes() is not None and view.placed_cluster_labels, "the clusters")
    view.fit()
    _wait(app, lambda: True, "the fit")
    save("clusters")
    monday = view.labels.index("␣Monday") if "␣Monday" in view.labels else int(view.ids[0])
    _zoom_around(app, view, monday, 3000)
    save("clusters_zoom")
    _zoom_around(app, view, monday, 120)
    save("clusters_zoom_tokens")
    panel.colour_by.setCurrentIndex(panel.colour_by.findData("none"))
    for name in DEMO_SETS:
        panel.show_word_set(name)
    _wait(app, lambda: not panel.sets_waiting() and len(view.word_set_names()) >= len(DEMO_SETS), "the word sets")
    view.fit()


class Demo:
    """One run of the demo: the window, where its pictures go, and the list of what was saved."""

    def __init__(self, app, window, folder: Path) -> None:
        self.app, self.window, self.folder = app, window, folder
        self.saved: list[Path] = []
        self.skipped: list[str] = []  # "name.png: why", for pictures the model cannot show

    def wait(self, done, what: str, timeout: float | None = None) -> None:
        _wait(self.app, done, what, timeout)

    def settle(self, done, timeout: float) -> None:
        """Wait for `done` at most `timeout` seconds, then go on: a nicety, not a requirement
        (a 1024 × 700 map at 150 % has room for fewer labels)."""
        deadline = time.monotonic() + timeout
        while not done() and time.monotonic() < deadline:
            self.app.processEvents()
            time.sleep(0.02)
        _wait(self.app, lambda: True, "the repaint")

    def save(self, name: str, widget=None) -> None:
        path = self.folder / f"{name}.png"
        (widget or self.window).grab().save(str(path))
        if path not in self.saved:  # tsne_live.png is saved again as its previews come
            self.saved.append(path)

    def skip(self, names: tuple[str, ...], why: str) -> None:
        """Pictures this model cannot show: said, not waited for."""
        self.skipped += [f"{name}.png: {why}" for name in names]


def _open(demo: Demo, model: str | None) -> None:
    """The model, its first map measured, the demo's word sets ticked."""
    window = demo.window
    window.last_error = None
    window.open_model(model)
    demo.wait(lambda: window.summary is not None or window.last_error, "the model to load")
    if window.last_error:
        raise EmbvizError(window.last_error)
    panel = window.map_panel
    demo.wait(lambda: panel.view.ids.size > 0 or panel.status.text().startswith("Map failed"), "the map")
    demo.wait(lambda: "keeps" in panel.status.text() or "failed" in panel.status.text(), "how faithful the map is")
    for name in DEMO_SETS:
        panel.show_word_set(name)
    demo.wait(lambda: not panel.sets_waiting(), "the word sets")


def _map_pictures(demo: Demo) -> None:
    """map.png, the colours, map_labels.png (zoomed in on the weekdays)."""
    panel = demo.window.map_panel
    view = panel.view
    demo.save("map")
    _colour_by(demo.app, panel, demo.save)
    view.zoom_to(view._sets["weekdays"][1])  # few points in view: every one labelled
    demo.settle(lambda: len(view.placed_labels) >= 7, 30)
    demo.save("map_labels")
    view.fit()


def _map3d(demo: Demo) -> None:
    """map3d.png: the first three PCA axes with the word sets, turned to face the weekdays and
    months; then the 2-D map again. Without OpenGL, skipped with the map's own sentence."""
    from embviz.ui.plots.map_view3d import NO_GL, gl_available

    panel = demo.window.map_panel
    if not gl_available():
        demo.skip(("map3d",), NO_GL)
        return
    panel.dims_box.setCurrentIndex(panel.dims_box.findData(3))
    demo.wait(lambda: panel.showing_3d() and ("keeps" in panel.status.text() or "failed" in panel.status.text()),
              "the 3-D map")
    view = panel.view3d
    view.frame_ids([i for name in ("weekdays", "months") for i in panel.word_sets.shown().get(name, [])])
    view.setCameraPosition(elevation=18, azimuth=-70)
    demo.settle(lambda: not view.moving.visible(), 10)
    demo.save("map3d")
    panel.dims_box.setCurrentIndex(panel.dims_box.findData(2))
    demo.wait(lambda: not panel.showing_3d() and "keeps" in panel.status.text(), "the 2-D map again")


def _table_tabs(demo: Demo) -> None:
    """Neighbours, analogies with their plane, the benchmark window, the analogy on the map."""
    window = demo.window
    window.tabs.setCurrentWidget(window.neighbours)
    window.neighbours.word.setText("king")
    window.neighbours.run()
    demo.wait(lambda: window.neighbours.table.rowCount() > 0 or window.neighbours.message.text(), "neighbours")
    demo.save("neighbours")
    window.tabs.setCurrentWidget(window.analogies)
    window.analogies.set_words("king", "man", "woman")
    demo.wait(lambda: window.analogies.table.rowCount() > 0 or window.analogies.message.text(), "the analogy")
    demo.save("analogies")
    if window.analogies.table.rowCount() == 0:  # the model lacks a word: its sentence is the picture
        demo.skip(("analogy_plane", "analogy_map"), window.analogies.message.text())
    else:
        demo.wait(lambda: window.analogies.plane.ids.size > 0, "the analogy's plane")
        demo.save("analogy_plane", window.analogies.plane_box)  # the plane alone, as large as the tab gives it
    window.analogies.run_benchmark()
    bench = window.analogies.bench_window
    demo.wait(lambda: bench.sections.rowCount() > 0 or not bench.cancel_button.isVisible(), "the analogy benchmark")
    demo.wait(lambda: bench.misses_settled or not bench.cancel_button.isVisible(), "the benchmark's misses")
    demo.save("benchmark", bench)
    bench.hide()
    if window.analogies.table.rowCount() > 0:
        window.tabs.setCurrentWidget(window.map_panel)
        window.map_panel.view.zoom_to(window.map_panel.view._selected)
        demo.wait(lambda: True, "the map")
        demo.save("analogy_map")


def _model_tabs(demo: Demo, text_size: float) -> None:
    """Logits, vectors, the lens, drift, and the logits again at 150 % (presentation.png)."""
    from embviz.ui import style

    window = demo.window
    window.tabs.setCurrentWidget(window.logits)
    if window.logits.text.isEnabled():
        window.logits.set_text("The capital of France is")
        demo.wait(lambda: window.logits.results or window.logits.message.text(), "the logits")
    demo.save("logits")
    _sampling(demo)
    window.tabs.setCurrentWidget(window.vectors)
    demo.wait(lambda: window.vectors.shown is not None or window.vectors.message.text(), "the vector strips")
    demo.save("vectors")
    window.tabs.setCurrentWidget(window.lens)
    if window.lens.enabled:
        window.lens.set_text("The capital of France is")
    demo.wait(lambda: window.lens.bars.count or window.lens.message.text(), "the logit lens")  # the bars come last
    demo.save("lens")
    window.tabs.setCurrentWidget(window.drift)
    if window.drift.enabled:
        window.drift.set_inputs("bank", ["I sat on the river bank.", "She paid the cash into the bank."])
    demo.wait(lambda: window.drift.result is not None or window.drift.message.text(), "the drift")
    demo.save("drift")
    window.tabs.setCurrentWidget(window.logits)
    style.set_text_scale(1.5)  # for the back row
    demo.wait(lambda: True, "the larger text")
    demo.save("presentation")
    style.set_text_scale(text_size)


def _sampling(demo: Demo) -> None:
    """sampling.png: top-p 0.9 at T = 1 (ten tokens kept, their green bars, four more dropped),
    one Draw at seed 0; then the tab as it was, for the pictures after it."""
    panel = demo.window.logits
    bars = panel.state.k
    if panel.text.isEnabled():
        state = panel.state
        state.k, state.temperature, state.top_p, state.seed = 14, 1.0, 0.9, 0
        panel.set_text("The capital of France is")
        demo.wait(lambda: (panel.last is not None and panel.last.kept_count is not None) or panel.message.text(),
                  "the kept set")
        panel.sample(1)
        demo.wait(lambda: (panel.last is not None and bool(panel.last.drawn)) or panel.message.text(), "the draw")
    demo.save("sampling", panel.content)  # the whole tab: at 1024 × 700 and 150 % its charts are below the fold
    if panel.text.isEnabled():
        panel.state.top_p, panel.state.k = 1.0, bars
        panel.set_text("The capital of France is")
        demo.wait(lambda: panel.last is not None and panel.last.kept_count is None or panel.message.text(), "the logits")


def _compare_tab(demo: Demo) -> None:
    """compare.png: SmolLM2 against GloVe, the list brushed to the most alike; compare_token.png:
    ␣march's neighbours in the two (none in common). Without GloVe, the tab's one sentence why."""
    window, panel = demo.window, demo.window.compare
    panel.state.token = "march"
    window.open_comparison("glove-6b-50d")
    demo.wait(lambda: (panel.view is not None and panel.dominoes.columns[1].rowCount() > 0) or panel.message.text(),
              "the comparison")
    demo.save("compare_token")
    panel.state.order = "descending"
    panel.histogram.brush.setRegion((0.3, 1.0))  # as a drag of the band ends
    demo.wait(lambda: True, "the list")
    demo.save("compare")
    panel.state.low = 0.0


def _attribution_pictures(demo: Demo) -> None:
    """attribution.png (each block's and head's part of ␣Paris), attention.png (the top
    head's pattern) and lens_pinned.png (␣Paris and ␣London through the layers)."""
    from embviz.ui import style

    window, panel = demo.window, demo.window.attribution
    window.tabs.setCurrentWidget(panel)
    if panel.enabled:
        panel.show_lesson("The capital of France is", "␣Paris, ␣London", 0, -1)
    demo.wait(lambda: (panel.pattern is not None and panel.pinned is not None) or not panel.enabled
              or panel.message.styleSheet() == style.ERROR_STYLE, "the attribution")
    demo.save("attribution")
    for view, name in ((panel.attention, "attention"), (panel.pinned_view, "lens_pinned")):
        panel.views.setCurrentWidget(view)
        demo.wait(lambda: True, "the page")
        demo.save(name)
    panel.views.setCurrentWidget(panel.blocks)


def _model_pictures(demo: Demo, text_size: float) -> None:
    """Every tab's pictures of the model open; those it cannot show are skipped, with why."""
    _map_pictures(demo)
    _map3d(demo)
    _table_tabs(demo)
    _model_tabs(demo, text_size)
    _attribution_pictures(demo)


def _lesson_model(demo: Demo) -> None:
    """lesson_map.png: toy4's four big labelled markers."""
    window, panel = demo.window, demo.window.map_panel
    window.open_model("toy4")
    demo.wait(lambda: window.summary is not None and window.summary.info["vocab_size"] == 4
              and panel.view.ids.size == 4, "toy4")
    window.tabs.setCurrentWidget(panel)
    demo.wait(lambda: len(panel.view.placed_labels) == 4, "the lesson's labels")
    demo.save("lesson_map")


def _restored(demo: Demo, session: Path, device: str, settings_path: Path, analogies: bool) -> None:
    """Another day: a fresh window opens the saved session (the map as saved, not recomputed);
    `analogies`: the saved window listed an analogy's answers (a model without its words lists none)."""
    from embviz.state.settings import Settings
    from embviz.ui.app import install_excepthook
    from embviz.ui.main_window import MainWindow

    window = MainWindow(device=device, settings=Settings(settings_path))
    install_excepthook(window)
    window.show()
    demo.window = window
    if not window.open_session(session):
        raise EmbvizError(window.last_error or "The demo session could not be opened.")
    demo.wait(lambda: window.summary is not None and (window.analogies.table.rowCount() > 0 or not analogies)
              and len(window.map_panel.view.word_set_names()) >= len(DEMO_SETS) or window.last_error, "the session")
    if window.last_error:
        raise EmbvizError(window.last_error)
    demo.save("restored_map")
    window.close()


def run_screenshots(out: str, model: str | None = None, device: str = "auto", text_size: float = 1.0) -> int:
    import tempfile

    from embviz.state.settings import Settings
    from embviz.ui import style
    from embviz.ui.app import install_excepthook, make_app
    from embviz.ui.main_window import MainWindow

    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    app = make_app()
    # Settings of its own: the demo neither reads nor changes the user's text size or word sets.
    scratch = tempfile.TemporaryDirectory(prefix="embviz-screenshot-")
    window = MainWindow(device=device, settings=Settings(Path(scratch.name) / "settings.json"))
    style.set_text_scale(text_size)
    install_excepthook(window)
    window.show()
    demo = Demo(app, window, folder)
    _open(demo, model)
    _model_pictures(demo, text_size)
    window.tabs.setCurrentWidget(window.map_panel)
    demo.wait(lambda: True, "the layout")  # the zoom is kept for the map's final size
    window.map_panel.view.zoom_to(window.map_panel.view._selected)  # the analogy's words, as the session keeps them
    demo.wait(lambda: True, "the zoom")
    analogies = window.analogies.table.rowCount() > 0
    session = window.save_session(folder / "demo.embviz")
    if session is None:
        raise RuntimeError("no model on screen to save a session of")
    _compare_tab(demo)  # after the session, whose restoring is timed without a second model
    judgement_tabs(demo)  # after Compare: both models' judgements side by side
    directions_tab(demo)
    steering_tab(demo)
    if why := _tsne_live(app, window, demo.save):  # after the session: it keeps the PCA map
        demo.skip(("tsne_live",), why)
    _lesson_model(demo)
    _lesson_steps(app, window, demo.save)
    _projector_pictures(demo)
    window.close()
    _restored(demo, session, device, Path(scratch.name) / "settings-2.json", analogies)
    for path in demo.saved + [session]:
        print(path)
    for line in demo.skipped:
        print(f"skipped {line}", file=sys.stderr)
    scratch.cleanup()
    return 0
