"""Issue 35's concrete faults found on a teacher's walk through the lessons: each one's test."""

from __future__ import annotations

import csv
import json
import re

import pytest

from embviz.cli import main
from embviz.cli.parser import build_parser
from embviz.ui.tab_list import TABS

from conftest import make_tiny_model
from helpers import wait_for
from test_compare import random_rows, words, write_glove_text

NUMBER_WORDS = {10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen", 14: "fourteen", 15: "fifteen", 16: "sixteen", 17: "seventeen",
                18: "eighteen", 19: "nineteen", 20: "twenty", 21: "twenty-one", 22: "twenty-two", 23: "twenty-three",
                24: "twenty-four", 25: "twenty-five"}


@pytest.mark.parametrize("spec", TABS, ids=lambda spec: spec.key)
def test_every_tab_has_what_the_file_menus_exports_ask_of_it(spec):
    panel = spec.panel()
    assert callable(getattr(panel, "table_rows", None)) and callable(getattr(panel, "picture", None))


def test_the_attribution_tab_exports_its_parts_and_heads(qtbot, window, tmp_path):
    make_tiny_model(tmp_path / "tiny", arch="gpt2")
    window.open_model(str(tmp_path / "tiny"))
    wait_for(qtbot, lambda: window.summary is not None, 60_000)
    panel = window.attribution
    window.tabs.setCurrentWidget(panel)
    assert window.export_table(tmp_path / "none.csv") is None  # nothing asked yet
    panel.state.text = "paris is the capital of"
    panel.run()
    wait_for(qtbot, lambda: panel.result is not None, 120_000)
    result = panel.result
    with window.export_table(tmp_path / "a.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["block", "kind", "head", "value"]
    parts = [r for r in rows[1:] if r[2] == ""]
    heads = [r for r in rows[1:] if r[1] == "head"]
    assert [(r[0], r[1]) for r in parts if r[1] != "attention bias"] == \
        [("" if p.block is None else str(p.block), p.kind) for p in result.parts]
    assert sum(float(r[3]) for r in parts if r[1] != "attention bias") == pytest.approx(
        result.uncapped_logit if result.uncapped_logit is not None else result.logit, abs=1e-3)
    assert len(heads) == sum(h.head is not None for h in result.heads) > 0
    top = result.ranked_heads()[0]
    assert float(next(r[3] for r in heads if (int(r[0]), int(r[2])) == (top.block, top.head))) == \
        pytest.approx(top.value, abs=1e-5)

    panel.state.text_b, panel.state.compare = "rome is the capital of", True
    panel.run()
    wait_for(qtbot, lambda: panel.result_b is not None, 120_000)
    with window.export_table(tmp_path / "ab.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["block", "kind", "head", "A", "B", "B − A"]
    for row in rows[1:]:
        assert float(row[5]) == pytest.approx(float(row[4]) - float(row[3]), abs=1e-5)
    assert any(abs(float(row[5])) > 1e-4 for row in rows[1:])  # two prompts, two splits


@pytest.mark.parametrize("command, flag, dest", [(["compare", "--with", "toy4"], "--token", "token"),
                                                 (["clusters"], "--of", "of")])
def test_a_repeated_word_flag_keeps_every_word(command, flag, dest):
    args = build_parser().parse_args([*command, flag, "a", flag, "b", "c"])
    assert getattr(args, dest) == ["a", "b", "c"]
    assert getattr(build_parser().parse_args(command), dest) == []


def test_compare_lists_every_token_given_with_its_own_flag(tmp_path, capsys):
    x = random_rows(60, 8, 7)
    first = write_glove_text(tmp_path / "a.txt", words(60), x)
    second = write_glove_text(tmp_path / "b.txt", words(60), x + 0.3 * random_rows(60, 8, 8))
    assert main(["compare", "--model", first, "--with", second, "--device", "cpu", "--k", "5",
                 "--token", "w003", "--token", "w040", "--json"]) == 0
    assert [t["token"] for t in json.loads(capsys.readouterr().out)["tokens"]] == ["w003", "w040"]


def open_toy4(qtbot, window) -> None:
    window.open_model("toy4")
    wait_for(qtbot, lambda: window.summary is not None and window.map_panel.view.ids.size == 4, 60_000)


def test_an_emptied_search_field_takes_its_message_with_it(qtbot, window):
    open_toy4(qtbot, window)
    panel = window.map_panel
    panel.search.setText("cat")
    wait_for(qtbot, lambda: window.message.full_text.startswith("Search 'cat': 1 tokens"), 10_000)
    panel.search.clear()
    wait_for(qtbot, lambda: window.message.full_text == "", 10_000)
    panel.regex.setChecked(True)
    panel.search.setText("(")
    wait_for(qtbot, lambda: "regular expression" in window.message.full_text, 10_000)
    panel.search.clear()
    wait_for(qtbot, lambda: window.message.full_text == "", 10_000)
    panel.search.setText("dog")
    wait_for(qtbot, lambda: window.message.full_text.startswith("Search 'dog'"), 10_000)
    window.show_message("Saved somewhere")  # the window's own message is not the search's to take
    panel.search.clear()
    qtbot.wait(800)
    assert window.message.full_text == "Saved somewhere"


def test_the_screenshot_demo_on_toy4_skips_what_it_cannot_show_and_ends(qtbot, qapp, window, tmp_path, monkeypatch):
    from embviz.ui import screenshots

    monkeypatch.setattr(screenshots, "WAIT_S", 60.0)  # a picture that never comes fails the test, not hangs it
    demo = screenshots.Demo(qapp, window, tmp_path)
    screenshots._open(demo, "toy4")
    screenshots._model_pictures(demo, 1.0)
    assert screenshots._tsne_live(qapp, window, demo.save) is not None  # too few rows for a t-SNE
    saved = {path.stem for path in demo.saved}
    assert {"map", "neighbours", "analogies", "logits", "attribution"} <= saved
    assert not saved & {"analogy_plane", "analogy_map", "tsne_live"}
    from embviz.ui.plots.map_view3d import gl_available

    no_3d = [] if gl_available() else ["map3d.png"]  # the 3-D map's sentence where the display has no OpenGL
    assert [line.split(":")[0] for line in demo.skipped] == no_3d + ["analogy_plane.png", "analogy_map.png"]
    assert all(len(line.split(": ", 1)[1]) > 10 for line in demo.skipped)  # each with its reason
    assert all(path.stat().st_size > 0 for path in demo.saved)


def test_the_guide_counts_the_lesson_steps_there_are():
    from pathlib import Path

    from embviz.state.lesson_tour import STEPS

    guide = (Path(__file__).parent.parent / "docs" / "lessons.md").read_text(encoding="utf-8")
    said = re.search(r"Help ▸ Lessons, F2\): ([\w-]+) guided steps", guide)
    assert said is not None
    assert said.group(1) == NUMBER_WORDS[len(STEPS)]


def test_a_small_models_limits_leave_with_it():
    from embviz.state.tabs import MapState

    state = MapState(colour_by="cluster", clusters_k=20, subset="words")
    assert "k = 4" in state.fit_to_model(max_clusters=4, word_rows=0)
    assert (state.clusters_k, state.subset) == (4, "all")
    assert state.fit_to_model(max_clusters=49_152, word_rows=30_000) == ""
    assert (state.clusters_k, state.subset, state.colour_by) == (20, "words", "cluster")  # the user's own
    state.fit_to_model(max_clusters=1, word_rows=0)
    assert state.colour_by == "none"
    state.fit_to_model(max_clusters=4, word_rows=0)
    assert (state.colour_by, state.clusters_k) == ("cluster", 4)
    state.clusters_k = 3  # the user's choice on the small model: kept
    state.fit_to_model(max_clusters=49_152, word_rows=30_000)
    assert state.clusters_k == 3


def test_the_cluster_k_toy4_needed_goes_when_another_model_opens(qtbot, window, tmp_path):
    panel = window.map_panel
    panel.clusters_k.setValue(20)
    open_toy4(qtbot, window)
    assert panel.state.clusters_k == panel.clusters_k.value() == 4
    make_tiny_model(tmp_path / "tiny", arch="gpt2")
    window.open_model(str(tmp_path / "tiny"))
    wait_for(qtbot, lambda: window.summary is not None and window.summary.info["vocab_size"] > 4, 60_000)
    assert panel.state.clusters_k == panel.clusters_k.value() == 20


def test_a_restored_session_forgets_the_values_before_a_clamp(qtbot, window, tmp_path):
    """toy4 held k at 4; a session saved with k = 3 on it is the user's: the next model keeps 3,
    and does not put back the 20 from before toy4's clamp."""
    from embviz.state.tabs import MapState

    state = MapState(colour_by="cluster", clusters_k=20)
    state.fit_to_model(max_clusters=4, word_rows=4)
    state.forget_fits()
    state.clusters_k = 4  # what the session holds, equal to the clamped value
    state.fit_to_model(max_clusters=49_152, word_rows=30_000)
    assert state.clusters_k == 4
    panel = window.map_panel
    panel.clusters_k.setValue(20)
    open_toy4(qtbot, window)
    assert panel.state.clusters_k == 4
    path = window.save_session(tmp_path / "toy4.embviz")
    assert window.open_session(path)
    wait_for(qtbot, lambda: window.summary is not None and window.summary.info["vocab_size"] == 4, 60_000)
    make_tiny_model(tmp_path / "tiny", arch="gpt2")
    window.open_model(str(tmp_path / "tiny"))
    wait_for(qtbot, lambda: window.summary is not None and window.summary.info["vocab_size"] > 4, 60_000)
    assert panel.state.clusters_k == panel.clusters_k.value() == 4
