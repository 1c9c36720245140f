"""The Directions tab's WEAT page: one of Caliskan et al.'s ten tests or four sets of the user's
own, its statistic, effect size and p-value, each target word's association as bars, the words
each set kept and dropped; and the random baseline beside ␣Monday–␣Tuesday's cosine."""

from __future__ import annotations

from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QPushButton, QSpinBox, QVBoxLayout, QWidget

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.views import ModelSummary
from embviz.core.table.bias_results import CosineBaseline, WeatResult
from embviz.ui.formatting import visible_token as visible
from embviz.core.table.weat_data import paper_tests
from embviz.state.tab_state import field_range
from embviz.state.tabs import DirectionsState, word_list
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.plots.bar_chart import BarChart
from embviz.ui.widgets import HeldColumn, ScrollColumn, WordField, WrappedLabel, flow_row, side_by_side

BASELINE_WORDS = ("Monday", "Tuesday")  # two words any class agrees are alike


def weat_numbers(found: WeatResult) -> str:
    """s, d and p in one sentence, saying how d and p were had."""
    d = "undefined (every s is the same)" if found.effect_size is None else f"{found.effect_size:.3f}"
    how = (f"exact, over all {found.permutations:,} partitions" if found.exact
           else f"{found.permutations:,} random partitions, seed {found.seed}")
    return (f"s(X, Y, A, B) = {found.statistic:.4f}; effect size d = {d} (population std over X∪Y, as WEFE); "
            f"p = {found.p_value:.4g} ({how}).")


def kept_dropped(found: WeatResult) -> str:
    groups = list(zip("XYAB", (found.x, found.y, found.a, found.b)))
    sizes = ", ".join(f"{key} {len(group.kept)}" for key, group in groups)
    dropped = "; ".join(f"{key}: {', '.join(visible(s.word) for s in group.dropped)}" for key, group in groups
                        if group.dropped)
    return f"Words kept: {sizes}." + (f" Dropped (not one token here) {dropped}." if dropped else " None dropped.")


def baseline_sentence(model: str, found: CosineBaseline, pair: float | None) -> str:
    if found.mean_cosine is None:
        return f"{model} has fewer than two rows with a direction: there is no baseline."
    mean = found.mean_cosine
    said = f"Two random rows of {model} have a mean cosine of {mean:.3f} (exact, all {found.pairs:,} pairs)"
    if pair is None:
        return said + f"; ␣Monday–␣Tuesday is not one token each here. Read every cosine against {mean:.3f}, not 0."
    return said + f"; ␣Monday–␣Tuesday is {pair:.3f}. Here “alike” means well above {mean:.3f}, not above 0."


def _find(labels: list[str], word: str) -> int | None:
    for label in (f"␣{word}", word, word.lower()):  # GPT-style, plain, GloVe's lower case
        if label in labels:
            return labels.index(label)
    return None


