"""Pausing Python's cyclic garbage collector while a command builds many small acyclic objects at once.

Reading a large payload or building a large report makes hundreds of thousands of small rows that hold no
cycles; every collection would walk all of them made so far again (reading and assembling a large payload took
about twice as long, and at 100 000 edges a third of the report's building went to it). Reference counting still
frees their memory as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused"]


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector inside the block; it runs again after, if it ran before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
