"""Saved state (recent models, custom word sets): a JSON file written atomically,
so a crash or kill mid-write never loses the previous version. A corrupt file is
set aside (renamed) and reported, never fatal."""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

MAX_RECENT = 10


def settings_path() -> Path:
    override = os.environ.get("EMBVIZ_CONFIG_DIR")
    if override:
        return Path(override) / "settings.json"
    from platformdirs import user_config_dir

    return Path(user_config_dir("embviz")) / "settings.json"


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, then rename: a failed write never leaves
    half a file. The file gets the usual permissions (mkstemp's are owner-only), since
    exports and sessions are made to be shared."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


class Settings:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or settings_path()
        self.problem: str | None = None  # a message for the user, once
        self.data: dict[str, Any] = self._read()

    def _read(self) -> dict[str, Any]:
        if not self.path.is_file():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not an object")
            return data
        except (OSError, ValueError, UnicodeDecodeError):
            aside = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
            try:
                self.path.rename(aside)
                self.problem = f"The settings file was unreadable and was set aside as {aside.name}; starting fresh."
            except OSError:
                self.problem = "The settings file was unreadable; starting fresh."
            return {}

    def save(self) -> None:
        atomic_write_text(self.path, json.dumps(self.data, indent=1, ensure_ascii=False))

    @property
    def recent_models(self) -> list[str]:
        items = self.data.get("recent_models", [])
        return [str(x) for x in items if isinstance(x, str)] if isinstance(items, list) else []

    def add_recent(self, source: str) -> None:
        items = [source] + [x for x in self.recent_models if x != source]
        self.data["recent_models"] = items[:MAX_RECENT]
        self.save()

    @property
    def export_folder(self) -> Path:
        """Where the last file was saved (an export, a session), or the home folder."""
        folder = self.data.get("export_folder")
        if isinstance(folder, str) and folder and Path(folder).is_dir():
            return Path(folder)
        return Path.home()

    def set_export_folder(self, folder: Path) -> None:
        self.data["export_folder"] = str(folder)
        self.save()

    @property
    def text_scale(self) -> float:
        value = self.data.get("text_scale", 1.0)
        return float(value) if isinstance(value, (int, float)) else 1.0

    @property
    def word_sets(self) -> dict[str, list[str]]:
        sets = self.data.get("word_sets", {})
        if not isinstance(sets, dict):
            return {}
        return {str(k): [str(w) for w in v] for k, v in sets.items() if isinstance(v, list)}

    def set_word_set(self, name: str, words: list[str]) -> None:
        sets = self.word_sets
        sets[name] = words
        self.data["word_sets"] = sets
        self.save()
