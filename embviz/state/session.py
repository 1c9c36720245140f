"""A saved session (`.embviz`): the model it was made with and every tab's state.

The file is a zip archive holding `session.json` (the states, as plain JSON) and, when
a map was drawn, `projection.npz` (its row ids and coordinates, read back with
`allow_pickle=False`), so a t-SNE that took minutes re-opens at once. Reading checks
everything before anything is used: a file that is not a session, is damaged, or
holds values of the wrong kind raises one `SessionError` naming what is wrong."""

from __future__ import annotations

import io
import json
import math
import os
import zipfile
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, NamedTuple

import numpy as np

from embviz.core.errors import EmbvizError
from embviz.core.readers.regular_file import npy_from_bytes, open_regular, shown
from embviz.state.settings import atomic_write_bytes
from embviz.state.tab_state import TAB_STATES, field_choices, field_range, key_of
from embviz.state.tabs import (
    FIRST_ROWS, CompareState, LogitsState, MapState, NeighboursState, ProjectionState, PromptState, WordSetsState,
)

FORMAT = "embviz-session"
VERSION = 2  # 2: the tab shown is stored by its key; a 1 stored its index in LEGACY_TAB_ORDER
SUFFIX = ".embviz"
MAX_JSON_BYTES = 64 * 2**20
MAX_ARRAY_BYTES = 1 * 2**30
# The tabs in the order a version-1 session counted them: a fact about those files, kept
# whatever order the window shows its tabs in now.
LEGACY_TAB_ORDER = ("map", "neighbours", "analogies", "logits", "vectors", "lens", "drift", "attribution", "compare")
TEXT_SCALE_RANGE = (0.5, 4.0)


class SessionError(EmbvizError):
    """A session file that cannot be restored; nothing of it was applied."""


@dataclass
class ModelRef:
    """The model a session was made with: how to open it, and how to recognise it."""

    source: str | None  # a path, a hub id, a lesson name; None for the default model
    name: str
    fingerprint: dict[str, Any]

    def expect(self) -> dict[str, Any]:
        """What the worker checks the opened model against."""
        return {**self.fingerprint, "name": self.name}

    def missing_file(self) -> str | None:
        """A message when the source is a file path that is no longer there."""
        if self.source and os.path.isabs(self.source) and not os.path.exists(self.source):
            return f"The model of this session is missing: {self.source} is not there any more. Nothing was restored."
        return None


@dataclass
class Session:
    """The model and every tab's state by its key (TAB_STATES); a tab left out has its defaults."""

    model: ModelRef
    states: dict[str, Any] = field(default_factory=dict)
    custom_sets: dict[str, list[str]] = field(default_factory=dict)  # the user's word sets, by name
    tab: str = "map"  # the key of the tab shown
    text_scale: float = 1.0

    def __post_init__(self) -> None:
        self.states = {key: self.states[key] if key in self.states else cls() for key, cls in TAB_STATES.items()}

    def __getitem__(self, key: str) -> Any:
        """The state of the tab `key`."""
        return self.states[key]


# --- writing ------------------------------------------------------------------------------------
def save_session(session: Session, path: str | Path) -> Path:
    """Write atomically: a failed save never leaves half a file where a session was."""
    path = Path(path)
    if path.suffix != SUFFIX:
        path = path.with_name(path.name + SUFFIX)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("session.json", json.dumps(_to_json(session), ensure_ascii=False, indent=1))
        arrays = _map_arrays(session)
        if arrays is not None:
            npz = io.BytesIO()
            np.savez(npz, ids=arrays["ids"], coords=arrays["coords"])
            archive.writestr("projection.npz", npz.getvalue())
    atomic_write_bytes(path, buffer.getvalue())
    return path


def copied(session: Session) -> Session:
    """The session as saving and opening it would give, in memory: states of its own that
    later changes to the window's never reach."""
    return _from_json(json.loads(json.dumps(_to_json(session))), _map_arrays(session))


def _map_arrays(session: Session) -> dict[str, np.ndarray] | None:
    projection = session["map"].projection
    if projection is None:
        return None
    return {"ids": np.asarray(projection.ids, dtype=np.int64), "coords": np.asarray(projection.coords, dtype=np.float32)}


