"""Pictures of a panel for slides and handouts: PNG at twice the screen's pixels, or SVG,
with the caption the panel shows printed under it."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtOpenGLWidgets import QOpenGLWidget
from PySide6.QtWidgets import QGraphicsView, QWidget

from embviz.ui import style

PNG_SCALE = 2
MARGIN = 12


def _caption_height(painter_width: int, caption: str, widget: QWidget) -> int:
    if not caption:
        return 0
    metrics = widget.fontMetrics()
    rect = metrics.boundingRect(QRect(0, 0, painter_width - 2 * MARGIN, 10_000), Qt.TextFlag.TextWordWrap, caption)
    return rect.height() + 2 * MARGIN


def _paint(painter: QPainter, widget: QWidget, caption: str, size: QSize, caption_h: int) -> None:
    painter.fillRect(QRect(QPoint(0, 0), QSize(size.width(), size.height() + caption_h)), QColor("white"))
    if isinstance(widget, QGraphicsView):  # a plot: its scene, as vectors where the painter keeps them
        widget.render(painter, QRectF(0, 0, size.width(), size.height()), widget.viewport().rect())
    elif isinstance(widget, QOpenGLWidget):  # the 3-D map: its frame as OpenGL drew it
        painter.drawImage(QRectF(0, 0, size.width(), size.height()), widget.grabFramebuffer())
    else:
        widget.render(painter, QPoint(0, 0))
    if caption:
        painter.setFont(style.font(style.BASE_POINT_SIZE))
        painter.setPen(QColor("black"))
        painter.drawText(QRect(MARGIN, size.height() + MARGIN, size.width() - 2 * MARGIN, caption_h - 2 * MARGIN),
                         Qt.TextFlag.TextWordWrap, caption)


@contextmanager
def _vector_markers(widget: QWidget) -> Iterator[None]:
    """A plot's items in pyqtgraph's export mode while it is painted: a scatter then draws
    each marker as a path. On screen it copies them from a pixmap atlas, which an SVG keeps
    as fragments of that image, read back as striped, broken markers."""
    scene = widget.scene() if isinstance(widget, QGraphicsView) else None
    items = [i for i in scene.items() if hasattr(i, "setExportMode")] if scene is not None else []
    for item in items:
        item.setExportMode(True, {"antialias": True})
    try:
        yield
    finally:
        for item in items:
            item.setExportMode(False)


def export_picture(widget: QWidget, caption: str, path: str | Path) -> Path:
    """Write `widget` (and `caption` under it) to `path`: .svg as vectors, else PNG at 2×."""
    path = Path(path)
    size = widget.size()
    caption_h = _caption_height(size.width(), caption, widget)
    if path.suffix.lower() == ".svg":
        from PySide6.QtSvg import QSvgGenerator

        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(QSize(size.width(), size.height() + caption_h))
        generator.setViewBox(QRect(0, 0, size.width(), size.height() + caption_h))
        generator.setTitle("embviz")
        painter = QPainter(generator)
        with _vector_markers(widget):
            _paint(painter, widget, caption, size, caption_h)
        painter.end()
    else:
        if path.suffix.lower() != ".png":
            path = path.with_suffix(".png")
        image = QImage(size.width() * PNG_SCALE, (size.height() + caption_h) * PNG_SCALE, QImage.Format.Format_ARGB32)
        image.setDevicePixelRatio(PNG_SCALE)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        _paint(painter, widget, caption, size, caption_h)
        painter.end()
        if not image.save(str(path)):
            raise OSError(f"could not write {path}")
    return path
