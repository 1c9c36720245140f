"""Logit lens tab: type text, see every layer's guess for the next token at each
position, as a layers × positions grid coloured by the guess's probability; click a
cell for its top guesses as bars."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QPainter, QPen
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QLabel, QPlainTextEdit, QStyledItemDelegate, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from embviz.bridge import requests as rq
from embviz.bridge.worker import Reply
from embviz.ui.formatting import percent_labels
from embviz.state.tabs import LensState
from embviz.ui import style
from embviz.ui.plots.bar_chart import BarChart
from embviz.ui.widgets import side_by_side
from embviz.ui.binding import Bindings
from embviz.ui.panels.language_model import HIDDEN_SPACE_STRETCH, LanguageModelLoader, LanguageModelTab

DEBOUNCE_MS = 150
CELL_CHARS = 9  # a cell shows this many characters of its token; the tooltip has all of it
NORM_WHY = ("The model's last block goes through a final norm before the output head; reading every layer "
            "the same way is what makes the early ones readable. Untick to see the raw residual stream.")
# White to dark blue: one hue, so the order reads without colour vision; text turns white on dark cells.
LIGHT, DARK = QColor("#f7fbff"), QColor("#08306b")
FRAME = QColor("#E69F00")  # Okabe–Ito orange: visible on white and on dark blue


def cell_color(prob: float) -> QColor:
    t = min(1.0, max(0.0, prob)) ** 0.7  # a little lift, so 10 % and 30 % differ on screen
    return QColor(*(round(a + (b - a) * t) for a, b in zip(LIGHT.getRgb()[:3], DARK.getRgb()[:3])))


def short(label: str) -> str:
    return label if len(label) <= CELL_CHARS else label[: CELL_CHARS - 1] + "…"


def row_names(result) -> list[str]:
    """The grid's row names, embedding first. The last block is the model's answer only
    through the final norm: without it, that row is one more raw reading."""
    names = list(result.layer_names)
    if result.final_norm:
        names[-1] = f"{len(names) - 1} = output"
    return names


def caption(final_norm: bool) -> str:
    """Short: at 150 % text on a 1024 × 700 screen, three lines are what the grid can spare."""
    how = ("through the final norm and the output head, as the model reads its last: the top row is its own answer"
           if final_norm else "straight into the output head, with no final norm: no row, not even the top one, "
           "is the model's answer")
    return (f"Each row reads the residual stream after one layer {how}. Colour: the guess's probability "
            f"(white 0 %, dark blue 100 %). Click a cell for its top guesses.")


class FramedCell(QStyledItemDelegate):
    """Draws one cell (row, column) with a thick frame on top of its own colour."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.cell: tuple[int, int] | None = None

    def paint(self, painter: QPainter, option, index) -> None:
        super().paint(painter, option, index)
        if self.cell == (index.row(), index.column()):
            painter.save()
            painter.setPen(QPen(FRAME, 4))
            painter.drawRect(option.rect.adjusted(2, 2, -2, -2))
            painter.restore()