def _map_json(state: MapState) -> dict[str, Any]:
    projection = None
    if state.projection is not None:
        p = state.projection
        projection = {"method": p.method, "subset": p.subset, "limit": int(p.limit), "caption": p.caption,
                      "table": p.table}
    return {
        **{f.name: getattr(state, f.name) for f in fields(MapState) if f.name not in ("word_sets", "projection", "selection")},
        "selection": [int(i) for i in state.selection],
        "word_sets": list(state.word_sets.ticked),
        "projection": projection,
    }


def _logits_json(state: LogitsState) -> dict[str, Any]:
    return {**{f.name: getattr(state, f.name) for f in fields(LogitsState) if f.name != "prompt"},
            "prompt": [[text, token_id] for text, token_id in state.prompt.parts]}


# The states with fields that plain `asdict` does not write as a session keeps them.
WRITERS: dict[type, Callable[[Any], dict[str, Any]]] = {MapState: _map_json, LogitsState: _logits_json}


def _to_json(session: Session) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "model": asdict(session.model),
        "tab": session.tab,
        "text_scale": session.text_scale,
        "custom_sets": session.custom_sets,
        **{key: WRITERS.get(type(state), asdict)(state) for key, state in session.states.items()},
    }


# --- reading ------------------------------------------------------------------------------------
def load_session(path: str | Path) -> Session:
    path = Path(path)
    name = shown(path.name)
    try:
        with open_regular(path) as f, zipfile.ZipFile(f) as archive:
            members = {info.filename: info for info in archive.infolist()}
            if "session.json" not in members:
                raise SessionError(f"{name} is not an embviz session (it has no session.json).")
            doc = json.loads(_member(archive, members["session.json"], MAX_JSON_BYTES, name).decode("utf-8"))
            arrays = None
            if "projection.npz" in members:
                arrays = _arrays(_member(archive, members["projection.npz"], MAX_ARRAY_BYTES, name), name)
    except SessionError:
        raise
    except EmbvizError as exc:  # not a regular file, not there, not readable
        message = str(exc)
        if message.startswith("No such file"):
            message = f"There is no session file at {shown(path)}."
        raise SessionError(message) from None
    except zipfile.BadZipFile:
        raise SessionError(f"{name} is not an embviz session, or it is damaged (not a readable archive).") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise SessionError(f"{name} is damaged: its session.json is not valid JSON.") from None
    except (OSError, ValueError, EOFError, NotImplementedError, zipfile.LargeZipFile) as exc:
        raise SessionError(f"{name} could not be read: {shown(str(exc))}") from None
    try:
        return _from_json(doc, arrays)
    except SessionError as exc:
        raise SessionError(f"{name} is not a usable session: {exc}") from None


def _member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int, name: str) -> bytes:
    """One member, refused before it is expanded when it says it is larger than `limit` (zipfile
    stops at the size a member states, so the statement bounds what is read)."""
    if info.file_size > limit:
        raise SessionError(f"{name} is not a usable session: its {shown(info.filename)} is too large.")
    return archive.read(info)


def _arrays(data: bytes, name: str) -> dict[str, np.ndarray]:
    """The map's ids and coordinates from projection.npz, each .npy read exactly, never unpickled."""
    with zipfile.ZipFile(io.BytesIO(data)) as npz:
        members = {info.filename: info for info in npz.infolist()}
        if sum(info.file_size for info in members.values()) > MAX_ARRAY_BYTES:
            raise SessionError(f"{name} is not a usable session: its map is too large.")
        arrays = {}
        for key in ("ids", "coords"):
            if f"{key}.npy" not in members:
                raise SessionError(f"{name} is damaged: its map has no {key!r} array.")
            arrays[key] = npy_from_bytes(npz.read(members[f"{key}.npy"]), f"{key}.npy in {name}")
    return arrays


