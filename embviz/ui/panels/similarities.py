"""Similarity tab: the table's cosines against people's ratings of word pairs (WordSim-353,
SimLex-999 or a file), gensim's evaluate_word_pairs with its picture: a scatter of rating
against cosine, the pairs furthest from the line named and listed. With a second model open
(File ▸ Compare with…) it is scored too, beside the first. A pair of the user's own shows its
cosine; clicking a pair makes its first word the focus and rings both on the map."""

from __future__ import annotations

from dataclasses import fields, replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.views import ComparisonSummary, ModelSummary
from embviz.core.table.results import PairScores, ScoredPair, WordPairCosine
from embviz.state.tabs import SimilaritiesState
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.plots.scatter_plot import ScatterPlot
from embviz.ui.widgets import ResultsTable, RoomWatch, WordField, flow_row, folding

NAMED = 8  # pairs named on the scatter: the furthest from the line
TABLE_SHARE = 0.32  # of the width, beside the scatters
PAIR_FIELD_WIDTH = 320  # pixels: two words fit at 150 % text
SOURCES = {  # where each set comes from and what its raters were asked, under the numbers (one line at 150 %)
    "wordsim353": "WordSim-353 (Finkelstein et al. 2002): relatedness, 0–10.",
    "simlex999": "SimLex-999 (Hill, Reichart and Korhonen 2015): similarity only, 0–10.",
    "file": "Your file: lines of 'word1 word2 score'.",
}
SCATTER_READABLE = 150  # pixels of height at 100 % text: under it the list gives way to the scatters
LIST_ROWS = 2  # the least of the list's rows worth showing under the scatters
X_NAME, Y_NAME = "people's rating", "cosine"


# Words a scatter never names by itself on a classroom screen: WordSim-353 rates "fuck – sex",
# and it lies far from the line. The pair still counts, is a point and a row of the list.
UNNAMED_WORDS = frozenset({"fuck", "shit", "cunt", "bitch", "cock", "dick", "pussy", "whore", "nigger", "faggot"})


def pair_label(labels: tuple[str, str]) -> str:
    return f"{labels[0]} – {labels[1]}"


def unnamed(pair: ScoredPair) -> bool:
    """Whether a class may not see this pair's words unasked."""
    return bool({pair.word1.lower(), pair.word2.lower()} & UNNAMED_WORDS)


def named_pairs(result: PairScores) -> dict[int, str]:
    """The NAMED pairs furthest from the line that a class may see named, by their index."""
    fit = [(i, p) for i, p in enumerate(result.pairs) if not unnamed(p)]
    return {i: pair_label(p.labels) for i, p in fit[:NAMED]}


def classroom_order(result: PairScores) -> PairScores:
    """The pairs as the tab lists them: furthest from the line first, but those with an
    UNNAMED_WORDS word last (GloVe's list opened on "fuck – sex" in front of a class); they
    still count and can be scrolled to."""
    return replace(result, pairs=[p for p in result.pairs if not unnamed(p)] + [p for p in result.pairs if unnamed(p)])


