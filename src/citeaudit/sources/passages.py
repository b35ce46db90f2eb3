"""Splitting a snapshot's text into passages: the store's rule (:mod:`citeaudit.store.passages`), named here
too for the code that ranks and shows passages."""

from citeaudit.store.passages import MAX_CHARS, MIN_CHARS, split_passages

__all__ = ["MAX_CHARS", "MIN_CHARS", "split_passages"]
