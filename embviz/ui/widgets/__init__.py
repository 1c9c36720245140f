"""Small shared widgets: fields, tables, labels, layouts and the save dialog."""

from embviz.ui.widgets.layouts import (
    FRAME_MS,
    MESSAGE_LINES,
    QWIDGETSIZE_MAX,
    ROW_HEIGHT,
    BusyBar,
    ElidedLabel,
    FittedCombo,
    FlowLayout,
    HeldColumn,
    LinesBox,
    MessageLabel,
    ResultsTable,
    RoomWatch,
    ScrollColumn,
    ShownWhenEnabled,
    WordField,
    WrappedLabel,
    ask_save_path,
    flow_row,
    folding,
    hide_special_switch,
    lay_out_again,
    next_frame,
    side_by_side,
)

__all__ = [
    "FRAME_MS", "MESSAGE_LINES", "QWIDGETSIZE_MAX", "ROW_HEIGHT", "BusyBar", "ElidedLabel", "FittedCombo", "FlowLayout",
    "HeldColumn", "LinesBox", "MessageLabel", "ResultsTable", "RoomWatch", "ScrollColumn", "ShownWhenEnabled", "WordField",
    "WrappedLabel", "ask_save_path", "flow_row", "folding", "hide_special_switch", "lay_out_again", "next_frame", "side_by_side",
]
