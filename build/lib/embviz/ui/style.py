"""Sizes and colours chosen for a projector at the back of a lecture hall."""

from PySide6.QtGui import QColor, QFont

BASE_POINT_SIZE = 13
LABEL_POINT_SIZE = 14
POINT_COLOR = QColor(90, 110, 140, 110)
BACKGROUND = "w"
SET_COLORS = [
    QColor("#d62728"), QColor("#1f77b4"), QColor("#2ca02c"), QColor("#ff7f0e"), QColor("#9467bd"),
    QColor("#8c564b"), QColor("#e377c2"), QColor("#17becf"), QColor("#bcbd22"), QColor("#7f7f7f"),
]
SEARCH_COLOR = QColor("#ff00aa")
SELECT_COLOR = QColor("#000000")
BAR_LOGIT = QColor("#1f77b4")
BAR_PROB = QColor("#ff7f0e")


def font(size: int = BASE_POINT_SIZE, bold: bool = False) -> QFont:
    f = QFont()
    f.setPointSize(size)
    f.setBold(bold)
    return f
