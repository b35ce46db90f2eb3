"""SQL for source resolution: which sources to read, recording what a read found, merging sources that turn
out to be the same page, links set by hand, and reading snapshots and passages back.

Each function takes a connection inside the caller's transaction. :class:`Sources` (a store's ``sources``) runs
them in the store's transactions: the sources a resolver reads, the fetches it records, links set by hand, and
snapshots and passages read back.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from citeaudit.core.clock import utc_now
from citeaudit.core.errors import UnknownReference
from citeaudit.core.identity import identity_url, registrable_domain, url_location
from citeaudit.core.model import Judgement, Label, Origin, ReviewState, SourceStatus, Stage, review_outcome
from citeaudit.core.passages import Passage, split_paragraphs
from citeaudit.core.scoring import DISPUTED_CODE, LABEL_CODE, PENDING_CODE
from citeaudit.store.connection import Access
from citeaudit.store.records import FetchOutcome, Hop, Snapshot
from citeaudit.store.review_rules import require_account

__all__ = [
    "MergeCounts",
    "Selection",
    "SourceToResolve",
    "Sources",
    "merge_sources",
    "passages_of",
    "record_fetch",
    "select_sources",
    "set_link",
    "snapshots_of",
    "source_pk_of",
]


@dataclass(frozen=True, slots=True)
class SourceToResolve:
    """A source row the resolver will read."""

    pk: int
    """Row id."""
    key: str
    """Its key when selected."""
    url: str
    """The link to follow."""


@dataclass(frozen=True, slots=True)
class Selection:
    """The sources a run reads, and how many it leaves alone and why."""

    todo: list[SourceToResolve]
    """To read."""
    no_link: int
    """Title-only cards (pending, ``no_link``)."""
    skipped_resolved: int
    """Resolved before; not read again."""
    skipped_failed: int
    """Failed before; not tried again."""


@dataclass(frozen=True, slots=True)
class MergeCounts:
    """What recording one fetch merged."""

    sources: int = 0
    """Sources merged into another."""
    edges: int = 0
    """Edges merged into an edge of the same claim."""
    disputed: int = 0
    """Merged edges whose labels differed (now ``disputed``)."""


def select_sources(
    db: sqlite3.Connection, *, refresh: bool, retry_failed: bool, keys: list[str] | None = None
) -> Selection:
    """The sources a run reads: pending ones with a link, plus failed ones with ``retry_failed`` and resolved
    ones with ``refresh``; ``keys`` narrows to those sources (current or former keys)."""
    rows = db.execute("SELECT pk, key, url, status FROM sources ORDER BY pk").fetchall()
    if keys is not None:
        wanted = {source_pk_of(db, key) for key in keys}
        rows = [row for row in rows if row[0] in wanted]
    todo: list[SourceToResolve] = []
    no_link = skipped_resolved = skipped_failed = 0
    for pk, key, url, status in rows:
        if not url:
            no_link += 1
        elif status == "resolved" and not refresh:
            skipped_resolved += 1
        elif status == "failed" and not retry_failed:
            skipped_failed += 1
        else:
            todo.append(SourceToResolve(pk, key, url))
    return Selection(todo, no_link, skipped_resolved, skipped_failed)


def source_pk_of(db: sqlite3.Connection, key: str) -> int:
    """Row id of the source with ``key`` now, or that had ``key`` before it was resolved or merged."""
    row = db.execute("SELECT pk FROM sources WHERE key = ?", (key,)).fetchone()
    if row is None:
        row = db.execute("SELECT source_pk FROM source_keys WHERE key = ?", (key,)).fetchone()
    if row is None:
        raise UnknownReference("database", "sources", f"no source has key {key!r}")
    return int(row[0])


def _identity(outcome: FetchOutcome) -> str | None:
    """The key a resolved source gets: its canonical URL when that stays on the same site, else its final URL.

    A canonical link to another registrable domain (syndication) is recorded but does not decide identity:
    otherwise any page could declare itself to be another site's page and take its edges.
    """
    if outcome.final_url is None:
        return None
    final = identity_url(outcome.final_url)
    canonical = outcome.canonical_url
    if canonical:
        final_host, _ = url_location(final)
        canonical_host, _ = url_location(canonical)
        if final_host and canonical_host:
            same_site = final_host == canonical_host or (
                registrable_domain(final_host) is not None
                and registrable_domain(final_host) == registrable_domain(canonical_host)
            )
            if same_site:
                return identity_url(canonical)
    return final


def record_fetch(db: sqlite3.Connection, source_pk: int, outcome: FetchOutcome) -> MergeCounts:
    """Store one fetch of a source and bring the source up to date (key, state, location), merging it into
    another source when it turns out to be the same page. A resolved source whose refresh fails keeps its
    state and last snapshot; the failed attempt is recorded all the same."""
    row = db.execute("SELECT key, url, status, title FROM sources WHERE pk = ?", (source_pk,)).fetchone()
    if row is None:
        raise UnknownReference("database", "sources", f"source row {source_pk} no longer exists")
    key, url, previous_status, title = row
    document = outcome.document
    if document is not None:
        inserted = db.execute(
            "INSERT OR IGNORE INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                document.sha256,
                document.media_type,
                len(document.body),
                document.body,
                document.text,
                document.title,
                document.published,
                document.updated,
            ),
        ).rowcount
        if inserted:
            db.executemany(
                'INSERT INTO passages (document_sha256, ordinal, start, "end") VALUES (?, ?, ?, ?)',
                [(document.sha256, p.ordinal, p.start, p.end) for p in split_paragraphs(document.text)],
            )
    db.execute(
        "INSERT INTO fetches (source_pk, requested_url, status, reason, chain, final_url, canonical_url, "
        "http_status, headers, fetched_at, document_sha256) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            source_pk,
            outcome.requested_url,
            str(outcome.status),
            outcome.reason,
            json.dumps([[h.url, h.status, h.note] for h in outcome.chain]),
            outcome.final_url,
            outcome.canonical_url,
            outcome.http_status,
            json.dumps([list(pair) for pair in outcome.headers]),
            outcome.fetched_at,
            None if document is None else document.sha256,
        ),
    )
    if outcome.status is SourceStatus.FAILED and previous_status == "resolved":
        return MergeCounts()
    fields: dict[str, object] = {"status": str(outcome.status), "reason": outcome.reason}
    if outcome.final_url is not None:
        host, path = url_location(outcome.final_url)
        fields.update(resolved_url=outcome.final_url, host=host, path=path)
    if document is not None:
        fields.update(fetched_at=outcome.fetched_at, content_hash=f"sha256:{document.sha256}")
        if not title and document.title:
            fields["title"] = document.title
    new_key = _identity(outcome) if outcome.status is SourceStatus.RESOLVED else None
    target = source_pk
    merged = MergeCounts()
    if new_key is not None and new_key != key:
        holder = db.execute("SELECT pk FROM sources WHERE key = ?", (new_key,)).fetchone()
        if holder is None:
            db.execute(
                "INSERT OR REPLACE INTO source_keys VALUES (?, ?, ?, ?, 'resolved')", (key, source_pk, url, utc_now())
            )
            fields["key"] = new_key
        else:
            target = int(holder[0])
            merged = merge_sources(db, source_pk, target)
            fields.pop("title", None)
    assignments = ", ".join(f"{name} = ?" for name in fields)
    db.execute(f"UPDATE sources SET {assignments} WHERE pk = ?", (*fields.values(), target))
    return merged


def _references(db: sqlite3.Connection, table: str) -> list[tuple[str, str]]:
    """``(table, column)`` of every foreign key that points at ``table`` (all tables, whatever added them)."""
    found = []
    for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall():
        for fk in db.execute(f"PRAGMA foreign_key_list({name})").fetchall():
            if fk[2] == table:
                found.append((name, fk[3]))
    return found


def _repoint(db: sqlite3.Connection, table: str, old: int, new: int, skip: frozenset[str] = frozenset()) -> None:
    """Point every reference to ``table`` row ``old`` at row ``new``. A reference that would duplicate one the
    new row already has (a set membership) is dropped, since the new row holds it."""
    for name, column in _references(db, table):
        if name in skip:
            continue
        db.execute(f'UPDATE OR IGNORE "{name}" SET "{column}" = ? WHERE "{column}" = ?', (new, old))
        db.execute(f'DELETE FROM "{name}" WHERE "{column}" = ?', (old,))


def _judgements(db: sqlite3.Connection, edge_pk: int) -> list[Judgement]:
    return [
        Judgement(Label(label), reviewer, Origin(origin), Stage(stage), created_at=created)
        for label, reviewer, origin, stage, created in db.execute(
            "SELECT label, reviewer, origin, stage, created_at FROM judgements WHERE edge_pk = ?", (edge_pk,)
        )
    ]


def _merge_edge(db: sqlite3.Connection, loser: int, survivor: int, loser_key: str) -> bool:
    """Merge edge ``loser`` into ``survivor`` (same claim, same page now); True when the result is disputed."""
    (from_state, from_code) = db.execute("SELECT review_state, final_code FROM edges WHERE pk = ?", (loser,)).fetchone()
    (into_state, into_code) = db.execute(
        "SELECT review_state, final_code FROM edges WHERE pk = ?", (survivor,)
    ).fetchone()
    # Locations, judgements and whatever else hangs off the edge move to the merged edge: nothing is lost.
    _repoint(db, "edges", loser, survivor)
    db.execute("DELETE FROM edges WHERE pk = ?", (loser,))
    state, label = review_outcome(_judgements(db, survivor))
    undecided = {PENDING_CODE}
    differing = (
        from_code not in undecided and into_code not in undecided and from_code != into_code
    ) or DISPUTED_CODE in (from_code, into_code)
    if differing:
        state, code = ReviewState.DISPUTED, DISPUTED_CODE
    elif label is not None:
        code = LABEL_CODE[label]
    else:
        code = DISPUTED_CODE if state is ReviewState.DISPUTED else PENDING_CODE
    (n_locations,) = db.execute("SELECT count(*) FROM edge_locations WHERE edge_pk = ?", (survivor,)).fetchone()
    db.execute(
        "UPDATE edges SET review_state = ?, final_code = ?, n_locations = ? WHERE pk = ?",
        (str(state), code, max(1, int(n_locations)), survivor),
    )
    db.execute(
        "INSERT INTO edge_merges (from_edge_pk, into_edge_pk, from_source_key, from_state, into_state, merged_state, "
        "merged_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (loser, survivor, loser_key, from_state, into_state, str(state), utc_now()),
    )
    return state is ReviewState.DISPUTED and differing


def merge_sources(db: sqlite3.Connection, loser: int, survivor: int) -> MergeCounts:
    """Merge source row ``loser`` into ``survivor``: its edges join the survivor's (same claim: one edge, locations
    and judgements kept, ``disputed`` when the labels differ), every other reference follows, its key is kept as a
    former key of the survivor."""
    key, url = db.execute("SELECT key, url FROM sources WHERE pk = ?", (loser,)).fetchone()
    edges = disputed = 0
    for edge_pk, claim_pk in db.execute("SELECT pk, claim_pk FROM edges WHERE source_pk = ?", (loser,)).fetchall():
        twin = db.execute("SELECT pk FROM edges WHERE claim_pk = ? AND source_pk = ?", (claim_pk, survivor)).fetchone()
        if twin is None:
            db.execute("UPDATE edges SET source_pk = ? WHERE pk = ?", (survivor, edge_pk))
            continue
        edges += 1
        disputed += _merge_edge(db, edge_pk, int(twin[0]), key)
    _repoint(db, "sources", loser, survivor, skip=frozenset({"edges"}))
    db.execute("INSERT OR REPLACE INTO source_keys VALUES (?, ?, ?, ?, 'merged')", (key, survivor, url, utc_now()))
    db.execute("DELETE FROM sources WHERE pk = ?", (loser,))
    return MergeCounts(1, edges, disputed)


def set_link(db: sqlite3.Connection, key: str, url: str, who: str) -> int:
    """Attach ``url`` to the source known as ``key`` (recorded with who and when); it becomes pending again."""
    pk = source_pk_of(db, key)
    db.execute(
        "INSERT INTO source_links (source_pk, url, set_by, set_at) VALUES (?, ?, ?, ?)", (pk, url, who, utc_now())
    )
    host, path = url_location(url)
    db.execute(
        "UPDATE sources SET url = ?, status = 'pending', reason = NULL, host = ?, path = ? WHERE pk = ?",
        (url, host, path, pk),
    )
    return pk


def snapshots_of(db: sqlite3.Connection, key: str) -> list[Snapshot]:
    """Every snapshot of a source, oldest first."""
    pk = source_pk_of(db, key)
    (current_key,) = db.execute("SELECT key FROM sources WHERE pk = ?", (pk,)).fetchone()
    snapshots = []
    for row in db.execute(
        "SELECT f.requested_url, f.final_url, f.canonical_url, f.fetched_at, f.http_status, f.headers, f.chain, "
        "d.sha256, d.media_type, d.size, d.title, d.published, d.updated, d.text "
        "FROM fetches f JOIN documents d ON d.sha256 = f.document_sha256 WHERE f.source_pk = ? ORDER BY f.pk",
        (pk,),
    ):
        requested, final, canonical, fetched_at, http_status, headers, chain, sha = row[:8]
        snapshots.append(
            Snapshot(
                current_key,
                requested,
                final,
                canonical,
                fetched_at,
                http_status,
                tuple((str(n), str(v)) for n, v in json.loads(headers)),
                tuple(Hop(u, s, note) for u, s, note in json.loads(chain)),
                f"sha256:{sha}",
                *row[8:],
            )
        )
    return snapshots


def latest_document(db: sqlite3.Connection, source_pk: int) -> tuple[str, str, str | None] | None:
    """``(sha256, text, date)`` of the document a source's latest snapshot read (``None`` before it has one);
    the date is the page's update date, else its publication date."""
    row = db.execute(
        "SELECT d.sha256, d.text, coalesce(d.updated, d.published) FROM fetches f "
        "JOIN documents d ON d.sha256 = f.document_sha256 WHERE f.source_pk = ? ORDER BY f.pk DESC LIMIT 1",
        (source_pk,),
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]), row[2])


