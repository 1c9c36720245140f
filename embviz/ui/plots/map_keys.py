"""The map's two keys: the word sets' legend (top left) and the colours' key (bottom right),
each shrunk to its share of the view, and the room Fit and zoom leave beside them."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor

from embviz.ui import style
from embviz.ui.plots.map_markers import highlight_size
from embviz.ui.plots.map_view_host import MapViewHost

KEY_GAP_PX = 6
# Each key covers at most this share of the view's area, width and height, so two cover
# under a quarter of it. Shrunk past KEY_MIN_SCALE a key would be unreadable: it hides (the
# word-set list beside the map names the sets in their colours) until the map is larger again.
KEY_MAX_AREA_SHARE = 0.12
KEY_MAX_WIDTH_SHARE = 0.45
KEY_MAX_HEIGHT_SHARE = 0.45
KEY_MIN_SCALE = 0.5
# A key on its own (colours, no word sets) may take both keys' area and more height: the
# six kinds or clusters of a 1024 × 700 map at 150 % stay readable instead of hiding.
KEY_ALONE_HEIGHT_SHARE = 0.6
KEY_ROOM_MAX_SHARE = 0.4  # of the view that Fit and zoom leave free beside a key


def new_key(view_box: pg.ViewBox, offset: tuple[int, int]) -> pg.LegendItem:
    """A key anchored at `offset` (negative: from the right or bottom), hidden until it has entries."""
    key = pg.LegendItem(
        offset=offset, labelTextSize=f"{style.LABEL_POINT_SIZE}pt", labelTextColor="k",
        brush=pg.mkBrush(255, 255, 255, 220), pen=pg.mkPen(160, 160, 160),
    )
    key.setParentItem(view_box)
    key.hide()
    return key


class KeysMixin(MapViewHost):
    """MapView's keys: `legend` (word sets), `colour_legend` (Colour by) and their fitting."""

    def _make_keys(self) -> None:
        self.legend = new_key(self.vb, (10, 10))
        self.colour_legend = new_key(self.vb, (-10, -10))  # bottom right: the sets' legend keeps the top left
        self._keys_wanted = {self.legend: False, self.colour_legend: False}  # whether each key has entries
        self._colour_entries: list[tuple[QColor, str]] = []
        self.vb.sigResized.connect(self._fit_keys)

    def _scale_keys(self) -> None:
        for key in (self.legend, self.colour_legend):
            key.setLabelTextSize(f"{style.pt(style.LABEL_POINT_SIZE)}pt")
        self._rebuild_colour_legend()

    def colour_legend_entries(self) -> list[str]:
        return [name for _, name in self._colour_entries]

    def colour_key(self) -> list[tuple[QColor, str]]:
        """The colour-by key's entries: colour, name."""
        return list(self._colour_entries)

    def _rebuild_colour_legend(self) -> None:
        self.colour_legend.clear()
        size = highlight_size(len(self.coords)) * self._scale
        for colour, name in self._colour_entries:
            sample = pg.ScatterPlotItem(size=size, pen=pg.mkPen(60, 60, 60, width=1), brush=pg.mkBrush(colour))
            self.colour_legend.addItem(sample, name)
        self._keys_wanted[self.colour_legend] = bool(self._colour_entries)
        self._fit_keys()

    def _rebuild_legend(self) -> None:
        self.legend.clear()
        listed = 0
        for name, (scatter, ids, _) in self._sets.items():
            shown = int(np.count_nonzero(self.rows_of(ids) >= 0))
            if shown:  # a set with nothing on this map ("weekdays" on a lesson model) only hides points
                self.legend.addItem(scatter, f"{name} ({shown})")
                listed += 1
        self._keys_wanted[self.legend] = bool(listed)  # an empty legend still draws its frame
        self._fit_keys()

    def keys_left_out(self) -> list[tuple[QColor, str]]:
        """The entries of each key that has some but is hidden (too small to read at this size):
        an exported picture prints them under the map instead."""
        entries: list[tuple[QColor, str]] = []
        if self._keys_wanted[self.legend] and not self.legend.isVisible():
            entries += [(QColor(colour), f"{name} ({int(np.count_nonzero(self.rows_of(ids) >= 0))})")
                        for name, (_, ids, colour) in self._sets.items() if np.any(self.rows_of(ids) >= 0)]
        if self._keys_wanted[self.colour_legend] and not self.colour_legend.isVisible():
            entries += self._colour_entries
        return entries

    def key_rect(self, key: pg.LegendItem) -> QRectF:
        """Where a key sits in the view, in pixels, as shrunk by `_fit_keys`."""
        return key.mapRectToParent(key.boundingRect())

    def key_rects(self) -> list[tuple[float, float, float, float]]:
        """The visible keys' (x, y, w, h) in pixels: labels keep off them."""
        return [(g.x(), g.y(), g.width(), g.height())
                for g in (self.key_rect(k) for k in (self.legend, self.colour_legend) if k.isVisible())]

    def _fit_keys(self) -> None:
        """Each key at its text size, shrunk to its share of the view, or hidden when it
        would have to shrink past reading."""
        width, height = self.vb.width(), self.vb.height()
        wanted = dict(self._keys_wanted)
        if all(wanted.values()) and self._key_scale(self.colour_legend, False) < KEY_MIN_SCALE:
            # No room for both: the colours' key stays, the sets' goes (the list beside the map
            # names the sets in their colours, and their words are labelled on the map).
            wanted[self.legend] = False
        alone = sum(wanted.values()) == 1
        for key, shown in wanted.items():
            natural = key.boundingRect()
            if not shown or natural.isEmpty() or width <= 0 or height <= 0:
                key.setVisible(shown)
                continue
            scale = self._key_scale(key, alone)
            key.setScale(scale)
            key.setOffset(key.opts["offset"])  # anchored again at its new size
            key.setVisible(scale >= KEY_MIN_SCALE)

    def _key_scale(self, key: pg.LegendItem, alone: bool) -> float:
        """The scale that keeps `key` within its share of the view (a larger share `alone`)."""
        width, height, natural = self.vb.width(), self.vb.height(), key.boundingRect()
        if natural.isEmpty() or width <= 0 or height <= 0:
            return 1.0
        area_share = KEY_MAX_AREA_SHARE * (2 if alone else 1)
        height_share = KEY_ALONE_HEIGHT_SHARE if alone else KEY_MAX_HEIGHT_SHARE
        area = (area_share * width * height / (natural.width() * natural.height())) ** 0.5
        return min(1.0, area, KEY_MAX_WIDTH_SHARE * width / natural.width(), height_share * height / natural.height())

    def _set_range_beside_keys(self, x0: float, x1: float, y0: float, y1: float) -> None:
        """Show x0…x1 × y0…y1 with room above for the word sets' legend and on the right
        for the colours' key, so that neither covers a point (a search's marker, say)."""
        width, height = self.vb.width(), self.vb.height()
        if self.colour_legend.isVisible() and width > 0:
            share = min((self.key_rect(self.colour_legend).width() + 2 * KEY_GAP_PX) / width, KEY_ROOM_MAX_SHARE)
            x1 = x0 + (x1 - x0) / (1 - share)
        if self.legend.isVisible() and height > 0:
            share = min((self.key_rect(self.legend).height() + 2 * KEY_GAP_PX) / height, KEY_ROOM_MAX_SHARE)
            y1 = y0 + (y1 - y0) / (1 - share)
        self.vb.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=0)