def _from_json(doc: Any, arrays: dict[str, np.ndarray] | None) -> Session:
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SessionError("it is not an embviz session")
    version = doc.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise SessionError(f"it was written by a newer embviz (format {version}); update embviz to open it")
    model = _obj(doc, "model")
    source = model.get("source")
    fingerprint = _obj(model, "fingerprint", "model.fingerprint")
    if source is not None and not isinstance(source, str):
        raise SessionError("model.source is not text")
    if model.get("name") is not None and not isinstance(model.get("name"), str):
        raise SessionError("model.name is not text")
    if not isinstance(fingerprint.get("vocab_size"), int) or not isinstance(fingerprint.get("dim"), int):
        raise SessionError("model.fingerprint has no vocabulary size and width")
    ref = ModelRef(source=source, name=str(model.get("name") or "the model"), fingerprint=fingerprint)

    reading = _Reading(fingerprint["vocab_size"], arrays)
    # A tab absent from the file (one added after it was saved) has its defaults.
    states = {key: READERS.get(cls, _simple_state)(cls, _obj(doc, key), reading) for key, cls in TAB_STATES.items()}
    custom = doc.get("custom_sets", {})
    if not isinstance(custom, dict) or not all(
        isinstance(k, str) and isinstance(v, list) and all(isinstance(w, str) for w in v) for k, v in custom.items()
    ):
        raise SessionError("custom_sets is not a list of words per name")
    scale = doc.get("text_scale", 1.0)
    if not _number_in(scale, float, TEXT_SCALE_RANGE):
        raise SessionError(f"text_scale has an unusable value ({_short(scale)})")
    return Session(model=ref, states=states, custom_sets={k: list(v) for k, v in custom.items()},
                   tab=_tab(doc.get("tab", "map")), text_scale=float(scale))


class _Reading(NamedTuple):
    """What a state's reader checks its ids and map against."""

    vocab_size: int
    arrays: dict[str, np.ndarray] | None


def _simple_state(cls: type, data: dict[str, Any], _reading: _Reading) -> Any:
    return cls(**_simple_fields(cls, data, key_of(cls)))


def _map_state(cls: type, m: dict[str, Any], reading: _Reading) -> MapState:
    state = MapState(**_simple_fields(MapState, m, "map"))
    ticked = m.get("word_sets", [])
    if not isinstance(ticked, list) or not all(isinstance(n, str) for n in ticked):
        raise SessionError("map.word_sets is not a list of names")
    state.word_sets = WordSetsState(names=list(ticked), ticked=list(ticked))
    state.view_range = _view_range(m.get("view_range"))
    state.camera_centre = _centre(m.get("camera_centre"))
    state.selection = _ids(m.get("selection", []), reading.vocab_size, "map.selection")
    state.projection = _projection(m.get("projection"), reading.arrays, reading.vocab_size)
    return state


def _logits_state(cls: type, logits: dict[str, Any], reading: _Reading) -> LogitsState:
    state = LogitsState(**_simple_fields(LogitsState, logits, "logits"))
    state.prompt = _prompt(logits.get("prompt", []), reading.vocab_size)
    return state


def _neighbours_state(cls: type, neighbours: dict[str, Any], reading: _Reading) -> NeighboursState:
    state = NeighboursState(**_simple_fields(NeighboursState, neighbours, "neighbours"))
    query = neighbours.get("query")
    if isinstance(query, list):
        query = _ids(query, reading.vocab_size, "neighbours.query") or None
    elif isinstance(query, bool) or not (query is None or isinstance(query, (int, str))):
        raise SessionError("neighbours.query is neither text nor a token id")
    if isinstance(query, int) and not 0 <= query < reading.vocab_size:
        raise SessionError("neighbours.query is not a token id of this model")
    state.query = query
    return state


def _compare_state(cls: type, compare: dict[str, Any], _reading: _Reading) -> CompareState:
    state = CompareState(**_simple_fields(CompareState, compare, "compare"))
    state.source = compare.get("source")
    if state.source is not None and not isinstance(state.source, str):
        raise SessionError("compare.source is not text")
    return state


# The states with fields beyond plain numbers, switches and text: read and checked by hand.
READERS: dict[type, Callable[[type, dict[str, Any], _Reading], Any]] = {
    MapState: _map_state, LogitsState: _logits_state, NeighboursState: _neighbours_state, CompareState: _compare_state,
}


def _tab(value: Any) -> str:
    """The tab shown: its key, or (a version-1 session) its index in LEGACY_TAB_ORDER."""
    if isinstance(value, str) and value in TAB_STATES:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(LEGACY_TAB_ORDER):
        return LEGACY_TAB_ORDER[value]
    raise SessionError(f"tab has an unusable value ({_short(value)})")


