"""Starting the Qt application."""

from __future__ import annotations

import sys

from PySide6.QtCore import QCoreApplication, Qt
from PySide6.QtWidgets import QApplication

from embviz.ui import style


def make_app() -> QApplication:
    existing = QApplication.instance()
    share_gl_objects()
    app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    app.setApplicationName("embviz")
    app.setFont(style.font(style.BASE_POINT_SIZE))
    return app


def share_gl_objects() -> None:
    """Every OpenGL context in one share group (before the application exists): pyqtgraph keeps
    one shader program per item class, which a second 3-D view's own context could not use."""
    QCoreApplication.setAttribute(Qt.ApplicationAttribute.AA_ShareOpenGLContexts)


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

    def open_first() -> None:
        # A session that cannot be restored says why, and the window opens the model instead.
        if session is None or not window.open_session(session):
            window.open_model(model)
        window.build_tabs()  # the map (or its kept copy) first, the other tabs while the model opens

    window.show()
    when_exposed(window, open_first)
    return app.exec()


def when_exposed(window, callback, fallback_ms: int = 1000) -> None:
    """`callback` once, on the event loop, after the window is first on screen: the first
    job imports torch (a second or more, holding the interpreter), which must not delay
    the window's first paint. A platform that sends no expose event gets it after
    `fallback_ms`."""
    from PySide6.QtCore import QEvent, QObject, QTimer

    done: list[bool] = []

    def run() -> None:
        if not done:
            done.append(True)
            window.windowHandle().removeEventFilter(spy)
            callback()

    class Exposed(QObject):
        def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
            if event.type() == QEvent.Type.Expose and obj.isExposed():
                QTimer.singleShot(0, run)
            return False

    spy = Exposed(window)
    window.windowHandle().installEventFilter(spy)
    QTimer.singleShot(fallback_ms, run)
