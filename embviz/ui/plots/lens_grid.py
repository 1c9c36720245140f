"""The logit lens's grid: a table model that reads the lens's arrays only when Qt draws a cell,
and a view that paints a column's cells once as a picture and keeps the pictures near the view."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, QRect, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QStyle, QTableView


CELL_CHARS = 9  # a cell shows this many characters of its token; the tooltip has all of it
# White to dark blue: one hue, so the order reads without colour vision; text turns white on dark cells.
LIGHT, DARK = QColor("#f7fbff"), QColor("#08306b")
KEPT_PICTURES = 8  # columns either side of the ones in view whose pictures are kept
FRAME = QColor("#E69F00")  # Okabe–Ito orange: visible on white and on dark blue


LIFT = 0.7  # probability to shade: a little lift, so 10 % and 30 % differ on screen
WHITE_INK_FROM = 0.45  # the probability from which a cell is dark enough for white text
TOOLTIP = 3  # the slot of _ROLES that is worked out per cell (its top five guesses), not kept per column


def cell_color(prob: float) -> QColor:
    t = min(1.0, max(0.0, prob)) ** LIFT
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
        if slot == TOOLTIP:
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
        return [(label, _SHADES[shade], WHITE if p > WHITE_INK_FROM else BLACK)
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
