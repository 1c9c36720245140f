"""The screenshot demo's rooms that sit after Compare in the tabs: Similarity, Odd one out,
Directions and Steering (embviz/ui/screenshots.py runs them)."""

from __future__ import annotations

from typing import Any

Demo = Any  # embviz.ui.screenshots.Demo, which imports this module: not imported back

DOCTOR = "The doctor said that"


def _answered(panel):
    """Whether a tab with a `shown` answer and a `message` has one or the other."""
    return lambda: panel.shown is not None or bool(panel.message.text())


def _directions_answered(panel):
    """Whether the Directions tab has its direction and its WEAT test answered, or said why not."""
    return lambda: ((panel.shown is not None or panel.message.isVisible())
                    and (panel.weat.shown is not None or bool(panel.weat.message.text())))


def directions_tab(demo: Demo) -> None:
    """directions.png: he → she with occupations placed; directions_weat.png: WEAT 8 and the
    random baseline."""
    window, panel = demo.window, demo.window.panel_named("directions")
    window.show_tab("directions")
    panel.show_lesson({"direction": ("he", "she", "doctor nurse engineer teacher programmer surgeon"), "weat": 8})
    panel.pages.setCurrentIndex(0)
    demo.wait(lambda: _directions_answered(panel)() and (panel.weat.baseline is not None
                                                         or "baseline" not in panel.weat.baseline_line.text()),
              "the direction")
    demo.save("directions")
    panel.pages.setCurrentWidget(panel.weat)
    demo.wait(lambda: "Monday" in panel.weat.baseline_line.text() or "no baseline" in panel.weat.baseline_line.text()
              or panel.weat.pair_ids is None and panel.weat.baseline is not None, "the baseline")
    demo.save("directions_weat")
    panel.pages.setCurrentIndex(0)


def judgement_tabs(demo: Demo) -> None:
    """similarities.png: WordSim-353 against both models (after Compare opened GloVe beside the
    first), ␣cup–␣coffee chosen; odd_one_out.png: breakfast cereal dinner lunch."""
    window = demo.window
    panel = window.panel_named("similarities")
    window.show_tab("similarities")
    panel.show_lesson("wordsim353", "cup mug", ("cup", "coffee"))
    demo.wait(lambda: _answered(panel)() and (panel.second is None or panel.shown_b is not None
                                               or panel.summary_b.text()), "the similarity judgements")
    demo.save("similarities")
    odd = window.panel_named("odd-one-out")
    window.show_tab("odd-one-out")
    odd.show_words("breakfast cereal dinner lunch")
    demo.wait(_answered(odd), "the odd one out")
    demo.save("odd_one_out")



def steering_tab(demo: Demo) -> None:
    """steering.png: "The doctor said that" steered he → she, α = 2 after block 10, the bars before
    and after (steering_bars.png: that page whole, past its scroll); direction_layers.png: he → she in the stream at "␣that", layer by layer."""
    window, panel = demo.window, demo.window.panel_named("steering")
    window.show_tab("steering")
    if panel.enabled:
        panel.show_lesson({"text": DOCTOR, "start": "he", "end": "she", "layer": 10, "alpha": 2.0})
    demo.wait(lambda: (panel.result is not None and panel.layers_result is not None) or bool(panel.message.text()),
              "the steering")
    demo.save("steering")
    demo.save("steering_bars", panel.content)  # the whole page: at 1024 × 700 and 200 % the bars are below the fold
    panel.pages.setCurrentIndex(1)
    demo.wait(lambda: True, "the page")
    demo.save("direction_layers")
    panel.pages.setCurrentIndex(0)
