"""Each model's tabs as the user left them, while other models are on screen: a model opened
again gets its own settings back, and no model's settings (a small model's cluster k, a
lesson's inputs) follow it to the next one."""

from __future__ import annotations

import json
from typing import Any

from embviz.state.session import Session, copied

KEPT_MODELS = 8  # the models a window remembers, the most recently left first to stay


def model_key(fingerprint: dict[str, Any]) -> str:
    return json.dumps(fingerprint, sort_keys=True, allow_nan=True)


class KeptTabs:
    """In memory, for the window's life (a saved session is what outlives it)."""

    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}

    def keep(self, session: Session) -> None:
        """Remember a copy of `session`'s tabs for its model, replacing what was kept for it."""
        key = model_key(session.model.fingerprint)
        self._sessions.pop(key, None)
        self._sessions[key] = copied(session)
        while len(self._sessions) > KEPT_MODELS:
            del self._sessions[next(iter(self._sessions))]

    def take(self, fingerprint: dict[str, Any]) -> Session | None:
        """The tabs kept for this model (forgotten here: the window holds them again), or None."""
        return self._sessions.pop(model_key(fingerprint), None)
