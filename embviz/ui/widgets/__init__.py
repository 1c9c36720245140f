"""Small shared widgets, by kind: fields and switches (controls), the results table, labels and
text boxes, layouts, and the save dialog."""

from embviz.ui.widgets.controls import (
    BusyBar,
    FittedCombo,
    ShownWhenEnabled,
    TableChoice,
    WordField,
    hide_special_switch,
)
from embviz.ui.widgets.dialogs import ask_save_path
from embviz.ui.widgets.labels import MESSAGE_LINES, ElidedLabel, LinesBox, MessageLabel, WrappedLabel
from embviz.ui.widgets.layouts import (
    FRAME_MS,
    QWIDGETSIZE_MAX,
    FlowLayout,
    HeldColumn,
    RoomWatch,
    ScrollColumn,
    flow_row,
    folding,
    lay_out_again,
    next_frame,
    side_by_side,
)
from embviz.ui.widgets.results_table import ROW_HEIGHT, ResultsTable

__all__ = [
    "FRAME_MS", "MESSAGE_LINES", "QWIDGETSIZE_MAX", "ROW_HEIGHT", "BusyBar", "ElidedLabel", "FittedCombo", "FlowLayout",
    "HeldColumn", "LinesBox", "MessageLabel", "ResultsTable", "RoomWatch", "ScrollColumn", "ShownWhenEnabled",
    "TableChoice", "WordField",
    "WrappedLabel", "ask_save_path", "flow_row", "folding", "hide_special_switch", "lay_out_again", "next_frame", "side_by_side",
]
