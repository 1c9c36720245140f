"""The Map tab's word sets and search: ticked sets and search hits looked up by the worker and marked on the map.

A part of `MapPanel` (see panel.py), kept in a room of its own."""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog

from embviz.bridge import requests as rq
from embviz.bridge.latest import Latest
from embviz.bridge.views import WordSetView
from embviz.state.word_sets import parse_word_list
from embviz.ui import style
from embviz.ui.panels.map.host import MapHost
from embviz.ui.panels.map.names import SEARCH_SET


class WordSetsMixin(MapHost):
    def _search_edited(self) -> None:
        self.search_timer.start()

    def run_search(self) -> None:
        """Find as you type (debounced); an empty field takes the search off the map."""
        self.search_timer.stop()
        if not self.state.search:
            self.searching.forget()
            self.view.remove_word_set(SEARCH_SET)
            self.view.set_selected([])  # its rings and labels go with it
            if self._search_said and self._last_said == self._search_said:
                self.statusMessage.emit("")  # its count, or why it failed, goes too
            return
        self.searching.ask(rq.Search(pattern=self.state.search, regex=self.state.regex, substring=self.state.substring))

    def on_search(self, ids: list[int]) -> None:
        shown = self.view.on_map(ids).tolist()
        self.view.set_word_set(SEARCH_SET, shown, style.SEARCH_COLOR)
        self.view.set_selected(shown[:12])
        if self._zoom_to_search:
            self.view.zoom_to(shown)
        self._zoom_to_search = True
        more = "" if len(ids) < rq.Search.limit else f" (first {rq.Search.limit})"
        self._say_of_search(f"Search '{self.state.search}': {len(ids)} tokens{more}, {len(shown)} on this map")

    def _say_of_search(self, text: str) -> None:
        self._search_said = text
        self.statusMessage.emit(text)

    def _search_failed(self, message: str) -> None:
        self.view.remove_word_set(SEARCH_SET)  # e.g. a regex that does not parse: its old hits would mislead
        self.view.set_selected([])
        self._say_of_search(message)

    def _fill_sets(self) -> None:
        self.sets.fill(list(self.presets) + [n for n in self.settings.word_sets if n not in self.presets])

    def words_of(self, name: str) -> list[str]:
        return self.presets.get(name) or self.settings.word_sets.get(name, [])

    def show_word_set(self, name: str, on: bool = True) -> None:
        self.sets.tick(name, on)

    def _set_toggled(self, name: str, on: bool) -> None:
        if on:
            self._request_set(name)
        else:
            self.view.remove_word_set(name)

    def _request_set(self, name: str) -> None:
        if name not in self.set_lookups:
            self.set_lookups[name] = Latest(self.submit, self.on_word_set,
                                            lambda message: self.statusMessage.emit(f"{name}: {message}"))
        self.set_lookups[name].ask(rq.WordSet(name=name, words=self.words_of(name)))

    def sets_waiting(self) -> bool:
        """Whether a word set's lookup is on its way."""
        return any(lookup.waiting for lookup in self.set_lookups.values())

    def on_word_set(self, view: WordSetView) -> None:
        if not self.word_sets.resolve(view.name, view.ids):
            return  # a set unticked while its lookup was on its way
        self.view.set_word_set(view.name, view.ids, self.sets.colour_of.get(view.name, style.SET_COLORS[0]))
        if not view.ids:
            self.statusMessage.emit(f"{view.name}: none of its words is a single token in this model, so none is marked.")
        elif view.missing:
            self.statusMessage.emit(f"{view.name}: not single tokens here: {', '.join(view.missing)}")

    def add_custom_set(self) -> None:
        name, ok = QInputDialog.getText(self, "New word set", "Name of the set:")
        if not ok or not name.strip():
            return
        words, ok = QInputDialog.getMultiLineText(self, "New word set", "Words, separated by commas or new lines:")
        if not ok:
            return
        self.add_word_set(name.strip(), parse_word_list(words))

    def add_word_set(self, name: str, words: list[str]) -> None:
        """Save a set of the user's and tick it; the sets already ticked stay ticked."""
        self.settings.set_word_set(name, words)
        self.word_sets.tick(name, False)  # its words may have changed: look them up again
        self.view.remove_word_set(name)
        self._fill_sets()
        self.show_word_set(name)

    def merge_word_sets(self, sets: dict[str, list[str]]) -> str:
        """A session's own word sets join the user's list (one of the same name takes the
        session's words); a problem saving them is returned, not raised."""
        changed = {name: words for name, words in sets.items()
                   if name not in self.presets and self.settings.word_sets.get(name) != words}
        problem = ""
        for name, words in changed.items():
            try:
                self.settings.set_word_set(name, words)
            except OSError as exc:
                problem = f"The session's word sets could not be saved to your settings: {exc}"
                break
        if changed:
            self._fill_sets()
        return problem

