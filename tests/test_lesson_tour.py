"""Help ▸ Lessons: every step sets the app up and the numbers it displays are the lessons'."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from embviz.state.lesson_tour import STEPS, TourState

from helpers import menu_action, wait_for


def test_the_tour_walks_back_and_forth_within_its_steps():
    tour = TourState()
    assert tour.at_start and tour.back() is STEPS[0]
    assert tour.next() is STEPS[1] and tour.go(99) is STEPS[-1] and tour.at_end
    assert len(STEPS) >= 6 and {s.lesson for s in STEPS} == {"000", "002", "003", "004"}


def _step(window, qtbot, index: int, ready, timeout=60_000) -> None:
    window.go_to_step(index)
    wait_for(qtbot, lambda: window.summary is not None and not window.load_progress.isVisible() and ready(), timeout)


@pytest.mark.default_model
def test_each_step_shows_the_lessons_numbers(qtbot, window):
    """Three clicks from launch (Help, Lessons, a step), then each step's exact numbers."""
    menu_action(window.menuBar(), "Lessons").trigger()
    assert window.lessons_dock.isVisible()
    names = [s.title for s in STEPS]
    lg, nb, an = window.logits, window.neighbours, window.analogies

    # 000: the spells model at "cast", bars in vocabulary order; the same without context.
    for title in ("Logits at “cast”", "Same id, same logits"):
        _step(window, qtbot, names.index(title), lambda: lg.shown and "lesson:spells" in window.model_label.full_text
              and lg.prompt.text == STEPS[names.index(title)].setup["logits"])
        assert window.tabs.currentWidget() is lg
        assert [r.logit for r in lg.shown] == pytest.approx([0.0, 0.5, 0.0, 1.0, 2.0])
        assert max(lg.shown, key=lambda r: r.logit).token == "fireball"

    # 002: ids [2, 3, 5, 1] fetch a 4 × 3 matrix, in input order, ringed on the map.
    _step(window, qtbot, names.index("A row lookup: ids [2, 3, 5, 1]"), lambda: "4 × 3 matrix" in window.lessons.numbers.text())
    text = window.lessons.numbers.text()
    assert [text.index(f"id&nbsp;{i}") for i in (2, 3, 5, 1)] == sorted(text.index(f"id&nbsp;{i}") for i in (2, 3, 5, 1))
    assert "1.2753" in text and "-2.8400" in text  # rows 2 and 5 of torch.manual_seed(123)'s nn.Embedding(6, 3)
    assert "The whole table (6 × 3)" in text and text.count("▶") == 5  # four fetched rows marked, and the legend's
    assert window.map_panel.view._selected == [2, 3, 5, 1]

    # 003: the shapes and the table's share of SmolLM2.
    _step(window, qtbot, names.index("Shapes through the model"), lambda: "Shapes" in window.lessons.numbers.text(), 120_000)
    text = window.lessons.numbers.text()
    assert "ids (1, 5) → embeddings (1, 5, 576) → logits (1, 5, 49152)" in text
    assert "holds 21.0% of the model's 134,515,008 parameters; tied" in text
    assert "The rows the text's ids fetch" in text and "␣France" in text  # a big table: the typed text's rows

    # 004: cat · dog = 12 and cosine 0.923 side by side.
    _step(window, qtbot, names.index("Dot product and cosine"), lambda: nb.table.rowCount() == 3 and "cat" in nb.heading.text())
    dog = nb.table.rows[0]
    assert dog[0] == "dog" and dog[2] == pytest.approx(0.923, abs=5e-4) and dog[3] == pytest.approx(12.0)

    # 004: king − man + woman, inputs allowed then excluded.
    _step(window, qtbot, names.index("king − man + woman, inputs allowed"),
          lambda: an.table.rowCount() and "inputs allowed" in an.heading.text())
    assert an.table.rows[1][0] == "␣king   ← an input" and "␣king ranks 2" in an.ranks.text()
    _step(window, qtbot, names.index("king − man + woman, inputs excluded"),
          lambda: an.table.rowCount() and "(inputs excluded)" in an.heading.text())
    assert an.table.rows[0][0] == "␣queen"
    wait_for(qtbot, lambda: window.map_panel.view.arrow_ids())  # man→king, woman→queen on the map

    # 004: the map's three directions: its own two sets, nothing left from the analogy's step.
    window.map_panel.show_word_set("numbers")
    _step(window, qtbot, names.index("Three directions, turning"), lambda: window.tabs.currentWidget() is window.map_panel)
    assert window.map_panel.view.arrow_ids() == [] and window.map_panel.view._selected == []
    assert window.map_panel.word_sets.ticked == ["weekdays", "months"]

    # 004: temperature 2 on a held axis: same order, flatter.
    _step(window, qtbot, names.index("The capital of France is"), lambda: lg.results and lg.last.temperature == 1.0
          and "France" in lg.prompt.text)
    at_one = [(r.id, r.prob) for r in lg.results]
    assert lg.results[0].token == "␣Paris"
    _step(window, qtbot, names.index("Temperature"), lambda: lg.results and lg.last.temperature == 2.0)
    assert [r.id for r in lg.results] == [i for i, _ in at_one] and lg.results[0].prob < at_one[0][1]
    assert lg.hold_axis.isChecked()
    at, steps = names.index('Temperature') + 1, len(STEPS)  # the band's short count, or the side column's
    assert window.lessons.counter.text() == (f"{at} / {steps}" if window.projector else f"step {at} of {steps}")
    qtbot.mouseClick(window.lessons.next, Qt.MouseButton.LeftButton)  # Next: sampling, top-p 0.9 at T = 0.7
    wait_for(qtbot, lambda: lg.last is not None and lg.last.top_p == 0.9 and lg.last.temperature == 0.7, 60_000)
    assert lg.last.kept_count == 1 and lg.kept_marks() == [True] + [False] * (len(lg.shown) - 1)  # ␣Paris alone
    assert lg.last.kept_mass == pytest.approx(0.955, abs=5e-4) and lg.top_p.value() == 0.9
    qtbot.mouseClick(window.lessons.next, Qt.MouseButton.LeftButton)  # Next: weight tying
    wait_for(qtbot, lambda: "tied" in window.lessons.numbers.text(), 60_000)
    assert window.lessons.next.isEnabled() is False  # the last step


def test_lesson_step_1_offers_no_full_model_and_says_plainly_why_a_row_is_zero(qtbot, window):
    window.go_to_step(0)  # spells: an embedding and a linear head, no blocks
    panel = window.logits
    wait_for(qtbot, lambda: panel.results and "direct path" in panel.caption.text(), 30_000)
    assert panel.full.isHidden() and panel.direct.isHidden()  # one path only: no choice shown
    status = window.message.full_text
    assert "1 row is all zeros (ids 0: <eos>)" in status and "on purpose" in status, status


@pytest.mark.default_model
def test_lesson_step_8_shows_the_analogy_arrows_on_the_map(qtbot, window):
    from embviz.state.lesson_tour import STEPS

    assert "map shows the arrows" in STEPS[7].text
    window.go_to_step(7)
    view = window.map_panel.view
    wait_for(qtbot, lambda: len(view._arrows) == 2 and view.ids.size == 49152, 300_000)
    assert window.tabs.currentWidget() is window.map_panel
