"""The interactive page (`embviz export-html`, File ▸ Export interactive page…): what the
file holds, that it fetches nothing, and, in headless Chromium offline, that it works."""

from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path

import numpy as np
import pytest

from embviz.bridge import requests as rq
from embviz.bridge.handlers import run_request
from embviz.core import EmbvizError
from embviz.core.export_page import parse_views, size_bound
from embviz.core.page_template import plotly_script

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def page_data(html: str) -> dict:
    found = re.search(r'<script type="application/json" id="embviz-data">(.*?)</script>', html, re.S)
    assert found, "the page's data element is missing"
    return json.loads(found.group(1))


def decode(b64: str, dtype: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(b64), dtype=np.dtype(dtype).newbyteorder("<"))


@pytest.fixture(scope="module")
def smol_page(default_model, tmp_path_factory) -> tuple[Path, str, dict]:
    path = tmp_path_factory.mktemp("page") / "smollm2.html"
    written = run_request(default_model, rq.ExportPage(path=str(path), text="The capital of France is"))
    assert written["rows"] == default_model.vocab_size and written["bytes"] == path.stat().st_size
    html = path.read_text(encoding="utf-8")
    return path, html, page_data(html)


def test_the_page_holds_every_row(smol_page, default_model):
    _, _, data = smol_page
    m = data["map"]
    assert m["rows"] == len(m["labels"]) == 49_152 == default_model.vocab_size
    assert decode(m["x"], "float32").size == decode(m["y"], "float32").size == decode(m["kinds"], "uint8").size == 49_152
    assert np.array_equal(decode(m["ids"], "int32"), np.arange(49_152))
    assert m["labels"][default_model.vocab.resolve(" Paris")] == "␣Paris"
    # What the page says it is: the name, the fingerprint, the map's faithfulness caption.
    assert data["model"] == default_model.name and data["fingerprint"]["vocab_size"] == 49_152
    assert "keeps" in m["caption"] and "nearest neighbours" in m["caption"] and "PCA of 49,152 rows" in m["caption"]
    assert data["logits"]["path"] == "full" and len(data["logits"]["bars"]) == 10


def test_stored_neighbours_are_the_neighbours_request(smol_page, default_model):
    _, _, data = smol_page
    nb = data["map"]["neighbours"]
    k = nb["k"]
    positions = decode(nb["positions"], "int32").reshape(-1, k)
    cosines = decode(nb["thousandths"], "int16").reshape(-1, k) / 1000
    assert k == 10 and positions.shape == (49_152, 10)
    vocab = default_model.vocab
    for token in (vocab.resolve(" Paris"), vocab.resolve(" king"), 1000, 30_000):
        view = run_request(default_model, rq.Neighbours(query=token, k=10, hide_special=False, centered=False, by="cosine"))
        assert positions[token].tolist() == [h.id for h in view.hits]
        assert np.allclose(cosines[token], [h.score for h in view.hits], atol=0.0006)


def test_the_page_fetches_nothing(smol_page):
    _, html, _ = smol_page
    assert not re.search(r"<script[^>]*\bsrc\s*=", html, re.I)
    assert not re.search(r"<link[^>]*\bhref\s*=", html, re.I)
    assert not re.search(r"<(img|iframe)[^>]*\bsrc\s*=\s*[\"']?https?://", html, re.I)
    assert "cdn.plot.ly" not in html.split("<script>", 1)[0]


def test_a_label_cannot_end_the_data_script():
    from embviz.core.export_page import payload_json

    text = payload_json({"labels": ["</script><script>alert(1)</script>", "<!--"]})
    assert "<" not in text and json.loads(text)["labels"][1] == "<!--"


def test_the_size_bound_holds(smol_page):
    path, _, _ = smol_page
    script = len(plotly_script().encode("utf-8"))
    assert path.stat().st_size <= size_bound(49_152, script)
    assert path.stat().st_size < 12 * 2**20  # what docs/sessions-and-export.md states


def test_views_are_checked_and_a_map_alone_has_no_bars(toy4, tmp_path):
    assert parse_views("neighbors, map") == ("neighbours", "map")
    for wrong in ("", "map,pictures", "neighbours"):
        with pytest.raises(EmbvizError):
            parse_views(wrong)
    path = tmp_path / "toy4.html"
    run_request(toy4, rq.ExportPage(path=str(path), views=("map",)))
    data = page_data(path.read_text(encoding="utf-8"))
    assert data["map"]["rows"] == toy4.vocab_size and "neighbours" not in data["map"] and "logits" not in data


def test_the_command_line_writes_the_page(tmp_path, capsys):
    from embviz.cli import main

    path = tmp_path / "spells.html"
    assert main(["--model", "spells", "export-html", "--out", str(path), "--views", "map,neighbours", "--json"]) == 0
    written = json.loads(capsys.readouterr().out)
    data = page_data(path.read_text(encoding="utf-8"))
    assert written["rows"] == data["map"]["rows"] > 0 and data["map"]["neighbours"]["k"] >= 1


