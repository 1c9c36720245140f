"""Odd one out tab: of a few words, the one that does not belong (gensim's doesnt_match), and
why: each word's cosine to the mean of the others, as bars. The words are ringed on the map;
clicking a bar makes that word the focus."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.views import ModelSummary
from embviz.core.table.results import OddOneOut
from embviz.state.tabs import OddOneOutState
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.plots.bar_chart import BarChart
from embviz.ui.widgets import HeldColumn, WordField, WrappedLabel, folding

CHART_HEIGHT = 1  # no floor: a few bars' own rows, each whole (on a projector at 200 % the floor hid two)
TYPING_DELAY_MS = 150  # the answer follows the typing, once a word is whole
EXPLAINED = ("Each bar: a word's cosine to the mean of the other words' rows (each row scaled to length 1). "
             "The outsider is the word least like the rest, as gensim's doesnt_match picks it.")


class OddOneOutPanel(QWidget):
    focusToken = Signal(int)
    highlight = Signal(list)
    statusMessage = Signal(str)

    def __init__(self, submit, parent=None) -> None:
        super().__init__(parent)
        self.state = OddOneOutState()
        self.shown: OddOneOut | None = None
        self.asking = Latest(submit, self.on_result, self.on_failed)
        self.words = WordField("Three or more words, e.g. breakfast cereal dinner lunch")
        go = QPushButton("Find the odd one out")
        go.clicked.connect(self.run)
        self.answer = WrappedLabel("")  # the headline: which word
        style.use_font(self.answer, style.LABEL_POINT_SIZE + 2, bold=True)
        self.detail = WrappedLabel("")  # its numbers, which projector mode prints on the bars
        explained = WrappedLabel(EXPLAINED)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setStyleSheet(style.ERROR_STYLE)
        style.use_font(self.message)
        self.message.hide()
        self.chart = BarChart("", style.BAR_LOGIT, axis_name="cosine to the mean of the others", min_height=CHART_HEIGHT)
        self.chart.setToolTip("Click a bar: that word in Neighbours")
        self.chart.barClicked.connect(self._bar_clicked)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(TYPING_DELAY_MS)
        self.timer.timeout.connect(self.run)
        self.bindings = Bindings(self.state)
        self.bindings.bind(self.words, "words")
        self.words.textEdited.connect(lambda _text: self.timer.start())
        self.words.returnPressed.connect(self.run)
        row = QHBoxLayout()
        row.addWidget(self.words, 1)
        row.addWidget(go)
        why = QVBoxLayout()
        why.addWidget(explained)
        folded = folding(row, why)
        # The sentences in a column that holds their height: as items of the tab's own box,
        # each took a stale height for its width and the bars were pushed out of sight.
        sentences = HeldColumn()
        column = QVBoxLayout(sentences)
        column.setContentsMargins(0, 0, 0, 0)
        for widget in (folded, self.answer, self.detail, self.message):
            column.addWidget(widget)
        layout = QVBoxLayout(self)
        layout.addWidget(sentences)
        layout.addWidget(self.chart, 1)
        # What projector mode folds: the words and why the bars are what they are. The
        # answer and its bars, with their numbers printed, keep the screen.
        self.controls = (folded, self.detail)

    def on_model(self, summary: ModelSummary, restore: OddOneOutState | None = None) -> None:
        self.asking.forget()
        self.words.set_vocabulary(summary.labels)
        if restore is not None:
            self.state.words = restore.words
        self.run()

    def show_words(self, words: str) -> None:
        """A lesson's words, answered at once."""
        self.state.words = words
        self.run()

    def run(self) -> None:
        self.timer.stop()
        self.asking.ask(rq.OddOneOut(words=self.state.word_list()))

    def on_result(self, found: OddOneOut) -> None:
        self.shown = found
        self.message.hide()
        outsider = found.labels[found.outsider]
        self.answer.setText(f"The odd one out: {outsider}")
        self.detail.setText(f"Cosine {found.to_others[found.outsider]:.3f} to the others' mean; the rest "
                            f"{min(c for i, c in enumerate(found.to_others) if i != found.outsider):.3f} or more."
                            if found.others_agree else
                            f"By its cosine to the mean of all the words ({found.to_mean[found.outsider]:.3f}); "
                            f"the bars, to the others' mean, disagree here.")
        self.chart.set_bars(found.labels, found.to_others, [f"{c:.3f}" for c in found.to_others])
        if self.isVisible():  # an answer to a new model's opening, behind another tab, rings nothing on the map
            self.highlight.emit(list(found.ids))
            self.statusMessage.emit(f"Odd one out: {outsider}.")

    def on_failed(self, message: str) -> None:
        self.shown = None
        self.answer.setText("")
        self.detail.setText("")
        self.chart.clear_bars()
        self.message.setText(message)
        self.message.show()

    def _bar_clicked(self, row: int) -> None:
        if self.shown is not None:
            self.focusToken.emit(self.shown.ids[row])

    def picture(self) -> tuple[QWidget, str]:
        return self, self.answer.text()

    def table_rows(self) -> tuple[list[str], list[tuple]] | None:
        found = self.shown
        if found is None:
            return None
        return (["word", "token", "id", "cosine to the others' mean", "cosine to the mean of all", "odd one out"],
                [(w, label, i, a, b, n == found.outsider)
                 for n, (w, label, i, a, b) in enumerate(zip(found.words, found.labels, found.ids, found.to_others,
                                                             found.to_mean))])
