"""Reading single tensors out of (sharded) safetensors files with plain file reads.

Only the header (a JSON table of names, dtypes, shapes and byte offsets) is parsed;
a tensor is then read straight into its own buffer, so reading the embedding table
of a 10 GB checkpoint touches only the table's bytes. Every header is checked
against the file size before any offset is trusted.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path

import torch

from embviz.core.errors import EmbvizError

_DTYPES = {
    "F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
    "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
    "BOOL": torch.bool,
}
_MAX_HEADER = 100 * 1024 * 1024


@dataclass(frozen=True)
class TensorInfo:
    name: str
    dtype: str
    shape: tuple[int, ...]
    path: Path
    start: int  # absolute byte offset in the file
    end: int

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def read_header(path: Path) -> dict[str, TensorInfo]:
    """The tensor table of one safetensors file, validated against the file's size."""
    path = Path(path)
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(8)
            if len(head) < 8:
                raise EmbvizError(f"{path.name} is not a safetensors file: it is only {size} bytes long.")
            (n,) = struct.unpack("<Q", head)
            if n > min(size - 8, _MAX_HEADER):
                raise EmbvizError(f"{path.name} is not a valid safetensors file (its header length is impossible).")
            raw = f.read(n)
    except OSError as exc:
        raise EmbvizError(f"Cannot read {path}: {exc.strerror or exc}.") from exc
    try:
        table = json.loads(raw)
        if not isinstance(table, dict):
            raise ValueError
    except (ValueError, UnicodeDecodeError) as exc:
        raise EmbvizError(f"{path.name} is not a valid safetensors file (its header is not readable).") from exc
    data_start = 8 + n
    infos: dict[str, TensorInfo] = {}
    for name, meta in table.items():
        if name == "__metadata__":
            continue
        try:
            dtype = str(meta["dtype"])
            shape = tuple(int(d) for d in meta["shape"])
            begin, end = (int(x) for x in meta["data_offsets"])
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbvizError(f"{path.name}: the entry for tensor '{name}' is malformed.") from exc
        if dtype in _DTYPES and any(d < 0 for d in shape):
            raise EmbvizError(f"{path.name}: tensor '{name}' has a negative dimension.")
        info = TensorInfo(name, dtype, shape, path, data_start + begin, data_start + end)
        itemsize = torch.empty(0, dtype=_DTYPES[dtype]).element_size() if dtype in _DTYPES else None
        if begin < 0 or end < begin or info.end > size:
            raise EmbvizError(
                f"{path.name} is truncated or corrupt: tensor '{name}' should end at byte {info.end:,} "
                f"but the file has {size:,} bytes."
            )
        if itemsize is not None and (end - begin) != info.numel * itemsize:
            raise EmbvizError(
                f"{path.name} is corrupt: tensor '{name}' claims shape {list(shape)} ({dtype}) "
                f"but holds {end - begin:,} bytes."
            )
        infos[name] = info
    return infos


def read_sharded_headers(folder: Path) -> dict[str, TensorInfo]:
    """All tensors of a checkpoint folder: one file, or shards listed by an index."""
    index_files = sorted(folder.glob("*.safetensors.index.json"))
    if index_files:
        try:
            weight_map = json.loads(index_files[0].read_text(encoding="utf-8"))["weight_map"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EmbvizError(f"{index_files[0].name} is not a valid shard index.") from exc
        shards = sorted(set(weight_map.values()))
        missing = [s for s in shards if not (folder / s).is_file()]
        if missing:
            raise EmbvizError(f"The checkpoint is incomplete: shard {missing[0]} is missing from {folder}.")
    else:
        shards = sorted(p.name for p in folder.glob("*.safetensors"))
    infos: dict[str, TensorInfo] = {}
    for shard in shards:
        infos.update(read_header(folder / shard))
    return infos


def load_tensor(info: TensorInfo, dtype: torch.dtype | None = None) -> torch.Tensor:
    """Read one tensor into memory, optionally converting it (e.g. to float32)."""
    if info.dtype not in _DTYPES:
        raise EmbvizError(f"Tensor '{info.name}' has dtype {info.dtype}, which embviz cannot read.")
    out = torch.empty(info.shape, dtype=_DTYPES[info.dtype])
    buf = out.view(-1).view(torch.uint8).numpy() if out.numel() else None
    if buf is not None:
        with info.path.open("rb", buffering=0) as f:
            f.seek(info.start)
            view = memoryview(buf)
            got = 0
            while got < len(view):
                n = f.readinto(view[got:])
                if not n:
                    raise EmbvizError(f"{info.path.name} ended early while reading '{info.name}'.")
                got += n
    if dtype is not None and out.dtype != dtype:
        out = out.to(dtype)
    return out


def total_parameters(infos: dict[str, TensorInfo]) -> int:
    return sum(i.numel for i in infos.values())

