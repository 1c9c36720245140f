"""Reading single tensors out of (sharded) safetensors files, with the safetensors library.

`safe_open` parses and checks the header (offsets, shapes and types against the file's size,
tensors neither overlapping nor leaving gaps); a tensor stored in a type torch computes with is
then read from the file straight into a tensor of its own (only its bytes, in its own size), and
any other type is converted out of safetensors' map of the file. Its errors are worded here as
one line.
"""

from __future__ import annotations

from typing import Any

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path

import torch

from embviz.core.errors import EmbvizError, first_line
from embviz.core.readers.regular_file import (CHUNK_BYTES, check_claim, file_size, open_regular, read_exact, read_json,
                                               require_regular, shown)


# safetensors' own bound on a header.
_MAX_HEADER_BYTES = 100_000_000
# Types torch computes with everywhere; anything smaller that is a float is converted on reading.
_COMMON_TYPES = {torch.float16, torch.bfloat16, torch.float32, torch.float64}


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str  # as safetensors names it: F32, BF16, F8_E4M3, …
    shape: tuple[int, ...]
    path: Path

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def _refusal(path: Path, exc: Exception) -> EmbvizError:
    """safetensors' own error as one plain line, sorted by what it means for the file."""
    detail = first_line(exc, 160).removeprefix("Error while deserializing header: ")
    name = shown(path.name)
    if "incomplete metadata" in detail or "not fully covered" in detail:
        return EmbvizError(f"{name} is truncated or corrupt: its header describes more bytes than the file holds.")
    if "invalid shape, data type, or offset" in detail:
        return EmbvizError(f"{name} is truncated or corrupt: a tensor claims shape, type or offsets that do not fit its bytes.")
    return EmbvizError(f"{name} is not a valid safetensors file ({detail}).")


def _safe_open(path: Path) -> Any:
    from safetensors import SafetensorError, safe_open

    require_regular(path)  # a FIFO would block the library's open
    try:
        return safe_open(str(path), framework="pt")
    except (SafetensorError, OSError) as exc:
        raise _refusal(path, exc) from None


def read_header(path: Path) -> dict[str, TensorInfo]:
    """The tensor table of one safetensors file, checked by safetensors against the file."""
    path = Path(path)
    with _safe_open(path) as f:
        infos = {}
        for name in f.keys():
            part = f.get_slice(name)
            infos[name] = TensorInfo(name, str(part.get_dtype()), tuple(int(d) for d in part.get_shape()), path)
    return infos


def read_sharded_headers(folder: Path) -> dict[str, TensorInfo]:
    """All tensors of a checkpoint folder: one file, or shards listed by an index."""
    index_files = sorted(folder.glob("*.safetensors.index.json"))
    if index_files:
        shards = _shards(index_files[0])
        missing = [s for s in shards if not (folder / s).is_file()]
        if missing:
            raise EmbvizError(f"The checkpoint is incomplete: shard {shown(missing[0])} is missing from {shown(folder)}.")
    else:
        shards = sorted(p.name for p in folder.glob("*.safetensors"))
    infos: dict[str, TensorInfo] = {}
    for shard in shards:
        for name, info in read_header(folder / shard).items():
            if name in infos:
                raise EmbvizError(f"The checkpoint is corrupt: the tensor {shown(name)[:80]} is in two shards.")
            infos[name] = info
    return infos


def _shards(index: Path) -> list[str]:
    """The shard files an index names, each a plain file name in the index's own folder."""
    data = read_json(index)
    weight_map = data.get("weight_map") if isinstance(data, dict) else None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise EmbvizError(f"{shown(index.name)} is not a valid shard index.")
    shards = sorted(set(weight_map.values()))
    outside = [s for s in shards if Path(s).name != s or s in (".", "..")]
    if outside:
        raise EmbvizError(f"{shown(index.name)} names a shard outside its folder ({shown(outside[0])[:80]}).")
    return shards


