"""Starting the Qt application."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication

from embviz.ui import style


def make_app() -> QApplication:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("embviz")
    app.setFont(style.font(style.BASE_POINT_SIZE))
    return app


def run_app(model: str | None = None, device: str = "auto") -> int:
    import pyqtgraph as pg

    app = make_app()
    pg.setConfigOptions(antialias=True)
    from embviz.ui.main_window import MainWindow

    window = MainWindow(device=device)
    window.show()
    window.open_model(model)
    return app.exec()
