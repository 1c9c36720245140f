"""Hub ids such as "HuggingFaceTB/SmolLM2-135M", resolved through huggingface_hub's
local cache first (works offline), then the hub itself."""

from __future__ import annotations

import re
from pathlib import Path

from embviz.core.errors import EmbvizError, first_line

HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_PATTERNS = ["*.json", "*.safetensors", "*.model", "*.txt", "pytorch_model*.bin"]


def looks_like_hub_id(source: str) -> bool:
    return bool(HUB_ID.match(source)) and not source.endswith((".gguf", ".safetensors", ".pt", ".bin"))


def resolve_hub_id(repo_id: str) -> Path:
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo_id, local_files_only=True, allow_patterns=_PATTERNS))
    except Exception:
        pass
    try:
        return Path(snapshot_download(repo_id, allow_patterns=_PATTERNS))
    except Exception as exc:
        reason = first_line(exc, 160)
        raise EmbvizError(
            f"'{repo_id}' is not in the local Hugging Face cache and could not be downloaded ({reason}). "
            "Open a local folder or file instead, or download it on a machine with internet access."
        ) from exc
