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
