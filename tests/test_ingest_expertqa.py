"""ExpertQA: the real files in ../shared/data/expertqa against an independent count written here."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest
from typer.testing import Result

from citeaudit import Label, Store, score, score_path
from citeaudit.ingest import read_files
from conftest import SHARED

DATA = SHARED / "data" / "expertqa"
FILES = sorted(DATA.glob("*.jsonl")) if DATA.is_dir() else []
needs_data = pytest.mark.skipif(not FILES, reason=f"ExpertQA files not found in {DATA}")


def plain_key(url: str) -> str:
    """Source identity written independently of the library: no fragment, lower-case host, no utm_*."""
    parts = urlsplit(url)
    query = sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not k.startswith("utm_"))
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", urlencode(query), ""))


def expected_counts(files: list[Path]) -> dict[str, Counter[str]]:
    """Per system: answers, claims, edges and supported edges, counted straight from the JSON."""
    seen: set[tuple[str, str, str]] = set()
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for file in files:
        for line in file.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            for system, answer in row["answers"].items():
                key = (row["question"], system, answer["answer_string"])
                if key in seen:
                    continue  # the same answer in another split is one answer
                seen.add(key)
                counts[system]["answers"] += 1
                for claim in answer["claims"]:
                    counts[system]["claims"] += 1
                    if claim["support"] == "Missing":
                        continue
                    urls = {plain_key(e.split()[1]) for e in claim["evidence"] or []}
                    counts[system]["edges"] += len(urls)
                    if len(urls) == 1 and claim["support"] == "Complete":
                        counts[system]["supported"] += 1
                    if len(urls) > 1:
                        counts[system]["groups"] += 1
    return counts


@needs_data
def test_real_files_match_an_independent_count() -> None:
    (prepared,) = read_files(FILES)
    audit = prepared.audit
    result = score(audit, by=["platform"])
    expected = expected_counts(FILES)
    assert {dict(g.by)["platform"] for g in result.groups} == set(expected)
    claims_per_platform: Counter[str] = Counter()
    platform_of = {a.id: a.platform for a in audit.answers}
    for claim in audit.claims:
        claims_per_platform[str(platform_of[claim.answer_id])] += 1
    groups_per_platform: Counter[str] = Counter()
    claim_platform = {c.id: platform_of[c.answer_id] for c in audit.claims}
    for group in audit.evidence_groups:
        groups_per_platform[str(claim_platform[group.claim_id])] += 1
    for group in result.groups:
        system = str(dict(group.by)["platform"])
        want = expected[system]
        assert group.answers == want["answers"], system
        assert claims_per_platform[system] == want["claims"], system
        assert group.edges.unique == want["edges"], system
        assert group.edges.by_label[Label.SUPPORTED] == want["supported"], system
        assert groups_per_platform[system] == want["groups"], system
    # no required facts in ExpertQA: coverage is undefined, never 0
    assert result.coverage.value is None
    assert result.coverage.denominator == 0


@needs_data
def test_ingest_command_reads_the_splits_as_one_dataset(cli: Callable[..., Result], tmp_path: Path) -> None:
    db = tmp_path / "expertqa.db"
    result = cli("ingest", *FILES, "--db", db)
    assert result.exit_code == 0, result.stderr
    expected = expected_counts(FILES)
    assert f"{sum(c['answers'] for c in expected.values())} answers" in result.stdout
    body = score_path(db).result
    assert body.overall.edges.unique == sum(c["edges"] for c in expected.values())
    with Store(db) as store:
        (payloads,) = store._db.execute("SELECT count(*) FROM payloads").fetchone()
    assert payloads == 1
    assert "already imported" in cli("ingest", *FILES, "--db", db).stdout


def test_mapping_rules_on_a_constructed_line(tmp_path: Path) -> None:
    row: dict[str, Any] = {
        "question": "How big is the AX220 tank?",
        "answers": {
            "sys-a": {
                "answer_string": "It holds 20 L [1]. It runs outdoors [2][3]. It is red [4]. It is quiet [5].",
                "attribution": [
                    "[1] https://a.org/x",
                    "[2] https://b.org/y",
                    "[3] https://c.org/z",
                    "[4] https://d.org/w",
                    "[5] https://e.org/v",
                ],
                "claims": [
                    # one source, Complete → supported, passage kept
                    {
                        "claim_string": "It holds 20 L [1].",
                        "support": "Complete",
                        "evidence": ["[1] https://a.org/x#:~:text=tank\n\nTank: 20 L"],
                    },
                    # two sources → both edges pending + one evidence group with the decision (partial)
                    {
                        "claim_string": "It runs outdoors [2][3].",
                        "support": "Incomplete",
                        "evidence": ["[2] https://b.org/y", "[3] https://c.org/z"],
                    },
                    # Missing → no edge
                    {"claim_string": "It is red [4].", "support": "Missing", "evidence": ["[4] https://d.org/w"]},
                    # no support value → pending
                    {"claim_string": "It is quiet [5].", "support": None, "evidence": ["[5] https://e.org/v"]},
                ],
            }
        },
    }
    path = tmp_path / "mini.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    (prepared,) = read_files([path])
    audit = prepared.audit
    assert len(audit.answers) == 1  # the repeated line is the same answer
    edges = {(e.claim_id.rsplit("-", 1)[1], e.source_key): e for e in audit.edges}
    # c1: 1 edge supported; c2: 2 pending edges; c3 (Missing): none; c4: 1 pending edge → 4 edges
    assert len(edges) == 4
    supported = edges[("c1", "https://a.org/x")]
    assert supported.final_label is Label.SUPPORTED
    assert supported.judgements[0].passage == "Tank: 20 L"
    assert edges[("c2", "https://b.org/y")].final_label is None
    assert edges[("c4", "https://e.org/v")].final_label is None
    (group,) = audit.evidence_groups
    assert group.label is Label.PARTIAL
    assert group.source_keys == ("https://b.org/y", "https://c.org/z")
    claim = audit.claims[1]
    assert audit.answers[0].text[claim.start : claim.end] == "It runs outdoors [2][3]."
    result = score(audit)
    # 1 supported of 4 edges; 3 pending
    assert (result.precision.numerator, result.precision.denominator, result.overall.edges.pending) == (1, 4, 3)
