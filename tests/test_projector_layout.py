"""The window on a classroom projector: 1024×700 at 100 % and 150 % text, 1920×1080 up to
250 %. Every tab fits the screen, the analogies' table shows its rows, the tab titles are
all in sight, the map's keys leave the map visible, the lessons stay a side column, and
the window's keys work whatever has the focus."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QEvent, QKeyCombination, QObject, QRect, Qt
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QLineEdit, QScrollArea, QWidget

from embviz.ui import style
from embviz.ui.widgets import dialogs

from helpers import wait_for

SCREENS = [(1024, 700, 1.0), (1024, 700, 1.5), (1920, 1080, 2.5)]
MIN_TABLE_ROWS = 3
MAX_KEYS_SHARE = 0.25  # of the map's area, both keys together
LESSONS_MAX_SHARE = 0.3
LESSONS_MIN_SHARE = 0.4  # the dock's least width, of a 1024-px screen
PLANE_MIN_HEIGHT = 90  # pixels at 100 % text


pytestmark = pytest.mark.usefixtures("normal_text_size")


def settle(qtbot) -> None:
    """Let the layouts and the maps' deferred label placement run: until no map has a
    placement waiting and nothing is left posted."""
    from embviz.ui.plots.map_view import MapView

    def settled() -> bool:
        QApplication.sendPostedEvents()
        QApplication.processEvents()
        views = [w for w in QApplication.allWidgets() if isinstance(w, MapView)]
        return not any(view._label_timer.isActive() for view in views)

    qtbot.waitUntil(settled, timeout=5_000)


def on_screen(window, qtbot, width: int, height: int, scale: float) -> None:
    style.set_text_scale(scale)
    window.resize(width, height)
    settle(qtbot)


def assert_fits(window, width: int, height: int) -> None:
    hint = window.minimumSizeHint()
    assert hint.width() <= width and hint.height() <= height, hint
    assert window.width() <= width and window.height() <= height, window.size()
    status = window.statusBar()
    assert status.isVisible() and status.geometry().bottom() < window.height()


def whole_rows_in_sight(table) -> int:
    """Rows of `table` shown whole, in its viewport and in the part of the tab on screen."""
    page = table.window().tabs.currentWidget().parentWidget()  # the scroll area's viewport
    sight = QRect(table.viewport().mapTo(page, table.viewport().rect().topLeft()), table.viewport().size())
    sight = sight.intersected(page.rect())
    rows = 0
    for row in range(table.rowCount()):
        rect = table.visualRect(table.model().index(row, 0))
        rect.moveTopLeft(table.viewport().mapTo(page, rect.topLeft()))
        rows += sight.top() <= rect.top() and rect.bottom() <= sight.bottom()
    return rows


def assert_tabs_in_sight(window) -> None:
    """Every title in the bar whole and clear of the corner; the tabs left out are in the tab list."""
    tabs = window.tabs
    bar = tabs.tabBar()
    shown = tabs.shown_tabs()
    assert tabs.currentIndex() in shown
    for i in shown:
        rect = bar.tabRect(i)
        assert bar.rect().contains(rect), (bar.tabText(i), rect, bar.rect())
        assert rect.width() >= bar.tabSizeHint(i).width(), bar.tabText(i)  # the whole title
        assert bar.fontMetrics().horizontalAdvance(bar.tabText(i)) <= rect.width(), bar.tabText(i)
        assert "…" not in bar.tabText(i)
    if tabs.tab_list.isVisible():
        corner = tabs.cornerWidget()
        assert bar.mapTo(window, bar.tabRect(shown[-1]).topRight()).x() < corner.mapTo(window, corner.rect().topLeft()).x()
    else:
        assert shown == list(range(bar.count()))


@pytest.mark.parametrize("width, height, scale", SCREENS)
def test_every_tab_fits_the_screen_and_the_analogies_show_rows(qtbot, smol, width, height, scale):
    window = smol
    on_screen(window, qtbot, width, height, scale)
    assert_tabs_in_sight(window)
    panel = window.analogies
    window.tabs.setCurrentWidget(panel)
    panel.set_words("king", "man", "woman")
    wait_for(qtbot, lambda: panel.table.rowCount() >= MIN_TABLE_ROWS and panel.plane.ids.size > 0, 30_000)
    settle(qtbot)
    assert whole_rows_in_sight(panel.table) >= MIN_TABLE_ROWS
    assert panel.plane.height() >= PLANE_MIN_HEIGHT * scale  # the plane, not a strip
    for i in range(window.tabs.count()):
        window.tabs.setCurrentIndex(i)
        settle(qtbot)
        assert_fits(window, width, height)


@pytest.mark.parametrize("width, height, scale", SCREENS)
def test_the_map_keys_leave_the_map_and_its_markers_in_sight(qtbot, smol, width, height, scale):
    window = smol
    on_screen(window, qtbot, width, height, scale)
    panel, view = window.map_panel, window.map_panel.view
    for name in ("weekdays", "months", "numbers"):
        panel.show_word_set(name)
    panel.colour_by.setCurrentIndex(panel.colour_by.findData("kind"))
    wait_for(qtbot, lambda: not panel.sets_waiting() and len(view.word_set_names()) == 3 and view.colour_codes() is not None,
             30_000)
    view.fit()
    settle(qtbot)
    keys = [key.mapRectToParent(key.boundingRect()) for key in (view.legend, view.colour_legend) if key.isVisible()]
    covered = sum(rect.width() * rect.height() for rect in keys)
    assert covered <= MAX_KEYS_SHARE * view.vb.width() * view.vb.height()
    (x0, x1), (y0, y1) = view.vb.viewRange()
    sx, sy = view.vb.width() / (x1 - x0), view.vb.height() / (y1 - y0)
    for name in view.word_set_names():
        for x, y in view._sets[name][0].data[["x", "y"]].tolist():
            px, py = (x - x0) * sx, (y1 - y) * sy
            assert not any(rect.contains(px, py) for rect in keys), (name, px, py)


@pytest.mark.parametrize("scale", [1.0, 1.5])
def test_the_lessons_are_a_side_column_of_whole_steps_and_f2_toggles_them(qtbot, window, scale):
    on_screen(window, qtbot, 1024, 700, scale)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    qtbot.keyClick(window, Qt.Key.Key_F2)
    settle(qtbot)
    dock, steps = window.lessons_dock, window.lessons.steps
    assert dock.isVisible()
    assert dock.width() <= LESSONS_MAX_SHARE * window.width()
    assert_fits(window, 1024, 700)
    assert_tabs_in_sight(window)
    assert dock.minimumSizeHint().width() <= LESSONS_MIN_SHARE * 1024
    row = steps.sizeHintForRow(0)
    shown, part = divmod(steps.viewport().height(), row)
    assert part == 0, "half a step in sight"
    assert shown == steps.count() or steps.verticalScrollBar().isVisible()
    assert not steps.horizontalScrollBar().isVisible()  # it hid half a row
    qtbot.keyClick(window, Qt.Key.Key_F2)
    settle(qtbot)
    assert not dock.isVisible()


def test_short_titles_are_the_view_menus_words():
    from embviz.ui.tab_list import TABS

    for spec in TABS:  # whole words of the title ("Logits" of "Next-token logits"), never "Who" for Attribution
        assert re.search(rf"\b{re.escape(spec.short)}\b", spec.title, re.IGNORECASE), (spec.short, spec.title)


def test_tabs_left_out_of_the_bar_are_in_the_tab_list_and_come_back_when_picked(qtbot, window):
    on_screen(window, qtbot, 1024, 700, 1.5)
    window.show_lessons()
    settle(qtbot)
    tabs = window.tabs
    assert tabs.tab_list.isVisible() and len(tabs.shown_tabs()) < tabs.count()
    assert_tabs_in_sight(window)
    menu = tabs.tab_list.menu()
    from embviz.ui.tab_list import TABS

    assert [a.text() for a in menu.actions()] == [spec.title for spec in TABS]
    last = tabs.count() - 1
    assert last not in tabs.shown_tabs()
    menu.actions()[last].trigger()
    settle(qtbot)
    assert tabs.currentIndex() == last and last in tabs.shown_tabs()
    assert_tabs_in_sight(window)
    window.lessons_dock.close()
    style.set_text_scale(1.0)
    window.resize(1920, 1080)
    settle(qtbot)
    assert not tabs.tab_list.isVisible() and tabs.shown_tabs() == list(range(tabs.count()))
    assert_tabs_in_sight(window)


class ClaimsCtrlE(QObject):
    """What X11's key bindings do (offscreen has none): a focused line edit or spin box
    claims Ctrl+E ("end of line") before the window's shortcuts are looked up."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        fields = (QLineEdit, QAbstractSpinBox)
        if event.type() == QEvent.Type.ShortcutOverride and event.keyCombination() == CTRL_E and isinstance(watched, fields):
            event.accept()
        return False


