"""Freed memory kept by the process while a large scoring or import runs, where the C library would hand it back.

Scoring a database of millions of rows reads its columns into arrays of tens of megabytes and makes more from
them, one step after another; an import sends and writes its answers a chunk at a time. glibc's ``malloc`` maps
each block that large afresh and unmaps it when it is freed, so each step's arrays land on pages the kernel must
find and zero again. Inside :func:`memory_kept`, glibc keeps what is freed and serves the next allocations from it
(a worker forked inside it keeps its memory too); leaving the outermost :func:`memory_kept` restores glibc's
defaults and hands the free memory back (``malloc_trim``). On a virtual machine that reports freed pages to its
host, every page touched afresh also waits on the host: there ``citeaudit score DB`` on 10 M citation locations
spent 4.6-5.6 s of its 8.4-9.7 s in the kernel, and 2.8-3.2 s of 6.8-7.4 s with the memory kept; an import of
20 000 Sonar answers took a median of 0.036 s less (docs/performance.md).

Only glibc is told anything, and only when its allocator is not configured through the environment
(``MALLOC_MMAP_MAX_``, ``MALLOC_TRIM_THRESHOLD_``, ``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TOP_PAD_`` or
``GLIBC_TUNABLES``): what a user set is left as it is. Elsewhere (musl, macOS, Windows) the context does nothing.
What is scored or written never depends on it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["memory_kept"]

# mallopt's parameters (glibc's malloc.h) and their defaults.
_M_TRIM_THRESHOLD, _M_MMAP_MAX = -1, -4
_DEFAULT_TRIM_THRESHOLD, _DEFAULT_MMAP_MAX = 128 * 1024, 65536
_KEEP_UP_TO = 2**31 - 1
"""Free memory at the top of the heap kept rather than handed back, in bytes (the most ``mallopt`` takes)."""
_CONFIGURED = (
    "MALLOC_MMAP_MAX_",
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_TOP_PAD_",
    "GLIBC_TUNABLES",
)
"""The environment through which glibc's allocator is configured: set, it is left alone."""

_lock = threading.Lock()
_depth = 0
_libc: Any = None


def _glibc() -> Any:
    """glibc's functions, or False when the process runs on another C library or its allocator was configured."""
    global _libc
    if _libc is None:
        _libc = False
        if not any(name in os.environ for name in _CONFIGURED):
            import ctypes

            try:
                found = ctypes.CDLL(None)
                found.gnu_get_libc_version  # noqa: B018 (glibc has it, other C libraries do not)
                found.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
                found.malloc_trim.argtypes = [ctypes.c_size_t]
                _libc = found
            except (OSError, AttributeError):
                pass
    return _libc


@contextmanager
def memory_kept() -> Iterator[None]:
    """Run the body with freed memory kept for the next allocations (module docstring). Nests, and may be entered
    from several threads at once: glibc's defaults come back when the last one leaves."""
    global _depth
    libc = _glibc()
    if not libc:
        yield
        return
    with _lock:
        if _depth == 0:
            libc.mallopt(_M_MMAP_MAX, 0)
            libc.mallopt(_M_TRIM_THRESHOLD, _KEEP_UP_TO)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                libc.mallopt(_M_MMAP_MAX, _DEFAULT_MMAP_MAX)
                libc.mallopt(_M_TRIM_THRESHOLD, _DEFAULT_TRIM_THRESHOLD)
                libc.malloc_trim(0)
