"""Logit lens tab: type text, see every layer's guess for the next token at each
position, as a layers × positions grid coloured by the guess's probability; click a
cell for its top guesses as bars."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter, QPen, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QLabel, QPlainTextEdit, QStyle, QTableView, QVBoxLayout, QWidget,
)

from embviz.bridge import requests as rq
from embviz.ui.formatting import percent_labels
from embviz.state.tabs import LensState
from embviz.ui import style
from embviz.ui.plots.bar_chart import BarChart
from embviz.ui.widgets import next_frame, side_by_side
from embviz.ui.binding import Bindings
from embviz.ui.panels.language_model import HIDDEN_SPACE_STRETCH, LanguageModelLoader, LanguageModelTab

CELL_CHARS = 9  # a cell shows this many characters of its token; the tooltip has all of it
NORM_WHY = ("The model's last block goes through a final norm before the output head; reading every layer "
            "the same way is what makes the early ones readable. Untick to see the raw residual stream.")
# White to dark blue: one hue, so the order reads without colour vision; text turns white on dark cells.
LIGHT, DARK = QColor("#f7fbff"), QColor("#08306b")
KEPT_PICTURES = 8  # columns either side of the ones in view whose pictures are kept
FRAME = QColor("#E69F00")  # Okabe–Ito orange: visible on white and on dark blue


def cell_color(prob: float) -> QColor:
    t = min(1.0, max(0.0, prob)) ** 0.7  # a little lift, so 10 % and 30 % differ on screen
    light, dark = (LIGHT.red(), LIGHT.green(), LIGHT.blue()), (DARK.red(), DARK.green(), DARK.blue())
    return QColor(*(round(a + (b - a) * t) for a, b in zip(light, dark)))


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


WHITE, BLACK = QColor("white"), QColor("black")
SHADES = 1024
_SHADES = [cell_color(n / (SHADES - 1)) for n in range(SHADES)]  # the colours a cell can take, made once


_ROLES: dict[Any, int] = {Qt.ItemDataRole.DisplayRole: 0, Qt.ItemDataRole.BackgroundRole: 1, Qt.ItemDataRole.ForegroundRole: 2,
          Qt.ItemDataRole.ToolTipRole: 3}


class LensTable(QAbstractTableModel):
    """The grid's cells, read from the lens's arrays only when Qt draws them: a preview
    (a few columns) is a reference kept and one dataChanged, with no item per cell.
    Rows: the output on top, as a stack reads; row r is layer layers - 1 - r."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.layers = 0
        self.heads: list[str] = []
        self.names: list[str] = []  # row names, top row first
        self.shown: list[tuple | None] = []  # per position: (cells, its column in them), or None while unread
        self.looks: list[list[tuple] | None] = []  # per position: what its cells draw, once asked
        # What the columns on screen read: their token ids, the norm, and the positions cut off before them.
        self.ids: list[int] = []
        self.final_norm = True
        self.truncated = 0
        self.fresh_from = 0  # columns before this one were kept from the text before

    def start(self, result) -> int:
        """A grid of the result's (or preview's) shape, with its row and column names, empty
        but for the columns a new text leaves as they were: a column reads only its own
        and earlier tokens, so an edit at the end keeps the columns before it, and Qt
        repaints only the columns that change. Returns how many columns were kept."""
        kept = self._unchanged_columns(result)
        heads = [label for _, label in result.tokens]
        self.ids, self.final_norm, self.truncated = [i for i, _ in result.tokens], result.final_norm, \
            getattr(result, "truncated", 0)
        self.fresh_from = kept
        if not kept:
            self.beginResetModel()
            self.layers = len(result.layer_names)
            self.heads = heads
            self.names = row_names(result)[::-1]
            self.shown = [None] * len(heads)
            self.looks = [None] * len(heads)
            self.endResetModel()
            return 0
        old, new = len(self.shown), len(heads)
        self.heads = heads
        if new < old:
            self.beginRemoveColumns(QModelIndex(), new, old - 1)
            del self.shown[new:], self.looks[new:]
            self.endRemoveColumns()
        elif new > old:
            self.beginInsertColumns(QModelIndex(), old, new - 1)
            self.shown += [None] * (new - old)
            self.looks += [None] * (new - old)
            self.endInsertColumns()
        for p in range(kept, new):
            self.shown[p] = self.looks[p] = None
        if kept < new:
            self.headerDataChanged.emit(Qt.Orientation.Horizontal, kept, new - 1)
            self.dataChanged.emit(self.index(0, kept), self.index(self.layers - 1, new - 1))
        return kept

    def _unchanged_columns(self, result) -> int:
        """How many leading columns of the grid on screen `result` reads the same: the same
        tokens from the text's start, the same layers and the same norm."""
        if (self.layers != len(result.layer_names) or self.final_norm != result.final_norm
                or self.truncated or getattr(result, "truncated", 0)):
            return 0
        kept = 0
        for (token_id, _), old_id, shown in zip(result.tokens, self.ids, self.shown):
            if token_id != old_id or shown is None:
                break
            kept += 1
        return kept

    def clear(self) -> None:
        self.beginResetModel()
        self.layers, self.heads, self.names, self.shown, self.looks = 0, [], [], [], []
        self.ids, self.fresh_from = [], 0
        self.endResetModel()

    def put(self, cells, positions: list[int]) -> None:
        """Positions[i]'s column is column i of `cells` (LensCells); only the columns not kept
        from the text before are redrawn (the kept ones read the same)."""
        changed = []
        for i, p in enumerate(positions):
            if p >= self.fresh_from or self.shown[p] is None:
                self.looks[p] = None
                changed.append(p)
            self.shown[p] = (cells, i)
        if changed:
            self.dataChanged.emit(self.index(0, min(changed)), self.index(self.layers - 1, max(changed)))

    def cell(self, row: int, column: int) -> tuple | None:
        """(cells, column in them, layer) of a grid cell, or None while it is unread."""
        shown = self.shown[column] if 0 <= column < len(self.shown) else None
        if not 0 <= row < self.layers or shown is None:
            return None
        cells, i = shown
        return cells, i, self.layers - 1 - row

    def text(self, row: int, column: int) -> str | None:
        found = self.cell(row, column)
        return None if found is None else short(found[0].top_label(found[2], found[1]))

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008 - Qt's own default
        return 0 if parent.isValid() else self.layers

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.shown)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # Qt asks each painted cell for about ten roles: the ones not drawn cost one lookup.
        slot = _ROLES.get(role)
        if slot is None:
            return Qt.AlignmentFlag.AlignCenter if role == Qt.ItemDataRole.TextAlignmentRole else None
        column = index.column()
        drawn = self.column_looks(column) if 0 <= column < len(self.looks) else None
        if drawn is None:
            return None
        if slot == 3:
            found = self.cell(index.row(), column)
            if found is None:
                return None
            cells, i, layer = found
            # The double click is named here, not in the caption: at 150 % text its lines are spent.
            return "\n".join(f"{s.token}  {s.prob:.1%}" for s in cells.cell(layer, i)[:5]) + \
                "\nDouble-click: which blocks wrote it"
        return drawn[index.row()][slot]

    def column_looks(self, column: int) -> list[tuple] | None:
        """A column's (text, fill, ink) per row, top row first; None while it is unread."""
        drawn = self.looks[column]
        if drawn is None and self.shown[column] is not None:
            drawn = self.looks[column] = self._looks(column)
        return drawn

    def _looks(self, column: int) -> list[tuple]:
        """A column's (text, fill, ink) per row, top row first: made once, when first painted."""
        shown = self.shown[column]
        assert shown is not None, "an unread column has no looks"
        cells, i = shown
        probs = np.clip(cells.probs[::-1, i, 0], 0.0, 1.0)
        shades = np.rint((SHADES - 1) * probs).astype(int).tolist()
        labels = [short(cells.strings.label(t)) for t in cells.ids[::-1, i, 0].tolist()]
        return [(label, _SHADES[shade], WHITE if p > 0.45 else BLACK)
                for label, shade, p in zip(labels, shades, probs.tolist())]

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        names = self.heads if orientation == Qt.Orientation.Horizontal else self.names
        return names[section] if 0 <= section < len(names) else None


