"""Launch the real window (embviz's own command line, no arguments: the default model) and
print, as JSON on the last line, the seconds from launch until the window is first exposed
("window") and until the first map is painted ("map"), with when torch was first seen
imported ("torch") and the model installed ("model"), to read a slow launch by. The launcher passes its clock reading at launch in
EMBVIZ_BENCH_LAUNCH (time.time()), so interpreter start-up and every import are counted.

    EMBVIZ_BENCH_LAUNCH=$(date +%s.%N) DISPLAY=:73 python bench/startup.py
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    launch = float(os.environ.get("EMBVIZ_BENCH_LAUNCH", time.time()))
    from embviz.cli import main as embviz_main  # what `python main.py` imports first
    import embviz.ui.app as ui_app

    seen: dict[str, float] = {}
    make_app = ui_app.make_app

    def spying_make_app():
        from PySide6.QtCore import QEvent, QObject, QTimer
        from PySide6.QtWidgets import QApplication

        app = make_app()

        class Spy(QObject):
            def eventFilter(self, obj, event):  # noqa: N802 - Qt's name
                kind = event.type()
                if kind == QEvent.Type.Expose and "window" not in seen and obj.isWindowType() and obj.isExposed():
                    seen["window"] = time.time() - launch
                elif kind == QEvent.Type.Paint and "window" in seen and "map" not in seen and obj is map_viewport():
                    if map_view() is not None and map_view().ids.size > 0:
                        seen["map"] = time.time() - launch
                return False

        def main_window():
            from embviz.ui.main_window import MainWindow

            return next((w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow)), None)

        def map_view():
            window = main_window()
            return None if window is None else window.map_panel.view

        def map_viewport():
            view = map_view()
            return None if view is None else view.viewport()

        def poll():
            window = main_window()
            if window is not None and window.generation > 0 and "model" not in seen:
                seen["model"] = time.time() - launch
            if "torch" in sys.modules and "torch" not in seen:
                seen["torch"] = time.time() - launch
            if "map" in seen and "model" in seen:  # a map drawn from the cache comes before the model: wait for both
                poller.stop()
                QTimer.singleShot(0, app.quit)

        poller = QTimer(app)
        poller.timeout.connect(poll)
        poller.start(5)
        spy = Spy(app)
        app.installEventFilter(spy)
        deadline = QTimer(app)
        deadline.setSingleShot(True)
        deadline.timeout.connect(app.quit)
        deadline.start(120_000)
        return app

    ui_app.make_app = spying_make_app
    embviz_main([])
    print(json.dumps(seen))
    return 0 if "map" in seen else 1


if __name__ == "__main__":
    sys.exit(main())