class LensPanel(LanguageModelTab):
    # (text, position, token): a double-clicked cell, to be split by the Attribution tab. A double
    # click, so that clicking through cells for their bars keeps the lens on screen.
    attributionAsked = Signal(str, int, str)

    def __init__(self, submit, cancel, language_model: LanguageModelLoader, parent=None) -> None:
        super().__init__(submit, cancel, language_model, parent)
        self.shown_id = 0  # the request whose grid is on screen
        self.result = None  # the LensResult on screen
        # The request whose columns are being drawn as they come (previews), the grid
        # positions drawn so far, and the result that was on screen before them.
        self.preview_id = 0
        self.drawn: set[int] = set()
        self.before_preview = None
        self.cell: tuple[int, int] | None = None  # (layer, position) whose bars are shown
        self.state = LensState()
        self.text = QPlainTextEdit()
        style.use_font(self.text, style.LABEL_POINT_SIZE + 4)
        self.text.setPlaceholderText("Type text; every layer guesses the token after each one.")
        self.text.setFixedHeight(70)
        self.final_norm = QCheckBox("Apply the final norm")
        self.final_norm.setToolTip(NORM_WHY)
        self.bindings = Bindings(self.state)
        self.bindings.bind(self.text, "text")
        self.bindings.bind(self.final_norm, "final_norm")
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(DEBOUNCE_MS)
        self.timer.timeout.connect(self.run)
        self.text.textChanged.connect(self.timer.start)
        self.final_norm.toggled.connect(self.run)
        self.grid = QTableWidget(0, 0)
        self.grid.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        # By pixel: by whole columns, the last one (the newest token) could not be scrolled fully into view.
        self.grid.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        style.use_font(self.grid, style.BASE_POINT_SIZE)
        style.use_font(self.grid.horizontalHeader(), style.BASE_POINT_SIZE, bold=True)
        style.use_font(self.grid.verticalHeader(), style.BASE_POINT_SIZE, bold=True)
        # The chosen cell keeps its colour, framed: a selection fill would hide its probability.
        self.grid.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        # On the framed cell's row only: a Python delegate on every cell made each repaint of
        # the grid (one per preview while the lens is read) several times slower.
        self.frame = FramedCell(self.grid)
        self.grid.cellClicked.connect(lambda row, position: self.show_cell(self._row_of(row), position))
        self.grid.cellDoubleClicked.connect(lambda row, position: self.ask_attribution(self._row_of(row), position))
        self.bars = BarChart("Click a cell", style.BAR_PROB)
        self.cell_caption = QLabel("")
        self.cell_caption.setWordWrap(True)
        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        self.splitter = side_by_side(self.grid, self.bars, 3, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(self.final_norm)  # why, in its tooltip: its five lines at large text left the grid none
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
        if self.result is not None:
            self._fit_columns()

    def picture(self) -> tuple[QWidget, str]:
        return self.splitter, self.caption.text()

    def table_rows(self) -> tuple[list[str], list[list[object]]] | None:
        result = self.result
        if result is None:
            return None
        headers = ["layer"] + [f"{p}: {label}" for p, (_, label) in enumerate(result.tokens)]
        rows = [[name] + [f"{cell[0].token} {cell[0].prob:.4f}" for cell in row]
                for name, row in zip(result.layer_names, result.top)]
        return headers, rows

    # --- model and text -------------------------------------------------------------------------
    def on_model(self, summary, restore: LensState | None = None) -> None:
        self.request_id = 0
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
        self.request_id = self.submit(rq.Lens(text=self.state.text, final_norm=self.state.final_norm),
                                      Reply(self.on_result, self.on_failed, progress=self.on_columns))

    # --- results ------------------------------------------------------------------------------
    def on_columns(self, rid: int, _fraction: float, _stage: str, preview) -> None:
        """Columns of the grid as they are read, the last position's (the model's own
        answer through every layer) first: a few at a time, each drawn between two frames."""
        columns = getattr(preview, "columns", None)
        if rid != self.request_id or columns is None:
            return
        if self.preview_id != rid:
            self.before_preview = self.result if self.preview_id == 0 else self.before_preview
            self.result, self.preview_id, self.drawn = None, rid, set()
            self._start_grid(preview)
            self._fit_columns()
        for p, cells in columns.items():
            for layer, cell in enumerate(cells):
                self._set_cell(layer, p, cell)
            self.drawn.add(p)

    def on_result(self, rid: int, result) -> None:
        if rid != self.request_id:
            return
        previewed = self.preview_id == rid
        previous = self.before_preview if self.preview_id else self.result
        self.result, self.shown_id, self.preview_id, self.before_preview = result, rid, 0, None
        self._say("  ".join(result.notes))
        if not (previewed and len(self.drawn) == len(result.tokens)):  # else every cell is drawn already
            self._start_grid(result)
            for layer, row in enumerate(result.top):
                for p, cell in enumerate(row):
                    self._set_cell(layer, p, cell)
        self._fit_columns()
        QTimer.singleShot(0, self._settle)  # again once the scroll bars have settled
        self.caption.setText(caption(result.final_norm))
        self.show_cell(*self._cell_to_show(previous, result))

    def _start_grid(self, result) -> None:
        """An empty grid of the result's shape, with its row and column names."""
        self.splitter.show()  # first, so the columns are fitted to the grid's real width
        self.grid.clear()
        self.grid.setRowCount(len(result.layer_names))
        self.grid.setColumnCount(len(result.tokens))
        self.grid.setHorizontalHeaderLabels([label for _, label in result.tokens])
        self.grid.setVerticalHeaderLabels(row_names(result)[::-1])

    def _set_cell(self, layer: int, position: int, cell) -> None:
        best = cell[0]
        item = QTableWidgetItem(short(best.token))
        item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
        item.setBackground(QBrush(cell_color(best.prob)))
        item.setForeground(QBrush(QColor("white" if best.prob > 0.45 else "black")))
        # The double click is named here, not in the caption: at 150 % text its lines are spent.
        item.setToolTip("\n".join(f"{s.token}  {s.prob:.1%}" for s in cell[:5]) + "\nDouble-click: which blocks wrote it")
        self.grid.setItem(self._row_of(layer), position, item)

    def show_cell(self, layer: int, position: int) -> None:
        result = self.result
        if result is None or not (0 <= layer < len(result.top) and 0 <= position < len(result.tokens)):
            return
        self.cell = (layer, position)
        self._frame((self._row_of(layer), position))
        if (item := self.grid.item(self._row_of(layer), position)) is not None:
            self.grid.scrollToItem(item)
        cell = result.top[layer][position]
        probs = [s.prob for s in cell]
        self.bars.set_bars([s.token for s in cell], [100 * p for p in probs], percent_labels(probs))
        after = result.tokens[position][1]
        self.bars.set_title(f"{result.layer_names[layer]}, after “{after}”")
        share = percent_labels([sum(probs)])[0]
        self.cell_caption.setText(f"The top {len(cell)} guesses at {result.layer_names[layer]} after “{after}” "
                                  f"(token {position + 1} of {len(result.tokens)}) hold {share} of the probability.")

    def ask_attribution(self, layer: int, position: int) -> None:
        result = self.result
        if result is not None and 0 <= layer < len(result.top) and 0 <= position < len(result.tokens):
            # The grid shows the last positions only: the text's own position counts the ones before.
            self.attributionAsked.emit(self.state.text, result.truncated + position, result.top[layer][position][0].text)

    def _cell_to_show(self, previous, result) -> tuple[int, int]:
        """The chosen cell while the text is the same (the norm was switched); after an
        edit, the newest token at the chosen layer: the one being typed is the one to watch."""
        layers, positions = len(result.top), len(result.tokens)
        layer = self.cell[0] if self.cell and self.cell[0] < layers else layers - 1
        if self.cell and previous is not None and previous.tokens == result.tokens:
            return layer, self.cell[1]
        return layer, positions - 1

    def _settle(self) -> None:
        """Columns fitted to the final width, and the chosen cell (the newest column while
        typing) scrolled back into view: the refit moves them."""
        self._fit_columns()
        if self.cell is not None and (item := self.grid.item(self._row_of(self.cell[0]), self.cell[1])) is not None:
            self.grid.scrollToItem(item)

    def _frame(self, cell: tuple[int, int] | None) -> None:
        """Frame one grid cell (row, column), or none."""
        if self.frame.cell is not None:
            self.grid.setItemDelegateForRow(self.frame.cell[0], None)
        self.frame.cell = cell
        if cell is not None:
            self.grid.setItemDelegateForRow(cell[0], self.frame)
        self.grid.viewport().update()

    def _row_of(self, layer: int) -> int:
        """The grid row of a layer, and the layer of a row: the output on top, as a stack reads."""
        return self.grid.rowCount() - 1 - layer

    def _fit_columns(self) -> None:
        """Columns as wide as their tokens, sharing what is left of the grid's width. Measured
        from the texts: Qt's resizeColumnsToContents asks every cell for its size hint, tens of
        milliseconds for a big grid, all of it in one frame."""
        grid, count = self.grid, self.grid.columnCount()
        cells, heads = grid.fontMetrics(), grid.horizontalHeader().fontMetrics()
        pad, head_pad = cells.horizontalAdvance("  ") + 8, heads.horizontalAdvance("  ") + 12
        widths = []
        for c in range(count):
            head = grid.horizontalHeaderItem(c)
            widest = heads.horizontalAdvance(head.text()) + head_pad if head is not None else 0
            for r in range(grid.rowCount()):
                if (item := grid.item(r, c)) is not None:
                    widest = max(widest, cells.horizontalAdvance(item.text()) + pad)
            widths.append(widest)
        spare = grid.viewport().width() - 2 - sum(widths)
        for c, width in enumerate(widths):
            grid.setColumnWidth(c, width + (spare // count if spare > 0 else 0))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.result is not None:
            QTimer.singleShot(0, self._fit_columns)  # after the grid has its new width

    def on_failed(self, rid: int, message: str) -> None:
        if rid == self.request_id:
            self._say(message, error=True)

    def _clear(self) -> None:
        self.result = None
        self.preview_id, self.drawn, self.before_preview = 0, set(), None
        self.splitter.hide()  # no empty grid or axes before an answer
        self._frame(None)
        self.grid.clear()
        self.grid.setRowCount(0)
        self.grid.setColumnCount(0)
        self.bars.clear_bars()
        self.bars.set_title("Click a cell")
        self.cell_caption.setText("")
        self.caption.setText("")
        self._say("")

