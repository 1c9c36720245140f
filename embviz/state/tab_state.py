"""What makes a dataclass a tab's state: the key a session stores it under, and the limits of
its fields written beside the fields themselves (glue's `set_choices` style), so a session
reader, a request and a widget all read one home."""

from __future__ import annotations

from dataclasses import Field, field, fields
from typing import Any, Callable, TypeVar

T = TypeVar("T", bound=type)

# Every tab's state class by its key ("map", "neighbours"…): what a session is made of.
TAB_STATES: dict[str, type] = {}


def tab_state(key: str) -> Callable[[T], T]:
    """Register the decorated state class as the tab `key`'s (one class per key)."""

    def register(cls: T) -> T:
        if key in TAB_STATES and TAB_STATES[key] is not cls:
            raise ValueError(f"the tab {key!r} already has a state ({TAB_STATES[key].__name__})")
        TAB_STATES[key] = cls
        return cls

    return register


def key_of(cls: type) -> str:
    """The key the tab state class `cls` was registered under."""
    return next(key for key, state in TAB_STATES.items() if state is cls)


def ranged(default: Any, low: float, high: float) -> Any:
    """A number field and the inclusive range a saved session may hold for it."""
    return field(default=default, metadata={"range": (low, high)})


def one_of(default: str, *choices: str) -> Any:
    """A text field that holds one of `choices` (the default first among them)."""
    return field(default=default, metadata={"choices": (default, *choices)})


def _field(cls: type, name: str) -> Field[Any]:
    return next(f for f in fields(cls) if f.name == name)


def field_default(cls: type, name: str) -> Any:
    """A field's default, for a request that shares the field (the state is its one home)."""
    return _field(cls, name).default


def field_range(cls: type, name: str) -> tuple[float, float] | None:
    return _field(cls, name).metadata.get("range")


def field_choices(cls: type, name: str) -> tuple[str, ...] | None:
    return _field(cls, name).metadata.get("choices")
