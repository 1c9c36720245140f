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
    """Let `plot`'s title shrink below its text's width. Its class is swapped, not the item
    replaced: the plot item keeps its own title in its layout and sets it by name."""
    plot.titleLabel.__class__ = ShrinkableTitle
