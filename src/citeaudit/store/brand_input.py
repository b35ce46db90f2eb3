"""What the brand figures and misattribution read from a database: the audit without its edges, each edge's
outcome (final label under the review policy, the reviewed passage, the latest human judgement time), and every
snapshot of the pages it uses. Reading outcomes instead of whole judgement histories keeps ``score`` fast."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from citeaudit.core.brand.columns import BrandColumns, SourceOwners, claim_text_read, identified_texts
from citeaudit.core.brand.figures import EdgeOutcome
from citeaudit.core.brand.results import IdentifierCheck
from citeaudit.core.drift import PageSnapshot
from citeaudit.core.identity import host_codes
from citeaudit.core.model import Audit, Label, Protocol
from citeaudit.core.scope import Scope
from citeaudit.core.scoring import DISPUTED_CODE, LABELS, ScoringColumns
from citeaudit.store.reading import (
    CURRENT_CLAIM,
    answers_in_scope,
    index_of,
    int_columns,
    read_audit,
)
from citeaudit.store.sqlite import Store

__all__ = [
    "claim_texts",
    "has_cross_pairs",
    "page_snapshots",
    "read_brand_columns",
    "read_outcomes",
    "source_locations",
]


def read_outcomes(store: Store, protocol: Protocol, protocol_pk: int) -> tuple[Audit, list[EdgeOutcome]]:
    """One protocol's audit without edges, and the outcome of each edge of its current claims."""
    db = store.connection
    audit = read_audit(db, protocol, protocol_pk, edges=False)
    edge_filter = (
        "e.claim_pk IN (SELECT c.pk FROM claims c JOIN answers a ON a.pk = c.answer_pk JOIN runs r "
        f"ON r.pk = a.run_pk WHERE r.protocol_pk = ? AND {CURRENT_CLAIM})"
    )
    reviewed: dict[int, tuple[str | None, str | None, bool]] = {}
    for edge_pk, passage, created_at in db.execute(
        f"SELECT j.edge_pk, j.passage, j.created_at FROM judgements j JOIN edges e ON e.pk = j.edge_pk "
        f"WHERE j.origin = 'human' AND {edge_filter} ORDER BY j.edge_pk, j.created_at, j.pk",
        (protocol_pk,),
    ):
        quoted = reviewed[edge_pk][0] if edge_pk in reviewed else None
        latest = created_at or (reviewed[edge_pk][1] if edge_pk in reviewed else None)
        reviewed[edge_pk] = (passage or quoted, latest, True)
    labels: list[Label | None] = [LABELS[code] if code < len(LABELS) else None for code in range(DISPUTED_CODE + 1)]
    unjudged = (None, None, False)
    # SQLite gives ints and strs already; a million edges are built here, so no conversions per row.
    outcomes = [
        EdgeOutcome(cid, key, labels[code], *reviewed.get(pk, unjudged))
        for pk, cid, key, code in db.execute(
            f"SELECT e.pk, c.id, s.key, e.final_code FROM edges e JOIN claims c ON c.pk = e.claim_pk "
            f"JOIN sources s ON s.pk = e.source_pk WHERE {edge_filter} ORDER BY e.pk",
            (protocol_pk,),
        )
    ]
    return audit, outcomes


def page_snapshots(store: Store, protocol_pk: int) -> list[PageSnapshot]:
    """Every snapshot with a document of the sources one protocol's answers use, oldest first per source."""
    return [
        PageSnapshot(str(key), str(fetched_at), f"sha256:{sha}", page_date)
        for key, fetched_at, sha, page_date in store.connection.execute(
            "SELECT s.key, f.fetched_at, f.document_sha256, coalesce(d.updated, d.published) FROM fetches f "
            "JOIN sources s ON s.pk = f.source_pk JOIN protocol_sources ps ON ps.source_pk = s.pk "
            "JOIN documents d ON d.sha256 = f.document_sha256 WHERE ps.protocol_pk = ? ORDER BY s.pk, f.fetched_at",
            (protocol_pk,),
        )
    ]


