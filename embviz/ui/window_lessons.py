"""Help ▸ Lessons: the dock, and each step set up on its tab.

A part of `MainWindow` (see main_window.py), kept in a room of its own."""

from __future__ import annotations

from PySide6.QtCore import Qt

from embviz.bridge import requests as rq
from embviz.state.lesson_tour import LessonStep
from embviz.state.session import Session, copied
from embviz.state.tab_state import field_default
from embviz.state.tabs import MapState
from embviz.ui.window_host import WindowHost
from embviz.ui.widgets import QWIDGETSIZE_MAX


LESSONS_MAX_SHARE = 0.3  # of the window's width: the tabs keep the rest
LESSONS_SHARE = 0.28  # the width the lessons open at, under the cap
BAND_MAX_SHARE = 0.34  # of the window's height, in projector mode: the picture keeps the rest
BAND_SHARE = 0.3  # the most height the band takes for its words, under the cap


class LessonsMixin(WindowHost):
    def show_lessons(self) -> None:
        self.lessons_dock.show()
        self.lessons_dock.raise_()

    def _cap_lessons(self) -> None:
        """A side column never more than LESSONS_MAX_SHARE of the window's width; a caption
        band (projector mode) never more than BAND_MAX_SHARE of its height."""
        dock = self.lessons_dock
        if self.projector:
            dock.setMaximumSize(QWIDGETSIZE_MAX, int(self.height() * BAND_MAX_SHARE))
        else:
            dock.setMaximumSize(int(self.width() * LESSONS_MAX_SHARE), QWIDGETSIZE_MAX)

    def _size_lessons(self) -> None:
        """The lessons beside the tabs, or under them as a band in projector mode."""
        self._cap_lessons()
        if self.lessons_dock.isFloating():
            return
        if self.projector:  # as high as the step's words, up to BAND_SHARE (then they scroll)
            height = min(self.lessons.band_height(self.lessons_dock.width()), int(self.height() * BAND_SHARE))
            self.resizeDocks([self.lessons_dock], [height], Qt.Orientation.Vertical)
        else:
            width = min(self.lessons.sizeHint().width(), int(self.width() * LESSONS_SHARE))
            self.resizeDocks([self.lessons_dock], [width], Qt.Orientation.Horizontal)

    def go_to_step(self, index: int) -> None:
        """Set the app up for a lesson step: its model (opened if another is on screen),
        its tab and its inputs; the step's own numbers are asked of that model. The user's
        tabs are lent to the lesson: `end_lesson` gives them back."""
        step = self.tour.go(index)
        if self._before_lesson is None and (session := self.session_state()) is not None:
            self._before_lesson = copied(session)
        self.projector_for_lesson()
        self.show_lessons()
        self.lessons.show_step()
        if self.summary is None or self.model_source != step.model or self.load_progress.isVisible():
            self.open_model(step.model)
            self._lesson_step = step
        else:
            self._run_step(step)

    def end_lesson(self) -> None:
        """The lessons closed: the user's tabs as they were before the first step, now if
        their model is on screen, or when it next opens."""
        self.projector_after_lesson()
        before, self._before_lesson = self._before_lesson, None
        if before is None:
            return
        self._lesson_step = None
        if self.summary is not None and before.model.fingerprint == self.summary.fingerprint:
            self._give_back(before)
        else:
            self.kept_tabs.keep(before)

    def _give_back(self, before: Session) -> None:
        for key, panel in self.panels().items():
            panel.on_model(self.summary, before[key])
        self.show_tab(before.tab)

    def _run_step(self, step: LessonStep) -> None:
        """The step's inputs go into the tabs' states (the widgets follow them silently),
        then each tab it uses sends its one request."""
        setup = step.setup
        self.tabs.setCurrentWidget(self.panel_named(step.tab))
        if "logits" in setup:
            state = self.logits.state
            state.direct = False
            state.by_id = setup.get("by_id", False)
            state.hold_axis = setup.get("hold_axis", False)
            state.temperature = setup.get("temperature", 1.0)
            state.top_k = setup.get("top_k", 0)  # filters off unless the step is about them
            state.top_p = setup.get("top_p", 1.0)
            self.logits.set_text(setup["logits"])
        if "neighbours" in setup:
            state = self.neighbours.state
            state.by = setup.get("by", "cosine")
            state.word = setup["neighbours"]
            self.neighbours.run()
        if "analogy" in setup:
            state = self.analogies.state
            state.exclude_variants = False
            state.exclude_inputs = setup["exclude"]
            state.a, state.b, state.c = setup["analogy"]
            self.analogies.run()
        if "compare" in setup:
            self.lesson_compare(setup["compare"], setup["k"], setup["focus"])
        if "similarities" in setup:
            self.panel_named("similarities").show_lesson(setup["similarities"], setup["pair"], setup["pair_focus"])
        if "odd_one_out" in setup:
            self.panel_named("odd-one-out").show_words(setup["odd_one_out"])
        if "drift" in setup:
            word, sentences = setup["drift"]
            self.panel_named("drift").set_inputs(word, list(sentences))
        if step.tab == "directions":
            self.panel_named("directions").show_lesson(setup)
        if "attribution" in setup:
            self.attribution.show_lesson(setup["attribution"], setup["pinned"], *setup["head"])
        if step.tab == "map":  # the picture the text describes, whatever the user coloured by
            self.map_panel.state.colour_by = setup.get("colour_by", field_default(MapState, "colour_by"))
            self.map_panel.show_lesson_map(setup.get("dims", 2), setup.get("word_sets", ()), setup.get("turn", False))
        ids = setup.get("rows")
        if ids:
            self.map_panel.view.set_selected(list(ids))
        text = setup["logits"] if setup.get("shapes") else None
        if ids is not None or text is not None:
            self.lessons.ask(rq.LessonNumbers(ids=ids, text=text))

