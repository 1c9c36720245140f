"""The Attribution tab's three pages: the blocks' parts with the heads' heat map, one
head's attention pattern with the heads ranked, and pinned tokens through the layers."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from embviz.ui import style
from embviz.ui.panels import attribution_text as say
from embviz.ui.plots.heat_map import DIVERGING, SEQUENTIAL, HeatMap
from embviz.ui.plots.parts_chart import PartsChart, Series
from embviz.ui.widgets import side_by_side

ATTENTION, MLP, EMBEDDING = QColor("#0072B2"), QColor("#E69F00"), QColor("#555555")  # Okabe–Ito
PROMPT_A, PROMPT_B, DIFFERENCE = QColor("#999999"), QColor("#0072B2"), QColor("#D55E00")
RANKED_HEADS = 10


def block_parts(result) -> tuple[list[str], list[float], list[float], float]:
    """(group names, attention parts, MLP parts, the embedding's part) per block."""
    blocks = max(p.block or 0 for p in result.parts)
    attention, mlp = [0.0] * blocks, [0.0] * blocks
    for p in result.parts:
        if p.kind in ("attention", "mlp"):
            (attention if p.kind == "attention" else mlp)[p.block - 1] = p.value
    embedding = next(p.value for p in result.parts if p.kind == "embedding")
    return ["emb"] + [str(b) for b in range(1, blocks + 1)], attention, mlp, embedding


def head_grid(result) -> np.ndarray:
    """(blocks, heads) of the heads' parts, block 1 first."""
    heads = [h for h in result.heads if h.head is not None]
    grid = np.zeros((max(h.block for h in heads), max(h.head for h in heads) + 1), dtype=np.float32)
    for h in heads:
        grid[h.block - 1, h.head] = h.value
    return grid


class BlocksView(QWidget):
    """The parts per block (attention and MLP side by side), and every head's part as a map."""

    headChosen = Signal(int, int)  # block (1…N), head (0-based)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.chart = PartsChart()
        self.heads = HeatMap(DIVERGING)
        self.hover = ""  # what the heat map's title says of the cell under the mouse
        self.sentence = ""  # what the tab says under this page
        self.grid: np.ndarray | None = None
        self.target = ""
        self.heads.cellHovered.connect(lambda row, column: self._name(row, column))
        self.heads.cellClicked.connect(self._chosen)
        self.heads.setToolTip("Point at a cell for its block and head; click it for its attention.")
        self.splitter = side_by_side(self.chart, self.heads, 3, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter)

    def show_one(self, result) -> None:
        groups, attention, mlp, embedding = block_parts(result)
        self.chart.set_series(groups, [Series("emb", EMBEDDING, [embedding] + [None] * len(attention)),
                                       Series("attention", ATTENTION, [None, *attention]),
                                       Series("MLP", MLP, [None, *mlp])])
        self._show_heads(head_grid(result), result.target, "Heads")  # short: the column is narrow beside the lessons
        self.sentence = say.parts_sentence(result)

    def show_two(self, a, b) -> None:
        groups, att_a, mlp_a, emb_a = block_parts(a)
        _, att_b, mlp_b, emb_b = block_parts(b)
        total_a = [emb_a] + [x + y for x, y in zip(att_a, mlp_a)]
        total_b = [emb_b] + [x + y for x, y in zip(att_b, mlp_b)]
        self.chart.set_series(groups, [Series("A", PROMPT_A, total_a), Series("B", PROMPT_B, total_b),
                                       Series("B − A", DIFFERENCE, [y - x for x, y in zip(total_a, total_b)])])
        self._show_heads(head_grid(b) - head_grid(a), a.target, "B − A")
        self.sentence = say.compare_sentence(a, b)

    def _show_heads(self, grid: np.ndarray, target: str, title: str) -> None:
        self.grid, self.target = grid, target
        reach = float(np.abs(grid).max()) or 1.0
        rows = [f"{b}" for b in range(grid.shape[0], 0, -1)]  # the last block on top, as in the lens
        self.heads.set_cells(grid[::-1], rows, [str(h) for h in range(grid.shape[1])], (-reach, reach))
        self.heads.set_title(title)

    def _heads(self) -> np.ndarray:
        """The grid on screen (the heat map's cells are asked about only once it is drawn)."""
        assert self.grid is not None, "no heads are drawn yet"
        return self.grid

    def _cell(self, row: int, column: int) -> tuple[int, int]:
        return self._heads().shape[0] - row, column

    def _name(self, row: int, column: int) -> None:
        block, head = self._cell(row, column)
        value = float(self._heads()[block - 1, head])
        self.hover = say.head_sentence(block, head, value, self.target)
        self.heads.set_title(f"Block {block} · head {head}: {value:+.2f}")  # short: the column is narrow
        self.heads.setToolTip(self.hover)

    def _chosen(self, row: int, column: int) -> None:
        self._name(row, column)
        self.headChosen.emit(*self._cell(row, column))


class AttentionView(QWidget):
    """One head's attention over the text, and the heads ranked by their part of the logit."""

    headChosen = Signal(int, int)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.map = HeatMap(SEQUENTIAL)
        self.map.cellHovered.connect(self._name)
        self.pattern: Any = None
        self.ranked = QListWidget()
        style.use_font(self.ranked)
        self.ranked.itemClicked.connect(lambda item: self.headChosen.emit(*item.data(Qt.ItemDataRole.UserRole)))
        self.sentence = ""
        self.splitter = side_by_side(self.map, self.ranked, 3, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.splitter, 1)

    def show_ranking(self, result, chosen: tuple[int, int]) -> None:
        self.ranked.clear()
        for h in result.ranked_heads()[:RANKED_HEADS]:
            item = QListWidgetItem(f"block {h.block} · head {h.head}  {h.value:+.2f}")
            item.setData(Qt.ItemDataRole.UserRole, (h.block, h.head))
            self.ranked.addItem(item)
            item.setSelected((h.block, h.head) == chosen)
        # As wide as its rows: cut, "block 24 · head 4" lost the part that ranks it.
        self.ranked.setMinimumWidth(self.ranked.sizeHintForColumn(0) + 2 * self.ranked.frameWidth() + 24)

    def _name(self, row: int, column: int) -> None:
        """The pair under the mouse in the title: with many tokens, not every column is named."""
        texts = [say.label(t) for t in self.pattern.token_texts]
        self.map.set_title(f"“{texts[row]}” → “{texts[column]}”: {self.pattern.weights[0][row][column]:.0%}")

    def show_pattern(self, pattern) -> None:
        self.pattern = pattern
        labels = [say.label(t) for t in pattern.token_texts]
        self.map.set_cells(pattern.weights[0], labels, labels, (0.0, 1.0))
        self.map.set_title(f"Block {pattern.block} · head {pattern.heads[0]}")  # short: a wide title widens the plot past its box
        self.sentence = say.attention_sentence(pattern, 0)


class PinnedView(QWidget):
    """Each pinned token's probability (or rank) after every layer."""

    changed = Signal()  # its sentence changed (probability or rank)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.plot = pg.PlotWidget(background="w", enableMenu=False)
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.showGrid(x=True, y=True, alpha=0.25)
        self.legend = self.plot.addLegend(offset=(8, 8), labelTextColor="k", brush=pg.mkBrush(255, 255, 255, 220))
        self.plot.getPlotItem().getAxis("left").enableAutoSIPrefix(False)  # "probability (×0.001)" read as nonsense
        self.pin = QLineEdit()
        self.pin.setToolTip("Tokens to follow through the layers, comma-separated (␣ for a leading space)")
        self.by_rank = QCheckBox("Rank")
        self.by_rank.setToolTip("Each token's rank among the layer's guesses (1 = its top guess), not its probability")
        self.by_rank.toggled.connect(lambda _: self.result is not None and self.show_pinned(self.result))
        self.by_rank.toggled.connect(lambda _: self.changed.emit())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Pin:"))
        row.addWidget(self.pin, 1)
        row.addWidget(self.by_rank)
        layout.addLayout(row)
        layout.addWidget(self.plot, 1)
        self.clear()
        style.follow_scale(self)

    def set_text_scale(self, scale: float) -> None:
        self.plot.setMinimumHeight(round(150 * scale))  # as little as the parts chart: a 1024 × 700 screen at 150 %
        for name in ("left", "bottom"):
            self.plot.getPlotItem().getAxis(name).setTickFont(style.font(style.BASE_POINT_SIZE))
            self.plot.getPlotItem().getAxis(name).setTextPen("k")

    def clear(self) -> None:
        self.result = None
        self.plot.clear()
        self.legend.clear()
        self.sentence = "Pin tokens (comma-separated) to follow them through the layers."

    def show_pinned(self, result) -> None:
        self.result = result
        self.plot.clear()
        self.legend.clear()
        rank = self.by_rank.isChecked()
        self.plot.setLogMode(y=rank)
        self.plot.getPlotItem().invertY(rank)  # rank 1 on top, as the most likely guess
        xs = list(range(len(result.layer_names)))
        for n, p in enumerate(result.pinned):
            pen = pg.mkPen(style.SET_COLORS[n % len(style.SET_COLORS)], width=3)
            ys = p.ranks if rank else p.probs
            self.plot.plot(xs, ys, pen=pen, symbol="o", symbolSize=6, symbolBrush=pen.color(), name=say.label(p.text))
        step = next((s for s in (1, 2, 5, 10) if len(xs) / s <= 12), 20)  # round block numbers
        self.plot.getPlotItem().getAxis("bottom").setTicks(
            [[(x, "emb" if x == 0 else str(x)) for x in xs if x % step == 0]])
        if not rank:
            self.plot.setYRange(0, 1, padding=0.02)
        size = f"{style.pt(style.BASE_POINT_SIZE)}pt"
        self.plot.setLabel("left", "rank" if rank else "probability", color="k", **{"font-size": size})
        self.plot.setLabel("bottom", "after block", color="k", **{"font-size": size})
        self.plot.setXRange(-1, len(xs) - 0.5, padding=0)  # room for the first label, "emb"
        for _, name in self.legend.items:
            name.setText(name.text, size=size, color="k")
        self.sentence = say.pinned_sentence(result, rank)
