"""What a class sees: text size, labels on the map, export, keys, find, charts, layout."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from embviz.ui.formatting import logit_labels, percent_labels
from embviz.ui.tables import map_rows, rows_to_text
from embviz.ui import style
from embviz.ui.plots.map_labels import place_labels

from helpers import menu_action, wait_for


@pytest.fixture(autouse=True)
def normal_text_size():
    yield
    style.set_text_scale(1.0)


# --- Qt-free pieces ------------------------------------------------------------------------------

def test_probability_labels_tell_bars_apart_at_any_temperature():
    hot = [0.000723, 0.000718, 0.0007179, 0.0007]  # temperature 5: every bar near 0.07 %
    labels = percent_labels(hot)
    assert len(set(labels)) == 4 and all(label.endswith("%") for label in labels)
    assert labels[0] == "0.07230%"
    assert percent_labels([0.5, 0.25, 0.125]) == ["50.0%", "25.0%", "12.5%"]
    assert percent_labels([0.4, 0.00004]) == ["40.000%", "0.004%"]  # a non-zero bar never reads 0
    assert logit_labels([2.0, 1.0, 0.5, 0.0, 0.0]) == ["2.00", "1.00", "0.50", "0.00", "0.00"]


def test_label_placement_never_overlaps_or_leaves_the_view():
    rng = np.random.default_rng(0)
    cands = [(float(x), float(y), 60.0, 18.0) for x, y in rng.uniform(0, 400, size=(300, 2))]
    spots = place_labels(cands, 400, 300)
    rects = [(sx, sy, w, h) for (sx, sy), (_, _, w, h) in ((s, c) for s, c in zip(spots, cands) if s is not None)]
    assert 10 < len(rects) < 300  # some placed, crowded ones dropped
    for i, (x, y, w, h) in enumerate(rects):
        assert 0 <= x and x + w <= 400 and 0 <= y and y + h <= 300
        for x2, y2, w2, h2 in rects[i + 1:]:
            assert not (x < x2 + w2 and x2 < x + w and y < y2 + h2 and y2 < y + h)
    # A point at the right edge gets its label on the left, not clipped.
    assert place_labels([(395.0, 150.0, 60.0, 18.0)], 400, 300)[0][0] < 395


def test_tables_export_exact_rows():
    text = rows_to_text(["token", "id", "cosine"], [("␣king", 7, 0.5), ('a "quoted", token', 8, 0.25)])
    assert list(csv.reader(io.StringIO(text))) == [["token", "id", "cosine"], ["␣king", "7", "0.5"],
                                                   ['a "quoted", token', "8", "0.25"]]
    headers, rows = map_rows([2, 0], [[1.0, 2.0], [3.0, 4.0]], ["a", "b", "c"], {"s": [0], "t": [0, 1]})
    assert headers == ["id", "token", "x", "y", "word_sets"]
    assert rows == [[2, "c", 1.0, 2.0, ""], [0, "a", 3.0, 4.0, "s;t"]]


def test_find_matches_whole_tokens_with_an_optional_leading_space(default_model):
    from embviz.core.table.search import search_tokens

    vocab = default_model.vocab
    whole = search_tokens(vocab, "king")
    assert whole and {vocab.texts[i].strip().lower() for i in whole} == {"king"}
    assert " king" in {vocab.texts[i] for i in whole} and "king" in {vocab.texts[i] for i in whole}
    spaced = search_tokens(vocab, "␣king")
    assert {vocab.texts[i].lower() for i in spaced} == {" king"}
    substring = search_tokens(vocab, "king", substring=True)
    assert len(substring) > 10 * len(whole)
    assert search_tokens(vocab, "^␣king$", use_regex=True) == [vocab.texts.index(" king")]


# --- the window ---------------------------------------------------------------------------------

def test_text_size_scales_fonts_rows_markers_and_is_remembered(qtbot, window):
    from embviz.state.settings import Settings

    table = window.neighbours.table
    base_font, base_row = table.font().pointSize(), table.verticalHeader().defaultSectionSize()
    base_marker = window.map_panel.view.points.opts["size"]
    menu_action(window.menuBar(), "Larger text").trigger()
    menu_action(window.menuBar(), "Larger text").trigger()
    assert style.text_scale() == 1.5
    assert table.font().pointSize() == round(base_font * 1.5)
    assert table.verticalHeader().defaultSectionSize() == round(base_row * 1.5)
    assert window.map_panel.view.points.opts["size"] == pytest.approx(base_marker * 1.5)
    assert window.logits.logit_chart.tick_font.pointSize() == style.pt(style.LABEL_POINT_SIZE)
    assert Settings(window.settings.path).text_scale == 1.5
    menu_action(window.menuBar(), "Normal text size").trigger()
    assert table.font().pointSize() == base_font


def test_at_150_percent_every_control_fits_a_1280_by_720_screen(qtbot, window):
    style.set_text_scale(1.5)
    QApplication.processEvents()
    hint = window.minimumSizeHint()
    assert hint.width() <= 1280 and hint.height() <= 720
    window.resize(1280, 720)
    for i in range(4):
        window.tabs.setCurrentIndex(i)
        QApplication.processEvents()
        panel = window.tabs.currentWidget()
        for control in panel.findChildren(type(window.map_panel.run_button)):  # every button
            if control.isVisibleTo(panel):
                rect = control.rect().translated(control.mapTo(window, control.rect().topLeft()))
                assert window.rect().contains(rect), control.text()


def test_lesson_map_labels_every_point_with_big_markers(qtbot, window):
    window.open_model("toy4")
    view = window.map_panel.view
    wait_for(qtbot, lambda: view.ids.size == 4 and len(view.placed_labels) == 4, 30_000)
    assert sorted(view.labels[i] for i in view.placed_labels) == ["car", "cat", "dog", "truck"]
    assert view.points.opts["size"] >= 16
    window.map_panel.labels_box.setChecked(False)
    assert view.placed_labels == []


@pytest.mark.default_model
def test_word_sets_are_labelled_fit_and_reveal(qtbot, smol):
    window = smol
    panel, view = window.map_panel, window.map_panel.view
    panel.show_word_set("weekdays")
    wait_for(qtbot, lambda: "weekdays" in view.word_set_names() and view.placed_labels, 30_000)
    labelled = {view.labels[i] for i in view.placed_labels}
    assert labelled and labelled <= {f"␣{d}" for d in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")}
    monday = view.labels.index("␣Monday")
    view.zoom_to([monday])
    view.vb.translateBy(x=1000.0)  # the token is now far off-screen
    window.neighbours.table.fill([("␣Monday", monday, 1.0)], [monday])
    window.neighbours.table.cellClicked.emit(0, 0)  # a clicked table row pans the map to it
    (x0, x1), (y0, y1) = view.vb.viewRange()
    x, y = view.position_of(monday)
    assert x0 <= x <= x1 and y0 <= y <= y1
    qtbot.keyClick(window, Qt.Key.Key_Home)  # fit: every point in view
    (x0, x1), (y0, y1) = view.vb.viewRange()
    lo, hi = view.coords.min(0), view.coords.max(0)
    assert x0 < lo[0] and hi[0] < x1 and y0 < lo[1] and hi[1] < y1


@pytest.mark.default_model
def test_find_is_live_and_clearing_takes_it_off_the_legend(qtbot, smol):
    panel = smol.map_panel
    qtbot.keyClick(smol, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert smol.tabs.currentWidget() is panel and panel.search.hasFocus()
    panel.search.insert("␣king")  # typed, no Enter: the search runs as you type (keyClicks is ASCII only)
    wait_for(qtbot, lambda: "search" in panel.view.word_set_names(), 30_000)
    assert sorted(panel.view.labels[i] for i in panel.view._sets["search"][1]) == ["␣King", "␣king"]
    assert panel.view._selected  # the hits are ringed and labelled
    panel.search.clear()
    wait_for(qtbot, lambda: "search" not in panel.view.word_set_names(), 5_000)
    assert not panel.view.legend.isVisible() and panel.view._selected == []  # rings go too
    panel.regex.setChecked(True)
    panel.search.insert("king")
    wait_for(qtbot, lambda: "search" in panel.view.word_set_names(), 30_000)
    panel.search.insert("(")  # "king(": a pattern that does not parse takes the old hits off
    wait_for(qtbot, lambda: "search" not in panel.view.word_set_names(), 5_000)
    assert panel.view._selected == [] and "not a valid regular expression" in smol.message.full_text.lower()


@pytest.mark.default_model
def test_export_picture_table_coordinates_and_copy(qtbot, smol, tmp_path):
    window = smol
    png = window.export_picture(tmp_path / "map.png")
    image = QImage(str(png))
    assert image.width() == 2 * window.map_panel.view.width()
    assert image.height() > 2 * window.map_panel.view.height()  # the caption is under the plot
    svg = window.export_picture(tmp_path / "map.svg").read_text(encoding="utf-8")
    assert "<svg" in svg and "PCA of 49,152 rows" in svg
    coords = window.export_table(tmp_path / "coords.csv", coordinates=True)
    rows = list(csv.reader(coords.open(encoding="utf-8")))
    assert rows[0] == ["id", "token", "x", "y", "word_sets"] and len(rows) == 49_153
    window.tabs.setCurrentWidget(window.neighbours)
    assert window.export_table(tmp_path / "empty.csv") is None  # nothing asked yet
    window.neighbours.query("king")
    wait_for(qtbot, lambda: window.neighbours.table.rowCount() == 10, 30_000)
    table = list(csv.reader(window.export_table(tmp_path / "n.csv").open(encoding="utf-8")))
    assert table[0] == ["token", "id", "cosine", "dot", "length"] and len(table) == 11
    window.neighbours.table.setFocus()
    qtbot.keyClick(window.neighbours.table, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    copied = QApplication.clipboard().text().splitlines()
    assert copied[0] == "token\tid\tcosine\tdot\tlength" and len(copied) == 11


def test_keys_switch_tabs_and_open_help(qtbot, window):
    for i, key in enumerate((Qt.Key.Key_1, Qt.Key.Key_2, Qt.Key.Key_3, Qt.Key.Key_4)):
        qtbot.keyClick(window, key, Qt.KeyboardModifier.ControlModifier)
        assert window.tabs.currentIndex() == i
    qtbot.keyClick(window, Qt.Key.Key_F1)
    assert "Ctrl+E" in window.help_box.text() and "Esc" in window.help_box.text()
    window.help_box.close()


def test_escape_cancels_a_running_projection_and_the_map_says_so(qtbot, window):
    window.open_model("toy4")
    panel = window.map_panel
    wait_for(qtbot, lambda: panel.view.ids.size == 4, 30_000)
    assert not panel.progress.isVisible()  # idle: no bar
    panel.method.setCurrentIndex(panel.method.findData("umap"))  # a child process: a real long job
    assert "settings changed" in panel.run_button.text()
    panel.run_projection()
    assert panel.progress.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    wait_for(qtbot, lambda: panel.status.text().startswith("Cancelled"), 30_000)
    assert not panel.progress.isVisible() and panel.progress.value() == 0


def test_logits_bars_in_vocabulary_order_and_a_held_axis(qtbot, window):
    window.open_model("spells")
    logits = window.logits
    wait_for(qtbot, lambda: window.summary is not None and window.summary.info["vocab_size"] == 5, 30_000)
    assert logits.charts.isHidden()  # no empty axes before any text
    logits.k.setValue(5)
    logits.by_id.setChecked(True)
    logits.set_text("I cast")
    wait_for(qtbot, lambda: logits.shown, 30_000)
    assert [r.logit for r in logits.shown] == [0.0, 0.5, 0.0, 1.0, 2.0]  # lesson 000, in vocabulary order
    assert not logits.charts.isHidden()
    assert "whole vocabulary" in logits.caption.text() and "not 100%" not in logits.caption.text()
    logits.hold_axis.setChecked(True)
    assert logits.prob_chart.shown_range[1] == pytest.approx(100.0)  # a probability axis ends at 100 %
