"""Errors that reach people: each carries one plain-language line."""

from typing import Callable


class EmbvizError(Exception):
    """A problem with the user's input or machine, worded for the user."""


class Cancelled(Exception):
    """A long job stopped because the user asked it to."""


# A long job reports progress as a fraction in [0, 1] plus an optional preview
# (e.g. intermediate t-SNE coordinates). The callback raises `Cancelled` to stop it.
ProgressFn = Callable[[float, str, object], None]


def no_progress(fraction: float, stage: str = "", preview: object = None) -> None:
    """Progress callback that ignores everything."""


def first_line(exc: BaseException, limit: int = 200) -> str:
    """The first line of an exception's message (its type name when it has none)."""
    text = str(exc).strip()
    return text.splitlines()[0][:limit] if text else type(exc).__name__
