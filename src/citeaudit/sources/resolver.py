"""Resolving the sources in a database: the library entry points other parts of citeaudit call.

``resolve_sources`` reads every source that needs it and writes the results in small transactions (at most 32
results, at most half a second old), so a run that is stopped loses at most those and the pages in flight, and
the next run carries on where it stopped without reading a resolved source again (unless ``refresh``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from citeaudit.core.errors import InvalidValue, ResolveStopped
from citeaudit.core.limits import shown
from citeaudit.core.passages import Passage
from citeaudit.sources.fetch import Fetcher, ResolveSettings
from citeaudit.sources.links import valid_http_url
from citeaudit.sources.workers import WorkerDied
from citeaudit.store.records import FetchOutcome, ResolveReport, Snapshot

if TYPE_CHECKING:
    from citeaudit.store.resolution import MergeCounts

__all__ = [
    "resolve_sources",
    "resolve_sources_async",
    "resolve_urls",
    "set_source_url",
    "source_passages",
    "source_snapshots",
]

ProgressHook = Callable[[FetchOutcome], None]

_BATCH = 32
"""Results written in one transaction at most."""
_FLUSH_SECONDS = 0.5
"""Longest a result waits before it is written (unless a write is waiting for another process's lock)."""
_MOST_WAITING = 8 * _BATCH
"""Results kept at most while a write waits for the database; past it the fetching waits too."""


def resolve_sources(
    store_path: str | Path,
    settings: ResolveSettings | None = None,
    *,
    keys: Iterable[str] | None = None,
    progress: ProgressHook | None = None,
    on_start: Callable[[int], None] | None = None,
) -> ResolveReport:
    """Resolve the sources of the database at ``store_path`` that need it (see :class:`ResolveSettings`).

    ``keys`` narrows the run to those sources; ``on_start`` is told how many will be read, ``progress`` is
    called after each one is recorded.
    """
    return asyncio.run(resolve_sources_async(store_path, settings, keys=keys, progress=progress, on_start=on_start))


async def resolve_sources_async(
    store_path: str | Path,
    settings: ResolveSettings | None = None,
    *,
    keys: Iterable[str] | None = None,
    progress: ProgressHook | None = None,
    on_start: Callable[[int], None] | None = None,
) -> ResolveReport:
    """:func:`resolve_sources` for callers that already run an event loop."""
    from citeaudit.store import Store

    settings = settings or ResolveSettings()
    with Store(store_path) as store:
        selection = store.sources.to_resolve(
            refresh=settings.refresh,
            retry_failed=settings.retry_failed,
            keys=None if keys is None else list(keys),
        )
        if on_start is not None:
            on_start(len(selection.todo))
        failed: Counter[str] = Counter()
        resolved = merged_sources = merged_edges = disputed = 0
        pending = iter(selection.todo)

        batch: list[tuple[int, FetchOutcome]] = []
        writing = asyncio.Lock()

        async def flush() -> None:
            # One transaction for the results gathered so far: a stop loses at most these and the pages in flight.
            # The write may wait for another process's lock (up to the busy timeout): it waits in a thread, so the
            # pages in flight keep being read and their own deadlines are not spent on the database's time.
            async with writing:
                done = batch[:]
                batch.clear()
                if not done:
                    return
                write = asyncio.ensure_future(asyncio.to_thread(store.sources.record_fetches, done))
                try:
                    recorded = await asyncio.shield(write)
                except asyncio.CancelledError:
                    # A write cannot stop half-way: it ends (and is counted) before the connection is used again.
                    counted(done, await write)
                    raise
            counted(done, recorded)

        def counted(done: list[tuple[int, FetchOutcome]], recorded: list[MergeCounts]) -> None:
            nonlocal resolved, merged_sources, merged_edges, disputed
            for (_, outcome), merges in zip(done, recorded, strict=True):
                if outcome.reason is None:
                    resolved += 1
                else:
                    failed[outcome.reason] += 1
                merged_sources += merges.sources
                merged_edges += merges.edges
                disputed += merges.disputed
                if progress is not None:
                    progress(outcome)

        async def worker(fetcher: Fetcher) -> None:
            for source in pending:
                batch.append((source.pk, await fetcher.fetch(source.url)))
                # While a write waits, results gather up to a bound (memory), then the workers wait for it too.
                if (len(batch) >= _BATCH and not writing.locked()) or len(batch) >= _MOST_WAITING:
                    await flush()

        async def ticker() -> None:
            while True:
                await asyncio.sleep(_FLUSH_SECONDS)
                if batch and not writing.locked():
                    await flush()

        if selection.todo:
            async with Fetcher(settings, expected=len(selection.todo)) as fetcher:
                # More workers than request slots: a worker waiting on a busy host holds no global slot, so the
                # other hosts keep the global cap busy.
                tasks = min(len(selection.todo), 4 * settings.concurrency)
                tick = asyncio.create_task(ticker())
                running = [asyncio.create_task(worker(fetcher)) for _ in range(tasks)]
                try:
                    await asyncio.gather(*running)
                except WorkerDied:
                    for task in running:
                        task.cancel()
                    await asyncio.gather(*running, return_exceptions=True)
                    await flush()
                    raise ResolveStopped(
                        f"the text-extraction worker process stopped (killed, or out of memory) after "
                        f"{resolved + sum(failed.values())} of {len(selection.todo)} sources were recorded; run "
                        "again to read the rest (--extract-workers 0 --extract-timeout 0 reads every page in the "
                        "fetching process, without a time limit)"
                    ) from None
                finally:
                    tick.cancel()
                    await flush()
        return ResolveReport(
            selected=len(selection.todo),
            resolved=resolved,
            failed=dict(sorted(failed.items())),
            no_link=selection.no_link,
            skipped_resolved=selection.skipped_resolved,
            skipped_failed=selection.skipped_failed,
            merged_sources=merged_sources,
            merged_edges=merged_edges,
            disputed_edges=disputed,
        )


def resolve_urls(urls: Iterable[str], settings: ResolveSettings | None = None) -> list[FetchOutcome]:
    """Resolve URLs without a database (e.g. engine grounding redirects right after collection, before they
    expire): one outcome per URL, in order."""

    wanted = list(urls)
    chosen = settings or ResolveSettings()

    async def run() -> list[FetchOutcome]:
        async with Fetcher(chosen, expected=len(wanted)) as fetcher:
            try:
                return list(await asyncio.gather(*(fetcher.fetch(url) for url in wanted)))
            except WorkerDied:
                raise ResolveStopped(
                    f"the text-extraction worker process stopped (killed, or out of memory) while {len(wanted)} "
                    "links were being resolved; none of their outcomes is kept"
                ) from None

    return asyncio.run(run())


def set_source_url(
    store_path: str | Path,
    key: str,
    url: str,
    who: str,
    settings: ResolveSettings | None = None,
    *,
    resolve: bool = True,
) -> ResolveReport | None:
    """Attach ``url`` to the source ``key`` (a title-only card, or a link that was wrong), recorded with ``who``
    and the time, then resolve it unless ``resolve`` is false."""
    from citeaudit.store import Store

    # Checked whether or not it is read now: a link stored as given is read by every later resolve.
    if not valid_http_url(url) or any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise InvalidValue(
            "source set-url", "URL", f"{shown(url)} is not an http(s) URL with a host and a port below 65536"
        )
    with Store(store_path) as store:
        store.sources.set_link(key, url, who)
    if not resolve:
        return None
    # Read it even when it failed before: the link is new.
    settings = settings or ResolveSettings()
    retry = dataclasses.replace(settings, retry_failed=True, refresh=True)
    return resolve_sources(store_path, retry, keys=[key])


def source_snapshots(store_path: str | Path, key: str) -> list[Snapshot]:
    """Every snapshot of a source (by its current or a former key), oldest first."""
    from citeaudit.store import Store

    with Store(store_path) as store:
        return store.sources.snapshots(key)


def source_passages(store_path: str | Path, key: str) -> list[Passage]:
    """The passages, with character offsets into the snapshot text, of a source's latest snapshot."""
    from citeaudit.store import Store

    with Store(store_path) as store:
        return store.sources.passages(key)