def source_locations(store: Store, protocol_pk: int) -> dict[str, tuple[str | None, str]]:
    """``key → (host, path)`` of the effective URL of each source one protocol's answers use (kept per source, so
    owners are decided without parsing URLs again)."""
    return {
        key: (host, path)
        for key, host, path in store.connection.execute(
            "SELECT s.key, s.host, s.path FROM sources s JOIN protocol_sources ps ON ps.source_pk = s.pk "
            "WHERE ps.protocol_pk = ?",
            (protocol_pk,),
        )
    }


def _texts(db: sqlite3.Connection, select: str, params: Sequence[object]) -> list[list[Any]]:
    """JSON arrays of one statement's row (``json_group_array``), parsed in C: a text column without a Python
    tuple per row."""
    row = db.execute(select, params).fetchone()
    return [json.loads(text) if text else [] for text in row]


def _path_reader(db: sqlite3.Connection, source_pks: list[int]) -> Callable[[npt.NDArray[np.int64]], list[str | None]]:
    """The paths of rows of ``source_pks`` (rows by position), each read from the database once, however many
    matchers ask."""
    known: dict[int, str | None] = {}

    def paths(rows: npt.NDArray[np.int64]) -> list[str | None]:
        missing = [source_pks[row] for row in rows.tolist() if source_pks[row] not in known]
        if missing:
            known.update(
                db.execute(
                    "SELECT pk, path FROM sources WHERE pk IN (SELECT value FROM json_each(?))", (json.dumps(missing),)
                ).fetchall()
            )
        return [known[source_pks[row]] for row in rows.tolist()]

    return paths