CTRL_E = QKeyCombination(Qt.KeyboardModifier.ControlModifier, Qt.Key.Key_E)


@pytest.fixture
def fields_claim_ctrl_e():
    claims = ClaimsCtrlE()
    QApplication.instance().installEventFilter(claims)  # it runs before every widget's own filters
    yield
    QApplication.instance().removeEventFilter(claims)


def test_export_picture_key_works_from_a_spin_box(qtbot, window, monkeypatch, fields_claim_ctrl_e):
    asked = []

    class Dialog:  # stands in for the save dialog: records that it was asked, saves nothing
        @staticmethod
        def getSaveFileName(*args, **kwargs):
            asked.append(args)
            return "", ""

    monkeypatch.setattr(dialogs, "QFileDialog", Dialog)  # where every save dialog is asked
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    window.tabs.setCurrentWidget(window.analogies)
    for field in (window.analogies.k, window.analogies.a):  # a spin box, then a text field
        field.setFocus()
        qtbot.waitUntil(field.hasFocus)
        qtbot.keyClick(field, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert len(asked) == 2


def open_toy4(qtbot, window) -> None:
    window.open_model("toy4")
    wait_for(qtbot, lambda: window.summary is not None and window.summary.info["vocab_size"] == 4
             and window.map_panel.view.ids.size == 4, 60_000)


def control_rows(panel) -> int:
    """The lines the map's controls wrap onto: their distinct tops."""
    box = panel.controls[0]
    return len({w.mapTo(panel, w.rect().topLeft()).y() for w in box.findChildren(QWidget)
                if w.parentWidget() is box and w.isVisible()})


@pytest.mark.parametrize("colour_by", ["none", "cluster"])
def test_the_maps_controls_take_two_rows_at_150_percent(qtbot, window, colour_by):
    on_screen(window, qtbot, 1024, 700, 1.5)
    open_toy4(qtbot, window)
    panel = window.map_panel
    panel.colour_by.setCurrentIndex(panel.colour_by.findData(colour_by))
    settle(qtbot)
    assert panel.cluster_method.isVisible() == (colour_by == "cluster")
    assert control_rows(panel) <= 2
    assert panel.search.isVisible() and panel.search.width() >= 150
    box = panel.controls[0]
    assert panel.search_box.mapTo(box, panel.search_box.rect().topRight()).x() >= box.width() - 30  # the rest of its row
    assert panel.drag_mode.geometry().bottom() < panel.hover_label.geometry().top()  # the side column's rows apart
    assert panel.view.height() >= 0.45 * window.height()  # the map, not the controls, has the tab


def test_the_neighbours_show_eight_rows_at_150_percent(qtbot, window):
    on_screen(window, qtbot, 1024, 700, 1.5)
    open_toy4(qtbot, window)
    panel = window.neighbours
    window.tabs.setCurrentWidget(panel)
    panel.state.word = "cat"
    panel.run()
    wait_for(qtbot, lambda: panel.table.rowCount() == 3, 30_000)
    settle(qtbot)
    assert not panel.message.isVisible()  # no message: no empty line
    table = panel.table
    assert table.viewport().height() // table.verticalHeader().defaultSectionSize() >= 8
    assert table.verticalHeader().defaultSectionSize() > table.fontMetrics().height()  # the rows do not touch
    assert_fits(window, 1024, 700)


def test_a_long_status_message_wraps_whole(qtbot, window):
    on_screen(window, qtbot, 1024, 700, 1.5)
    text = ("52 clusters; the largest: Mughal Kabul Sultan (3,483); very more large (2,102); server data Java "
            "(1,695); in the a (1,305); physics medical economic (1,243)")
    window.show_message(text)
    settle(qtbot)
    label = window.message
    assert label.text() == text and "…" not in label.text()
    assert label.height() >= label.heightForWidth(label.width()) > label.fontMetrics().lineSpacing()
    assert window.rect().contains(label.geometry().translated(label.parentWidget().mapTo(window, label.parentWidget().rect().topLeft())))
    window.show_message(" ".join([text] * 4))  # more than the status bar's three lines
    settle(qtbot)
    assert label.full_text == " ".join([text] * 4) and label.text().endswith("…")
    assert label.text()[:-1] == label.full_text[:len(label.text()) - 1]
    assert label.height() <= 3 * label.fontMetrics().lineSpacing() + 6  # three lines
    assert label.height() >= label.heightForWidth(label.width())  # every line it shows, whole
    window.message.clear_message()
    settle(qtbot)
    assert label.height() <= label.fontMetrics().lineSpacing() + 4


def test_the_colour_key_of_kinds_and_clusters_is_drawn_at_150_percent(qtbot, smol):
    window = smol
    on_screen(window, qtbot, 1024, 700, 1.5)
    panel, view = window.map_panel, window.map_panel.view
    # The six token kinds; the largest named clusters, then a line for the rest.
    for what, drawn in (("kind", lambda entries: len(entries) == 6),
                        ("cluster", lambda entries: len(entries) >= 7 and "clusters" in entries[-1])):
        panel.colour_by.setCurrentIndex(panel.colour_by.findData(what))
        wait_for(qtbot, lambda: drawn(view.colour_legend_entries()), 240_000)  # noqa: B023
        settle(qtbot)
        key = view.colour_legend
        assert key.isVisible() and key.scale() >= 0.5, what
        rect = view.key_rect(key)
        assert rect.width() * rect.height() <= MAX_KEYS_SHARE * view.vb.width() * view.vb.height()
    # With word sets ticked too: where the two keys do not both fit, the colours' key stays.
    for name in ("weekdays", "months", "numbers"):
        panel.show_word_set(name)
    panel.colour_by.setCurrentIndex(panel.colour_by.findData("kind"))
    wait_for(qtbot, lambda: not panel.sets_waiting() and len(view.word_set_names()) == 3
             and len(view.colour_legend_entries()) == 6, 60_000)
    settle(qtbot)
    assert view.colour_legend.isVisible() and view.colour_legend.scale() >= 0.5
    covered = sum(view.key_rect(k).width() * view.key_rect(k).height() for k in (view.legend, view.colour_legend)
                  if k.isVisible())
    assert covered <= MAX_KEYS_SHARE * view.vb.width() * view.vb.height()


def test_the_window_has_its_text_size_before_its_first_event(qapp, tmp_path):
    """Set after the window was made, the menu bar kept the 100 % font and height until the
    event loop ran: the first second on screen was drawn at 100 % with the menu bar cut off."""
    from embviz.state.settings import Settings
    from embviz.ui.main_window import MainWindow

    settings = Settings(tmp_path / "settings.json")
    settings.data["text_scale"] = 1.5
    settings.save()
    window = MainWindow(settings=Settings(tmp_path / "settings.json"), device="cpu")
    try:
        window.show()  # no event processed yet
        bar = window.menuBar()
        assert bar.font().pointSize() == style.pt(style.BASE_POINT_SIZE) == round(style.BASE_POINT_SIZE * 1.5)
        assert window.statusBar().font().pointSize() == bar.font().pointSize()
        assert bar.height() >= bar.sizeHint().height()
    finally:
        window.close()
        style.set_text_scale(1.0)


@pytest.mark.parametrize("width, height, scale", [(1920, 1080, 1.5), (1024, 700, 1.5), (1920, 1080, 1.0)])
def test_the_lesson_text_wraps_inside_the_dock(qtbot, window, width, height, scale):
    """Every step's sentences wrap inside the dock's width; a table of numbers too wide for it
    scrolls sideways on its own, without taking the sentences with it."""
    on_screen(window, qtbot, width, height, scale)
    window.show_lessons()
    panel = window.lessons
    for index in range(len(panel.tour.steps)):
        window.go_to_step(index)
        step = panel.tour.steps[index]
        wait_for(qtbot, lambda: window.summary is not None and window.model_source == step.model  # noqa: B023
                 and not window.load_progress.isVisible() and not panel.asking.waiting, 120_000)
        settle(qtbot)
        sight = panel.findChild(QScrollArea).viewport().width()
        assert panel.numbers_box.width() <= sight, index  # a wide table scrolls in its own strip
        assert panel.numbers_box.height() >= panel.numbers.height() > 0 or not panel.numbers.text()
        for label in (panel.title, panel.text):
            assert label.width() <= sight, (index, label.text())
            assert label.heightForWidth(label.width()) <= label.height() + 1, (index, label.text())