def _dark_pixels(png: bytes) -> int:
    """Pixels of a screenshot darker than the plot's white (Qt reads the PNG: no image library needed)."""
    from PySide6.QtGui import QImage

    image = QImage.fromData(png).convertToFormat(QImage.Format.Format_Grayscale8)
    width, height, stride = image.width(), image.height(), image.bytesPerLine()
    pixels = np.frombuffer(image.constBits(), dtype=np.uint8, count=stride * height).reshape(height, stride)[:, :width]
    return int((pixels < 235).sum())


def _browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("the playwright package is not installed (pip install playwright)")
    return sync_playwright


def test_the_page_works_offline_in_chromium(smol_page, default_model, tmp_path):
    sync_playwright = _browser()
    path, _, _ = smol_page
    fetched: list[str] = []

    def only_files(route) -> None:
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            fetched.append(route.request.url)
            route.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.route("**/*", only_files)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(path.as_uri(), wait_until="load", timeout=60_000)
            page.wait_for_function("window.embviz && window.embviz.gd && window.embviz.gd._fullLayout", timeout=60_000)
            page.wait_for_timeout(1500)  # WebGL draws a frame after newPlot returns
            assert not errors and not fetched

            # The points are drawn: the plot area has many more dark pixels with them than without them.
            drawn = _dark_pixels(page.locator("#map").screenshot())
            page.evaluate("Plotly.restyle(window.embviz.gd, {visible: 'legendonly'})")
            page.wait_for_timeout(500)
            bare = _dark_pixels(page.locator("#map").screenshot())
            page.evaluate("Plotly.restyle(window.embviz.gd, {visible: true})")
            page.wait_for_timeout(500)
            assert drawn - bare > 20_000, (drawn, bare)

            paris = default_model.vocab.resolve(" Paris")
            # Hover a point: its label shows in Plotly's hover box.
            label = page.evaluate("""(i) => {
                const e = window.embviz;
                let t = -1, j = -1;
                e.traceMembers.forEach((m, n) => { const at = m.indexOf(i); if (at >= 0) { t = n; j = at; } });
                // At the point's own place in its own trace (a WebGL trace finds its point by position).
                Plotly.Fx.hover(e.gd, [{curveNumber: t, xval: e.x[i], yval: e.y[i]}], 'xy');
                const box = document.querySelector('.hoverlayer .hovertext');
                return box ? box.textContent : null;
            }""", paris)
            assert label is not None and "␣Paris" in label

            # Click a point: its ten neighbours are listed beside the map.
            expected = [h.token for h in run_request(default_model, rq.Neighbours(query=paris, k=10, hide_special=False)).hits]
            listed = page.evaluate("""(i) => {
                const e = window.embviz;
                let t = -1, j = -1;
                e.traceMembers.forEach((m, n) => { const at = m.indexOf(i); if (at >= 0) { t = n; j = at; } });
                e.gd.emit('plotly_click', {points: [{curveNumber: t, pointIndex: j, pointNumber: j}]});
                return Array.from(document.querySelectorAll('#neighbours td.token')).map(td => td.textContent);
            }""", paris)
            assert listed == expected

            # Search: type Paris, press Enter, ␣Paris is found and zoomed to.
            page.fill("#search", "Paris")
            page.press("#search", "Enter")
            page.wait_for_timeout(300)
            assert "␣Paris" in page.inner_text("#search-status")
            assert page.inner_text("#neighbours .query") == "␣Paris"
            ranges = page.evaluate("[window.embviz.gd.layout.xaxis.range, window.embviz.x[%d]]" % paris)
            assert ranges[0][0] <= ranges[1] <= ranges[0][1]
            assert page.locator("#logits .bars path").count() == 10  # the next-token bars
            assert not errors and not fetched
        finally:
            browser.close()


def test_the_window_exports_the_page_off_its_thread(qtbot, window, tmp_path, monkeypatch):
    from helpers import menu_action, wait_for

    path = tmp_path / "spells.html"
    monkeypatch.setattr("embviz.ui.window_files.ask_save_path", lambda *args: str(path))
    window.open_model("spells")
    wait_for(qtbot, lambda: window.summary is not None and window.map_panel.view.ids.size == 5, 30_000)
    menu_action(window.menuBar(), "Export interactive page").trigger()
    assert "Building the interactive page" in window.message.full_text
    wait_for(qtbot, lambda: "opens in any browser, offline" in window.message.full_text, 60_000)
    data = page_data(path.read_text(encoding="utf-8"))
    assert data["map"]["rows"] == 5 and data["model"] == window.summary.info["name"]
