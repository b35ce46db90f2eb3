"""Version drift: cited official pages whose evidence may be out of date, from snapshot dates.

A page's *judged snapshot* is what the reviewers could read when they labelled its edges; a *revision* is a later
snapshot with other content. Pure functions over typed records; no I/O.
:func:`citeaudit.core.brand.figures.version_drift` prepares the inputs from an audit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["ChangedAfterCollection", "PageSnapshot", "StaleSnapshot", "VersionDrift", "drift"]


@dataclass(frozen=True, slots=True)
class PageSnapshot:
    """One reading of a page, as the audit knows it."""

    source_key: str
    """The source read."""
    fetched_at: str
    """When it was read (ISO-8601)."""
    content_sha256: str
    """Hash of what was read: a different hash is a different revision."""
    page_date: str | None = None
    """The page's own update (else publication) date, when it states one."""


@dataclass(frozen=True, slots=True)
class StaleSnapshot:
    """A cited official page judged on a snapshot older than the newest revision the audit knows."""

    source_key: str
    """The page."""
    judged_fetched_at: str
    """When the snapshot the reviewers read was taken."""
    judged_page_date: str | None
    """That snapshot's own date."""
    newest_fetched_at: str
    """When the newest revision was taken."""
    newest_page_date: str | None
    """The newest revision's own date."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "source_key": self.source_key,
            "judged": {"fetched_at": self.judged_fetched_at, "page_date": self.judged_page_date},
            "newest": {"fetched_at": self.newest_fetched_at, "page_date": self.newest_page_date},
        }


@dataclass(frozen=True, slots=True)
class ChangedAfterCollection:
    """An official page an answer cites that changed after the answer was collected."""

    answer_id: str
    """The answer."""
    source_key: str
    """The page."""
    collected_at: str
    """When the answer was collected."""
    changed_at: str
    """When the change is first seen: the page's own date when it is later than the collection, else when a
    snapshot with other content was taken."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "answer_id": self.answer_id,
            "source_key": self.source_key,
            "collected_at": self.collected_at,
            "changed_at": self.changed_at,
        }


@dataclass(frozen=True, slots=True)
class VersionDrift:
    """Official pages whose evidence may be out of date.

    Notes: ``stale`` is counted over the cited official pages with a human judgement and a snapshot
    (``judged_pages``); ``changed_after_collection`` over the (answer, cited official page) pairs whose answer
    has a collection date and whose page has a snapshot (``dated_pairs``); pairs without are ``undated_pairs``.
    """

    judged_pages: int
    """Cited official pages with a snapshot and at least one human judgement of an edge to them."""
    stale: tuple[StaleSnapshot, ...]
    """Of those, the ones whose judged snapshot is older than a later revision."""
    dated_pairs: int
    """(answer, cited official page) pairs with a collection date and a snapshot."""
    undated_pairs: int
    """(answer, cited official page) pairs without a collection date or without a snapshot."""
    changed_after_collection: tuple[ChangedAfterCollection, ...]
    """Of the dated pairs, those whose page changed after the answer was collected."""
    judged_time_unknown: int = 0
    """Of the judged pages, those whose human judgements record no time ("judged, time unknown"): in the
    denominator, never counted stale (which snapshot the reviewers read cannot be told)."""

    def to_dict(self) -> dict[str, object]:
        """JSON form: counts over their denominators, and every case with both dates."""
        return {
            "stale": {
                "value": len(self.stale) / self.judged_pages if self.judged_pages else None,
                "numerator": len(self.stale),
                "denominator": self.judged_pages,
                "time_unknown": self.judged_time_unknown,
                "cases": [case.to_dict() for case in self.stale],
            },
            "changed_after_collection": {
                "value": len(self.changed_after_collection) / self.dated_pairs if self.dated_pairs else None,
                "numerator": len(self.changed_after_collection),
                "denominator": self.dated_pairs,
                "undated": self.undated_pairs,
                "cases": [case.to_dict() for case in self.changed_after_collection],
            },
        }


def _day(value: str) -> str:
    """The comparable prefix of an ISO date or time (dates compare to times by their day)."""
    return value[:10]


def drift(
    cited_official: Mapping[str, Sequence[tuple[str, str | None]]],
    judged_at: Mapping[str, str | None],
    snapshots: Iterable[PageSnapshot],
) -> VersionDrift:
    """Version drift from the cited official pages (``key → [(answer id, collected_at)]``), the latest human
    judgement time per page (``None``: judged, but no judgement records its time), and every snapshot of the pages.

    The judged snapshot of a page is the newest one taken no later than the latest human judgement of an edge to
    it (the page the reviewers could read); it is stale when a later snapshot has other content. A page changed
    after an answer was collected when its own date is later than the collection day, or when a snapshot taken
    after the collection has other content than the newest one taken before it.
    """
    history: dict[str, list[PageSnapshot]] = {}
    for snapshot in snapshots:
        history.setdefault(snapshot.source_key, []).append(snapshot)
    for readings in history.values():
        readings.sort(key=lambda s: s.fetched_at)

    stale: list[StaleSnapshot] = []
    judged_pages = time_unknown = 0
    for key in sorted(cited_official):
        readings = history.get(key, [])
        if key not in judged_at or not readings:
            continue
        judged_pages += 1
        when = judged_at[key]
        if when is None:
            # judged, time unknown: in the denominator; which snapshot was read cannot be told
            time_unknown += 1
            continue
        before = [s for s in readings if s.fetched_at <= when] or readings[:1]
        judged, newest = before[-1], readings[-1]
        if newest.content_sha256 != judged.content_sha256 and newest.fetched_at > judged.fetched_at:
            stale.append(StaleSnapshot(key, judged.fetched_at, judged.page_date, newest.fetched_at, newest.page_date))

    changed: list[ChangedAfterCollection] = []
    dated = undated = 0
    for key in sorted(cited_official):
        readings = history.get(key, [])
        for answer_id, collected in cited_official[key]:
            if not collected or not readings:
                undated += 1
                continue
            dated += 1
            when = _changed_after(readings, collected)
            if when is not None:
                changed.append(ChangedAfterCollection(answer_id, key, collected, when))
    return VersionDrift(judged_pages, tuple(stale), dated, undated, tuple(changed), time_unknown)


def _changed_after(readings: Sequence[PageSnapshot], collected: str) -> str | None:
    page_dates = [s.page_date for s in readings if s.page_date and _day(s.page_date) > _day(collected)]
    if page_dates:
        return min(page_dates)
    before = [s for s in readings if _day(s.fetched_at) <= _day(collected)]
    if not before:
        return None
    reference = before[-1].content_sha256
    later = [s for s in readings if _day(s.fetched_at) > _day(collected) and s.content_sha256 != reference]
    return later[0].fetched_at if later else None
