"""Reading one protocol's engine tables out of the ledger in bounded batches (for the Parquet export).

Rows come out table by table and run by run, ``batch_rows`` at a time, in the column order of
:data:`citeaudit.convention_sql.TABLES`, so a writer holds one batch and one open file at a time whatever the
size of the ledger. Only current claims (their answer's newest claim set) and their edges are read, as
scoring reads them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from citeaudit.convention_sql import partition_value
from citeaudit.interchange import protocol_to_mapping
from citeaudit.model import Label, Protocol, Severity
from citeaudit.protocol import fingerprint
from citeaudit.sources.urls import OfficialMatcher
from citeaudit.store.reading import CURRENT_CLAIM

__all__ = ["TableBatch", "engine_table_batches"]


@dataclass(frozen=True, slots=True)
class TableBatch:
    """Some rows of one table in one partition."""

    table: str
    """Engine table name."""
    partition: tuple[tuple[str, str], ...]
    """Hive partition columns and values, outermost first."""
    rows: Sequence[tuple[object, ...]]
    """Rows in the table's column order (may be empty: the partition exists but has no rows)."""


_LABEL = "CASE e.final_code " + " ".join(f"WHEN {i} THEN '{label}'" for i, label in enumerate(Label)) + " END"

# One query per per-run table; `?` is the run's pk. Each starts from the run's answers (answers_run index).
_RUN_QUERIES: Mapping[str, str] = {
    "answers": (
        "SELECT a.pk, a.id, q.id, coalesce(a.platform, r.platform), coalesce(a.model, r.model), "
        "coalesce(a.locale, q.locale), CAST(r.sample AS TEXT), r.kind "
        "FROM answers a JOIN runs r ON r.pk = a.run_pk JOIN questions q ON q.pk = a.question_pk "
        "WHERE a.run_pk = ? ORDER BY a.pk"
    ),
    "claims": (
        "SELECT c.pk, c.id, c.answer_pk, c.fact_pk, c.severity FROM answers a JOIN claims c ON c.answer_pk = a.pk "
        f"WHERE a.run_pk = ? AND {CURRENT_CLAIM} ORDER BY c.pk"
    ),
    "edges": (
        f"SELECT e.claim_pk, e.source_pk, {_LABEL}, e.review_state FROM answers a "
        "JOIN claims c ON c.answer_pk = a.pk JOIN edges e ON e.claim_pk = c.pk "
        f"WHERE a.run_pk = ? AND {CURRENT_CLAIM}"
    ),
    "edge_locations": (
        "SELECT e.claim_pk, e.source_pk FROM answers a JOIN claims c ON c.answer_pk = a.pk "
        "JOIN edges e ON e.claim_pk = c.pk JOIN edge_locations l ON l.edge_pk = e.pk "
        f"WHERE a.run_pk = ? AND {CURRENT_CLAIM}"
    ),
    "citations": (
        "SELECT ci.answer_pk, ci.source_pk FROM answers a JOIN citations ci ON ci.answer_pk = a.pk "
        "WHERE a.run_pk = ? AND ci.kind = 'cited' AND ci.source_pk IS NOT NULL"
    ),
}


def _batches(
    cursor: sqlite3.Cursor, table: str, partition: tuple[tuple[str, str], ...], batch_rows: int
) -> Iterator[TableBatch]:
    first = True
    while True:
        rows = cursor.fetchmany(batch_rows)
        if rows or first:
            yield TableBatch(table, partition, rows)
        if len(rows) < batch_rows:
            return
        first = False


def engine_table_batches(
    db: sqlite3.Connection, protocol: Protocol, protocol_pk: int, *, batch_rows: int = 65536
) -> Iterator[TableBatch]:
    """Every engine table of one protocol, in batches of at most ``batch_rows`` rows."""
    part = (("protocol", partition_value(fingerprint(protocol))),)
    weights = dict(protocol.weights) if protocol.weights is not None else None
    yield TableBatch(
        "protocols",
        part,
        [
            (
                protocol.id,
                protocol.version,
                protocol.scoring,
                fingerprint(protocol),
                weights is not None,
                json.dumps(protocol_to_mapping(protocol), sort_keys=True, ensure_ascii=False),
            )
        ],
    )
    facts = db.execute(
        "SELECT f.pk, f.id, q.id, f.severity FROM required_facts f JOIN questions q ON q.pk = f.question_pk "
        "WHERE f.protocol_pk = ? ORDER BY q.ordinal, f.ordinal",
        (protocol_pk,),
    )
    for batch in _batches(facts, "required_facts", part, batch_rows):
        weighted = [
            (pk, fid, qid, severity, float(weights.get(Severity(str(severity)), 0.0)) if weights and severity else 0.0)
            for pk, fid, qid, severity in batch.rows
        ]
        yield TableBatch("required_facts", part, weighted)
    matcher = OfficialMatcher(protocol.official_domains)
    cursor = db.execute(
        "SELECT s.pk, s.key, s.host, s.path FROM protocol_sources ps JOIN sources s ON s.pk = ps.source_pk "
        "WHERE ps.protocol_pk = ? ORDER BY s.pk",
        (protocol_pk,),
    )
    while rows := cursor.fetchmany(batch_rows):
        yield TableBatch(
            "sources", part, [(pk, key, matcher.match_location(host, path)) for pk, key, host, path in rows]
        )
    runs = db.execute("SELECT pk, id FROM runs WHERE protocol_pk = ? ORDER BY pk", (protocol_pk,)).fetchall()
    for table, sql in _RUN_QUERIES.items():
        for run_pk, run_id in runs:
            yield from _batches(db.execute(sql, (run_pk,)), table, (*part, ("run", run_id)), batch_rows)
