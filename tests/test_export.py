"""Pictures exported from the window (embviz.ui.export)."""

from __future__ import annotations

from embviz.ui import style


def test_svg_export_draws_each_word_set_marker_as_one_whole_path(qtbot, tmp_path):
    import xml.etree.ElementTree as ET

    import numpy as np

    from embviz.ui.export import export_picture
    from embviz.ui.plots.map_view import MapView

    view = MapView()
    qtbot.addWidget(view)
    view.resize(600, 400)
    view.show()
    n = 200
    view.set_labels([f"#{i}" for i in range(n)])
    view.set_points(np.arange(n), np.random.default_rng(1).normal(size=(n, 2)).astype(np.float32))
    view.set_word_set("weekdays", list(range(7)), style.SET_COLORS[0])
    qtbot.waitExposed(view)
    root = ET.parse(export_picture(view, "seven weekdays", tmp_path / "map.svg")).getroot()
    svg = "{http://www.w3.org/2000/svg}"
    # Copied from a pixmap atlas, every marker was an <image> fragment of it.
    assert not list(root.iter(f"{svg}image"))
    colour = style.SET_COLORS[0].name().lower()
    markers = [g for g in root.iter(f"{svg}g")
               if g.get("fill", "").lower() == colour and g.find(f"{svg}path") is not None]
    assert len(markers) >= 7  # the seven markers (and the legend's sample)
    assert all(len(g.findall(f"{svg}path")) == 1 for g in markers)


# --- the same picture in every reader, and the map's key ------------------------------------

def _coarse(image) -> tuple[float, float, float, float]:
    """Mean red, green, blue (0–255) and the share of pixels that are not near white."""
    import numpy as np
    from PySide6.QtGui import QImage

    image = image.convertToFormat(QImage.Format.Format_RGB32)
    pixels = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(image.height(), image.bytesPerLine())
    bgr = pixels[:, :image.width() * 4].reshape(image.height(), image.width(), 4)[:, :, :3].astype(np.float64)
    return (*bgr[:, :, ::-1].reshape(-1, 3).mean(axis=0), float((bgr.min(axis=2) < 235).mean()))


def _map_with_kinds(qtbot, width: int = 600, height: int = 400):
    import numpy as np

    from embviz.ui.plots.map_view import MapView

    view = MapView()
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    n = 300
    view.set_labels([f"#{i}" for i in range(n)])
    view.set_points(np.arange(n), np.random.default_rng(1).normal(size=(n, 2)).astype(np.float32))
    view.set_word_set("weekdays", list(range(7)), style.SET_COLORS[0])
    view.set_colours(np.arange(n) % 3, style.KIND_COLORS[:3], [(style.KIND_COLORS[i], f"kind {i}") for i in range(3)])
    qtbot.waitExposed(view)
    qtbot.wait(50)
    return view


def test_the_svg_draws_in_rsvg_and_qt_as_the_png_does(qtbot, tmp_path):
    import shutil
    import subprocess

    import pytest
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    from embviz.ui.export import export_picture

    view = _map_with_kinds(qtbot)
    png = QImage(str(export_picture(view, "seven weekdays", tmp_path / "map.png")))
    svg = export_picture(view, "seven weekdays", tmp_path / "map.svg")
    text = svg.read_text(encoding="utf-8")
    assert "vector-effect" not in text  # only Qt honours it: coordinates are written already transformed
    # Qt's own reader, at the PNG's size.
    drawn = QImage(png.size(), QImage.Format.Format_RGB32)
    drawn.fill(0xFFFFFFFF)
    painter = QPainter(drawn)
    QSvgRenderer(str(svg)).render(painter)
    painter.end()
    want = _coarse(png)
    assert 0.03 < want[3] < 0.5  # a picture, neither blank nor solid

    def alike(reader: str, image) -> None:
        got = _coarse(image)
        assert image.size() == png.size(), reader
        assert all(abs(g - w) < 8 for g, w in zip(got[:3], want[:3])), (reader, got, want)
        assert abs(got[3] - want[3]) < 0.3 * want[3], (reader, got, want)

    alike("Qt", drawn)
    if shutil.which("rsvg-convert") is None:
        pytest.skip("rsvg-convert is not installed (apt-get install librsvg2-bin): only Qt's reading was compared")
    out = tmp_path / "rsvg.png"
    subprocess.run(["rsvg-convert", "-w", str(png.width()), "-h", str(png.height()), "-b", "white", str(svg),
                    "-o", str(out)], check=True, timeout=60)
    alike("rsvg-convert", QImage(str(out)))


