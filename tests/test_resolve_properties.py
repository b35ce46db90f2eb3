"""Property: however cited pages turn out to coincide, merging loses no judgement and no location, leaves one edge
per (claim, page), and disputes exactly the merged edges whose final labels differed. Outcomes are recorded
directly (no network): this is the store's merge logic under every arrangement hypothesis finds."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.builders import answer, claim, document

from citeaudit.core.model import Judgement, Label, ReviewState, SourceStatus, review_outcome
from citeaudit.interchange import parse_audit_bytes
from citeaudit.store import Store
from citeaudit.store.records import FetchOutcome, Hop

LABELS = [None, "supported", "partial", "conflicting", "irrelevant", "unknown"]

TIMES = ["2026-01-01T00:00:00+00:00", "2026-01-02T00:00:00+00:00", "2026-01-03T00:00:00+00:00"]

# Raw URL n resolves to page pages[n]; each edge row is (claim, raw URL, label, reviewer, time) as indexes.
arrangement = st.integers(min_value=1, max_value=5).flatmap(
    lambda n_urls: st.tuples(
        st.lists(st.integers(0, 1), min_size=n_urls, max_size=n_urls),
        st.lists(
            st.tuples(
                st.integers(0, 1),
                st.integers(0, n_urls - 1),
                st.integers(0, len(LABELS) - 1),
                st.integers(0, 1),
                st.integers(0, len(TIMES) - 1),
            ),
            min_size=1,
            max_size=10,
        ),
    )
)


@settings(max_examples=80, deadline=None)
@given(arrangement)
def test_merging_keeps_every_judgement_and_location(
    case: tuple[list[int], list[tuple[int, int, int, int, int]]],
) -> None:
    pages, rows = case
    edges = []
    # The final label of each (claim, raw URL) edge before any merge, by the same review policy the store uses.
    judged: dict[tuple[int, int], list[Judgement]] = {}
    for ci, ui, li, ri, ti in rows:
        row = {"claim_id": f"c{ci}", "url": f"https://raw.test/u{ui}", "marker": f"[{len(edges)}]"}
        judged.setdefault((ci, ui), [])
        if LABELS[li] is not None:
            row.update(label=LABELS[li], reviewer=f"r{ri}", created_at=TIMES[ti])
            judged[(ci, ui)].append(Judgement(Label(LABELS[li]), f"r{ri}", created_at=TIMES[ti]))
        edges.append(row)
    before = {pair: review_outcome(found) for pair, found in judged.items()}
    doc = document([answer("a1")], [claim(f"c{n}", "a1") for n in range(3)], edges)
    payload = json.dumps(doc).encode()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.db"
        with Store(path) as store:
            store.import_audit(parse_audit_bytes(payload, "p.json"), payload, "p.json")
            with sqlite3.connect(path) as db:
                before_judgements = db.execute("SELECT count(*) FROM judgements").fetchone()[0]
                before_locations = db.execute("SELECT count(*) FROM edge_locations").fetchone()[0]
            for source in store.sources.to_resolve().todo:
                index = int(source.url.rsplit("u", 1)[1])
                final = f"https://page.test/p{pages[index]}"
                outcome = FetchOutcome(
                    source.url, SourceStatus.RESOLVED, None, (Hop(final, 200),), "2026-01-01T00:00:00+00:00",
                    final_url=final, http_status=200,
                )  # fmt: skip
                store.sources.record_fetch(source.pk, outcome)
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT count(*) FROM judgements").fetchone()[0] == before_judgements
            assert db.execute("SELECT count(*) FROM edge_locations").fetchone()[0] == before_locations
            assert db.execute("SELECT sum(n_locations) FROM edges").fetchone()[0] == before_locations
            merged = {
                (claim_id, key): state
                for claim_id, key, state in db.execute(
                    "SELECT c.id, s.key, e.review_state FROM edges e JOIN claims c ON c.pk = e.claim_pk "
                    "JOIN sources s ON s.pk = e.source_pk"
                )
            }
            expected_pairs = {(f"c{ci}", f"https://page.test/p{pages[ui]}") for ci, ui, *_ in rows}
            assert set(merged) == expected_pairs  # one edge per (claim, page)
            for (claim_id, key), state in merged.items():
                ci, page = int(claim_id[1:]), int(key.rsplit("p", 1)[1])
                parts = [before[(c, u)] for (c, u) in before if c == ci and pages[u] == page]
                decided = {label for _, label in parts if label is not None}
                if len(parts) == 1:
                    assert state == str(parts[0][0])  # nothing merged: the edge is as it was
                elif len(decided) > 1 or any(s is ReviewState.DISPUTED for s, _ in parts):
                    assert state == "disputed"  # merged edges whose labels differ go back to review
                else:
                    assert state != "disputed"
