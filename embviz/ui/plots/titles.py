"""Plot titles that never widen their plot: pyqtgraph makes a title's width its plot's
minimum, and a plot given less than its minimum is drawn past its box, its right-hand part
(the last bars, the colour bar) cut off. A narrow plot keeps its axes; the title may overhang."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt


class ShrinkableTitle(pg.LabelItem):
    def updateMin(self) -> None:
        bounds = self.itemRect()
        self.setMinimumWidth(0)
        self.setMinimumHeight(bounds.height())
        self._sizeHint = {
            Qt.SizeHint.MinimumSize: (0, bounds.height()),
            Qt.SizeHint.PreferredSize: (bounds.width(), bounds.height()),
            Qt.SizeHint.MaximumSize: (-1, -1),
            Qt.SizeHint.MinimumDescent: (0, 0),
        }
        self.updateGeometry()


def shrinkable_title(plot: pg.PlotItem) -> None:
    """Let `plot`'s title shrink below its text's width: its title item is replaced, in its
    place in the plot's layout, by one that can. (Swapping the old item's class instead left
    Qt's wrapper pointing at a class it was not built as, and a later plot's title crashed.)"""
    old = plot.titleLabel
    plot.layout.removeItem(old)
    if old.scene() is not None:
        old.scene().removeItem(old)
    title = ShrinkableTitle("", size="11pt", parent=plot)
    plot.layout.addItem(title, 0, 1)
    plot.titleLabel = title
    plot.setTitle(None)  # hidden until a title is set, as the one it replaces was