def test_a_png_of_a_map_too_small_for_its_key_prints_the_key_under_it(qtbot, tmp_path):
    import numpy as np
    from PySide6.QtGui import QImage

    from embviz.ui.export import export_picture

    style.set_text_scale(1.5)
    try:
        view = _map_with_kinds(qtbot, 200, 90)  # a map squeezed beside its controls on a small screen
        qtbot.waitUntil(lambda: not view.colour_legend.isVisible())  # too small to read in the view
        left_out = view.keys_left_out()
        assert [name for _, name in left_out][-3:] == ["kind 0", "kind 1", "kind 2"]
        assert view.legend.isVisible() or left_out[0][1] == "weekdays (7)"  # the sets' key, here or under
        image = QImage(str(export_picture(view, "by kind", tmp_path / "map.png", left_out)))
        below = image.copy(0, view.height() * 2, image.width(), image.height() - view.height() * 2)
        below = below.convertToFormat(QImage.Format.Format_RGB32)
        pixels = np.frombuffer(below.constBits(), dtype=np.uint8).reshape(below.height(), below.bytesPerLine())
        bgr = pixels[:, :below.width() * 4].reshape(below.height(), below.width(), 4)[:, :, :3]
        for colour, name in left_out:
            swatch = np.array([colour.blue(), colour.green(), colour.red()])
            assert (np.abs(bgr.astype(int) - swatch).max(axis=2) <= 2).sum() >= 16, name  # its swatch, under the map
    finally:
        style.set_text_scale(1.0)


def test_export_dialogs_start_in_the_folder_last_saved_to(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    from embviz.state.settings import Settings

    from helpers import wait_for

    window.open_model("spells")
    wait_for(qtbot, lambda: "lesson:spells" in window.model_label.full_text, 30_000)
    window.tabs.setCurrentWidget(window.map_panel)
    folder = tmp_path / "slides"
    folder.mkdir()
    asked: list[str] = []

    def save_to(_parent, _title, start, _filters):
        asked.append(start)
        return str(folder / "picture.png"), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_to)
    window.export_picture_dialog()
    assert (folder / "picture.png").is_file() and not asked[0].startswith(str(folder))
    window.export_picture_dialog()
    assert asked[1].startswith(str(folder))  # the second dialog opens where the first saved
    assert Settings(window.settings.path).export_folder == folder  # and so does the next session's


def test_every_tab_offers_its_table_as_csv():
    from embviz.ui.tab_list import TABS

    for spec in TABS:
        panel = spec.panel()
        assert callable(getattr(panel, "table_rows", None)) and callable(getattr(panel, "picture", None)), spec.title


def test_a_heat_maps_cells_stay_sharp_in_rsvg(qtbot, tmp_path):
    import shutil
    import subprocess

    import numpy as np
    import pytest
    from PySide6.QtGui import QImage

    from embviz.ui.export import export_picture
    from embviz.ui.plots.heat_map import DIVERGING, HeatMap

    if shutil.which("rsvg-convert") is None:
        pytest.skip("rsvg-convert is not installed (apt-get install librsvg2-bin)")
    heat = HeatMap(DIVERGING)
    qtbot.addWidget(heat)
    heat.resize(400, 300)
    heat.show()
    heat.set_cells(np.array([[-2.0, 2.0], [2.0, -2.0]], dtype=np.float32), ["a", "b"], ["x", "y"], (-2.0, 2.0))
    qtbot.waitExposed(heat)
    qtbot.wait(50)
    svg = export_picture(heat, "", tmp_path / "heat.svg")
    out = tmp_path / "heat.png"
    subprocess.run(["rsvg-convert", "-w", str(heat.width()), "-h", str(heat.height()), "-b", "white", str(svg),
                    "-o", str(out)], check=True, timeout=60)
    image = QImage(str(out))
    cells = heat.image.sceneBoundingRect()
    y = round(cells.top() + cells.height() / 4)  # through the first row: blue, then red
    xs = range(round(cells.left()) + 2, round(cells.right()) - 2)
    ends = [image.pixelColor(xs[0], y), image.pixelColor(xs[-1], y)]
    between = [image.pixelColor(x, y) for x in xs]
    # Each pixel one of the two cells' colours: smoothed, half the row was a blend of them.
    blends = [c for c in between if min(max(abs(c.red() - e.red()), abs(c.green() - e.green()), abs(c.blue() - e.blue()))
                                        for e in ends) > 12]
    assert len(blends) <= 3, len(blends)
