"""Choosing where the embedding table lives, and how many threads compute on the CPU.
torch is imported where it is used: a child process that fits k-means needs only the
thread counts."""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator

from embviz.core.errors import EmbvizError

if TYPE_CHECKING:
    import torch

# Shares of the free memory one allocation may take: the rest is for the work done on it
# (a GPU table's scores and temporaries; the RAM the window and the OS still need).
GPU_HEADROOM = 0.8
RAM_HEADROOM = 0.85


def pick_device(preference: str | None = "auto") -> torch.device:
    """CUDA, then MPS, then CPU for "auto"; otherwise the named device, checked."""
    import torch

    pref = (preference or "auto").strip().lower()
    if pref == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    try:
        device = torch.device(pref)
    except RuntimeError as exc:
        raise EmbvizError(f"Unknown device '{preference}': use auto, cpu, cuda or mps.") from exc
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise EmbvizError("CUDA was asked for, but this machine has no usable CUDA GPU.")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise EmbvizError(f"There is no GPU {device.index}; this machine has {torch.cuda.device_count()}.")
    if device.type == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise EmbvizError("MPS was asked for, but it is not available on this machine.")
    return device


def free_bytes(device: torch.device) -> int | None:
    """Memory that can still be allocated on the device (RAM for the CPU), if known."""
    if device.type == "cuda":
        import torch

        free, _total = torch.cuda.mem_get_info(device)
        return int(free)
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def ensure_fits_in_ram(nbytes: int, what: str) -> None:
    """Refuse before allocating, rather than let the machine run out of memory."""
    import torch

    free = free_bytes(torch.device("cpu"))
    if free is not None and nbytes > RAM_HEADROOM * free:
        raise EmbvizError(f"{what} needs about {human_bytes(nbytes)} of memory, but only {human_bytes(free)} is free.")


def compute_threads() -> int:
    """Leave the GUI thread a core: on 2 cores, 2 torch threads under load were up to 70× slower than 1."""
    return max(1, (os.cpu_count() or 2) - 1)


def limit_compute_threads(threads: int | None = None, torch_too: bool = True) -> int:
    """Cap torch's and the BLAS library's (numpy, scipy) thread pools at the same count:
    numpy's matrix products carry the CPU path, and an uncapped OpenBLAS takes every core.
    Without `torch_too`, torch is capped only when something has imported it already."""
    import threadpoolctl

    threads = threads or compute_threads()
    if torch_too or "torch" in sys.modules:
        import torch

        torch.set_num_threads(threads)
    threadpoolctl.threadpool_limits(threads, user_api="blas")
    return threads


def busy_cores(seconds: float = 0.3) -> int:
    """Cores more than half busy over a short sample (Linux's /proc/stat; 0 where there is none)."""
    def sample() -> list[tuple[int, int]]:
        with open("/proc/stat", encoding="ascii") as f:
            rows = [line.split() for line in f if line.startswith("cpu") and line[3].isdigit()]
        return [(int(r[4]) + int(r[5]), sum(int(x) for x in r[1:9])) for r in rows]

    try:
        before = sample()
        time.sleep(seconds)
        after = sample()
    except (OSError, ValueError, IndexError):
        return 0
    return sum(1 for (i0, t0), (i1, t1) in zip(before, after) if t1 > t0 and 1 - (i1 - i0) / (t1 - t0) > 0.5)


IDLE_SAMPLE_S = 0.1
_widened = threading.Lock()


@contextmanager
def every_idle_core(threads: int | None = None) -> Iterator[int]:
    """Compute on every core for a long product (seconds: a PCA or an exact search of
    millions of rows) when nothing else keeps a core busy, the window included; otherwise,
    or while another lane holds the widening, on the usual compute_threads(). The BLAS and
    torch pools are process-wide, so one widening at a time, restored after. Yields the
    thread count used."""
    usual = compute_threads()
    wanted = threads or ((os.cpu_count() or 1) if busy_cores(IDLE_SAMPLE_S) == 0 else usual)
    if wanted <= usual or not _widened.acquire(blocking=False):
        yield usual
        return
    try:
        limit_compute_threads(wanted)
        yield wanted
    finally:
        limit_compute_threads(usual)
        _widened.release()
