"""The reviewer queue's order: a fixed pseudo-random permutation of edges, started at a point chosen per reviewer and
walked by keyset (``(lap, key)`` cursors), so every page costs the same however deep it is."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from typing import TypeVar

from citeaudit.store.review import KEY_SPACE

__all__ = ["decode_cursor", "encode_cursor", "page_order", "start_key"]

T = TypeVar("T")


def start_key(reviewer_pk: int) -> int:
    """Where a reviewer's walk round the key space starts: stable for the reviewer, different between reviewers."""
    digest = hashlib.sha256(f"citeaudit-queue:{reviewer_pk}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % KEY_SPACE


def encode_cursor(lap: int, key: int) -> str:
    """The ``after`` parameter of the next page."""
    return f"{lap}.{key}"


def decode_cursor(text: str | None) -> tuple[int, int] | None:
    """``(lap, key)`` from an ``after`` parameter; ``None`` for the first page or anything malformed."""
    if not text:
        return None
    lap, _, key = text.partition(".")
    if lap not in ("0", "1") or not key.isdigit() or int(key) >= KEY_SPACE:
        return None
    return int(lap), int(key)


def page_order(rows: Sequence[T], reviewer_pk: int, page_key: int) -> list[T]:
    """One page shuffled with a seed from the reviewer and the page, so two reviewers who share a stretch of the
    permutation still see it in different orders (and one reviewer always in the same order)."""
    shuffled = list(rows)
    random.Random(f"{reviewer_pk}:{page_key}").shuffle(shuffled)
    return shuffled
