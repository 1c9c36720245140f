"""View ▸ Projector mode at 1024×700 with text at 150 %: the picture takes the screen, the
tabs' controls fold into a drawer, a lesson is a caption band under the picture, and its keys
work without a mouse."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from embviz.state.lesson_tour import STEPS
from embviz.ui import style

from helpers import wait_for

pytestmark = pytest.mark.usefixtures("normal_text_size")

TOY4_STEP = next(i for i, s in enumerate(STEPS) if s.model == "toy4")
SPELLS_STEP = next(i for i, s in enumerate(STEPS) if s.model == "spells")
PARIS_STEP = next(i for i, s in enumerate(STEPS) if s.title == "The capital of France is")


def settle() -> None:
    for _ in range(5):
        QApplication.sendPostedEvents()
        QApplication.processEvents()


@pytest.fixture
def projector_window(qtbot, window):
    """The window at 1024×700 with text at 150 %, active, its tabs built."""
    style.set_text_scale(1.5)
    window.resize(1024, 700)
    window.build_tabs()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    settle()
    return window


def key(qtbot, window, which, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    """A key pressed wherever the focus is, as a class's presenter presses it."""
    target = QApplication.focusWidget() or window
    qtbot.keyClick(target, which, modifier)
    settle()


def folded_panels(window) -> dict[str, bool]:
    """Each tab that names its controls: whether they are all folded away."""
    return {k: all(w.isHidden() for w in p.controls) for k, p in window.panels().items() if hasattr(p, "controls")}


def lesson_on(qtbot, window, index: int) -> None:
    window.go_to_step(index)
    wait_for(qtbot, lambda: window.summary is not None and not window.load_progress.isVisible()
             and window.model_source == STEPS[index].model, 60_000)
    settle()


def test_f5_folds_the_controls_f6_opens_them_and_esc_gives_the_window_back(qtbot, projector_window):
    window = projector_window
    assert set(folded_panels(window)) >= {"map", "neighbours", "analogies", "logits", "lens", "vectors"}
    assert not any(folded_panels(window).values())
    map_before = window.map_panel.view.height()
    key(qtbot, window, Qt.Key.Key_F5)
    assert window.projector and window.projector_action.isChecked()
    assert window.isFullScreen() and not window.menuBar().isVisible()
    assert all(folded_panels(window).values())
    assert window.controls_button.isVisible()
    bar, corner = window.tabs.tabBar(), window.tabs.cornerWidget()
    last = window.tabs.shown_tabs()[-1]
    assert bar.mapTo(window, bar.tabRect(last).topRight()).x() < corner.mapTo(window, corner.rect().topLeft()).x()
    assert all(bar.tabRect(i).width() >= bar.tabSizeHint(i).width() for i in window.tabs.shown_tabs())
    assert window.map_panel.view.height() > map_before  # the picture has the rows the controls had
    assert window.map_panel.status.isVisible()  # the map's caption stays
    key(qtbot, window, Qt.Key.Key_F6)  # the drawer
    assert window.controls_action.isChecked() and not any(folded_panels(window).values())
    assert window.map_panel.method.isVisible()
    key(qtbot, window, Qt.Key.Key_F6)
    assert all(folded_panels(window).values())
    key(qtbot, window, Qt.Key.Key_Escape)
    assert not window.projector and not window.projector_action.isChecked()
    assert not window.isFullScreen() and window.menuBar().isVisible()
    assert not any(folded_panels(window).values())
    assert window.size().width() == 1024 and window.size().height() == 700


def test_the_menus_keys_work_while_the_menu_bar_is_hidden(qtbot, projector_window):
    window = projector_window
    key(qtbot, window, Qt.Key.Key_F5)
    key(qtbot, window, Qt.Key.Key_3, Qt.KeyboardModifier.ControlModifier)
    assert window.tab_key() == "analogies"
    key(qtbot, window, Qt.Key.Key_F5)  # F5 leaves it too
    assert not window.projector