class WeatSection(QWidget):
    def __init__(self, submit, state: DirectionsState, bindings: Bindings, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.shown: WeatResult | None = None
        self.model_name = ""
        self.baseline: CosineBaseline | None = None
        self.pair_ids: tuple[int, int] | None = None
        self.pair_cosine: float | None = None
        self.asking = Latest(submit, self.on_result, self.on_failed)
        self.asking_baseline = Latest(submit, self.on_baseline, self._baseline_failed)
        self.asking_pair = Latest(submit, self.on_pair, lambda _m: self.on_pair(None))
        self.test = QComboBox()
        style.use_font(self.test, style.LABEL_POINT_SIZE)
        # As narrow as a short name: the longest test's name made the tab wider than 1024 pixels.
        self.test.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.test.setMinimumContentsLength(22)
        for test in paper_tests()["tests"]:
            self.test.addItem(f"{test['number']}. {test['name']}", int(test["number"]))
        self.test.addItem("My own sets", 0)
        self.fields = {key: WordField(f"{key}: words, space- or comma-separated") for key in "xyab"}
        self.permutations = QSpinBox()
        self.permutations.setRange(*(int(v) for v in field_range(DirectionsState, "permutations") or (1, 10_000_000)))
        self.permutations.setSingleStep(10_000)
        self.permutations.setToolTip("Random partitions drawn where there are more than 100,000 (else all are counted)")
        style.use_font(self.permutations, style.LABEL_POINT_SIZE)
        go = QPushButton("Run WEAT")
        go.clicked.connect(self.run)
        bindings.bind(self.test, "weat_test")
        for key, box in self.fields.items():
            bindings.bind(box, key)
            box.returnPressed.connect(self.run)
        bindings.bind(self.permutations, "permutations")
        state.events.weat_test.connect(lambda *_: self._show_sets())
        self.sets_form = QFormLayout()
        for key, box in self.fields.items():
            self.sets_form.addRow(f"{key.upper()}:", box)
        self.numbers = WrappedLabel("")
        style.use_font(self.numbers, style.LABEL_POINT_SIZE)
        self.sets_line = WrappedLabel("")
        self.message = WrappedLabel("")
        self.message.setStyleSheet(style.ERROR_STYLE)
        style.use_font(self.message, style.LABEL_POINT_SIZE)
        self.chart = BarChart("", style.BAR_LOGIT, axis_name="s(w, A, B)", min_height=1)
        self.baseline_line = WrappedLabel("")
        style.use_font(self.baseline_line, style.LABEL_POINT_SIZE)
        permutations = QLabel("permutations:")
        self.form = QWidget()  # what projector mode folds: the test's lists, not its numbers
        form = QVBoxLayout(self.form)
        form.setContentsMargins(0, 0, 0, 0)
        form.addLayout(flow_row(self.test, go, permutations, self.permutations))
        form.addLayout(self.sets_form)
        left = HeldColumn()  # its sentences keep the height their width needs (a plain box let them overlap)
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        for widget in (self.numbers, self.sets_line, self.message, self.form):  # the answer first, in sight
            column.addWidget(widget)
        column.addStretch(1)
        # The bars beside the numbers, scrolling on their own: each bar keeps a whole row, and
        # 16 of them under the numbers made the whole tab scroll at 1024 × 700.
        split = side_by_side(ScrollColumn(left), ScrollColumn(self.chart), 1, 1)
        split.setSizes([900, 1100])
        # The baseline first, across the page: a lesson step shows it in a short band's room.
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addWidget(self.baseline_line)
        layout.addWidget(split, 1)
        self.controls: tuple[QWidget, ...] = (self.form,)
        self._show_sets()

    def _show_sets(self) -> None:
        """The paper's test fills the four fields (read-only); "my own sets" lets them be typed."""
        own = self.state.weat_test == 0
        for box in self.fields.values():
            box.setReadOnly(not own)
        if not own:
            data = paper_tests()
            test = next(t for t in data["tests"] if int(t["number"]) == self.state.weat_test)
            for key, box in self.fields.items():
                box.setText(" ".join(data["sets"][test[key]]))
                box.setCursorPosition(0)

    def on_model(self, summary: ModelSummary) -> None:
        for latest in (self.asking, self.asking_baseline, self.asking_pair):
            latest.forget()
        self.model_name = str(summary.info["name"])
        for box in self.fields.values():
            box.set_vocabulary(summary.labels)
        self.baseline, self.pair_cosine = None, None
        ids = [_find(summary.labels, w) for w in BASELINE_WORDS]
        self.pair_ids = (ids[0], ids[1]) if ids[0] is not None and ids[1] is not None else None
        self.baseline_line.setText("The random baseline: working it out…")
        self.asking_baseline.ask(rq.CosineBaseline())
        self._clear()

    def run(self) -> None:
        state = self.state
        if state.weat_test:
            request = rq.Weat(test=state.weat_test, permutations=state.permutations)
        else:
            request = rq.Weat(x=word_list(state.x), y=word_list(state.y), a=word_list(state.a), b=word_list(state.b),
                              permutations=state.permutations)
        self.numbers.setText("Running WEAT…")
        self.asking.ask(request)

    def on_result(self, found: WeatResult) -> None:
        self.shown = found
        self.message.setText("")
        self.numbers.setText(f"{found.name}. {weat_numbers(found)}")
        self.sets_line.setText(kept_dropped(found) + ("  " + " ".join(found.notes) if found.notes else ""))
        rows = [("X", a) for a in found.associations_x] + [("Y", a) for a in found.associations_y]
        self.chart.set_bars([f"{key} {visible(a.word)}" for key, a in rows], [a.s for _, a in rows],
                            [f"{a.s:+.3f}" for _, a in rows])

    def on_failed(self, message: str) -> None:
        self._clear()
        self.message.setText(message)

    def _clear(self) -> None:
        self.shown = None
        self.numbers.setText("")
        self.sets_line.setText("")
        self.message.setText("")
        self.chart.clear_bars()

    def on_baseline(self, found: CosineBaseline) -> None:
        self.baseline = found
        if self.pair_ids is None:
            self._say_baseline()
        else:
            self.asking_pair.ask(rq.Similarity(a=self.pair_ids[0], b=self.pair_ids[1]))

    def on_pair(self, cosine: float | None) -> None:
        self.pair_cosine = cosine
        self._say_baseline()

    def _baseline_failed(self, message: str) -> None:
        self.baseline_line.setText(message)

    def _say_baseline(self) -> None:
        if self.baseline is not None:
            self.baseline_line.setText(baseline_sentence(self.model_name, self.baseline, self.pair_cosine))
