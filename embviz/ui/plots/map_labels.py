"""Text on the map, placed so that none overlaps another or the edge, by zoom level (as
Nomic Atlas does): zoomed out, the coarse groups' names; zoomed in, the fine clusters'
names; further in, every token. The highlighted tokens are labelled at every level, each
marker at its own place on the map (never moved for its label): a label with no room right
beside its point goes a few label heights up or down, tied to it by a leader line, or is
left out, so that words on one spot (the weekdays of a t-SNE map, a whole word set while a
t-SNE is still collapsed) are never drawn somewhere they are not."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QColor, QFont, QFontMetricsF

from embviz.ui import style
from embviz.ui.plots.map_markers import highlight_size
from embviz.ui.plots.map_view_host import MapViewHost

LABEL_ALL_BELOW = 200  # with at most this many points in view, every one is labelled
MAX_LABELS = 300
LABEL_GAP_PX = 6
TEXT_MARGIN = 4  # a QGraphicsTextItem's document margin, each side
# With more fine clusters' centres than this in view, and more than COARSE_SHARE of the map's
# points, the map is seen whole: the coarse groups' names show (a 1024 × 700 map at 150 % has
# room for about a dozen names). The share matters on PCA, whose clusters' centres crowd its
# middle: zoomed in there, many centres are in view, but the fine names are what is wanted.
FINE_NAMES_UP_TO = 12
COARSE_SHARE = 0.3
COARSE_NAME_SCALE = 1.15  # coarse names a size up: they name what the fine names divide
COARSE_COLOR = QColor(30, 30, 30)
NAME_STACKS = 3  # a name with no room beside its centre may move this many of its heights up or down
# A token's label with no room beside its point may move this many label heights up or down
# beside it, with a leader line: near enough to read as the point's, never a column down the map.
TOKEN_STEPS = 3
LEADER_COLOR = QColor(60, 60, 60)
Box = tuple[float, float, float, float]  # x, y, w, h in pixels
Name = tuple[str, float, float, QColor]  # text, x, y (data), colour


def place_labels(candidates: list[Box], width: float, height: float, taken: list[Box] | None = None,
                 gap: float = LABEL_GAP_PX, stacks: list[int] | None = None, steps: list[int] | None = None) -> list[tuple[float, float] | None]:
    """Greedy label placement in pixels: `candidates` are (x, y, w, h) of a point and its
    label's size, most important first. Each label goes right, left, above or below its
    point, or else centred on it and up to `stacks`
    label heights above or below (a cluster's name need not touch its centre, and on
    PCA many centres crowd one spot), or right or left of it up to `steps` label heights
    higher or lower (a token's, with a leader line), inside the view and clear of every label placed
    before it (and of `taken`); a label with no such place is dropped (None). Returns
    the top-left corners."""
    placed = list(taken or [])
    out: list[tuple[float, float] | None] = []
    for k, (x, y, w, h) in enumerate(candidates):
        spots = [(x + gap, y - h / 2), (x - gap - w, y - h / 2), (x - w / 2, y - gap - h), (x - w / 2, y + gap)]
        stacks_at = [s * sign for s in range(1, (stacks[k] if stacks else 0) + 1) for sign in (1, -1)]
        near = [s * sign for s in range(1, (steps[k] if steps else 0) + 1) for sign in (-1, 1)]
        spots += [(side, y - h / 2 + step * (h + 1)) for step in near for side in (x + gap, x - gap - w)]
        spot = None
        for left, top in spots + [(x - w / 2, y - h / 2 + step * h) for step in stacks_at]:
            if left < 0 or top < 0 or left + w > width or top + h > height:
                continue  # never clipped by the edge
            if any(left < r[0] + r[2] and r[0] < left + w and top < r[1] + r[3] and r[1] < top + h for r in placed):
                continue
            spot = (left, top)
            placed.append((left, top, w, h))
            break
        out.append(spot)
    return out


def label_width(metrics: QFontMetricsF, text: str) -> float:
    """A token label's width as its TextItem draws it: the text's advance (wider than its ink
    at 200 %, where "␣woman" overhung the analogy's plane by a pixel), its margins, a pixel spare."""
    return max(metrics.horizontalAdvance(text), metrics.boundingRect(text).width()) + 2 * TEXT_MARGIN + 1


@dataclass
class Frame:
    """The view in pixels: data ↔ pixel (y down) for one placement."""

    x0: float
    y1: float
    sx: float
    sy: float
    width: float
    height: float

    def to_px(self, x: float, y: float) -> tuple[float, float]:
        return (x - self.x0) * self.sx, (self.y1 - y) * self.sy

    def to_data(self, px: float, py: float) -> tuple[float, float]:
        return self.x0 + px / self.sx, self.y1 - py / self.sy

    def holds(self, px: float, py: float) -> bool:
        return 0 <= px <= self.width and 0 <= py <= self.height


class LabelsMixin(MapViewHost):
    """MapView's token labels and cluster names."""

    def _make_labels(self) -> None:
        self.labels_on = True
        self._label_items: list[pg.TextItem] = []
        self._cluster_items: list[pg.TextItem] = []
        self._cluster_labels: list[Name] = []
        self._coarse_labels: list[Name] = []
        self.placed_labels: list[int] = []  # ids labelled on screen now, for tests and export
        self.placed_cluster_labels: list[str] = []
        # Lines from a point to its label when the label sits a few heights off (data coordinates, in pairs).
        self._leaders = pg.PlotCurveItem(pen=pg.mkPen(LEADER_COLOR, width=1.5), connect="pairs")
        self._leaders.setZValue(35)
        self.addItem(self._leaders, ignoreBounds=True)
        self.leader_lines: list[tuple[int, tuple[float, float], tuple[float, float]]] = []  # (id, point, label end), for tests
        self.label_level = "fine"  # or "coarse": which clusters' names the zoom shows

    def set_labels_on(self, on: bool) -> None:
        self.labels_on = bool(on)
        self._place_labels()

    def set_cluster_labels(self, labels: list[Name], coarse: list[Name] | None = None) -> None:
        """Names drawn at the clusters' centres, (text, x, y, colour), most important first,
        and those of their coarse groups (shown while many clusters are in view); like the
        token labels, those that would overlap are dropped at this zoom."""
        self._cluster_labels = list(labels)
        self._coarse_labels = list(coarse or [])
        self._label_timer.start()

    def _frame(self) -> Frame | None:
        width, height = self.vb.width(), self.vb.height()
        if not len(self.coords) or width <= 0 or height <= 0:
            return None
        (x0, x1), (y0, y1) = self.vb.viewRange()
        return Frame(x0, y1, width / max(x1 - x0, 1e-30), height / max(y1 - y0, 1e-30), width, height)

    def _important(self) -> set[int]:
        """The highlighted tokens: ringed, arrow ends, the word sets' and search's members."""
        ids = set(self._selected) | {i for a, b, _ in self._arrows for i in (a, b)}
        return ids | {i for _, members, _ in self._sets.values() for i in members}

    def label_candidates(self, in_view: int | None = None) -> list[int]:
        """Ids to label, most important first: the ringed tokens, arrow ends, the word
        sets' and search's members, then every point in view when few (`in_view`) are."""
        order: list[int] = list(self._selected)
        for start, end, _ in self._arrows:
            order += [start, end]
        for _, ids, _ in self._sets.values():
            order += ids
        if (self.count_in_view() if in_view is None else in_view) <= LABEL_ALL_BELOW:
            order += self.ids[self.rows_in_view()].tolist()
        return list(dict.fromkeys(int(i) for i in order))

    def _place_labels(self) -> None:
        self._label_timer.stop()
        self.placed_labels = []
        self.placed_cluster_labels = []
        self.leader_lines = []
        tokens: list[tuple[int, float, float]] = []
        names: list[tuple[Name, bool]] = []
        frame = self._frame()
        if self.labels_on and frame is not None:
            tokens, names = self._layout(frame, self.count_in_view())
        label_font = style.font(style.LABEL_POINT_SIZE, bold=True)
        self._show_token_labels(tokens, label_font)
        self._show_cluster_labels(names, label_font)
        ends = np.array([end for _, start, stop in self.leader_lines for end in (start, stop)], dtype=np.float64).reshape(-1, 2)
        self._leaders.setData(ends[:, 0], ends[:, 1])

    def _layout(self, frame: Frame, in_view: int) -> tuple[list[tuple[int, float, float]], list[tuple[Name, bool]]]:
        """Where each label goes: the highlighted tokens', then the clusters' names, then
        the plain points' (when few are in view); those with no room are left out."""
        metrics = QFontMetricsF(style.font(style.LABEL_POINT_SIZE, bold=True))
        important = self._important()
        ids, boxes = self._token_boxes(frame, metrics, in_view)
        radius = highlight_size(len(self.coords), self._dot_px) * self._scale / 2
        # Labels keep off the keys and the highlighted markers, their own included (not off
        # every plain point: among a crowd of neighbours the ringed word would find no room).
        taken = self.key_rects() + [(x - radius, y - radius, 2 * radius, 2 * radius)
                                    for (x, y, _, _), i in zip(boxes, ids) if i in important]
        named = self._name_boxes(frame, in_view > COARSE_SHARE * len(self.coords))
        first = [k for k, i in enumerate(ids) if i in important]
        rest = [k for k, i in enumerate(ids) if i not in important]
        order = [("token", k) for k in first] + [("name", k) for k in range(len(named))] + [("token", k) for k in rest]
        spots = place_labels([boxes[k] if kind == "token" else named[k][1] for kind, k in order], frame.width,
                             frame.height, taken, radius + 3,
                             [0 if kind == "token" else NAME_STACKS for kind, _ in order],
                             [TOKEN_STEPS if kind == "token" and ids[k] in important else 0 for kind, k in order])
        tokens: list[tuple[int, float, float]] = []
        names: list[tuple[Name, bool]] = []
        for (kind, k), spot in zip(order, spots):
            if spot is None:
                continue
            if kind == "name":
                names.append(((named[k][0][0], *frame.to_data(*spot), named[k][0][3]), named[k][2]))
            elif len(tokens) < MAX_LABELS:
                tokens.append((ids[k], *frame.to_data(*spot)))
                x, y, w, h = boxes[k]
                # The label's nearest point to its own: a line when that is more than a gap away.
                nx, ny = min(max(x, spot[0]), spot[0] + w), min(max(y, spot[1]), spot[1] + h)
                if np.hypot(nx - x, ny - y) > radius + LABEL_GAP_PX + 4:
                    self.leader_lines.append((ids[k], frame.to_data(x, y), frame.to_data(nx, ny)))
        return tokens, names

    def _token_boxes(self, frame: Frame, metrics: QFontMetricsF, in_view: int) -> tuple[list[int], list[Box]]:
        """(ids, pixel boxes at their own points) of the tokens to label that are in view."""
        ids: list[int] = []
        spots: list[tuple[float, float]] = []
        for token_id in self.label_candidates(in_view)[: 4 * MAX_LABELS]:
            pos = self.position_of(token_id)
            if pos is None or token_id >= len(self.labels):
                continue
            px, py = frame.to_px(float(pos[0]), float(pos[1]))
            if frame.holds(px, py):
                ids.append(token_id)
                spots.append((px, py))
        boxes = [(px, py, label_width(metrics, self.labels[i]), metrics.height() + 4) for i, (px, py) in zip(ids, spots)]
        return ids, boxes

    def _name_boxes(self, frame: Frame, much_in_view: bool) -> list[tuple[Name, Box, bool]]:
        """The names of this zoom level in view: (name, pixel box, coarse)."""
        in_view = [n for n in self._cluster_labels if frame.holds(*frame.to_px(n[1], n[2]))]
        coarse = bool(self._coarse_labels) and much_in_view and len(in_view) > FINE_NAMES_UP_TO
        self.label_level = "coarse" if coarse else "fine"
        shown = [n for n in self._coarse_labels if frame.holds(*frame.to_px(n[1], n[2]))] if coarse else in_view
        metrics = QFontMetricsF(self._name_font(coarse))
        return [(n, (*frame.to_px(n[1], n[2]), metrics.boundingRect(n[0]).width() + 12, metrics.height() + 8), coarse)
                for n in shown]

    @staticmethod
    def _name_font(coarse: bool) -> QFont:
        return style.font(style.LABEL_POINT_SIZE * (COARSE_NAME_SCALE if coarse else 1.0), bold=True)

    def _show_token_labels(self, chosen: list[tuple[int, float, float]], label_font: QFont) -> None:
        while len(self._label_items) < len(chosen):
            text = pg.TextItem("", color=(0, 0, 0), anchor=(0, 0), fill=pg.mkBrush(255, 255, 255, 210))
            text.setZValue(40)
            self.addItem(text, ignoreBounds=True)
            self._label_items.append(text)
        for i, text in enumerate(self._label_items):
            if i < len(chosen):
                token_id, lx, ly = chosen[i]
                text.setFont(label_font)
                text.setText(self.labels[token_id])
                text.setPos(lx, ly)
                text.show()
                self.placed_labels.append(token_id)
            else:
                text.hide()

    def _show_cluster_labels(self, chosen: list[tuple[Name, bool]], label_font: QFont) -> None:
        """A cluster's name in a box framed in its colour, a coarse group's a size up in a
        dark frame: told apart from a token's label and from each other."""
        for item in self._cluster_items[len(chosen):]:
            item.hide()
        for i, ((text, lx, ly, colour), coarse) in enumerate(chosen):
            if i == len(self._cluster_items):
                item = pg.TextItem("", color=(0, 0, 0), anchor=(0, 0))
                item.setZValue(45)
                self.addItem(item, ignoreBounds=True)
                self._cluster_items.append(item)
            item = self._cluster_items[i]
            item.fill = pg.mkBrush(255, 255, 255, 235)
            frame_colour = COARSE_COLOR if coarse else QColor(colour.red(), colour.green(), colour.blue())
            item.border = pg.mkPen(frame_colour, width=3)
            item.setFont(self._name_font(coarse) if coarse else label_font)
            item.setText(text)
            item.setPos(lx, ly)
            item.show()
            self.placed_cluster_labels.append(text)
