"""The scoring paths that do not start from model objects give the reference scorer's numbers: a database read
as integer columns (whole, and in rowid ranges as a large table is read)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeaudit import Store, score_reference
from citeaudit.core.model import OfficialDomain
from citeaudit.scoring.paths import score_path
from citeaudit.store import reading
from test_properties import assert_close, audit_documents, parse

PATHS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _with_hosts(doc: dict[str, Any], hosts: list[dict[str, str]]) -> dict[str, Any]:
    """The document with path-scoped official hosts added (the store decides those per path, not per host)."""
    protocol = {**doc["protocol"], "official_domains": [*doc["protocol"]["official_domains"], *hosts]}
    return {**doc, "protocol": protocol}


HOSTS = st.lists(
    st.sampled_from(
        [
            {"host": "review.org", "path_prefix": "/ax220"},
            {"host": "forum.net", "path_prefix": "/t/"},
            {"host": "notbrand.com"},
            {"host": "review.org", "path_prefix": "/other"},
        ]
    ),
    max_size=2,
    unique_by=lambda h: tuple(sorted(h.items())),
)


@PATHS
@given(audit_documents(), HOSTS, st.sampled_from([(), ("platform",), ("run", "question"), ("locale", "model")]))
def test_database_columns_equal_reference(doc: dict[str, Any], hosts: list[dict[str, str]], by: Any) -> None:
    doc = _with_hosts(doc, hosts)
    audit = parse(doc)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "audit.db"
        with Store(path) as store:
            store.import_audit(audit, json.dumps(doc).encode(), "generated.json")
        found = score_path(path, by=by, macro=True).result.to_dict()
    assert_close(found, score_reference(audit, by=by, macro=True).to_dict())


@PATHS
@given(audit_documents(), st.sampled_from([("platform",), ("question",)]))
def test_database_read_in_rowid_ranges_equals_reference(doc: dict[str, Any], by: Any) -> None:
    audit = parse(doc)
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        path = Path(folder) / "audit.db"
        with Store(path) as store:
            store.import_audit(audit, json.dumps(doc).encode(), "generated.json")
        # ranges of 2 rowids: every table of more than two rows is read in several statements
        patch.setattr(reading, "_TEXT_CHUNK_ROWS", 2)
        found = score_path(path, by=by, macro=True).result.to_dict()
    assert_close(found, score_reference(audit, by=by, macro=True).to_dict())


@PATHS
@given(audit_documents(), st.sampled_from([0.0, 2.0]), st.sampled_from(["p1", "p2"]))
def test_a_scope_reads_only_its_edges_by_either_plan(doc: dict[str, Any], share: float, platform: str) -> None:
    from citeaudit.core.scope import Scope, select_audit

    audit = parse(doc)
    scope = Scope(where={"platform": frozenset({platform})})
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        path = Path(folder) / "audit.db"
        with Store(path) as store:
            store.import_audit(audit, json.dumps(doc).encode(), "generated.json")
        # 0.0: the whole edges table is scanned and other answers' edges dropped; 2.0: only the scope's are read
        patch.setattr(reading, "_WHOLE_SCAN_SHARE", share)
        found = score_path(path, scope=scope, by=("question",), macro=True).result.to_dict()
    expected = score_reference(select_audit(audit, scope)[0], by=("question",), macro=True).to_dict()
    assert_close(found, expected)


def test_official_hosts_are_decided_by_path_only_where_declared() -> None:
    from citeaudit.core.identity import OfficialMatcher

    matcher = OfficialMatcher(
        (
            OfficialDomain(domain="brand.com"),
            OfficialDomain(host="review.org", path_prefix="/ax220"),
            OfficialDomain(host="x.net", path_prefix="/"),
        )
    )
    # brand.com by its registrable domain, x.net for every path ("/"), review.org by path, others never
    assert [matcher.match_host(h) for h in ("shop.brand.com", "x.net", "review.org", "notbrand.com", None)] == [
        True,
        True,
        None,
        False,
        False,
    ]


def _arrow_tables(audit: Any) -> dict[str, Any]:
    """The audit in the columnar layout, written by hand from its objects (rows in the audit's order)."""
    import pyarrow as pa

    from citeaudit.core.identity import url_location
    from citeaudit.core.scoring import LABELS, edge_code

    runs = {run.id: run for run in audit.runs}
    answer_row = {a.id: i for i, a in enumerate(audit.answers)}
    claim_row = {c.id: i for i, c in enumerate(audit.claims)}
    source_row = {s.key: i for i, s in enumerate(audit.sources)}
    names = [str(label) for label in LABELS] + ["pending", "disputed"]
    locations = [
        (claim_row[e.claim_id], source_row[e.source_key], names[edge_code(e.judgements)[1]])
        for e in audit.edges
        for _ in e.locations
    ]
    places = [
        url_location(s.resolved_url or s.url) if (s.resolved_url or s.url) else (None, "/") for s in audit.sources
    ]
    cited = [
        (answer_row[a.id], source_row[c.source_key])
        for a in audit.answers
        for c in a.citations
        if c.kind == "cited" and c.source_key is not None
    ]
    return {
        "answers": pa.table(
            {
                "question": [a.question_id for a in audit.answers],
                "platform": [a.platform or runs[a.run_id].platform for a in audit.answers],
                "run": [a.run_id for a in audit.answers],
                "model": [a.model or runs[a.run_id].model for a in audit.answers],
                "locale": [a.locale for a in audit.answers],
            },
            schema=pa.schema([(n, pa.string()) for n in ("question", "platform", "run", "model", "locale")]),
        ),
        "claims": pa.table(
            {
                "answer": pa.array([answer_row[c.answer_id] for c in audit.claims], pa.int64()),
                "fact": pa.array([c.required_fact_id for c in audit.claims], pa.string()),
                "severity": pa.array(
                    [None if c.severity is None else str(c.severity) for c in audit.claims], pa.string()
                ),
            }
        ),
        "locations": pa.table(
            {
                "claim": pa.array([row[0] for row in locations], pa.int64()),
                "source": pa.array([row[1] for row in locations], pa.int64()),
                "label": pa.array([row[2] for row in locations], pa.string()),
            }
        ),
        "sources": pa.table(
            {
                "host": pa.array([h for h, _ in places], pa.string()),
                "path": pa.array([p for _, p in places], pa.string()),
            }
        ),
        "citations": pa.table(
            {
                "answer": pa.array([a for a, _ in cited], pa.int64()),
                "source": pa.array([s for _, s in cited], pa.int64()),
            }
        ),
    }


@PATHS
@given(
    audit_documents(),
    HOSTS,
    st.sampled_from([(), ("platform",), ("run", "question"), ("locale", "model")]),
    st.sampled_from([2, 7, None]),
)
def test_arrow_and_parquet_columns_equal_reference(
    doc: dict[str, Any], hosts: list[dict[str, str]], by: Any, row_group_size: int | None
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from citeaudit.scoring.columnar import read_parquet_tables, score_arrow, score_parquet

    audit = parse(_with_hosts(doc, hosts))
    tables = _arrow_tables(audit)
    expected = score_reference(audit, by=by, macro=True).to_dict()
    assert_close(score_arrow(audit.protocol, tables, by=by, macro=True).to_dict(), expected)
    with tempfile.TemporaryDirectory() as folder:
        for name, table in tables.items():
            # a column the layout does not have, as an application's own files may carry
            notes = pa.array([f"note {i}" for i in range(table.num_rows)], pa.string())
            # row groups of 2 or 7 rows: several chunks, each with a dictionary of its own, as large files have;
            # None: one group
            path = Path(folder) / f"{name}.parquet"
            pq.write_table(table.append_column("notes", notes), path, row_group_size=row_group_size)
        assert_close(score_parquet(folder, audit.protocol, by=by, macro=True).to_dict(), expected)
        # only the layout's columns are read
        assert {name: t.column_names for name, t in read_parquet_tables(folder).items()} == {
            name: t.column_names for name, t in tables.items()
        }


def test_a_bad_reference_or_label_is_refused_with_its_table_row_and_value() -> None:
    import pyarrow as pa

    from citeaudit.core.errors import InvalidValue, UnknownReference
    from citeaudit.core.model import Protocol, Question
    from citeaudit.scoring.columnar import score_arrow

    protocol = Protocol("p", "1", questions=(Question("q0", "Q?"),))
    tables = {
        "answers": pa.table({"question": ["q0", "q0"]}),
        "claims": pa.table({"answer": pa.array([0, 1, 1], pa.int64())}),
        "locations": pa.table(
            {
                "claim": pa.array([0, 2], pa.int64()),
                "source": pa.array([0, 0], pa.int64()),
                "label": ["supported", "ok"],
            }
        ),
        "sources": pa.table({"host": ["brand.com"]}),
    }
    with pytest.raises(InvalidValue, match=r"locations\[1\]\.label: 'ok' is not a label"):
        score_arrow(protocol, tables)
    # claim row 2 of locations is valid (3 claims); claim 3 is not
    bad = {**tables, "locations": tables["locations"].set_column(0, "claim", pa.array([0, 3], pa.int64()))}
    with pytest.raises(UnknownReference, match=r"locations\[1\]\.claim: 3 is not a row of claims \(3 rows\)"):
        score_arrow(protocol, bad)
    unknown = {**tables, "answers": pa.table({"question": ["q0", "q9"]})}
    with pytest.raises(InvalidValue, match=r"answers\[1\]\.question: 'q9' is not a question id"):
        score_arrow(protocol, unknown)
