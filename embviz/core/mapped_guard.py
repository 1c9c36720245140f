"""A table mapped from the cache keeps its numbers when another process cuts the file short.

A mapped file that shrinks takes its pages with it: the next touch of one ends the process with
SIGBUS, in whatever numpy or torch loop runs. Linux lets the process that maps a file hold a read
lease on it: whoever then opens the file for writing or truncates it waits (up to
/proc/sys/fs/lease-break-time, 45 s by default) while the holder is sent SIGIO. Here the handler
copies each leased map into anonymous memory at the same address (`mremap` over the file's pages),
so every array that points into it keeps its numbers, then lets the lease go and the other process
proceeds. The copy costs the table's size in memory, only then.

Where a lease cannot be had (not Linux, a file system without leases, a file open for writing, a
process whose main thread has not installed the handler: SIGIO's default ends the process, so no
lease is taken without it) the file is mapped as before, unguarded.
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os
import signal
import threading
import weakref
from dataclasses import dataclass

_F_SETLEASE: int = getattr(fcntl, "F_SETLEASE", -1)  # -1: not Linux, no leases
_F_GETLEASE: int = getattr(fcntl, "F_GETLEASE", -1)
_MREMAP_MAYMOVE, _MREMAP_FIXED = 1, 2


@dataclass
class _Guarded:
    fd: int
    address: int
    length: int
    read_only: bool


_guarded: dict[int, _Guarded] = {}  # by fd
_lock = threading.Lock()
_installed = False
_previous: object = None
_libc = None


def _c() -> ctypes.CDLL:
    global _libc
    if _libc is None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
        libc.mremap.restype = ctypes.c_void_p
        libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        _libc = libc
    return _libc


def install() -> bool:
    """Install the lease-break handler (only the main thread may): whether it is installed.
    Called by `guard` when it runs on the main thread; a window that opens models on a worker
    thread calls it once at start-up."""
    global _installed, _previous
    if _installed:
        return True
    if _F_SETLEASE < 0 or threading.current_thread() is not threading.main_thread():
        return False
    _previous = signal.signal(signal.SIGIO, _on_lease_break)
    _installed = True
    return True


def guard(fileno: int, mapped: mmap.mmap, read_only: bool) -> bool:
    """Hold a read lease on the file open read-only as `fileno` that `mapped` maps, copying the
    map away before the file can change; whether it is guarded. The lease ends when the map is
    let go."""
    if not install():
        return False
    try:
        fd = fcntl.fcntl(fileno, fcntl.F_DUPFD_CLOEXEC, 0)
    except OSError:
        return False
    try:
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_RDLCK)
    except OSError:  # EAGAIN: open for writing somewhere; EINVAL: a file system without leases
        os.close(fd)
        return False
    import numpy as np

    view = np.frombuffer(mapped, dtype=np.uint8)  # the map's first byte (page-aligned) and length
    address = view.ctypes.data
    del view  # an export left open would keep the map from ever closing
    with _lock:
        _guarded[fd] = _Guarded(fd, address, len(mapped), read_only)
    weakref.finalize(mapped, _release, fd)
    return True


def _release(fd: int) -> None:
    with _lock:
        if _guarded.pop(fd, None) is None:
            return
    try:
        fcntl.fcntl(fd, _F_SETLEASE, fcntl.F_UNLCK)
    except OSError:
        pass
    os.close(fd)


def _copy_away(entry: _Guarded) -> bool:
    """Put anonymous pages holding the same bytes where the file's pages are mapped."""
    libc = _c()
    prot = mmap.PROT_READ | mmap.PROT_WRITE
    fresh = libc.mmap(None, entry.length, prot, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    if fresh in (None, ctypes.c_void_p(-1).value):
        return False
    ctypes.memmove(fresh, entry.address, entry.length)
    if entry.read_only:
        libc.mprotect(fresh, entry.length, mmap.PROT_READ)
    moved = libc.mremap(fresh, entry.length, entry.length, _MREMAP_MAYMOVE | _MREMAP_FIXED, entry.address)
    if moved != entry.address:
        libc.munmap(fresh, entry.length)
        return False
    return True


def _on_lease_break(signum: int, frame: object) -> None:
    with _lock:
        entries = list(_guarded.values())
    for entry in entries:
        try:
            breaking = fcntl.fcntl(entry.fd, _F_GETLEASE) != fcntl.F_RDLCK
        except OSError:
            continue
        if breaking:
            _copy_away(entry)  # failing that, the file's pages stay: no worse than unguarded
            _release(entry.fd)
    if callable(_previous):
        _previous(signum, frame)