def read_brand_columns(
    store: Store,
    protocol: Protocol,
    protocol_pk: int,
    scope: Scope,
    check: IdentifierCheck,
    scoring: ScoringColumns,
    quoted_claims: Collection[str] = (),
    *,
    digits_needed: bool = False,
) -> BrandColumns:
    """The columns the brand figures read for the answers in ``scope``, beside the ``scoring`` columns just read
    for the same scope (their claims, edges and cited citations are used as they are, not read again): answer and
    claim texts, retrieved citations, owners decided once per host, each distinct claim text read once, and
    passages and judgement times only for the edges whose figures quote them. The edges of the claims that name a
    model identifier and of ``quoted_claims`` (claims with cross pairs) are put in the order of their keys, the
    order the figures list them in. ``digits_needed``: ``check`` names no identifier in a text without a digit
    (as :func:`citeaudit.checks.model_confusion`), so the others are not read."""
    db = store.connection
    answers_sql, params = answers_in_scope(protocol_pk, scope)
    owners = SourceOwners(protocol)
    names = (protocol.brand is not None and protocol.brand.names) or any(c.names for c in protocol.competitors)
    text = "a.text" if names else "''"
    rows = db.execute(
        "SELECT a.pk, a.id, q.id, r.id, a.platform, r.platform, a.model, r.model, a.locale, r.sample, "
        f"r.collected_at, {text}, a.retrieval {answers_sql} ORDER BY a.pk",
        params,
    ).fetchall()
    if len(rows) != len(scoring.answer_question):
        raise RuntimeError("the scoring columns are of another scope")
    locales = {q.id: q.locale for q in protocol.questions}
    answer_pks = np.array([r[0] for r in rows], dtype=np.int64)
    dims: dict[str, list[str | None]] = {
        "platform": [r[4] or r[5] for r in rows],
        "run": [r[3] for r in rows],
        "question": [r[2] for r in rows],
        "model": [r[6] or r[7] for r in rows],
        "locale": [r[8] or locales[r[2]] for r in rows],
        "sample": [None if r[9] is None else str(r[9]) for r in rows],
    }

    # sources: every source of the protocol, by pk; owners per host, paths read only where a prefix decides
    source_pk_list, keys, hosts, has_url = _texts(
        db,
        "SELECT json_group_array(pk), json_group_array(key), json_group_array(host), json_group_array(has_url) FROM "
        "(SELECT s.pk, s.key, s.host, coalesce(nullif(s.resolved_url, ''), nullif(s.url, '')) IS NOT NULL AS has_url "
        "FROM sources s JOIN protocol_sources ps ON ps.source_pk = s.pk WHERE ps.protocol_pk = ? ORDER BY s.pk)",
        [protocol_pk],
    )
    source_pks = np.array(source_pk_list, dtype=np.int64)
    if len(source_pks) > 1 and not bool(np.all(source_pks[1:] > source_pks[:-1])):
        order = np.argsort(source_pks, kind="stable").tolist()
        source_pks = source_pks[order]
        source_pk_list, keys, hosts, has_url = ([c[i] for i in order] for c in (source_pk_list, keys, hosts, has_url))
    located, rows_on = host_codes(host if url else None for host, url in zip(hosts, has_url, strict=True))
    owner = owners.owner_each(located, rows_on, _path_reader(db, source_pk_list), len(source_pks))
    owner[~np.asarray(has_url, dtype=np.bool_)] = owners.unknown

    in_scope = f"IN (SELECT a.pk {answers_sql})"
    retrieved_answer, retrieved_source = int_columns(
        db,
        ["c.answer_pk", "c.source_pk"],
        "citations c",
        f"WHERE c.kind = 'retrieved' AND c.source_pk IS NOT NULL AND c.answer_pk {in_scope}",
        params,
    )

    # With ``digits_needed`` only texts with a digit (or a character outside ASCII, where other digits are) are
    # read: the rest name no identifier.
    readable = "c.entity IS NOT NULL OR c.text GLOB '*[0-9]*' OR c.text GLOB '*[^ -~]*'" if digits_needed else "1"
    claim_pk_list, claim_ids, claim_texts, claim_entities = _texts(
        db,
        "SELECT json_group_array(c.pk), json_group_array(c.id), "
        f"json_group_array(CASE WHEN {readable} THEN c.text END), json_group_array(c.entity) FROM "
        f"(SELECT c.pk, c.id, c.text, c.entity FROM claims c WHERE c.answer_pk {in_scope} "
        f"AND {CURRENT_CLAIM} ORDER BY c.pk) c",
        params,
    )
    claim_pks = np.array(claim_pk_list, dtype=np.int64)
    if len(claim_pks) > 1 and not bool(np.all(claim_pks[1:] > claim_pks[:-1])):
        order = np.argsort(claim_pks, kind="stable").tolist()
        claim_pks = claim_pks[order]
        claim_ids, claim_texts, claim_entities = (
            [c[i] for i in order] for c in (claim_ids, claim_texts, claim_entities)
        )
    if len(claim_pks) != len(scoring.claim_answer):
        raise RuntimeError("the scoring columns are of another scope")
    identified = identified_texts(
        (
            (i, claim_text_read(t, e))
            for i, (t, e) in enumerate(zip(claim_texts, claim_entities, strict=True))
            if t is not None
        ),
        check,
    )

    edge_claim, edge_code = scoring.edge_claim, scoring.edge_code
    edge_source = index_of(scoring.edge_source, source_pks)
    # the edges whose order shows, put in the order of their keys (as a reading ordered by key lists them)
    quoted = np.zeros(len(claim_pks), dtype=np.bool_)
    if identified:
        quoted[np.fromiter(identified, dtype=np.int64)] = True
    wanted = set(quoted_claims)
    if wanted:
        quoted[[i for i, claim_id in enumerate(claim_ids) if claim_id in wanted]] = True
    positions = np.flatnonzero(quoted[edge_claim])
    edge_pks = np.zeros(len(edge_claim), dtype=np.int64)  # known for the edges of the quoted claims
    if len(positions):
        read_pk, read_claim, read_source = int_columns(
            db,
            ["e.pk", "e.claim_pk", "e.source_pk"],
            "edges e",
            "WHERE e.claim_pk IN (SELECT value FROM json_each(?))",
            [json.dumps(claim_pks[np.flatnonzero(quoted)].tolist())],
        )
        span = int(max(read_source.max(), scoring.edge_source.max())) + 1
        read_key = read_claim * span + read_source
        by_read_key = np.argsort(read_key, kind="stable")
        wanted_key = claim_pks[edge_claim[positions]] * span + scoring.edge_source[positions]
        pks = read_pk[by_read_key[np.searchsorted(read_key[by_read_key], wanted_key)]]
        edge_pks[positions] = pks
        by_key = np.argsort(pks, kind="stable")
        if bool(np.any(by_key != np.arange(len(pks)))):
            permutation = np.arange(len(edge_claim), dtype=np.int64)
            permutation[positions] = positions[by_key]
            edge_claim, edge_source, edge_code, edge_pks = (
                edge_claim[permutation],
                edge_source[permutation],
                edge_code[permutation],
                edge_pks[permutation],
            )

    passages: dict[int, str] = {}
    named = np.zeros(len(claim_pks), dtype=np.bool_)
    named[np.fromiter(identified, dtype=np.int64, count=len(identified))] = True
    named_edges = np.flatnonzero(named[edge_claim])
    if len(named_edges):
        position = dict(zip(edge_pks[named_edges].tolist(), named_edges.tolist(), strict=True))
        for edge_pk, passage in db.execute(
            "SELECT j.edge_pk, j.passage FROM judgements j WHERE j.origin = 'human' AND j.passage <> '' "
            "AND j.edge_pk IN (SELECT value FROM json_each(?)) ORDER BY j.edge_pk, j.created_at, j.pk",
            (json.dumps(list(position)),),
        ):
            passages[position[edge_pk]] = passage
    judged_at: dict[str, str | None] = {}
    official = np.flatnonzero(owner[edge_source] == 0)
    if len(official):
        pairs = np.stack([claim_pks[edge_claim[official]], source_pks[edge_source[official]]], axis=1)
        # each official edge found by its (claim, source) key: a walk of the pairs, not of every edge
        for source_pk, latest in db.execute(
            "SELECT e.source_pk, max(j.created_at) FROM json_each(?) p CROSS JOIN edges e "
            "ON e.claim_pk = json_extract(p.value, '$[0]') AND e.source_pk = json_extract(p.value, '$[1]') "
            "JOIN judgements j ON j.edge_pk = e.pk WHERE j.origin = 'human' GROUP BY e.source_pk",
            (json.dumps(pairs.tolist()),),
        ):
            # judged without a recorded time: judged all the same (None, "time unknown")
            judged_at[keys[int(np.searchsorted(source_pks, source_pk))]] = latest or None
    retrieved = index_of(retrieved_answer, answer_pks), index_of(retrieved_source, source_pks)
    return BrandColumns(
        answer_ids=[r[1] for r in rows],
        answer_questions=[r[2] for r in rows],
        answer_texts=[r[11] for r in rows],
        answer_collected=[r[10] for r in rows],
        answer_retrieval=[r[12] for r in rows],
        answer_dims=dims,
        source_keys=keys,
        source_owner=owner,
        cited_answer=scoring.citation_answer,
        cited_source=index_of(scoring.citation_source, source_pks),
        retrieved_answer=retrieved[0],
        retrieved_source=retrieved[1],
        claim_ids=claim_ids,
        claim_answer=scoring.claim_answer,
        claim_identified=identified,
        edge_claim=edge_claim,
        edge_source=edge_source,
        edge_code=edge_code,
        edge_passage=passages,
        judged_at=judged_at,
    )


def claim_texts(store: Store, protocol_pk: int, claim_ids: Iterable[str]) -> dict[str, str]:
    """The texts of the protocol's current claims with these ids (the few a misattribution case quotes)."""
    return dict(
        store.connection.execute(
            "SELECT c.id, c.text FROM claims c JOIN answers a ON a.pk = c.answer_pk JOIN runs r ON r.pk = a.run_pk "
            f"WHERE r.protocol_pk = ? AND {CURRENT_CLAIM} AND c.id IN (SELECT value FROM json_each(?))",
            (protocol_pk, json.dumps(sorted(set(claim_ids)))),
        ).fetchall()
    )


def has_cross_pairs(store: Store) -> bool:
    """Whether the database holds any cross pair."""
    return bool(store.connection.execute("SELECT EXISTS (SELECT 1 FROM cross_pairs)").fetchone()[0])