def _obj(doc: dict[str, Any], key: str, where: str | None = None) -> dict[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise SessionError(f"{where or key} is not an object")
    return value


def _simple_fields(cls: type, data: dict[str, Any], where: str) -> dict[str, Any]:
    """The fields of `cls` whose defaults are a bool, int, float or text, taken from
    `data` where present and checked to be of that kind (and one of its choices, within its range)."""
    out: dict[str, Any] = {}
    for f in fields(cls):
        if f.default is MISSING or not isinstance(f.default, (bool, int, float, str)) or f.name not in data:
            continue
        value, kind = data[f.name], type(f.default)
        if kind is bool:
            ok = isinstance(value, bool)
        elif kind in (int, float):
            ok = _number_in(value, kind, field_range(cls, f.name))
        else:
            ok = isinstance(value, str)
        choices = field_choices(cls, f.name)
        if ok and choices is not None:
            ok = value in choices
        if not ok:
            raise SessionError(f"{where}.{f.name} has an unusable value ({_short(value)})")
        out[f.name] = float(value) if kind is float else value
    return out


def _number_in(value: Any, kind: type, bounds: tuple[float, float] | None) -> bool:
    """An int (or, for a float field, an int or a finite float) within `bounds`; never a bool."""
    allowed = (int,) if kind is int else (int, float)
    if isinstance(value, bool) or not isinstance(value, allowed) or not _finite(value):
        return False
    return bounds is None or bounds[0] <= value <= bounds[1]


def _finite(value: int | float) -> bool:
    """Whether `value` is a finite float, or an int that becomes one (JSON ints have no bound)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _short(value: Any) -> str:
    """A value for a one-line message: its repr, cut short and on one line."""
    text = repr(value) if isinstance(value, (bool, int, float, str, type(None))) else type(value).__name__
    return shown(text[:60])


def _ids(value: Any, vocab_size: int, where: str) -> list[int]:
    if not isinstance(value, list) or not all(
        isinstance(i, int) and not isinstance(i, bool) and 0 <= i < vocab_size for i in value
    ):
        raise SessionError(f"{where} is not a list of token ids of this model")
    return list(value)


def _view_range(value: Any) -> list[float] | None:
    if value is None:
        return None
    if (not isinstance(value, list) or len(value) != 4
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and _finite(v) for v in value)
            or value[0] >= value[1] or value[2] >= value[3]):
        raise SessionError("map.view_range is not x0, x1, y0, y1")
    return [float(v) for v in value]


def _centre(value: Any) -> list[float] | None:
    if value is None:
        return None
    if (not isinstance(value, list) or len(value) != 3
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and _finite(v) for v in value)):
        raise SessionError("map.camera_centre is not x, y, z")
    return [float(v) for v in value]


def _projection(meta: Any, arrays: dict[str, np.ndarray] | None, vocab_size: int) -> ProjectionState | None:
    if meta is None:
        return None
    if not isinstance(meta, dict) or arrays is None:
        raise SessionError("its map is described but its coordinates are missing")
    simple = _simple_fields(MapState, meta, "map.projection")  # method, subset, limit, table: the same kinds
    caption = meta.get("caption", "")
    if not isinstance(caption, str):
        raise SessionError("map.projection.caption is not text")
    ids, coords = arrays["ids"], arrays["coords"]
    if ids.ndim != 1 or ids.dtype.kind not in "iu" or coords.shape not in ((len(ids), 2), (len(ids), 3)) or coords.dtype.kind != "f":
        raise SessionError("its map's ids and coordinates do not fit together")
    if len(ids) and (ids.min() < 0 or ids.max() >= vocab_size):
        raise SessionError("its map names rows this model does not have")
    if len(np.unique(ids)) != len(ids):
        raise SessionError("its map names a row twice")
    if not np.isfinite(coords).all():
        raise SessionError("its map's coordinates are not all finite numbers")
    return ProjectionState(method=simple.get("method", "pca"), subset=simple.get("subset", "all"),
                           limit=simple.get("limit", FIRST_ROWS), ids=ids.astype(np.int64),
                           coords=coords.astype(np.float32), caption=caption, table=simple.get("table", "input"))


def _prompt(parts: Any, vocab_size: int) -> PromptState:
    ok = isinstance(parts, list) and all(
        isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
        and (p[1] is None or (isinstance(p[1], int) and not isinstance(p[1], bool) and 0 <= p[1] < vocab_size))
        for p in parts
    )
    if not ok:
        raise SessionError("logits.prompt is not text pieces with token ids of this model")
    return PromptState(parts=[(text, token_id) for text, token_id in parts])
