"""A labelled heat map (pyqtgraph ImageItem) with a colour bar: rows and columns named on
the axes, the cell under the mouse reported on hover and on click."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QSize, Qt, Signal
from PySide6.QtGui import QFontMetrics

from embviz.ui import style
from embviz.ui.plots.titles import shrinkable_title
from embviz.ui.formatting import visible_token

MIN_HEIGHT = 160  # pixels at 100 % text, as the parts chart beside it
# Blue for a part that pushed the logit down, red for up, white for none (ColorBrewer's RdBu):
# the sign reads first. CET-D1's grey middle tinted every near-zero head.
DIVERGING = pg.ColorMap([0.0, 0.5, 1.0], [(33, 102, 172), (247, 247, 247), (178, 24, 43)])
# White to dark blue, as the lens grid: one hue for weights from 0 to 1.
SEQUENTIAL = pg.ColorMap([0.0, 1.0], [(247, 251, 255), (8, 48, 107)])


class HeatMap(pg.GraphicsLayoutWidget):
    """Rows top to bottom, columns left to right; `cellHovered` and `cellClicked` give (row, column)."""

    cellHovered = Signal(int, int)
    cellClicked = Signal(int, int)

    def __init__(self, colormap: pg.ColorMap, parent=None) -> None:
        super().__init__(parent)
        self.setBackground("w")
        self.plot = self.addPlot(enableMenu=False)
        self.plot.setMenuEnabled(False)
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        shrinkable_title(self.plot)
        self.plot.invertY(True)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.bar = pg.ColorBarItem(colorMap=colormap, interactive=False, width=14)
        self.bar.setImageItem(self.image, insert_in=self.plot)
        for name in ("left", "bottom", "top"):
            axis = self.plot.getAxis(name)
            axis.setTextPen("k")
            axis.setPen("k")
        self.bar.axis.setTextPen("k")
        self.shape = (0, 0)
        self.labels: tuple[list[str], list[str]] = ([], [])
        self.title = ""
        self.plot.vb.sigResized.connect(lambda _: self._place_ticks())  # how many names fit follows its size
        self.scene().sigMouseMoved.connect(self._moved)
        self.scene().sigMouseClicked.connect(self._clicked)
        style.follow_scale(self)

    def sizeHint(self) -> QSize:
        return QSize(320, self.minimumHeight())

    def close(self) -> bool:
        """Closed, pyqtgraph deletes the plot's items: the axes no longer follow the text size."""
        style.stop_following(self)
        return super().close()

    def set_text_scale(self, scale: float) -> None:
        self.setMinimumHeight(round(MIN_HEIGHT * scale))
        font = style.font(style.BASE_POINT_SIZE)
        metrics = QFontMetrics(font)
        for axis in (self.plot.getAxis("left"), self.plot.getAxis("bottom"), self.bar.axis):
            axis.setTickFont(font)
        self.plot.getAxis("left").setWidth(None)
        # Room for a label's full depth: ␣, drawn low, showed as two dots in the automatic height.
        self.plot.getAxis("bottom").setHeight(round(metrics.height() * 1.5) + 6)
        self.bar.axis.setWidth(metrics.horizontalAdvance("−0.0") + 10)  # the automatic width cut its labels
        self.set_title(self.title)
        self._place_ticks()

    def set_title(self, title: str) -> None:
        self.title = title
        self.plot.setTitle(title, size=f"{style.pt(style.LABEL_POINT_SIZE)}pt", color="k")

    def set_cells(self, values: np.ndarray, rows: list[str], columns: list[str], levels: tuple[float, float]) -> None:
        """`values` (rows × columns), its colours spread over `levels`."""
        self.shape, self.labels = values.shape, (list(rows), list(columns))
        self.image.setImage(np.asarray(values, dtype=np.float32), autoLevels=False)
        self.bar.setLevels(levels)
        self.image.setRect(0, 0, values.shape[1], values.shape[0])
        self._place_ticks()
        self.plot.setXRange(0, values.shape[1], padding=0)
        self.plot.setYRange(0, values.shape[0], padding=0)

    def _place_ticks(self) -> None:
        """As many row and column names as fit without touching: every one, or every few."""
        metrics = QFontMetrics(style.font(style.BASE_POINT_SIZE))
        rows, columns = self.labels
        height = self.plot.vb.height() or self.height() * 0.7
        self.plot.getAxis("left").setTicks([_ticks(rows, max(1, int(height / metrics.height())))])
        widest = max((metrics.horizontalAdvance(visible_token(c)) for c in columns), default=1) + metrics.height()
        self.plot.getAxis("bottom").setTicks([_ticks(columns, max(1, int((self.plot.vb.width() or 300) / widest)))])

    def cell_at(self, scene_pos: QPointF) -> tuple[int, int] | None:
        if not self.shape[0] or not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return None
        pos = self.plot.vb.mapSceneToView(scene_pos)
        row, column = int(np.floor(pos.y())), int(np.floor(pos.x()))
        inside = 0 <= row < self.shape[0] and 0 <= column < self.shape[1]
        return (row, column) if inside else None

    def scene_pos_of(self, row: int, column: int) -> QPointF:
        """Where the centre of a cell is drawn (for tests and the demo)."""
        return self.plot.vb.mapViewToScene(QPointF(column + 0.5, row + 0.5))

    def _moved(self, scene_pos: QPointF) -> None:
        if (cell := self.cell_at(scene_pos)) is not None:
            self.cellHovered.emit(*cell)

    def _clicked(self, event) -> None:
        if event.button() == Qt.MouseButton.LeftButton and (cell := self.cell_at(event.scenePos())) is not None:
            self.cellClicked.emit(*cell)


def _ticks(labels: list[str], room: int) -> list[tuple[float, str]]:
    """Each label at its cell's centre, or every few when only `room` of them fit."""
    step = max(1, -(-len(labels) // room))
    return [(i + 0.5, visible_token(label)) for i, label in enumerate(labels) if i % step == 0]
