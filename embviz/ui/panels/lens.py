"""Logit lens tab: type text, see every layer's guess for the next token at each
position, as a layers × positions grid coloured by the guess's probability; click a
cell for its top guesses as bars."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from embviz.bridge import requests as rq
from embviz.bridge.views import ModelSummary
from embviz.core.lm.results import LensResult
from embviz.state.tabs import LensState
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.formatting import percent_labels
from embviz.ui.panels.language_model import HIDDEN_SPACE_STRETCH, LanguageModelLoader, LanguageModelTab
from embviz.ui.plots.bar_chart import BarChart
from embviz.ui.plots.lens_grid import CELL_CHARS, LensGrid, LensTable, short
from embviz.ui.widgets import LinesBox, next_frame, side_by_side

NORM_WHY = ("The model's last block goes through a final norm before the output head; reading every layer "
            "the same way is what makes the early ones readable. Untick to see the raw residual stream.")
# Room beside a column's widest text: its header's (bold, the sort of a margin Qt draws) and a cell's.
HEADER_PAD_PX, CELL_PAD_PX = 12, 8


def caption(final_norm: bool) -> str:
    """Short: at 150 % text on a 1024 × 700 screen, three lines are what the grid can spare."""
    how = ("through the final norm and the output head, as the model reads its last: the top row is its own answer"
           if final_norm else "straight into the output head, with no final norm: no row, not even the top one, "
           "is the model's answer")
    return (f"Each row reads the residual stream after one layer {how}. Colour: the guess's probability "
            f"(white 0 %, dark blue 100 %). Click a cell for its top guesses.")


class LensPanel(LanguageModelTab):
    DEBOUNCE_MS = 150
    # (text, position, token): a double-clicked cell, to be split by the Attribution tab. A double
    # click, so that clicking through cells for their bars keeps the lens on screen.
    attributionAsked = Signal(str, int, str)

    def __init__(self, submit, cancel, language_model: LanguageModelLoader, parent=None) -> None:
        super().__init__(submit, cancel, language_model, parent)
        self.shown_id = 0  # the request whose grid is on screen (what the benchmark waits for)
        self.result: Any = None  # the LensResult on screen
        # Whether columns are being drawn as they come (previews) and whether the newest request's
        # are among them yet, the grid positions drawn so far, and the result on screen before them.
        self.previewing = False
        self.preview_started = False
        self.drawn: set[int] = set()
        self.before_preview: Any = None
        self.cell: tuple[int, int] | None = None  # (layer, position) whose bars are shown
        self.state = LensState()
        self.text = LinesBox(2)
        style.use_font(self.text, style.LABEL_POINT_SIZE + 4)
        self.text.setPlaceholderText("Type text; every layer guesses the token after each one.")
        self.final_norm = QCheckBox("Apply the final norm")
        self.final_norm.setToolTip(NORM_WHY)
        self.bindings = Bindings(self.state)
        self.bindings.bind(self.text, "text")
        self.bindings.bind(self.final_norm, "final_norm")
        self.text.textChanged.connect(self.timer.start)
        self.final_norm.toggled.connect(self.run)
        self.table = LensTable(self)
        self.grid = LensGrid()
        self.grid.setModel(self.table)
        self.widths: dict[str, int] = {}  # a cell text's width in the grid's font
        self.natural: list[int] = []  # each column's width for its texts, before the spare room is shared
        self.grid.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        # By pixel: by whole columns, the last one (the newest token) could not be scrolled fully into view.
        self.grid.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        style.flat_scroll_bars(self.grid)
        style.use_font(self.grid, style.BASE_POINT_SIZE)
        style.use_font(self.grid.horizontalHeader(), style.BASE_POINT_SIZE, bold=True)
        style.use_font(self.grid.verticalHeader(), style.BASE_POINT_SIZE, bold=True)
        # The chosen cell keeps its colour, framed: a selection fill would hide its probability.
        self.grid.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.grid.clicked.connect(lambda index: self.show_cell(self._row_of(index.row()), index.column()))
        self.grid.doubleClicked.connect(lambda index: self.ask_attribution(self._row_of(index.row()), index.column()))
        self.bars = BarChart("Click a cell", style.BAR_PROB, suffix="%", axis_max=100.0)
        self.cell_caption = QLabel("")
        self.cell_caption.setWordWrap(True)
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        self.splitter = side_by_side(self.grid, self.bars, 3, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(self.final_norm)  # why, in its tooltip: its five lines at large text left the grid none
        self.controls = (self.final_norm,)  # what projector mode folds
        self.inputs = (self.text,)  # and with a lesson's band up: the grid's columns are its tokens
        layout.addWidget(self.loading)
        layout.addWidget(self.message)
        layout.addWidget(self.splitter, HIDDEN_SPACE_STRETCH)
        # The cell's caption in a row of its own: under the bars, in their narrow column, its
        # wrapped lines took the bars' room and ran over their labels (large text, small screen).
        layout.addWidget(self.cell_caption)
        layout.addWidget(self.caption)
        layout.addStretch(1)  # holds the space while the answer is hidden; a sliver of it otherwise
        style.follow_scale(self)

    def set_text_scale(self, scale: float) -> None:
        self.grid.verticalHeader().setDefaultSectionSize(round(30 * scale))
        self.widths.clear()  # the font changed with the scale
        if self.result is not None:
            self._fit_columns(self.result)

    def picture(self) -> tuple[QWidget, str]:
        return self.splitter, self.caption.text()

    def table_rows(self) -> tuple[list[str], list[list[object]]] | None:
        result = self.result
        if result is None:
            return None
        headers = ["layer"] + [f"{p}: {label}" for p, (_, label) in enumerate(result.tokens)]
        cells, positions = result.cells, len(result.tokens)
        rows = [[name] + [f"{cells.top_label(layer, p)} {float(cells.probs[layer, p, 0]):.4f}" for p in range(positions)]
                for layer, name in enumerate(result.layer_names)]
        return headers, rows

    # --- model and text -------------------------------------------------------------------------
    def on_model(self, summary: ModelSummary, restore: LensState | None = None) -> None:
        self.asking.forget()
        self._clear()
        self.loading.show_loading(False)
        if restore is not None:
            self.state.text, self.state.final_norm = restore.text, restore.final_norm
        self.enable_for(summary.lens_reason, [self.text, self.final_norm], bool(self.state.text.strip()))

    def set_text(self, text: str) -> None:
        self.state.text = text
        self.run()

    def missing_input(self) -> str:
        return "" if self.state.text.strip() else \
            "Type some text: each layer's guess for the token after each of its tokens appears here."

    def ask(self) -> None:
        self.preview_started = False
        self.asking.ask(rq.Lens(text=self.state.text, final_norm=self.state.final_norm))

    # --- results ------------------------------------------------------------------------------
    def on_progress(self, _fraction: float, _stage: str, preview) -> None:
        """Columns of the grid as they are read, the last position's (the model's own
        answer through every layer) first: a few at a time, each drawn between two frames."""
        cells = getattr(preview, "cells", None)
        if cells is None:
            return
        if not self.preview_started:
            self.before_preview = self.before_preview if self.previewing else self.result
            self.result, self.drawn = None, set()
            self.previewing = self.preview_started = True
            kept = self._start_grid(preview)
            self._fit_columns(None, kept)  # once: a preview changes no width, so no layout while the grid fills in
        self.table.put(cells, preview.positions)
        self.drawn.update(preview.positions)

    def on_result(self, result: LensResult) -> None:
        previewed = self.preview_started
        previous = self.before_preview if self.previewing else self.result
        self.result, self.shown_id, self.before_preview = result, self.asking.id, None
        self.previewing = self.preview_started = False
        self._say("  ".join(result.notes))
        if not (previewed and len(self.drawn) == len(result.tokens)):  # else every cell is drawn already
            self._start_grid(result)
            self.table.put(result.cells, list(range(len(result.tokens))))
        self._fit_columns(result, self.table.fresh_from)
        QTimer.singleShot(0, self._settle)  # again once the scroll bars have settled
        self.caption.setText(caption(result.final_norm))
        # The chosen cell framed now; its bars a frame later, so the grid and the bars are not
        # both drawn in one frame.
        layer, position = self.cell = self._cell_to_show(previous, result)
        self.grid.frame((self._row_of(layer), position))
        next_frame(self, lambda: self.show_cell(*self.cell) if self.result is result and self.cell is not None else None)

    def _start_grid(self, result) -> int:
        """A grid of the result's shape, with its row and column names, empty but for the
        columns kept from the text before: returns how many were kept."""
        self.splitter.show()  # first, so the columns are fitted to the grid's real width
        return self.table.start(result)

    def show_cell(self, layer: int, position: int) -> None:
        result = self.result
        if result is None or not (0 <= layer < len(result.layer_names) and 0 <= position < len(result.tokens)):
            return
        self.cell = (layer, position)
        self.grid.frame((self._row_of(layer), position))
        self.grid.scrollTo(self.table.index(self._row_of(layer), position))
        cell = result.cells.cell(layer, position)
        probs = [s.prob for s in cell]
        self.bars.set_bars([s.token for s in cell], [100 * p for p in probs], percent_labels(probs))
        after = result.tokens[position][1]
        self.bars.set_title(f"{result.layer_names[layer]}, after “{after}”")
        share = percent_labels([sum(probs)])[0]
        self.cell_caption.setText(f"The top {len(cell)} guesses at {result.layer_names[layer]} after “{after}” "
                                  f"(token {position + 1} of {len(result.tokens)}) hold {share} of the probability.")

    def ask_attribution(self, layer: int, position: int) -> None:
        result = self.result
        if result is not None and 0 <= layer < len(result.layer_names) and 0 <= position < len(result.tokens):
            # The grid shows the last positions only: the text's own position counts the ones before.
            best = int(result.cells.ids[layer, position, 0])
            self.attributionAsked.emit(self.state.text, result.truncated + position, result.cells.strings.text(best))

    def _cell_to_show(self, previous, result) -> tuple[int, int]:
        """The chosen cell while the text is the same (the norm was switched); after an
        edit, the newest token at the chosen layer: the one being typed is the one to watch."""
        layers, positions = len(result.layer_names), len(result.tokens)
        layer = self.cell[0] if self.cell and self.cell[0] < layers else layers - 1
        if self.cell and previous is not None and previous.tokens == result.tokens:
            return layer, self.cell[1]
        return layer, positions - 1

    def _settle(self) -> None:
        """Columns fitted to the final width, and the chosen cell (the newest column while
        typing) scrolled back into view: the refit moves them."""
        self._share_width()
        if self.cell is not None and self.result is not None:
            self.grid.scrollTo(self.table.index(self._row_of(self.cell[0]), self.cell[1]))

    def _row_of(self, layer: int) -> int:
        """The grid row of a layer, and the layer of a row: the output on top, as a stack reads."""
        return self.table.layers - 1 - layer

    def _fit_columns(self, result, keep: int = 0) -> None:
        """Columns as wide as their names and top tokens (`result`'s; a full cell's width for
        a grid still to be read; the first `keep` as they were), sharing what is left of the
        grid's width. Measured once per distinct text: Qt's resizeColumnsToContents asks
        every cell for its size hint."""
        heads, cells = self.grid.horizontalHeader().fontMetrics(), self.grid.fontMetrics()
        head_pad, pad = heads.horizontalAdvance("  ") + HEADER_PAD_PX, cells.horizontalAdvance("  ") + CELL_PAD_PX
        full = cells.horizontalAdvance("n" * CELL_CHARS) + pad
        natural = self.natural[:keep]
        for p, head in enumerate(self.table.heads[len(natural):], len(natural)):
            widest = heads.horizontalAdvance(head) + head_pad
            if result is None:
                natural.append(max(widest, full))
                continue
            for token_id in np.unique(result.cells.ids[:, p, 0]).tolist():
                text = short(result.cells.strings.label(token_id))
                if (width := self.widths.get(text)) is None:
                    width = self.widths[text] = cells.horizontalAdvance(text) + pad
                widest = max(widest, width)
            natural.append(widest)
        self.natural = natural
        self._share_width()

    def _share_width(self) -> None:
        """The natural widths, and what is left of the grid's width shared among the columns."""
        count = len(self.natural)
        spare = self.grid.viewport().width() - 2 - sum(self.natural)
        header = self.grid.horizontalHeader()
        for c, width in enumerate(self.natural):
            width += spare // count if spare > 0 else 0
            if header.sectionSize(c) != width:
                self.grid.setColumnWidth(c, width)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.result is not None:
            QTimer.singleShot(0, self._share_width)  # after the grid has its new width

    def _clear(self) -> None:
        self.result = None
        self.previewing, self.preview_started, self.drawn, self.before_preview = False, False, set(), None
        self.splitter.hide()  # no empty grid or axes before an answer
        self.grid.frame(None)
        self.table.clear()
        self.natural = []
        self.bars.clear_bars()
        self.bars.set_title("Click a cell")
        self.cell_caption.setText("")
        self.caption.setText("")
        self._say("")

