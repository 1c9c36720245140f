"""The lessons side panel: the steps, the current step's sentences, the numbers it works
out on the model it opened, Back and Next. What a step sets up happens in the window
(it owns the tabs); this panel only shows the tour and asks for a step."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest, Submit
from embviz.bridge.views import LessonNumbersView
from embviz.state.lesson_tour import TourState
from embviz.ui import style
from embviz.ui.widgets import QWIDGETSIZE_MAX

PANEL_WIDTH = 420  # pixels at 100 % text
# The step list's share of the panel's height: every step when they fit in it, else as
# many whole rows as do (never a half row), and a scroll bar for the rest.
STEP_LIST_SHARE = 0.4
MIN_STEP_ROWS = 3


class LessonsPanel(QWidget):
    stepChosen = Signal(int)  # the index of the step to go to
    closeAsked = Signal()  # the band's close button: the lessons end
    bandChanged = Signal()  # the step's words changed: a band takes their height

    def __init__(self, tour: TourState, submit: Submit, parent=None) -> None:
        super().__init__(parent)
        self.tour = tour
        self.asking = Latest(submit, self.on_numbers, self.on_failed)  # a step's numbers
        self.steps = QListWidget()
        for i, step in enumerate(tour.steps):
            # The lesson's number is in the step's heading: the narrow list keeps the words.
            self.steps.addItem(f"{i + 1}. {step.title}")
            self.steps.item(i).setToolTip(step.name)
        # One line a step, cut with "…" in a narrow dock: a horizontal scroll bar would hide
        # half a row and scroll the step numbers out of sight.
        self.steps.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.steps.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.steps.setUniformItemSizes(True)
        self.steps.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerItem)
        self.steps.itemClicked.connect(lambda item: self.stepChosen.emit(self.steps.row(item)))
        self.title = QLabel("Pick a step: each one opens its model and fills in the tab.")
        self.title.setWordWrap(True)
        style.use_font(self.title, style.LABEL_POINT_SIZE, bold=True)
        self.text = QLabel("")
        self.text.setWordWrap(True)
        style.use_font(self.text, style.LABEL_POINT_SIZE)
        self.numbers = QLabel("")
        self._parts: list[tuple[str, str]] = []  # the step's numbers: (sentence, its table or "")
        self.numbers.setWordWrap(True)
        style.use_font(self.numbers, style.LABEL_POINT_SIZE)
        self.back = QPushButton("◀ Back")
        self.next = QPushButton("Next ▶")
        self.back.clicked.connect(lambda: self.stepChosen.emit(self.tour.index - 1))
        self.started = False
        self.next.clicked.connect(lambda: self.stepChosen.emit(self.tour.index + 1 if self.started else 0))
        self.counter = QLabel("")
        self.counter.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.close_button = QPushButton("✕")  # beside the counter: the band's column keeps three rows
        self.close_button.setToolTip("Close the lessons: your tabs come back as they were")
        self.close_button.clicked.connect(self.closeAsked)
        self.close_button.hide()  # the dock has its own, except as projector mode's band
        buttons = QHBoxLayout()
        buttons.addWidget(self.back)
        buttons.addStretch(1)
        buttons.addWidget(self.next)
        # The step's words and numbers scroll on a short screen; the list and the buttons stay.
        words = QWidget()
        self._words_column = column = QVBoxLayout(words)
        column.setContentsMargins(0, 0, 0, 0)
        # A table of numbers wider than the dock scrolls sideways in a strip of its own: in
        # the column it widened the words' width, and the sentences ran past the dock's edge.
        self.numbers_box = QScrollArea()
        self.numbers_box.setWidgetResizable(True)
        self.numbers_box.setFrameShape(QFrame.Shape.NoFrame)
        self.numbers_box.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # as tall as its numbers
        self.numbers_box.setWidget(self.numbers)
        self.numbers_box.viewport().installEventFilter(self)
        for part in (self.title, self.text, self.numbers_box):
            column.addWidget(part)
        column.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # the words wrap instead
        scroll.setWidget(words)
        self._column = QVBoxLayout(self)
        self._column.addWidget(self.steps)
        self._words = scroll
        # The band's buttons stand in a column right of the words, so the words keep every row.
        self._band_buttons = QVBoxLayout()
        self._band_top = QHBoxLayout()  # the counter and Close
        self._band_top.addWidget(self.close_button)
        self._band_buttons.addLayout(self._band_top)
        self._body = QHBoxLayout()
        words_column = QVBoxLayout()
        words_column.addWidget(scroll, 1)
        words_column.addStretch(0)  # what whole lines leave goes under them
        self._body.addLayout(words_column, 1)
        self._band = False
        # Once the band has its new height: a step's words change without resizing it.
        self.bandChanged.connect(lambda: QTimer.singleShot(0, self, self._whole_lines))
        self._body.addLayout(self._band_buttons)
        self._column.addLayout(self._body, 1)
        self._column.addWidget(self.counter)  # its own line: between the buttons a narrow dock cut it up
        self._buttons = buttons
        self._column.addLayout(buttons)
        style.follow_scale(self)
        self.back.setEnabled(False)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.numbers_box.viewport() and event.type() == QEvent.Type.Resize:
            if self._parts:
                self._show_numbers()  # the sentences wrap at the new width
            else:
                self._fit_numbers()
        return super().eventFilter(watched, event)

    def _fit_numbers(self) -> None:
        """The numbers' strip as tall as its text at the width it is laid out in (its table's
        when that is wider than the dock), with room for the sideways scroll bar then."""
        sight = self.numbers_box.viewport().width()
        needs = self.numbers.minimumSizeHint().width() if self.numbers.text() else 0
        bar = self.numbers_box.horizontalScrollBar().sizeHint().height() if needs > sight else 0
        self.numbers_box.setFixedHeight(max(0, self.numbers.heightForWidth(max(needs, sight))) + bar)

    def sizeHint(self) -> QSize:
        # A column beside the tabs, not the width of its longest sentence: the window must
        # not grow past a 1024-px screen when the lessons open.
        return QSize(round(PANEL_WIDTH * style.text_scale()), 600)

    def set_band(self, on: bool) -> None:
        """Projector mode's caption band under the picture: the step's words, and right of
        them a column of the counter and Close, Next, and Back; no step list. Or the side
        column: the list, the words, the counter on its own line, and Back and Next under them."""
        if on == self._band:
            return
        for widget in (self.counter, self.next, self.back):
            for layout in (self._column, self._buttons, self._band_top, self._band_buttons):
                layout.removeWidget(widget)
        if on:
            self._band_top.insertWidget(0, self.counter, 1)
            self._band_buttons.addWidget(self.next)
            self._band_buttons.addWidget(self.back)
            self._band_buttons.addStretch(1)
        else:
            self._band_buttons.takeAt(1)  # the stretch, after the counter's row
            self._column.insertWidget(self._column.indexOf(self._body) + 1, self.counter)
            self._buttons.insertWidget(0, self.back)
            self._buttons.addWidget(self.next)
        self._count()
        self.steps.setVisible(not on)
        self.close_button.setVisible(on)
        # The band's scroll bar always there: one that came and went with whole lines left the
        # words laid out at the width they had without it, their ends under it.
        self._words.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn if on
                                               else Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self._band = on
        self._whole_lines()

    def set_text_scale(self, scale: float) -> None:
        self._fit_steps()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_steps()
        self._whole_lines()

    def _whole_lines(self) -> None:
        """A band too short for the step's words shows whole lines of them, and scrolls: a
        line cut through its middle reads as a smudge on a projector."""
        self._words.setMaximumHeight(self._whole_lines_height() if self._band else QWIDGETSIZE_MAX)

    def _whole_lines_height(self) -> int:
        margins = self._column.contentsMargins()
        room = self.height() - margins.top() - margins.bottom()
        width = self._words.viewport().width()
        if self._words_column.heightForWidth(width) <= room:
            return QWIDGETSIZE_MAX
        top = self.title.heightForWidth(width) + self._words_column.spacing()
        line = self.text.fontMetrics().lineSpacing()
        return top + (room - top) // line * line if room > top + line else QWIDGETSIZE_MAX

    def scroll_words(self, lines: int) -> None:
        """The step's words `lines` lines on (back, if negative): projector mode's ↓ and ↑."""
        bar = self._words.verticalScrollBar()
        bar.setValue(bar.value() + lines * self.text.fontMetrics().lineSpacing())

    def visible_step_rows(self) -> int:
        """How many steps the list shows whole."""
        return min(self.steps.count(), max(MIN_STEP_ROWS, int(self.height() * STEP_LIST_SHARE) // self._row_height()))

    def _row_height(self) -> int:
        return max(1, self.steps.sizeHintForRow(0))

    def _fit_steps(self) -> None:
        """A list of whole rows: all the steps, or as many as its share of the height holds."""
        rows = self.visible_step_rows()
        self.steps.setFixedHeight(rows * self._row_height() + 2 * self.steps.frameWidth())
        every = rows >= self.steps.count()
        self.steps.setVerticalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAlwaysOff if every else Qt.ScrollBarPolicy.ScrollBarAlwaysOn)

    def show_step(self) -> None:
        """The tour's current step, before its numbers arrive."""
        self.started = True
        step, i = self.tour.step, self.tour.index
        self.steps.setCurrentRow(i)
        self.steps.scrollToItem(self.steps.item(i))
        self.title.setText(f"Lesson {step.lesson}: {step.title}")
        self.text.setText(step.text)
        self._parts = []
        self.numbers.setText("")
        self._fit_numbers()
        self.asking.forget()
        self._count()
        self.back.setEnabled(not self.tour.at_start)
        self.next.setEnabled(not self.tour.at_end)
        self.bandChanged.emit()

    def _count(self) -> None:
        """Where the tour stands: "13 / 16" in the band's narrow column, "step 13 of 16" under the words."""
        i, n = self.tour.index, len(self.tour.steps)
        if self.started:
            self.counter.setText(f"{i + 1} / {n}" if self._band else f"step {i + 1} of {n}")

    def band_height(self, width: int) -> int:
        """The height a caption band `width` wide needs to show the step's words and its buttons."""
        margins = self._column.contentsMargins()
        buttons = self._band_buttons.sizeHint()
        room = width - margins.left() - margins.right() - self._body.spacing() - buttons.width()
        return margins.top() + max(self._words_column.heightForWidth(room), buttons.height()) + margins.bottom()

    def ask(self, request: rq.LessonNumbers) -> None:
        self.asking.ask(request)
        self._parts = []
        self.numbers.setText("Working it out on this model…")
        self._fit_numbers()
        self.bandChanged.emit()

    def on_numbers(self, view: LessonNumbersView) -> None:
        parts: list[tuple[str, str]] = []  # (sentence, its table of numbers or "")
        if view.table is not None and view.rows is not None:
            fetched = {i for i, _, _ in view.rows}
            cells = "".join(
                f"<tr><td>{'▶' if i in fetched else ''}</td><td align='right'>{i}</td><td>{escape(label)}</td>"
                + "".join(f"<td align='right'>{v:.4f}</td>" for v in row) + "</tr>"
                for i, label, row in view.table
            )
            parts.append((f"<b>The whole table ({len(view.table)} × {len(view.table[0][2])})</b>, rows counted from 0; "
                          "▶ marks the rows the ids fetch", f"<table cellspacing='4'>{cells}</table>"))
        if view.rows is not None:
            width = len(view.rows[0][2]) if view.rows else 0
            cells = "".join(
                f"<tr><td align='right'>id&nbsp;{i}</td><td>{escape(label)}</td>"
                + "".join(f"<td align='right'>{v:.4f}</td>" for v in row) + "</tr>"
                for i, label, row in view.rows
            )
            if view.shapes is None:
                what = f"<b>The fetched rows: a {len(view.rows)} × {width} matrix</b>, in the order of the ids"
            else:
                dim = view.shapes[1][1][2]
                what = (f"<b>The rows the text's ids fetch</b>, the first {width} of their {dim:,} numbers: "
                        f"together the ({len(view.rows)} × {dim:,}) matrix of embeddings")
            parts.append((what, f"<table cellspacing='4'>{cells}</table>"))
        if view.shapes is not None:
            shapes = " → ".join(f"{name} {tuple(shape)}" for name, shape in view.shapes)
            parts.append((f"<b>Shapes</b> for {len(view.tokens)} tokens ({escape(' | '.join(view.tokens))}): {shapes}", ""))
        if view.embedding_share is not None and view.total_params:
            tying = ("tied: the output head is this same table" if view.tied
                     else f"not tied: the output head is a second table ({view.head_share:.1%} more)")
            parts.append((f"<b>The table</b> holds {view.embedding_share:.1%} of the model's {view.total_params:,} "
                          f"parameters; {tying}.", ""))
        self._parts = parts
        self._show_numbers()
        self.bandChanged.emit()

    def _show_numbers(self) -> None:
        """The numbers' sentences wrap at the dock's width (a table of that width holds each),
        while their tables of numbers keep their own width and scroll sideways."""
        room = max(80, self.numbers_box.viewport().width() - 4)
        self.numbers.setText("<br>".join(f"<table width='{room}' cellspacing='0' cellpadding='0'><tr><td>{prose}</td></tr>"
                                         f"</table>{table}" for prose, table in self._parts))
        self._fit_numbers()

    def on_failed(self, message: str) -> None:
        self._parts = []
        self.numbers.setText(escape(message))
        self._fit_numbers()
        self.bandChanged.emit()