class LensGrid(QTableView):
    """The grid's view, drawn a column picture at a time: each column's cells are painted
    once into a picture when its values or width change, and a repaint (a scroll, a new
    text's shifted columns, a frame) only copies the pictures in view. Qt's own per-cell
    painting cost 4–10 ms a full repaint on a busy machine, several a second while the
    lens is read. One cell (row, column) is framed on top of its own colour."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.framed: tuple[int, int] | None = None
        self.pictures: dict[int, tuple] = {}  # column → (what it shows, its picture, its looks)

    def dataChanged(self, top_left, bottom_right, roles=()) -> None:  # noqa: N802 - Qt's name
        # Qt repaints the whole viewport for a range of cells: only the range is needed.
        self.viewport().update(self.visualRect(top_left).united(self.visualRect(bottom_right)))

    def frame(self, cell: tuple[int, int] | None) -> None:
        """Frame one cell (row, column), or none: the old and new cells are repainted."""
        for old_or_new in (self.framed, cell):
            if old_or_new is not None:
                self.viewport().update(self.visualRect(self.model().index(*old_or_new)))
        self.framed = cell

    def paintEvent(self, event) -> None:
        table = cast(LensTable | None, self.model())
        painter = QPainter(self.viewport())
        area = event.rect()
        painter.fillRect(area, self.palette().base())
        columns = table.columnCount() if table is not None else 0
        if table is not None and table.layers and columns:
            first, last = self.columnAt(area.left()), self.columnAt(area.right())
            first, last = max(first, 0), (columns - 1 if last < 0 else last)
            top = self.rowViewportPosition(0)
            for column in range(first, last + 1):
                if not self.isColumnHidden(column):
                    painter.drawPixmap(self.columnViewportPosition(column), top, self._picture(table, column))
            # Pictures kept for the columns in view and a few either side, not for all 64 a text may have.
            seen = self.columnAt(0), self.columnAt(self.viewport().width() - 1)
            near = range(max(seen[0], 0) - KEPT_PICTURES, (columns - 1 if seen[1] < 0 else seen[1]) + KEPT_PICTURES + 1)
            self.pictures = {c: kept for c, kept in self.pictures.items() if c in near and c < columns}
        if self.framed is not None and table is not None:
            rect = self.visualRect(table.index(*self.framed))
            if rect.isValid() and rect.intersects(area):
                painter.setPen(QPen(FRAME, 4))
                painter.drawRect(rect.adjusted(2, 2, -2, -2))
        painter.end()

    def _picture(self, table: "LensTable", column: int) -> QPixmap:
        looks = table.column_looks(column)
        width, rows = self.columnWidth(column), self.verticalHeader()
        ratio = self.viewport().devicePixelRatioF()
        key = (id(looks), width, rows.length(), rows.defaultSectionSize(), self.font().key(), ratio)
        kept = self.pictures.get(column)
        if kept is not None and kept[0] == key:
            return kept[1]
        picture = QPixmap(max(1, round(width * ratio)), max(1, round(rows.length() * ratio)))
        picture.setDevicePixelRatio(ratio)
        picture.fill(self.palette().base().color())
        painter = QPainter(picture)
        painter.setFont(self.font())
        metrics = painter.fontMetrics()
        grid = QColor(self.style().styleHint(QStyle.StyleHint.SH_Table_GridLineColor, None, self) & 0xFFFFFF)
        for row in range(table.layers):
            y, height = rows.sectionPosition(row), rows.sectionSize(row)
            cell = QRect(0, y, width - 1, height - 1)  # the last pixel of each way is the grid line's, as in Qt's view
            if looks is not None:
                text, fill, ink = looks[row]
                painter.fillRect(cell, fill)
                painter.setPen(ink)
                if metrics.horizontalAdvance(text) > cell.width() - 4:
                    text = metrics.elidedText(text, Qt.TextElideMode.ElideRight, cell.width() - 4)
                painter.drawText(cell, Qt.AlignmentFlag.AlignCenter, text)
            painter.setPen(grid)
            painter.drawLine(width - 1, y, width - 1, y + height - 1)
            painter.drawLine(0, y + height - 1, width - 1, y + height - 1)
        painter.end()
        self.pictures[column] = (key, picture, looks)  # its looks kept alive, so their id is not reused
        return picture


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
        self.text = QPlainTextEdit()
        style.use_font(self.text, style.LABEL_POINT_SIZE + 4)
        self.text.setPlaceholderText("Type text; every layer guesses the token after each one.")
        self.text.setFixedHeight(70)
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
        self.bars = BarChart("Click a cell", style.BAR_PROB, suffix="%")
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
    def on_model(self, summary, restore: LensState | None = None) -> None:
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

    def on_result(self, result) -> None:
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
        head_pad, pad = heads.horizontalAdvance("  ") + 12, cells.horizontalAdvance("  ") + 8
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