def test_a_lesson_at_150_percent_is_a_caption_band_stepped_by_keys(qtbot, projector_window):
    window = projector_window
    lesson_on(qtbot, window, SPELLS_STEP)
    assert window.projector  # text at 150 %: the lesson turned it on
    dock, lessons = window.lessons_dock, window.lessons
    assert window.dockWidgetArea(dock) == Qt.DockWidgetArea.BottomDockWidgetArea
    assert dock.isVisible() and not lessons.steps.isVisible()
    assert lessons.next.isVisible() and lessons.back.isVisible() and lessons.close_button.isVisible()
    assert dock.height() <= 0.34 * window.height() + 1  # a band: the picture keeps the rest
    assert dock.height() <= lessons.band_height(lessons.width()) + 8  # and no more than its words need
    words = lessons._words  # the scroll area the step's words are in
    assert words.width() >= 0.7 * dock.width()  # the words nearly the whole width, every row theirs
    line = lessons.text.fontMetrics().lineSpacing()
    assert words.height() >= dock.height() - 2 * line  # less at most the line whole lines left over
    need = lessons._words_column.heightForWidth(words.viewport().width())
    assert need <= words.height() or (words.height() - lessons.text.y()) % line == 0  # no line cut through
    for button in (lessons.next, lessons.back, lessons.close_button):  # in a column right of them
        assert button.mapTo(dock, button.rect().topLeft()).x() >= words.mapTo(dock, words.rect().topRight()).x()
    assert dock.geometry().top() >= window.tabs.geometry().bottom()  # under the picture
    assert lessons.text.text() == STEPS[SPELLS_STEP].text
    for which, index in ((Qt.Key.Key_Right, SPELLS_STEP + 1), (Qt.Key.Key_Left, SPELLS_STEP),
                         (Qt.Key.Key_PageDown, SPELLS_STEP + 1), (Qt.Key.Key_PageUp, SPELLS_STEP),
                         (Qt.Key.Key_Space, SPELLS_STEP + 1)):
        key(qtbot, window, which)
        assert window.tour.index == index, which
        wait_for(qtbot, lambda: not window.load_progress.isVisible(), 60_000)
    assert lessons.text.text() == STEPS[SPELLS_STEP + 1].text
    # / finds: the tab's own field has the focus, and what is typed goes into it, not to the keys.
    key(qtbot, window, Qt.Key.Key_Slash)
    assert QApplication.focusWidget() is window.logits.text
    qtbot.keyClicks(window.logits.text, "a b")
    assert window.logits.text.toPlainText() == "a b" and window.tour.index == SPELLS_STEP + 1
    window.tabs.setFocus()
    key(qtbot, window, Qt.Key.Key_Plus)
    assert style.text_scale() == pytest.approx(1.75)
    qtbot.wait(50)  # the corner's buttons take the new font a turn later: the titles fit again
    settle()
    bar = window.tabs.tabBar()
    for i in window.tabs.shown_tabs():  # whole, none scrolled out of the bar
        assert bar.rect().contains(bar.tabRect(i)) and bar.tabRect(i).width() >= bar.tabSizeHint(i).width()
    key(qtbot, window, Qt.Key.Key_Minus)
    key(qtbot, window, Qt.Key.Key_Minus)
    assert style.text_scale() == pytest.approx(1.25)
    lessons.close_button.click()
    settle()
    assert not dock.isVisible() and window._before_lesson is None
    assert not window.projector and window.menuBar().isVisible()  # the lesson turned it on: it goes with it
    assert window.dockWidgetArea(dock) == Qt.DockWidgetArea.RightDockWidgetArea
    assert lessons.steps.isVisibleTo(lessons) and not lessons.close_button.isVisibleTo(lessons)


def test_a_lesson_leaves_the_mode_on_when_the_user_had_it_on(qtbot, projector_window):
    window = projector_window
    key(qtbot, window, Qt.Key.Key_F5)
    lesson_on(qtbot, window, TOY4_STEP)
    assert window.tab_key() == "neighbours" and all(folded_panels(window).values())
    key(qtbot, window, Qt.Key.Key_Slash)
    assert QApplication.focusWidget() is window.neighbours.word
    window.lessons_dock.close()
    settle()
    assert window.projector and not window.lessons_dock.isVisible()


