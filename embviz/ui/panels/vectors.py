"""Vectors tab: typed words' raw rows as colour strips, one strip per word, in a
diverging palette centred on zero (the picture the word2vec explainers draw)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.views import ModelSummary, StripsView
from embviz.state.tabs import VectorsState
from embviz.state.word_sets import parse_word_list
from embviz.ui import style
from embviz.ui.binding import Bindings
from embviz.ui.widgets import WordField, folding

HEADING_HINT = "Type words, separated by commas: each one's row of the table becomes a strip of colours."
FEW_COLUMNS = 32  # up to this many numbers a row, each is ticked
COLORMAP = "CET-D1"  # blue below zero, white at zero, red above: the sign reads at a glance


class VectorsPanel(QWidget):
    def __init__(self, submit, parent=None) -> None:
        super().__init__(parent)
        self.asking = Latest(submit, self.on_result, self.on_failed)
        self.state = VectorsState()
        self.shown: Any = None  # the StripsView on screen
        self.row_width = 1  # the open model's: the numbers in a row
        self.words = WordField("Words, e.g. king, man, woman, queen")
        self.bindings = Bindings(self.state)
        self.bindings.bind(self.words, "words")
        self.words.returnPressed.connect(self.run)
        go = QPushButton("Show the rows")
        go.clicked.connect(self.run)
        self.heading = QLabel(HEADING_HINT)
        self.heading.setWordWrap(True)
        style.use_font(self.heading, style.LABEL_POINT_SIZE + 2, bold=True)
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setStyleSheet(style.ERROR_STYLE)
        style.use_font(self.message)
        key = QLabel("Each column is one of the table's dimensions; red is above zero, blue below, white near zero. "
                     "Words used alike share stripes: compare king with queen, and man with woman.")
        key.setWordWrap(True)
        self.plot = pg.PlotWidget(background=style.BACKGROUND, enableMenu=False)
        item = self.plot.getPlotItem()
        item.setMenuEnabled(False)
        item.hideButtons()
        item.setMouseEnabled(x=True, y=False)
        item.getViewBox().invertY(True)  # the first word on top
        item.setLabel("bottom", "dimension")
        for name in ("left", "bottom"):
            item.getAxis(name).setTextPen("k")
            item.getAxis(name).setPen("k")
        self.image = pg.ImageItem(axisOrder="row-major")
        item.addItem(self.image)
        self.colorbar = pg.ColorBarItem(values=(-1, 1), colorMap=pg.colormap.get(COLORMAP), interactive=False, width=16)
        self.colorbar.setImageItem(self.image, insert_in=item)
        row = QHBoxLayout()
        row.addWidget(self.words, 1)
        row.addWidget(go)
        layout = QVBoxLayout(self)
        row_box = folding(row)
        layout.addWidget(row_box)
        layout.addWidget(key)
        self.controls = (key,)  # what projector mode folds
        self.inputs = (row_box,)  # and with a lesson's band up: the plot's rows name the words
        layout.addWidget(self.heading)
        layout.addWidget(self.message)
        layout.addWidget(self.plot, 1)
        style.follow_scale(self)

    def set_text_scale(self, scale: float) -> None:
        for name in ("left", "bottom"):
            self.plot.getPlotItem().getAxis(name).setTickFont(style.font(style.LABEL_POINT_SIZE, bold=name == "left"))

    def picture(self) -> tuple[QWidget, str]:
        return self.plot, self.heading.text()

    def table_rows(self) -> tuple[list[str], list[list[object]]] | None:
        view = self.shown
        if view is None or not view.ids:
            return None
        headers = ["token", "id"] + [f"d{j}" for j in range(view.rows.shape[1])]
        return headers, [[label, i, *row.tolist()] for label, i, row in zip(view.labels, view.ids, view.rows)]

    def on_model(self, summary: ModelSummary, restore: VectorsState | None = None) -> None:
        self.asking.forget()
        self.words.set_vocabulary(summary.labels)
        self.row_width = int(summary.info.get("dim", 0)) or self.row_width
        if restore is not None:
            self.state.words = restore.words
        self._clear()
        if self.state.words.strip():
            self.run()

    def _clear(self) -> None:
        self.shown = None
        self.image.clear()
        self.plot.getPlotItem().getAxis("left").setTicks([[]])
        self._width_axis()
        self.heading.setText(HEADING_HINT)
        self.message.setText("")

    def run(self) -> None:
        words = parse_word_list(self.state.words)
        if not words:
            self._clear()
            return
        self.asking.ask(rq.VectorStrips(words=words))

    def on_result(self, view: StripsView) -> None:
        self.message.setText(f"Not one token here: {', '.join(view.missing)}" if view.missing else "")
        if not view.ids:
            self.shown = None
            self.image.clear()
            self._width_axis()
            return
        self.shown = view
        rows = np.nan_to_num(view.rows, nan=0.0, posinf=0.0, neginf=0.0)
        # Centred on zero, and scaled to the 99th percentile so one large value does not wash out the rest.
        reach = float(np.percentile(np.abs(rows), 99)) or 1.0
        self.image.setImage(rows, levels=(-reach, reach))
        self.image.setRect(0, 0, rows.shape[1], rows.shape[0])
        self.colorbar.setLevels((-reach, reach))
        item = self.plot.getPlotItem()
        item.getAxis("left").setTicks([[(i + 0.5, label) for i, label in enumerate(view.labels)]])
        self._width_axis()
        item.setYRange(0, rows.shape[0], padding=0)
        self.heading.setText(f"The rows of {', '.join(view.labels)}: {rows.shape[1]} numbers each")

    def _width_axis(self) -> None:
        """The bottom axis spans this model's width (a toy's 3 numbers, not the last model's
        576); a narrow table gets a tick in the middle of each number's column."""
        item = self.plot.getPlotItem()
        item.setXRange(0, self.row_width, padding=0)
        few = self.row_width <= FEW_COLUMNS
        item.getAxis("bottom").setTicks([[(j + 0.5, str(j)) for j in range(self.row_width)]] if few else None)

    def on_failed(self, message: str) -> None:
        self.message.setText(message)
