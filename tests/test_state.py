"""The Qt-free state the tabs bind to: word sets and the logits prompt."""

from __future__ import annotations

from embviz.state.tabs import PromptState, WordSetsState


def test_word_sets_follow_ticks_through_adds_late_answers_and_model_changes():
    state = WordSetsState()
    state.set_names(["weekdays", "months"])
    state.tick("weekdays", True)
    assert state.resolve("weekdays", [1, 2])
    state.set_names(["weekdays", "months", "mine"])  # a set was added: the others keep their ticks
    assert state.ticked == ["weekdays"] and state.shown() == {"weekdays": [1, 2]}
    state.tick("months", True)
    state.tick("months", False)
    assert not state.resolve("months", [3])  # its answer came after the untick: not drawn
    assert state.shown() == {"weekdays": [1, 2]}
    state.model_changed()
    assert state.ticked == ["weekdays"] and state.shown() == {}  # ids are looked up again
    state.tick("nonexistent", True)
    assert state.ticked == ["weekdays"]


def test_prompt_keeps_clicked_ids_and_text_typed_after_them():
    prompt = PromptState()
    prompt.set_text("I love pizza")
    assert prompt.request_prompt() == "I love pizza"
    prompt.append_token(10813, "�")
    assert prompt.text == "I love pizza�" and prompt.request_prompt() == ["I love pizza", 10813]
    prompt.set_text("I love pizza� and")
    assert prompt.request_prompt() == ["I love pizza", 10813, " and"]
    prompt.set_text("I love pizza� an")  # backspace in the typed tail
    assert prompt.request_prompt() == ["I love pizza", 10813, " an"]
    prompt.set_text("I like pizza� an")  # an edit before the clicked token: plain text again
    assert prompt.request_prompt() == "I like pizza� an"
    prompt.set_text("")
    assert prompt.request_prompt() == "" and prompt.parts == []


def test_the_tests_never_use_the_users_own_cache_or_settings():
    """A result must not depend on what a user's earlier runs kept, and a test run must not
    write over them: the suite's cache and settings are its own (conftest)."""
    from platformdirs import user_cache_dir, user_config_dir

    from embviz.core.cache import cache_root
    from embviz.state.settings import settings_path

    assert not cache_root().is_relative_to(user_cache_dir("embviz"))
    assert not settings_path().is_relative_to(user_config_dir("embviz"))
    assert cache_root().parent == settings_path().parent.parent  # one folder for the run, removed at its end