def test_find_on_the_map_opens_the_drawer_for_its_search(qtbot, projector_window):
    window = projector_window
    key(qtbot, window, Qt.Key.Key_F5)
    window.tabs.setCurrentWidget(window.map_panel)
    settle()
    key(qtbot, window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.focusWidget() is window.map_panel.search
    assert window.controls_action.isChecked() and window.map_panel.search.isVisible()


def test_the_screenshot_demo_saves_projector_pictures(qtbot, qapp, smol, tmp_path, monkeypatch):
    from embviz.ui import screenshots

    monkeypatch.setattr(screenshots, "WAIT_S", 120.0)  # a picture that never comes fails the test, not hangs it
    window = smol
    style.set_text_scale(1.5)
    window.resize(1024, 700)
    demo = screenshots.Demo(qapp, window, tmp_path)
    bands = []
    monkeypatch.setattr(demo, "save", lambda name, widget=None, save=demo.save: (
        bands.append((name, window.projector, window.lessons_dock.isVisible(), window.menuBar().isVisible())),
        save(name, widget)))
    screenshots._projector_pictures(demo)
    assert [b[0] for b in bands] == ["projector_lesson", "projector_map", "projector_logits"]
    assert bands[0][1:] == (True, True, False)  # the lesson's band, no menu bar
    assert all(b[1] and not b[2] for b in bands[1:])
    assert all((tmp_path / f"{b[0]}.png").stat().st_size > 0 for b in bands)
    assert not window.projector and window.menuBar().isVisible()


def rows_in_sight(panel, chart) -> int:
    """How many of a bar chart's rows the tab shows whole (the tab scrolls at large text)."""
    sight = panel.rect()
    return sum(sight.contains(chart.mapTo(panel, chart.label_rect(i).toAlignedRect().topLeft()))
               and sight.contains(chart.mapTo(panel, chart.label_rect(i).toAlignedRect().bottomRight()))
               for i in range(chart.count))


@pytest.mark.default_model
def test_a_logits_lesson_at_200_percent_leaves_the_bars_the_screen(qtbot, projector_window):
    """The band takes a third of a 1024×700 screen at 200 %: the prompt box folds (the token
    line says the text), the empty status bar goes, and the bars keep rows a class can read."""
    window = projector_window
    window.set_text_size(2.0)
    lesson_on(qtbot, window, PARIS_STEP)
    logits = window.logits
    wait_for(qtbot, lambda: logits.shown and logits.charts.isVisible(), 120_000)
    settle()
    assert window.projector and not logits.text.isVisible() and logits.tokens.isVisible()
    assert "␣France" in logits.tokens.text()
    window.message.clear_message()
    settle()
    assert not window.statusBar().isVisible()  # nothing to say: its line is the picture's
    assert rows_in_sight(logits, logits.prob_chart) >= 4
    lessons = window.lessons
    bar = lessons._words.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == 0  # the step's words are longer than the band
    key(qtbot, window, Qt.Key.Key_Down)
    assert bar.value() == lessons.text.fontMetrics().lineSpacing()
    key(qtbot, window, Qt.Key.Key_Up)
    assert bar.value() == 0
    key(qtbot, window, Qt.Key.Key_Slash)  # / brings the text back, to type in
    assert logits.text.isVisible() and QApplication.focusWidget() is logits.text
    window.show_message("Something to say.")
    settle()
    assert window.statusBar().isVisible()


@pytest.mark.parametrize("scale", [1.0, 1.5, 2.0, 2.5])
def test_a_text_box_is_its_lines_high_at_every_text_size(qtbot, scale):
    """The logits' and the lens's text: two whole lines of their font, never one and a half."""
    from embviz.ui.widgets import LinesBox

    style.set_text_scale(scale)
    try:
        box = LinesBox(2)
        style.use_font(box, style.LABEL_POINT_SIZE + 4)
        qtbot.addWidget(box)
        box.setPlainText("one\ntwo\nthree")
        box.show()
        settle()
        assert box.verticalScrollBar().maximum() == 1  # two of the three lines in sight, whole
        assert box.height() < 3 * box.fontMetrics().lineSpacing()  # and not a third
    finally:
        style.set_text_scale(1.0)
