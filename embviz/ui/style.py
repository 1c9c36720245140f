"""Sizes and colours chosen for a projector at the back of a lecture hall, and the text
size that scales all of them (View ▸ Text size).

Widgets take their fonts through `use_font`, which remembers the base size, so that a
change of text size re-fonts every registered widget; plots (the map, the bar charts)
re-size their own fonts and markers in `set_text_scale`."""

from __future__ import annotations

import weakref
from typing import Protocol

import shiboken6

from PySide6.QtGui import QColor, QFont
from PySide6.QtWidgets import QAbstractScrollArea, QApplication


class HasFont(Protocol):
    """A widget, or a plot's text item."""

    def setFont(self, font: QFont) -> None: ...


class FollowsScale(Protocol):
    """A widget that lays itself out again for a text size (follow_scale)."""

    def set_text_scale(self, scale: float) -> None: ...


BASE_POINT_SIZE = 13
LABEL_POINT_SIZE = 14
TEXT_SCALES = (1.0, 1.25, 1.5, 1.75, 2.0, 2.5)
POINT_COLOR = QColor(90, 110, 140, 110)
FEW_POINTS_COLOR = QColor(60, 80, 110, 230)
BACKGROUND = "w"
# Okabe & Ito's colour-blind-safe palette, darkest and most distinct first (yellow last:
# on white it needs its outline).
SET_COLORS = [
    QColor("#D55E00"), QColor("#0072B2"), QColor("#009E73"), QColor("#CC79A7"), QColor("#E69F00"),
    QColor("#56B4E9"), QColor("#000000"), QColor("#F0E442"),
]
# Colour by: token kinds in the same palette, in KIND_NAMES' order (word start, continuation,
# number, punctuation, byte piece, special); clusters cycle through it (without yellow);
# gradients (id, row length) run through cividis, which reads the same to every eye.
KIND_COLORS = [QColor("#0072B2"), QColor("#E69F00"), QColor("#009E73"), QColor("#CC79A7"), QColor("#56B4E9"),
               QColor("#D55E00")]
CLUSTER_COLORS = SET_COLORS[:7]
GRADIENT_MAP = "cividis"
GRADIENT_STEPS = 64
COLOUR_BY_ALPHA = 170  # coloured points stay under the outlined highlights drawn on top
SELECTION_COLOR = QColor("#FFFFFF")  # filled white, outlined: unlike any colour of the palette
ARROW_COLORS = [SET_COLORS[1], SET_COLORS[0]]  # B→A, then C→answer
SEARCH_COLOR = QColor("#CC79A7")
SELECT_COLOR = QColor("#000000")
BAR_LOGIT = QColor("#0072B2")
BAR_PROB = QColor("#E69F00")
BAR_KEPT = QColor("#009E73")  # after top-k / top-p, renormalised (Okabe–Ito bluish green)
NOTE_STYLE = "color: #333333;"  # information, not an error
ERROR_STYLE = "color: #b00020;"
# Scroll bars drawn from a style sheet: Fusion paints one in about 2 ms, and the lens grid's
# are repainted with every new text; these take 0.1 ms, and their darker handle reads better
# on a projector.
FLAT_SCROLL_BARS = (
    "QScrollBar { background: #e6e6e6; border: none; margin: 0; }"
    "QScrollBar:vertical { width: 14px; } QScrollBar:horizontal { height: 14px; }"
    "QScrollBar::handle { background: #8c8c8c; border-radius: 4px; margin: 2px; }"
    "QScrollBar::handle:vertical { min-height: 28px; } QScrollBar::handle:horizontal { min-width: 28px; }"
    "QScrollBar::add-line, QScrollBar::sub-line { width: 0; height: 0; border: none; }"
    "QScrollBar::add-page, QScrollBar::sub-page { background: none; }"
)

_scale = 1.0
_fonted: "weakref.WeakKeyDictionary[HasFont, tuple[float, bool]]" = weakref.WeakKeyDictionary()
_scaled: "weakref.WeakSet[FollowsScale]" = weakref.WeakSet()


def text_scale() -> float:
    return _scale


def pt(size: float) -> int:
    """A base point size at the current text size."""
    return max(1, round(size * _scale))


def font(size: float = BASE_POINT_SIZE, bold: bool = False) -> QFont:
    f = QFont()
    f.setPointSize(pt(size))
    f.setBold(bold)
    return f


def flat_scroll_bars(view: QAbstractScrollArea) -> None:
    """A scroll area's (a table's) scroll bars drawn from FLAT_SCROLL_BARS."""
    for bar in (view.horizontalScrollBar(), view.verticalScrollBar()):
        bar.setStyleSheet(FLAT_SCROLL_BARS)


def use_font(widget: HasFont, size: float = BASE_POINT_SIZE, bold: bool = False) -> None:
    """Give `widget` (or a plot's text item) a font that follows the text size."""
    _fonted[widget] = (size, bold)
    widget.setFont(font(size, bold))


def follow_scale(widget: FollowsScale) -> None:
    """`widget.set_text_scale(scale)` is called now and on every change of text size."""
    _scaled.add(widget)
    widget.set_text_scale(_scale)


def stop_following(widget: FollowsScale) -> None:
    """`widget` no longer follows the text size: a pyqtgraph view deletes its items when it is
    closed, while the view itself lives on until Python lets it go."""
    _scaled.discard(widget)


def set_text_scale(scale: float) -> float:
    """Apply a text size (clamped to 100–250 %) to the whole application."""
    global _scale
    _scale = min(max(float(scale), TEXT_SCALES[0]), TEXT_SCALES[-1])
    app = QApplication.instance()
    if isinstance(app, QApplication):
        app.setFont(font(BASE_POINT_SIZE))
    # A closed window's widgets can outlive their C++ objects a while (until Python's
    # collector breaks their cycles): those are skipped, and forgotten.
    for widget, (size, bold) in list(_fonted.items()):
        if shiboken6.isValid(widget):
            widget.setFont(font(size, bold))
        else:
            del _fonted[widget]
    for scaled in list(_scaled):
        if shiboken6.isValid(scaled):
            scaled.set_text_scale(_scale)
        else:
            _scaled.discard(scaled)
    return _scale


def step_scale(scale: float, steps: int) -> float:
    """The next text size up (steps > 0) or down from `scale`."""
    if steps > 0:
        return next((s for s in TEXT_SCALES if s > scale + 1e-9), TEXT_SCALES[-1])
    return next((s for s in reversed(TEXT_SCALES) if s < scale - 1e-9), TEXT_SCALES[0])
