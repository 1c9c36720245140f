"""The paper's ten WEAT tests as shipped data (assets/weat/weat_tests.json): no torch, no
numpy, so a window may list them as it lists the lessons."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from embviz.core.resources import asset


@cache
def paper_tests() -> dict[str, Any]:
    """assets/weat/weat_tests.json: the ten tests (which four lists each) and the lists."""
    with asset("weat", "weat_tests.json").open(encoding="utf-8") as f:
        data: dict[str, Any] = json.load(f)
    return data