def load_tensor(info: TensorInfo, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Read one tensor into memory of its own, optionally converting it (e.g. to float32)."""
    from safetensors import SafetensorError

    plain = _PLAIN_TYPES.get(info.dtype)
    if plain is not None and dtype in (None, plain):
        return _read_plain(info, plain)
    with _safe_open(info.path) as f:
        try:
            mapped = f.get_tensor(info.name)
        except (SafetensorError, TypeError, ValueError) as exc:  # a type torch has no dtype for (F4, F6_…)
            raise EmbvizError(f"Tensor '{shown(info.name)[:80]}' has dtype {info.dtype}, which embviz cannot read "
                              f"({first_line(exc, 120)}).") from None
        if mapped.dtype not in _COMMON_TYPES and mapped.dtype.itemsize <= 1 and "float" in str(mapped.dtype):
            dtype = torch.float32  # FP8 (or smaller) tables: the rest of embviz computes in float32
        # The library hands back a view of the mapped file: copied here, so a file truncated
        # later (an interrupted download over it) cannot crash the app with SIGBUS.
        return _owned_copy(mapped, dtype, info)


# Stored as torch holds them: read straight from the file into the tensor, at the speed of a
# plain read and in the tensor's own size (a copy out of a map of the file costs both).
_PLAIN_TYPES = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def _read_plain(info: TensorInfo, dtype: torch.dtype) -> torch.Tensor:
    """The tensor's bytes, found through the file's header (which safetensors has checked
    already, and which is checked again here against the file as it is now)."""
    name = info.path.name
    with open_regular(info.path) as f:
        size = file_size(f)
        check_claim(name, "a header", 8, size)
        (length,) = struct.unpack("<Q", read_exact(f, 8, name, "its header"))
        check_claim(name, "a header", min(length, _MAX_HEADER_BYTES + 1), size - 8)
        if length > _MAX_HEADER_BYTES:
            raise EmbvizError(f"{shown(name)} has a header of {length:,} bytes; safetensors allows {_MAX_HEADER_BYTES:,}.")
        try:
            entry = json.loads(read_exact(f, length, name, "its header"))[info.name]
            begin, end = (int(x) for x in entry["data_offsets"])
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbvizError(f"{shown(name)} changed while it was read: its header no longer describes "
                              f"{shown(info.name)[:80]}.") from exc
        nbytes = info.numel * dtype.itemsize
        if end - begin != nbytes or begin < 0:
            raise EmbvizError(f"{shown(name)} changed while it was read: {shown(info.name)[:80]} is no longer "
                              f"{nbytes:,} bytes.")
        check_claim(name, f"the tensor {shown(info.name)[:80]}", end, size - 8 - length)
        out = torch.empty(nbytes, dtype=torch.uint8)
        f.seek(8 + length + begin)
        view = memoryview(out.numpy())  # type: ignore[arg-type]  # a uint8 array is a buffer
        got = 0
        while got < nbytes:
            n = f.readinto(view[got:got + CHUNK_BYTES])  # type: ignore[attr-defined]  # a regular file opened "rb"
            if not n:
                raise EmbvizError(f"{shown(name)} ends inside the tensor {shown(info.name)[:80]}; the file is truncated.")
            got += n
    return out.view(dtype).reshape(info.shape)


def _owned_copy(mapped: torch.Tensor, dtype: torch.dtype | None, info: TensorInfo) -> torch.Tensor:
    if dtype is None or mapped.dtype == dtype:
        return mapped.clone()
    try:
        return mapped.to(dtype)
    except (RuntimeError, NotImplementedError, TypeError) as exc:
        raise EmbvizError(f"Tensor '{shown(info.name)[:80]}' is stored as {info.dtype}, which torch cannot "
                          f"convert to {str(dtype).removeprefix('torch.')} here ({first_line(exc, 120)}).") from None


def total_parameters(infos: dict[str, TensorInfo]) -> int:
    return sum(i.numel for i in infos.values())
