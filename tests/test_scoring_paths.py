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
from citeaudit.api import score_path
from citeaudit.model import OfficialDomain
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


def test_official_hosts_are_decided_by_path_only_where_declared() -> None:
    from citeaudit.identity import OfficialMatcher

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
