"""Copy groups: sources whose main text is near-identical, so that a majority of copies never passes for
independent support.

Text is cut into paragraphs (lines); each paragraph gives word 5-gram shingles (a paragraph shorter than five
words is one shingle), so reordered paragraphs change nothing and changed boilerplate changes only its own
shingles. MinHash signatures (datasketch, 128 permutations) go through an LSH index; a candidate pair is a
copy when its estimated Jaccard similarity reaches the threshold, and copies are grouped transitively.

Default threshold 0.7. On the 670 distinct real web pages of the WiCE evidence set (Common Crawl
extractions in ``shared/data/wice``), no page has a Jaccard similarity above 0.46 to any other (99th
percentile 0.33), while constructed copies of those pages with boilerplate changed and paragraphs reordered
all stay at or above 0.90. 0.7 lies between with a margin of several standard errors of a 128-permutation
estimate (about 0.04 at 0.7). ``benchmarks/bench_copies.py`` measures both again.

Each group's origin is its official member if it has one, else its earliest-dated member, else the member
first listed. Pages with fewer than ``min_words`` words are not grouped (too little text to tell a copy from a
coincidence) and are counted.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["CopyGroup", "CopyResult", "CopySettings", "Page", "copy_groups", "shingles"]

_WORD = re.compile(r"\w+")
_MASK = (1 << 32) - 1
"""Shingle hashes are 32-bit."""
_BASE = 1_000_003
"""Base of the polynomial over a shingle's word hashes."""


@dataclass(frozen=True, slots=True)
class Page:
    """A source's main text with what decides the origin of a group."""

    key: str
    """Source key."""
    text: str
    """Main text (paragraphs separated by newlines)."""
    date: str | None = None
    """Publication or update date (ISO), if known."""
    official: bool = False
    """Whether the source is one of the brand's official presences."""


@dataclass(frozen=True, slots=True)
class CopySettings:
    """How copies are found."""

    threshold: float = 0.7
    """Estimated Jaccard similarity of shingle sets at or above which two pages are copies."""
    num_perm: int = 128
    """MinHash permutations."""
    shingle_words: int = 5
    """Words per shingle."""
    min_words: int = 30
    """Pages with fewer words are not grouped (and are counted)."""
    seed: int = 1
    """MinHash seed (same seed, same groups)."""


@dataclass(frozen=True, slots=True)
class CopyGroup:
    """Sources whose main text is near-identical."""

    origin: str
    """Key of the member the others are taken to copy."""
    members: tuple[str, ...]
    """All members, origin first, then in input order."""
    reason: str
    """Why the origin was chosen: ``official``, ``earliest`` or ``first listed``."""


@dataclass(frozen=True, slots=True)
class CopyResult:
    """Copy groups over a set of pages."""

    groups: tuple[CopyGroup, ...]
    """Groups of two or more near-identical pages, in order of their first member."""
    pages: int
    """Pages looked at."""
    too_short: tuple[str, ...]
    """Keys of pages with too little text to group."""

    def group_of(self) -> dict[str, int]:
        """``{source key: group index}`` for every grouped page."""
        return {key: i for i, group in enumerate(self.groups) for key in group.members}


def shingles(text: str, words: int = 5) -> list[int]:
    """32-bit hashes of the word ``words``-grams of each paragraph (a short paragraph is one shingle).

    Each word is hashed once (CRC-32); a shingle's hash is a polynomial over its words' hashes, computed for
    every position of the text at once and kept where the shingle lies inside one paragraph.
    """
    tokens: list[str] = []
    starts: list[int] = []
    short: list[int] = []
    for paragraph in text.splitlines():
        found = _WORD.findall(paragraph.lower())
        if not found:
            continue
        if len(found) < words:
            short.append(zlib.crc32(" ".join(found).encode()) & 0xFFFFFFFF)
            continue
        starts.extend(range(len(tokens), len(tokens) + len(found) - words + 1))
        tokens.extend(found)
    # numpy is loaded here, not with the module: the command line imports this module for its defaults.
    import numpy as np

    hashes = np.array(short, dtype=np.uint64)
    if starts:
        codes = np.fromiter((zlib.crc32(t.encode()) for t in tokens), dtype=np.uint64, count=len(tokens))
        rolled = np.zeros(len(codes) - words + 1, dtype=np.uint64)
        for offset in range(words):
            rolled = (rolled * np.uint64(_BASE) + codes[offset : offset + len(rolled)]) & np.uint64(_MASK)
        hashes = np.concatenate((hashes, rolled[np.array(starts, dtype=np.int64)]))
    unique: list[int] = np.unique(hashes).tolist()
    return unique


def _identity(value: int) -> int:
    return value


def _origin(members: Sequence[Page]) -> tuple[Page, str]:
    official = [p for p in members if p.official]
    if official:
        return official[0], "official"
    dated = [p for p in members if p.date]
    if dated:
        return min(dated, key=lambda p: str(p.date)), "earliest"
    return members[0], "first listed"


def copy_groups(pages: Iterable[Page], settings: CopySettings = CopySettings()) -> CopyResult:
    """Group near-identical pages (see the module docstring for the method and the default threshold)."""
    # datasketch pulls in scipy (about 0.4 s): loaded when copies are grouped, not with every command.
    import numpy as np
    from datasketch import MinHash, MinHashLSH

    listed = list(pages)
    keys = [page.key for page in listed]
    if len(set(keys)) != len(keys):
        raise ValueError("copy_groups: each page needs a distinct key")
    eligible = [i for i, page in enumerate(listed) if len(_WORD.findall(page.text)) >= settings.min_words]
    chosen = set(eligible)
    too_short = [page.key for i, page in enumerate(listed) if i not in chosen]
    # Shingles are made one page at a time (never all held at once); signatures are kept as plain arrays.
    shingle_sets = (shingles(listed[i].text, settings.shingle_words) for i in eligible)
    lsh = MinHashLSH(threshold=settings.threshold, num_perm=settings.num_perm)
    parent = list(range(len(listed)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    signatures = MinHash.generator(shingle_sets, num_perm=settings.num_perm, seed=settings.seed, hashfunc=_identity)
    kept: dict[int, npt.NDArray[np.uint64]] = {}
    for index, signature in zip(eligible, signatures, strict=True):
        values = signature.hashvalues
        for other in lsh.query(signature):
            # the MinHash estimate of Jaccard similarity: the share of equal signature slots
            if float(np.mean(values == kept[other])) >= settings.threshold:
                a, b = find(index), find(other)
                if a != b:
                    parent[max(a, b)] = min(a, b)
        lsh.insert(index, signature, check_duplication=False)
        kept[index] = values
    members: dict[int, list[int]] = {}
    for index in eligible:
        members.setdefault(find(index), []).append(index)
    groups = []
    for root in sorted(members):
        found = members[root]
        if len(found) < 2:
            continue
        group_pages = [listed[i] for i in found]
        origin, reason = _origin(group_pages)
        ordered = (origin.key, *(p.key for p in group_pages if p.key != origin.key))
        groups.append(CopyGroup(origin.key, ordered, reason))
    return CopyResult(tuple(groups), len(listed), tuple(too_short))
