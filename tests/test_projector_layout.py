"""The window on a classroom projector: 1024×700 at 100 % and 150 % text, 1920×1080 up to
250 %. Every tab fits the screen, the analogies' table shows its rows, the tab titles are
all in sight, the map's keys leave the map visible, the lessons stay a side column, and
the window's keys work whatever has the focus."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QKeyCombination, QObject, QRect, Qt
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QLineEdit, QScrollArea

from embviz.ui import style, window_files

from helpers import wait_for

SCREENS = [(1024, 700, 1.0), (1024, 700, 1.5), (1920, 1080, 2.5)]
MIN_TABLE_ROWS = 3
MAX_KEYS_SHARE = 0.25  # of the map's area, both keys together
LESSONS_MAX_SHARE = 0.3
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


def assert_tabs_in_sight(window, elided_ok: bool = False) -> None:
    bar = window.tabs.tabBar()
    for i in range(bar.count()):
        rect = bar.tabRect(i)
        assert bar.rect().contains(rect), (bar.tabText(i), rect, bar.rect())
        if not elided_ok:
            assert rect.width() >= bar.tabSizeHint(i).width(), bar.tabText(i)  # the whole title


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
    assert_tabs_in_sight(window, elided_ok=True)
    row = steps.sizeHintForRow(0)
    shown, part = divmod(steps.viewport().height(), row)
    assert part == 0, "half a step in sight"
    assert shown == steps.count() or steps.verticalScrollBar().isVisible()
    assert not steps.horizontalScrollBar().isVisible()  # it hid half a row
    qtbot.keyClick(window, Qt.Key.Key_F2)
    settle(qtbot)
    assert not dock.isVisible()


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

    monkeypatch.setattr(window_files, "QFileDialog", Dialog)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)
    window.tabs.setCurrentWidget(window.analogies)
    for field in (window.analogies.k, window.analogies.a):  # a spin box, then a text field
        field.setFocus()
        qtbot.waitUntil(field.hasFocus)
        qtbot.keyClick(field, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert len(asked) == 2


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
        assert panel.numbers_box.width() <= sight  # a wide table scrolls in its own strip
        assert panel.numbers_box.height() >= panel.numbers.height() > 0 or not panel.numbers.text()
        for label in (panel.title, panel.text):
            assert label.width() <= sight, (index, label.text())
            assert label.heightForWidth(label.width()) <= label.height() + 1, (index, label.text())
