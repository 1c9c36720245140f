"""Opening models (dialogs, recent files, drag and drop), exports and the cache.

A part of `MainWindow` (see main_window.py), kept in a room of its own."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QInputDialog, QMessageBox, QWidget

from embviz.bridge import requests as rq
from embviz.state.session import SUFFIX
from embviz.state.settings import atomic_write_text
from embviz.ui.tables import rows_to_text
from embviz.ui.export import export_picture
from embviz.ui.plots.map_view import MapView
from embviz.bridge.worker import Reply
from embviz.ui.tab_list import TABS
from embviz.ui.widgets import ask_save_path
from embviz.ui.window_host import WindowHost



def ask_folder(parent: QWidget, title: str) -> str:
    """A folder the user picks; "" when they cancel."""
    return QFileDialog.getExistingDirectory(parent, title)


def ask_hub_id(parent: QWidget, title: str, prompt: str) -> str:
    """A hub id the user types; "" when they cancel or type nothing."""
    repo, ok = QInputDialog.getText(parent, title, prompt)
    return repo.strip() if ok else ""

class FilesMixin(WindowHost):
    def export_picture(self, path: str | Path) -> Path:
        """The current tab's plot or table with its caption: .svg, else PNG at 2×."""
        widget, caption = self.tabs.currentWidget().picture()
        # A map's key too small to read on screen is hidden there: the picture prints it under the map.
        key = widget.keys_left_out() if isinstance(widget, MapView) else []
        return export_picture(widget, caption, path, key)

    def export_table(self, path: str | Path, coordinates: bool = False, table=None) -> Path | None:
        """The current tab's table (the map's coordinates on the map tab), or `table`, as CSV;
        None when there is none."""
        if table is None:
            table = (self.map_panel if coordinates else self.tabs.currentWidget()).table_rows()
        if table is None:
            return None
        path = Path(path)
        atomic_write_text(path, rows_to_text(*table))
        return path

    def _tab_slug(self) -> str:
        return TABS[self.tabs.currentIndex()].title.lower().replace(" ", "-")

    def _save_as(self, what: str, name: str, filters: str, write, title: str | None = None) -> None:
        """Ask where, write there, say how it went."""
        path = ask_save_path(self, self.settings, title or f"Export {what}", name, filters)
        if not path:
            return
        try:
            self.show_message(f"Saved {write(path)}")
        except OSError as exc:
            self.show_message(f"Could not save the {what}: {exc}")

    def export_picture_dialog(self) -> None:
        self._save_as("picture", f"embviz-{self._tab_slug()}.png", "PNG picture, 2× (*.png);;SVG drawing (*.svg)",
                      self.export_picture)

    def export_table_dialog(self, coordinates: bool = False) -> None:
        panel = self.map_panel if coordinates else self.tabs.currentWidget()
        table = panel.table_rows()  # once: the map's is every row
        if table is None:
            self.show_message("Nothing to export yet: this tab shows no table.")
            return
        what = "map-coordinates" if panel is self.map_panel else self._tab_slug()
        self._save_as("table", f"embviz-{what}.csv", "CSV table (*.csv)", lambda path: self.export_table(path, table=table))

    def export_coordinates_dialog(self) -> None:
        self.export_table_dialog(coordinates=True)

    def export_page_dialog(self) -> None:
        """The interactive page, built on the worker's long lane: the neighbours of every row take
        seconds to a minute, and the window stays responsive meanwhile."""
        if self.summary is None:
            self.show_message("Open a model first: the page is of its vocabulary.")
            return
        path = ask_save_path(self, self.settings, "Export interactive page", "embviz-page.html", "HTML page (*.html)")
        if not path:
            return
        method = self.map_panel.state.method
        # The Logits tab's prompt as typed (a clicked bar's piece is its text), else the class's usual example.
        text = "".join(shown for shown, _ in self.panel_named("logits").state.prompt.parts).strip() or rq.ExportPage.text
        request = rq.ExportPage(path=path, method=method if method in ("pca", "tsne", "umap") else "pca", text=text)
        self.show_message("Building the interactive page (the map and every token's neighbours)…")
        self.worker.submit(request, Reply(self._page_written, self._say))

    def _page_written(self, _rid: int, written: dict) -> None:
        self.show_message(f"Saved {written['path']} ({written['bytes'] / 2**20:.1f} MB, {written['rows']:,} points): "
                          "it opens in any browser, offline.")

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for source in self.settings.recent_models:
            action = QAction(source, self)
            action.triggered.connect(lambda _checked=False, s=source: self.open_model(s))
            self.recent_menu.addAction(action)
        self.recent_menu.setEnabled(bool(self.settings.recent_models))

    def open_file_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Open a checkpoint", "", "Checkpoints and word vectors (*.gguf *.safetensors *.pt *.pth *.bin *.gz *.txt *.vec "
            "*.npy *.kv *.model);;embviz sessions (*.embviz);;All files (*)")
        if path:
            self.open_path(path)

    def open_path(self, path: str) -> None:
        """A file the user picked or dropped: a saved session, or a model."""
        self.open_session(path) if path.endswith(SUFFIX) else self.open_model(path)

    def open_folder_dialog(self) -> None:
        if path := ask_folder(self, "Open a Hugging Face model folder"):
            self.open_model(path)

    def open_hub_dialog(self) -> None:
        if repo := ask_hub_id(self, "Open hub id", "Hugging Face id (from the local cache), e.g. HuggingFaceTB/SmolLM2-135M:"):
            self.open_model(repo)

    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        urls = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        if urls:
            self.open_path(urls[0])

    def ask_to_clear_cache(self) -> None:
        """First the size (from the worker), then a question, then the deletion."""
        self.worker.submit(rq.CacheSize(), Reply(self._ask_to_delete, self._say))

    def _ask_to_delete(self, _rid: int, size: int) -> None:
        box = QMessageBox(QMessageBox.Icon.Question, "Clear cache",
                          f"The cache holds {size / 2**20:,.0f} MB: tables read from GGUF and word-vector files, "
                          "and language models built for logits. Delete it? Files are read again when next opened.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.accepted.connect(lambda: self.worker.submit(rq.ClearCache(), Reply(self._cache_cleared, self._say)))
        box.open()

    def _cache_cleared(self, _rid: int, freed: int) -> None:
        self.show_message(f"Cache cleared: {freed / 2**20:,.0f} MB freed.")

    def _say(self, _rid: int, message: str) -> None:
        self.show_message(message)