def document_passages(db: sqlite3.Connection, sha256: str, text: str) -> list[Passage]:
    """The passages of one document's ``text``, in order."""
    return [
        Passage(text[start:end], start, end, ordinal)
        for ordinal, start, end in db.execute(
            'SELECT ordinal, start, "end" FROM passages WHERE document_sha256 = ? ORDER BY ordinal', (sha256,)
        )
    ]


def passages_of(db: sqlite3.Connection, key: str) -> list[Passage]:
    """Passages of a source's latest snapshot (empty when it has none)."""
    document = latest_document(db, source_pk_of(db, key))
    return [] if document is None else document_passages(db, document[0], document[1])


class Sources:
    """A store's sources (``store.sources``): which to resolve, the fetches of them, links set by hand, and
    their snapshots and passages."""

    def __init__(self, access: Access) -> None:
        self._access = access

    def to_resolve(
        self, *, refresh: bool = False, retry_failed: bool = False, keys: list[str] | None = None
    ) -> Selection:
        """The sources a resolver run reads, and how many it leaves alone and why."""
        return select_sources(self._access.db, refresh=refresh, retry_failed=retry_failed, keys=keys)

    def record_fetch(self, source_pk: int, outcome: FetchOutcome) -> MergeCounts:
        """Store one fetch of a source in one transaction (snapshot, passages, key, state, merges)."""
        with self._access.transaction() as db:
            return record_fetch(db, source_pk, outcome)

    def record_fetches(self, fetches: Sequence[tuple[int, FetchOutcome]]) -> list[MergeCounts]:
        """Store several fetches, in order, in one transaction."""
        with self._access.transaction() as db:
            return [record_fetch(db, source_pk, outcome) for source_pk, outcome in fetches]

    def set_link(self, key: str, url: str, who: str) -> int:
        """Attach a link to a source (a title-only card), recorded with who and when; returns its row id. ``who``
        is a review account, as everyone who records a decision is."""
        with self._access.transaction() as db:
            require_account(db, who, "source set-url", "--by")
            return set_link(db, key, url, who)

    def pk(self, key: str) -> int:
        """Row id of the source known now, or before, as ``key``."""
        return source_pk_of(self._access.db, key)

    def snapshots(self, key: str) -> list[Snapshot]:
        """Every snapshot of a source (current or former key), oldest first."""
        return snapshots_of(self._access.db, key)

    def passages(self, key: str) -> list[Passage]:
        """Passages, with character offsets, of a source's latest snapshot."""
        return passages_of(self._access.db, key)
