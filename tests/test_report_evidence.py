"""What each number of the HTML report links to (the edges, pairs or answers behind it), the fact matrix with the
cause of each miss, and the problems a client acts on; every expected value counted by hand from the fixture."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import Result

from builders import answer, blob_edge_rows, claim, document, edge, protocol
from citeaudit.core.identity import identity_url
from citeaudit.core.model import Audit
from citeaudit.core.scoring import score
from citeaudit.interchange import load_audit
from citeaudit.report.evidence import build_index, fact_matrix, unpack_rows
from citeaudit.report.names import EngineNames

Cli = Callable[..., Result]


def _render(cli: Cli, source: Path, out: Path, *extra: str) -> tuple[str, dict[str, Any]]:
    result = cli("report", source, "--out", out, "--resamples", "100", *extra)
    assert result.exit_code == 0, result.stderr
    html = out.read_text(encoding="utf-8")
    blob = json.loads(re.search(r'<script type="application/json" id="evidence-data">(.*?)</script>', html, re.S)[1])
    # each set's sides as the page's script reads them (the blob packs them)
    blob["sets"] = {
        key: {**found, "n": unpack_rows(found["n"]), "d": unpack_rows(found["d"])}
        for key, found in blob["sets"].items()
    }
    blob["edges"] = blob_edge_rows(blob["edges"])  # the rows the page's script makes of the columns
    return html, blob


def _claims(blob: dict[str, Any], rows: list[int]) -> list[str]:
    return sorted(blob["claims"][blob["edges"][e][0]][0] for e in rows)


def test_the_four_claim_fixture_links_each_figure_to_its_rows(cli: Cli, four_claim_path: Path, tmp_path: Path) -> None:
    html, blob = _render(cli, four_claim_path, tmp_path / "r.html", "--kind", "fixture")
    sets = blob["sets"]
    # precision 1/3: three unique edges (c1–s1 cited twice is one edge, c2–s2, c3–s3); only c1's is supported
    precision = sets["precision:all"]
    assert _claims(blob, precision["d"]) == [
        "It can operate outdoors",
        "It is CE certified",
        "The AX220 has a 20 L tank",
    ]
    assert _claims(blob, precision["n"]) == ["The AX220 has a 20 L tank"]
    # coverage 1/4: one answer × four required facts; only f1 (claim c1, supported) is covered
    coverage = sets["coverage:all"]
    assert len(coverage["d"]) == 4
    assert [blob["pairs"][p][1] for p in coverage["n"]] == ["fx-f1"]
    # official rate 0/1: the one answer cites s1, s2 and s3 (example.org), none on axtorp-machines.com
    assert sets["official_rate:all"] == {"t": "Official-domain rate · all answers", "k": "a", "n": [], "d": [0]}
    # the card's number is the link to that set
    assert 'data-set="precision:all">1 of 3' in html
    # each edge row carries what a reader checks: claim, source, links, passage, label, reasoning, review state
    supported = blob["edges"][precision["n"][0]]
    assert supported[2] == "supported"
    assert supported[3] == "Tank capacity: 20 L"
    assert blob["sources"][supported[1]][1] == "https://s1.example.org/ax220"


def test_the_fact_matrix_names_the_cause_of_each_miss(cli: Cli, four_claim_path: Path, tmp_path: Path) -> None:
    html, _ = _render(cli, four_claim_path, tmp_path / "r.html", "--kind", "fixture")
    matrix = html.split('<table class="matrix">')[1].split("</table>")[0]
    cells = [
        re.sub(r"<[^>]+>", "", c) for c in re.findall(r'<td class="(?:covered|missed|mixed|na)">(.*?)</td>', matrix)
    ]
    # f1: c1 supported; f2: c2's only source conflicts; f3: c3's source is unknown; f4: c4 has no source
    assert cells == [
        "✓ covered",
        "✗ only conflicting sources",
        "✗ claim without a supported edge (best: unknown)",
        "✗ claim without a supported edge (no source cited for it)",
    ]
    assert "<th>fixture</th>" in matrix  # the one engine, recorded as "fixture", has no default name


def _problem_document() -> dict[str, Any]:
    """Two engines answer q1 (facts f1 critical, f2 low). Engine a: c1 (f1) cites a dead official page, judged
    conflicting; c2 (f2) cites a competitor's page, supported. Engine b: c3 (f1) cites an official page that
    redirects, judged partial; f2 unstated."""
    proto = protocol(
        [("f1", "critical"), ("f2", "low")],
        official=["brand.com"],
        competitors=[{"name": "Rival", "domains": ["rival.com"]}],
        engines={"openai": {"platform": "a", "label": "Engine A"}},
    )
    dead, moved, rival = "https://brand.com/old-spec", "https://brand.com/spec", "https://rival.com/spec"
    return document(
        [answer("a1", platform="a", citations=[dead, rival]), answer("b1", platform="b", run="r2", citations=[moved])],
        [claim("c1", "a1", "q1f1"), claim("c2", "a1", "q1f2"), claim("c3", "b1", "q1f1")],
        [
            edge("c1", dead, "conflicting", reasoning="says 30 L"),
            edge("c2", rival, "supported"),
            edge("c3", moved, "partial"),
        ],
        proto,
        runs=[{"id": "r1", "platform": "a"}, {"id": "r2", "platform": "b"}],
        sources=[
            {"key": identity_url(dead), "url": dead, "status": "failed", "reason": "http 404"},
            {
                "key": identity_url(moved),
                "url": moved,
                "resolved_url": "https://brand.com/products/spec",
                "status": "resolved",
            },
        ],
    )


def test_problems_come_first_and_name_answer_and_engine(
    cli: Cli, write_json: Callable[..., Path], tmp_path: Path
) -> None:
    source = write_json(_problem_document(), "problems.json")
    html, blob = _render(cli, source, tmp_path / "r.html")
    assert html.index('id="problems"') < html.index('id="scores"')
    claims = html.split('id="problem-claims"')[1].split("</table>")[0]
    rows = re.findall(r"<tr><td>(.*?)</td><td[^>]*>(.*?)</td><td>(.*?)</td><td>(.*?)</td>", claims)
    # c1 (critical, conflicting) before c3 (critical, only partial); c2 is supported and not listed
    assert [(r[0], r[1], re.sub(r"<[^>]+>", "", r[2]), r[3]) for r in rows] == [
        ("critical", "conflicting", "claim c1", "Engine A"),
        ("critical", "unsupported", "claim c3", "b"),
    ]
    pages = html.split('id="problem-pages"')[1].split("</table>")[0]
    assert "dead (http 404)" in pages
    assert "redirected to https://brand.com/products/spec" in pages
    # the dead official page is marked in the official citations too, not listed silently among them
    official = html.split('id="official"')[1].split("</table>")[0]
    assert "✗ dead link (http 404)" in official
    competitor = html.split('id="problem-competitors"')[1].split("</table>")[0]
    assert re.sub(r"<[^>]+>", "", competitor).count("Rival") == 1
    assert "claim c2" in competitor
    # the matrix: f1 for engine A conflicts only; for b the best label is partial; f2 for b is unstated
    matrix = html.split('<table class="matrix">')[1].split("</table>")[0]
    text = re.sub(r"<[^>]+>", "", matrix)
    assert "✗ only conflicting sources" in text
    assert "✗ claim without a supported edge (best: partial)" in text
    assert "✗ no claim states it" in text
    assert "<th>Engine A</th>" in matrix
    assert blob["answers"][0][1] == "Engine A"


def _random_audit(labels: list[list[str | None]], mapped: list[bool]) -> Audit:
    from citeaudit.interchange.reader import audit_from_document
    from citeaudit.interchange.schema import AuditDocument

    answers = [answer(f"a{i}", platform=f"p{i % 3}", citations=[]) for i in range(len(labels))]
    claims, edges = [], []
    for i, row in enumerate(labels):
        for j, label in enumerate(row):
            cid = f"c{i}-{j}"
            claims.append(claim(cid, f"a{i}", "q1f1" if mapped[(i + j) % len(mapped)] else None))
            if label != "none":
                edges.append(edge(cid, f"https://s{j}.example/{i}", label))
    doc = AuditDocument.model_validate(document(answers, claims, edges))
    return audit_from_document(doc, "random")


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["supported", "partial", "conflicting", "unknown", None, "none"]), max_size=4),
        min_size=1,
        max_size=6,
    ),
    st.lists(st.booleans(), min_size=1, max_size=5),
)
def test_every_set_adds_up_to_the_scorer_s_figures(labels: list[list[str | None]], mapped: list[bool]) -> None:
    audit = _random_audit(labels, mapped)
    overall = score(audit).overall
    index = build_index(audit, str, {})
    answers = list(index.answer_of.values())
    for name in ("precision", "coverage", "official_rate"):
        key = index.metric_set(name, name, name, answers, getattr(overall, name))
        # never a list that disagrees with the figure it stands behind
        assert key is not None
        assert set(index.sets[key]["n"]) <= set(index.sets[key]["d"])
    matrix = fact_matrix(audit, index, {})
    # one row for the one required fact; each engine's cell counts that engine's answers
    assert len(matrix.rows) == 1
    assert sum(len(index.sets[c[2]]["d"]) for c in matrix.rows[0][2] if c[2]) == overall.required.pairs


def test_the_fact_matrix_splits_engines_by_collection_when_there_are_several(
    write_json: Callable[..., Path],
) -> None:
    audit = load_audit(write_json(_problem_document(), "problems.json"))
    index = build_index(audit, EngineNames(audit.protocol), {}, {"a1": "2026-10", "b1": "2026-11"})
    matrix = fact_matrix(audit, index, {})
    # one column per (engine, collection) that answered, ordered by collection: a1 is Engine A's in 2026-10,
    # b1 is b's in 2026-11
    assert matrix.columns == ("Engine A · 2026-10", "b · 2026-11")
    # f1 in 2026-10 (Engine A): c1 conflicts; f2: c2 is supported; for b, f1's claim is partial and f2 unstated
    cells = [[text for text, _, _ in row[2]] for row in matrix.rows]
    assert cells == [
        ["only conflicting sources", "claim without a supported edge (best: partial)"],
        ["covered", "no claim states it"],
    ]
    # one collection: the columns are the engines alone
    single = fact_matrix(audit, build_index(audit, EngineNames(audit.protocol), {}, None), {})
    assert single.columns == ("Engine A", "b")


@settings(max_examples=400, deadline=None)
@given(st.sets(st.integers(0, 400)), st.integers(0, 70))
def test_a_packed_set_side_unpacks_to_its_rows(rows: set[int], threshold: int) -> None:
    """Packing is undone by ``unpack_rows`` (the page's script reads it the same way), and numpy packs as the loop
    does (the threshold between them moved from 0, numpy for all, to past any size, the loop for all)."""
    import citeaudit.report.evidence as evidence

    ordered = sorted(rows)
    packed = evidence.pack_rows(ordered)
    assert unpack_rows(packed) == ordered
    original = evidence._PACKED_BY_NUMPY
    try:
        evidence._PACKED_BY_NUMPY = threshold
        assert evidence.pack_rows(ordered) == packed
    finally:
        evidence._PACKED_BY_NUMPY = original
    # one number per row that does not follow the one before (from -1), and one per run of rows that do
    step = [r == 0 or r - 1 in rows for r in ordered]
    run_starts = sum(1 for i, s in enumerate(step) if s and (i == 0 or not step[i - 1]))
    assert len(packed) == step.count(False) + run_starts


def test_packed_sides_as_documented() -> None:
    from citeaudit.report.evidence import pack_rows

    # [3, 5, 6, 7, 10]: 3 (from -1), 5 (gap 1), then 6 and 7 one after the other (-2), 10 (gap 2)
    assert pack_rows([3, 5, 6, 7, 10]) == [3, 1, -2, 2]
    # every row from 0: one run from -1
    assert pack_rows(list(range(100_000))) == [-100_000]
    assert pack_rows([]) == []
    assert unpack_rows([3, 1, -2, 2]) == [3, 5, 6, 7, 10]