class SimilaritiesPanel(QWidget):
    focusToken = Signal(int)
    highlight = Signal(list)
    statusMessage = Signal(str)

    def __init__(self, submit, parent=None) -> None:
        super().__init__(parent)
        self.state = SimilaritiesState()
        self.shown: PairScores | None = None
        self.shown_b: PairScores | None = None
        self.second: str | None = None  # the second model's name while one is open
        self._focus: tuple[str, str] | None = None  # a pair to choose once the scores come (a lesson's)
        self.scoring = Latest(submit, self.on_result, self.on_failed)
        self.scoring_b = Latest(submit, self.on_result_b, self.on_failed_b)
        self.asking_pair = Latest(submit, self.on_pair, self.on_pair_failed)
        self._build()
        self.bindings = Bindings(self.state)
        self.bindings.bind(self.dataset, "dataset")
        self.bindings.bind(self.pair, "pair")
        self.state.events.dataset.connect(lambda *_: self.run())
        self.pair.returnPressed.connect(self.run_pair)
        self.table.cellClicked.connect(lambda row, _column: self.choose(row))
        self.plot.pointClicked.connect(self.choose)

    def _build(self) -> None:
        self.dataset = QComboBox()
        for key, text in (("wordsim353", "WordSim-353"), ("simlex999", "SimLex-999"), ("file", "A file…")):
            self.dataset.addItem(text, key)
        self.open_file = QPushButton("Open pairs…")
        self.open_file.setToolTip("A text file of 'word1 word2 score' lines (tabs or spaces)")
        self.open_file.clicked.connect(self.choose_file)
        self.pair = WordField("Two words, e.g. cup mug")
        self.pair.setToolTip("Two words of your own: their cosine, matched to tokens as the rated pairs are")
        self.pair_result = QLabel("")
        self.summary = QLabel("")
        self.summary_b = QLabel("")
        for label in (self.summary, self.summary_b):
            label.setWordWrap(True)
            style.use_font(label, style.BASE_POINT_SIZE, bold=True)
        self.source = QLabel("")
        self.source.setWordWrap(True)
        self.source.setStyleSheet(style.NOTE_STYLE)
        style.use_font(self.source, style.BASE_POINT_SIZE - 2)
        self.show_rule = QToolButton()
        self.show_rule.setText("How words are matched")
        self.show_rule.clicked.connect(self.explain_rule)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setStyleSheet(style.ERROR_STYLE)
        style.use_font(self.message)
        self.message.hide()
        self.plot = ScatterPlot(X_NAME, Y_NAME)
        self.plot.setToolTip("Each dot is a pair; the dashed line is the best straight fit. Click a dot: its words "
                             "are the focus and ringed on the map.")
        self.plot_b = ScatterPlot(X_NAME, Y_NAME)
        self.plot_b.hide()
        self.table = ResultsTable(["pair", "people", "cosine"])
        header = self.table.horizontalHeader()
        for column in (1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setToolTip("The pairs furthest from the line first. Click one: its first word in Neighbours, "
                              "both ringed on the map.")
        self.pair.setMaximumWidth(PAIR_FIELD_WIDTH)
        self.pair_result.setWordWrap(True)
        own = QHBoxLayout()
        own.addWidget(QLabel("Your pair:"))
        own.addWidget(self.pair, 1)
        own.addWidget(self.pair_result, 2)
        # The scatters side by side; the list beside them where it has its pairs' width, under
        # them where it has not (two models at 1024 × 700 and 150 %: the names were cut), and
        # left out where the scatters would be less than readable.
        self.plots = QSplitter(Qt.Orientation.Horizontal)
        self.split = QSplitter(Qt.Orientation.Horizontal)
        for plot in (self.plot, self.plot_b):
            plot.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
            self.plots.addWidget(plot)
        for part in (self.plots, self.table):
            part.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Expanding)
            self.split.addWidget(part)
        self.split.setChildrenCollapsible(False)
        # One row that wraps for the set of pairs and how its words are matched, one for the
        # user's own pair, one line for where the set comes from.
        note = QVBoxLayout()
        note.addWidget(self.source)
        folded = folding(flow_row(QLabel("Rated pairs:"), self.dataset, self.open_file, self.show_rule), own, note)
        sentences = QVBoxLayout()
        for label in (self.summary, self.summary_b):
            sentences.addWidget(label)
        numbers = folding(sentences)
        layout = QVBoxLayout(self)
        layout.addWidget(folded)
        layout.addWidget(numbers)
        layout.addWidget(self.message)
        layout.addWidget(self.split, 1)
        # What projector mode folds: the choices, the user's own pair, the notes and the
        # sentences of numbers. The scatters, whose titles say each model's ρ, keep the screen.
        self.controls = (folded, numbers)
        RoomWatch(self, self._share_width)
        self.rule = ""

    def _say(self, text: str) -> None:
        """A sentence of trouble under the numbers; no empty line when there is none."""
        self.message.setText(text)
        self.message.setVisible(bool(text))

    def _share_width(self) -> None:
        """The list a third of the width beside the scatters where its pairs' names fit
        there; else a third of the height under them where the scatters stay readable, and
        none where they would not. The scatters share the rest."""
        table = self.table
        wants = (sum(table.sizeHintForColumn(c) for c in range(table.columnCount())) + 2 * table.frameWidth()
                 + table.verticalScrollBar().sizeHint().width())
        beside = self.split.width() * TABLE_SHARE >= wants
        page = self.parentWidget()  # the tab's page: the room on screen, not the panel's own height
        room = (page.height() if page is not None else self.height()) - (self.height() - self.split.height())
        least = (table.horizontalHeader().sizeHint().height() + LIST_ROWS * table.verticalHeader().defaultSectionSize()
                 + 2 * table.frameWidth())
        readable = round(SCATTER_READABLE * style.text_scale())
        table.setVisible(beside or room * TABLE_SHARE >= least and room * (1 - TABLE_SHARE) >= readable)
        self.split.setOrientation(Qt.Orientation.Horizontal if beside else Qt.Orientation.Vertical)
        whole = (self.split.width() if beside else self.split.height()) - self.split.handleWidth()
        self.split.setSizes([whole - int(whole * TABLE_SHARE), int(whole * TABLE_SHARE)])
        width = self.plots.width() - self.plots.handleWidth()
        self.plots.setSizes([width // 2, width - width // 2] if self.plot_b.isVisibleTo(self) else [width, 0])

    # --- the window's calls --------------------------------------------------------------------
    def on_model(self, summary: ModelSummary, restore: SimilaritiesState | None = None) -> None:
        """A new first model: its pairs scored; a second model was dropped with the old first."""
        for asking in (self.scoring, self.scoring_b, self.asking_pair):
            asking.forget()
        self.pair.set_vocabulary(summary.labels)
        if restore is not None:
            for f in fields(SimilaritiesState):
                setattr(self.state, f.name, getattr(restore, f.name))
        self.second = None
        self._show_b(None)
        self.run()
        self.run_pair()

    def on_second_model(self, summary: ComparisonSummary) -> None:
        """A second model opened beside the first (File ▸ Compare with…): scored too."""
        self.second = summary.info["name"]
        self.run()

    def show_lesson(self, dataset: str, pair: str, focus: tuple[str, str]) -> None:
        """A lesson's set of pairs, its own pair typed, and the pair it talks about chosen."""
        self._focus = focus
        self.state.pair = pair
        if self.state.dataset == dataset:
            self.run()
        else:
            self.state.dataset = dataset  # runs
        self.run_pair()

    # --- requests -----------------------------------------------------------------------------
    def _request(self, kind: type[rq.WordPairs]) -> rq.WordPairs:
        path = self.state.path if self.state.dataset == "file" else None
        return kind(dataset=self.state.dataset if path is None else "wordsim353", path=path)

    def run(self) -> None:
        if self.state.dataset == "file" and not self.state.path:
            self.source.setText(SOURCES["file"])
            self._say("Open a file of rated pairs (Open pairs…).")
            return
        self._say("")
        self.scoring.ask(self._request(rq.WordPairs))
        if self.second is not None:
            self.scoring_b.ask(self._request(rq.WordPairsB))

    def run_pair(self) -> None:
        words = self.state.pair.replace(",", " ").split()
        if len(words) != 2:
            self.pair_result.setText("Type two words." if words else "")
            return
        self.asking_pair.ask(rq.PairCosine(word1=words[0], word2=words[1]))

    def choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Rated word pairs", "", "Text (*.txt *.tsv *.csv);;All files (*)")
        if path:
            self.state.path = path
            if self.state.dataset == "file":
                self.run()
            else:
                self.state.dataset = "file"  # runs

    # --- answers ------------------------------------------------------------------------------
    def on_result(self, result: PairScores) -> None:
        result = classroom_order(result)
        self.shown = result
        self._say("")
        self.summary.setText(_summary(result))
        self.source.setText(SOURCES[self.state.dataset])
        self.rule = _rule_text(result)
        self.plot.set_points([p.rating for p in result.pairs], [p.cosine for p in result.pairs],
                             named_pairs(result), result.line,
                             _title(result))
        self.table.fill([(pair_label(p.labels), p.rating, p.cosine) for p in result.pairs],
                        [p.ids[0] for p in result.pairs])
        self._share_width()  # the list's names may be wider now
        if self.isVisible():  # not a new model's opening behind another tab
            self.statusMessage.emit(f"{result.source}: Spearman {_number(result.spearman)} over {result.kept:,} pairs.")
        if self._focus is not None:
            focus, self._focus = self._focus, None
            index = next((i for i, p in enumerate(result.pairs) if (p.word1, p.word2) == focus), None)
            if index is not None:
                self.choose(index)

    def on_failed(self, message: str) -> None:
        self.shown = None
        self.summary.setText("")
        self.plot.clear_points()
        self.table.fill([], [])
        self._say(message)

    def on_result_b(self, result: PairScores) -> None:
        self._show_b(result)

    def on_failed_b(self, message: str) -> None:
        self._show_b(None)
        self.summary_b.setText(f"{self.second}: {message}")
        self.summary_b.show()

    def _show_b(self, result: PairScores | None) -> None:
        result = None if result is None else classroom_order(result)
        self.shown_b = result
        self.summary_b.setVisible(result is not None)
        self.plot_b.setVisible(result is not None)
        if result is None:
            self.plot_b.clear_points()
            return
        self.summary_b.setText(_summary(result))
        self.plot_b.set_points([p.rating for p in result.pairs], [p.cosine for p in result.pairs],
                               named_pairs(result), result.line,
                               _title(result))
        self._share_width()

    def on_pair(self, found: WordPairCosine) -> None:
        self.pair_result.setStyleSheet("")
        self.pair_result.setText(f"{pair_label(found.labels)}: cosine {found.cosine:.3f}")

    def on_pair_failed(self, message: str) -> None:
        self.pair_result.setStyleSheet(style.ERROR_STYLE)
        self.pair_result.setText(message)

    def choose(self, index: int) -> None:
        """A pair picked in the table or on the scatter: ringed there, its first word the focus
        (Neighbours and the map), both its words ringed on the map."""
        if self.shown is None or not 0 <= index < len(self.shown.pairs):
            return
        pair = self.shown.pairs[index]
        self.plot.choose(index)
        self.table.selectRow(index)
        self.focusToken.emit(pair.ids[0])
        self.highlight.emit(list(pair.ids))
        self.statusMessage.emit(f"{pair_label(pair.labels)}: people {pair.rating:.2f} of 10, cosine {pair.cosine:.3f}.")

    def explain_rule(self) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, "How words are matched", self.rule,
                          QMessageBox.StandardButton.Close, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()

    # --- what the window exports --------------------------------------------------------------
    def picture(self) -> tuple[QWidget, str]:
        return self, self.summary.text()

    def table_rows(self) -> tuple[list[str], list[tuple]] | None:
        if self.shown is None:
            return None
        return (["word1", "word2", "token1", "token2", "people", "cosine", "off the line"],
                [(p.word1, p.word2, *p.labels, p.rating, p.cosine, p.residual) for p in self.shown.pairs])


def _number(x: float | None) -> str:
    return "undefined" if x is None else f"{x:.3f}"


def _title(result: PairScores) -> str:
    return f"ρ = {_number(result.spearman)}: {result.model}"  # the number first: a narrow scatter cuts the name


def _summary(result: PairScores) -> str:
    skipped = f"; {result.skipped_pairs:,} skipped" if result.skipped_pairs else ""
    return (f"{result.model}: Spearman ρ = {_number(result.spearman)}, Pearson r = {_number(result.pearson)} "
            f"({result.kept:,} of {result.total:,} pairs{skipped}).")


def _rule_text(result: PairScores) -> str:
    skipped = "; ".join(f"'{s.word}' {s.reason}" for s in result.skipped_words[:40])
    more = f" … and {len(result.skipped_words) - 40:,} more" if len(result.skipped_words) > 40 else ""
    return " ".join([result.rule, *result.notes, f"Skipped words: {skipped}{more}." if skipped else "No word was skipped."])
