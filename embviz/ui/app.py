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


def install_excepthook(window) -> None:
    """A bug in a slot becomes a message in the status bar; the app stays usable."""
    import traceback

    def hook(exc_type, exc, tb) -> None:
        traceback.print_exception(exc_type, exc, tb)
        window.show_message(f"Unexpected error: {exc_type.__name__}: {exc}", 20000)

    sys.excepthook = hook


def run_app(model: str | None = None, device: str = "auto", session: str | None = None) -> int:
    import pyqtgraph as pg

    app = make_app()
    pg.setConfigOptions(antialias=True)
    from embviz.ui.main_window import MainWindow

    window = MainWindow(device=device)
    install_excepthook(window)
    window.show()
    # A session that cannot be restored says why, and the window opens the model instead.
    if session is None or not window.open_session(session):
        window.open_model(model)
    return app.exec()
