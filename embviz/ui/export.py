"""Pictures of a panel for slides and handouts: PNG at twice the screen's pixels, or SVG,
with the caption the panel shows printed under it.

An SVG is written with its coordinates already transformed: Qt writes a plot's items in
groups scaled by the view (×268 on a map) with `vector-effect="non-scaling-stroke"` to keep
their outlines thin, which only Qt honours; rsvg-convert and ImageMagick scaled the outlines
with the group and drew a solid page. Flattened, the file draws alike everywhere."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QPoint, QRect, QRectF, QSize, Qt
import pyqtgraph as pg
from PySide6.QtGui import QColor, QFontMetrics, QFontMetricsF, QImage, QImageWriter, QPainter, QPen
from PySide6.QtOpenGLWidgets import QOpenGLWidget
from PySide6.QtWidgets import QAbstractGraphicsShapeItem, QGraphicsItem, QGraphicsView, QWidget

from embviz.ui import style

PNG_SCALE = 2
MARGIN = 12
SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
ET.register_namespace("", SVG)
ET.register_namespace("xlink", XLINK)
PNG_DATA = "data:image/png;base64,"
NON_SCALING = "non-scaling-stroke"
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_MATRIX = re.compile(r"matrix\(([^)]*)\)")

Matrix = tuple[float, float, float, float, float, float]  # SVG's (a, b, c, d, e, f)


def _apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


def _fmt(v: float) -> str:
    return f"{v:.3f}".rstrip("0").rstrip(".") or "0"


def _path_data(m: Matrix, data: str) -> str | None:
    """`data` (absolute M, L, C, Q and Z, as Qt writes them) with every point moved by `m`;
    None for anything else (relative commands, arcs), which is left to its group's transform."""
    out: list[str] = []
    for command, args in re.findall(r"([A-Za-z])([^A-Za-z]*)", data):
        if command not in "MLCQZ":
            return None
        numbers = [float(n) for n in _NUMBER.findall(args)]
        if len(numbers) % 2:
            return None
        points = [_apply(m, numbers[i], numbers[i + 1]) for i in range(0, len(numbers), 2)]
        out.append(command + " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in points))
    return " ".join(out)


def _flattened(m: Matrix, element: ET.Element) -> bool:
    """Write `element`'s geometry through `m`; False when it cannot be (text, images, arcs)."""
    tag = element.tag.removeprefix(f"{{{SVG}}}")
    a, b, c, d, _, _ = m
    if tag == "path":
        data = _path_data(m, element.get("d", ""))
        if data is None:
            return False
        element.set("d", data)
    elif tag in ("polyline", "polygon"):
        numbers = [float(n) for n in _NUMBER.findall(element.get("points", ""))]
        element.set("points", " ".join(f"{_fmt(x)},{_fmt(y)}" for x, y in
                                       (_apply(m, numbers[i], numbers[i + 1]) for i in range(0, len(numbers) - 1, 2))))
    elif tag == "rect" and not element.get("rx") and not element.get("ry"):
        x, y = float(element.get("x", 0)), float(element.get("y", 0))
        w, h = float(element.get("width", 0)), float(element.get("height", 0))
        corners = [_apply(m, px, py) for px, py in ((x, y), (x + w, y), (x + w, y + h), (x, y + h))]
        element.tag = f"{{{SVG}}}path"
        for name in ("x", "y", "width", "height"):
            element.attrib.pop(name, None)
        element.set("d", "M" + " L".join(f"{_fmt(px)},{_fmt(py)}" for px, py in corners) + " Z")
    elif tag == "line":
        x1, y1 = _apply(m, float(element.get("x1", 0)), float(element.get("y1", 0)))
        x2, y2 = _apply(m, float(element.get("x2", 0)), float(element.get("y2", 0)))
        for name, value in (("x1", x1), ("y1", y1), ("x2", x2), ("y2", y2)):
            element.set(name, _fmt(value))
    elif tag in ("ellipse", "circle") and b == 0 and c == 0:
        cx, cy = _apply(m, float(element.get("cx", 0)), float(element.get("cy", 0)))
        element.set("cx", _fmt(cx))
        element.set("cy", _fmt(cy))
        if tag == "circle" and abs(a) != abs(d):
            return False
        for name, scale in (("r", abs(a)), ("rx", abs(a)), ("ry", abs(d))):
            if element.get(name) is not None:
                element.set(name, _fmt(float(element.get(name, 0)) * scale))
    else:
        return False
    element.attrib.pop("vector-effect", None)
    return True


def _sharpen(m: Matrix, image: ET.Element) -> None:
    """A small picture shown large (a heat map's 30 × 9 cells) given a pixel per pixel it is
    drawn at, copied as Qt draws it: readers that smooth a scaled image blurred its cells."""
    a, b, c, d, _, _ = m
    key = f"{{{XLINK}}}href" if image.get(f"{{{XLINK}}}href") else "href"
    href = image.get(key) or ""
    if b or c or not href.startswith(PNG_DATA):
        return
    picture = QImage.fromData(QByteArray.fromBase64(href[len(PNG_DATA):].encode("ascii")))
    width, height = float(image.get("width", 0)) * abs(a), float(image.get("height", 0)) * abs(d)
    if picture.isNull() or width < 2 * picture.width() or height < 2 * picture.height() or width * height > 4e6:
        return
    picture = picture.scaled(round(width), round(height), Qt.AspectRatioMode.IgnoreAspectRatio,
                             Qt.TransformationMode.FastTransformation)
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    QImageWriter(buffer, QByteArray(b"PNG")).write(picture)
    image.set(key, PNG_DATA + bytes(data.toBase64().data()).decode("ascii"))


def flatten_svg(text: str) -> str:
    """Qt's SVG with each group's transform written into its shapes' coordinates, where the
    group draws thin outlines (non-scaling strokes) or none: then no reader needs
    `vector-effect`. What cannot be moved (text, images) keeps the transform in a group of its own."""
    root = ET.fromstring(text)
    for group in list(root.iter(f"{{{SVG}}}g")):
        found = _MATRIX.fullmatch(group.get("transform", "").strip())
        if found is None:
            continue
        values = [float(v) for v in _NUMBER.findall(found.group(1))]
        if len(values) != 6 or "url(" in group.get("fill", ""):
            continue
        m: Matrix = (values[0], values[1], values[2], values[3], values[4], values[5])
        children = list(group)
        strokes = group.get("stroke", "none") != "none"
        # A scaling outline would need its width scaled too: such a group keeps its transform.
        if strokes and any(child.get("vector-effect") != NON_SCALING for child in children
                           if child.tag.removeprefix(f"{{{SVG}}}") in ("path", "rect", "polyline", "polygon", "line",
                                                                         "ellipse", "circle")):
            continue
        del group.attrib["transform"]
        for index, child in enumerate(children):
            if child.tag == f"{{{SVG}}}image":
                _sharpen(m, child)
            if not _flattened(m, child):
                kept = ET.Element(f"{{{SVG}}}g", {"transform": f"matrix({','.join(_fmt(v) for v in m)})"})
                group.remove(child)
                kept.append(child)
                group.insert(index, kept)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def _caption_height(painter_width: int, caption: str) -> int:
    if not caption:
        return 0
    # Measured in the font it is drawn in: the widget's own cut the caption's last line.
    metrics = QFontMetrics(style.font(style.BASE_POINT_SIZE))
    rect = metrics.boundingRect(QRect(0, 0, painter_width - 2 * MARGIN, 10_000), Qt.TextFlag.TextWordWrap, caption)
    return rect.height() + 2 * MARGIN


def _key_layout(width: int, key: list[tuple[QColor, str]]) -> tuple[list[tuple[QRectF, QRectF, QColor, str]], int]:
    """Each key entry's swatch and text, in rows as wide as the picture, and their height."""
    font = style.font(style.BASE_POINT_SIZE)
    metrics = QFontMetricsF(font)
    line = metrics.ascent() + metrics.descent()
    swatch = round(line * 0.7)
    placed, x, y = [], float(MARGIN), float(MARGIN)
    for colour, name in key:
        w = swatch + MARGIN / 2 + metrics.horizontalAdvance(name)
        if x > MARGIN and x + w > width - MARGIN:
            x, y = float(MARGIN), y + line + MARGIN / 2
        placed.append((QRectF(x, y + (line - swatch) / 2, swatch, swatch),
                       QRectF(x + swatch + MARGIN / 2, y, w - swatch - MARGIN / 2 + 1, line), colour, name))
        x += w + 2 * MARGIN
    return placed, (round(y + line + MARGIN) if key else 0)


def _paint(painter: QPainter, widget: QWidget, caption: str, size: QSize, caption_h: int,
           key: list[tuple[QColor, str]]) -> None:
    placed, key_h = _key_layout(size.width(), key)
    painter.fillRect(QRect(QPoint(0, 0), QSize(size.width(), size.height() + key_h + caption_h)), QColor("white"))
    if isinstance(widget, QGraphicsView):  # a plot: its scene, as vectors where the painter keeps them
        widget.render(painter, QRectF(0, 0, size.width(), size.height()), widget.viewport().rect())
    elif isinstance(widget, QOpenGLWidget):  # the 3-D map: its frame as OpenGL drew it
        painter.drawImage(QRectF(0, 0, size.width(), size.height()), widget.grabFramebuffer())
    else:
        widget.render(painter, QPoint(0, 0))
    painter.setFont(style.font(style.BASE_POINT_SIZE))
    for swatch, text, colour, name in placed:
        painter.fillRect(swatch.translated(0, size.height()), colour)
        painter.setPen(QColor("black"))
        painter.drawRect(swatch.translated(0, size.height()))
        painter.drawText(text.translated(0, size.height()), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, name)
    if caption:
        painter.setPen(QColor("black"))
        painter.drawText(QRect(MARGIN, size.height() + key_h + MARGIN, size.width() - 2 * MARGIN, caption_h - 2 * MARGIN),
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


def _pen_of(item: QGraphicsItem) -> QPen | None:
    """The pen a plot's line, shape or label frame is drawn with; None for a scatter, whose
    markers the 2× painter scales already (they are drawn in the painter's pixels)."""
    if isinstance(item, pg.PlotCurveItem):
        pen = item.opts["pen"]
        return pen if isinstance(pen, QPen) else None
    if isinstance(item, pg.TextItem):
        return item.border
    if isinstance(item, QAbstractGraphicsShapeItem):  # an arrow's head, a key's frame
        return item.pen()
    return None


def _set_pen(item: QGraphicsItem, pen: QPen) -> None:
    if isinstance(item, pg.PlotCurveItem):
        item.setPen(pen)
    elif isinstance(item, pg.TextItem):
        item.border = pen
    elif isinstance(item, QAbstractGraphicsShapeItem):
        item.setPen(pen)


@contextmanager
def _scaled_pens(widget: QWidget, scale: float) -> Iterator[None]:
    """A plot's cosmetic pens `scale` times as wide while it is painted at `scale`× (the PNG):
    a cosmetic width is in the device's pixels, so at 2× the analogy's arrows, the leader
    lines and the names' frames came out half as thick, against the picture, as on screen."""
    scene = widget.scene() if isinstance(widget, QGraphicsView) else None
    kept: list[tuple[QGraphicsItem, QPen]] = []
    for item in scene.items() if scene is not None else []:
        pen = _pen_of(item)
        if pen is None or not pen.isCosmetic() or pen.style() == Qt.PenStyle.NoPen:
            continue
        wider = QPen(pen)
        wider.setWidthF(max(pen.widthF(), 1.0) * scale)  # width 0 is one pixel wide
        kept.append((item, pen))
        _set_pen(item, wider)
    try:
        yield
    finally:
        for item, pen in kept:
            _set_pen(item, pen)


def export_picture(widget: QWidget, caption: str, path: str | Path, key: list[tuple[QColor, str]] | None = None) -> Path:
    """Write `widget` (and under it `key`'s entries, then `caption`) to `path`: .svg as
    vectors, else PNG at 2×."""
    path = Path(path)
    key = list(key or [])
    size = widget.size()
    caption_h = _caption_height(size.width(), caption)
    height = size.height() + _key_layout(size.width(), key)[1] + caption_h
    if path.suffix.lower() == ".svg":
        from PySide6.QtSvg import QSvgGenerator

        generator = QSvgGenerator()
        generator.setFileName(str(path))
        generator.setSize(QSize(size.width(), height))
        generator.setViewBox(QRect(0, 0, size.width(), height))
        generator.setResolution(widget.logicalDpiX())  # a point as many pixels as on screen: text at its size
        generator.setTitle("embviz")
        painter = QPainter(generator)
        with _vector_markers(widget):
            _paint(painter, widget, caption, size, caption_h, key)
        painter.end()
        path.write_text(flatten_svg(path.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        if path.suffix.lower() != ".png":
            path = path.with_suffix(".png")
        image = QImage(size.width() * PNG_SCALE, height * PNG_SCALE, QImage.Format.Format_ARGB32)
        image.setDevicePixelRatio(PNG_SCALE)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        with _scaled_pens(widget, PNG_SCALE):
            _paint(painter, widget, caption, size, caption_h, key)
        painter.end()
        if not image.save(str(path)):
            raise OSError(f"could not write {path}")
    return path
