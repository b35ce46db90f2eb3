"""Small audit documents for tests, written in the interchange format (the format users write)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

FORMAT = "citeaudit.audit/v1"


def protocol(
    facts: list[tuple[str, str | None]] | None = None,
    official: list[Any] | None = None,
    questions: int = 1,
    **extra: Any,
) -> dict[str, Any]:
    """A protocol with ``questions`` questions (q1, q2, …), each requiring ``facts`` [(id suffix, severity)]."""
    facts = [("f1", "high")] if facts is None else facts
    return {
        "id": "test-protocol",
        "version": "1",
        "official_domains": ["brand.com"] if official is None else official,
        "questions": [
            {
                "id": f"q{n}",
                "text": f"Question {n}?",
                "locale": "en-GB",
                "required_facts": [
                    {"id": f"q{n}{fid}", "text": f"fact {fid}", **({"severity": sev} if sev else {})}
                    for fid, sev in facts
                ],
            }
            for n in range(1, questions + 1)
        ],
        **extra,
    }


def document(
    answers: list[dict[str, Any]],
    claims: list[dict[str, Any]],
    edges: list[dict[str, Any]],
    proto: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A whole audit document."""
    return {
        "format": FORMAT,
        "protocol": protocol() if proto is None else proto,
        "answers": answers,
        "claims": claims,
        "edges": edges,
        **extra,
    }


def answer(
    aid: str,
    question: str = "q1",
    platform: str = "p1",
    run: str = "r1",
    citations: list[str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An answer whose text is long enough for any span used in tests."""
    return {
        "id": aid,
        "question_id": question,
        "run_id": run,
        "platform": platform,
        "text": "x" * 200,
        "citations": [{"url": url} for url in (citations or [])],
        **extra,
    }


def claim(cid: str, aid: str, fact: str | None = None, **extra: Any) -> dict[str, Any]:
    """A claim of answer ``aid``, optionally mapped to required fact ``fact``."""
    return {
        "id": cid,
        "answer_id": aid,
        "text": f"claim {cid}",
        **({"required_fact_id": fact} if fact else {}),
        **extra,
    }


def edge(cid: str, url: str, label: str | None = None, **extra: Any) -> dict[str, Any]:
    """One citation location of (claim, url), with an inline label when given."""
    return {"claim_id": cid, "url": url, **({"label": label} if label else {}), **extra}


def clone(doc: dict[str, Any]) -> dict[str, Any]:
    """A deep copy to mutate."""
    return copy.deepcopy(doc)


def add_reviewer(db: Path, name: str, role: str = "reviewer") -> None:
    """A review account with no usable password, for decisions recorded through the CLI or the library (every
    name that records a decision is an account)."""
    from citeaudit.store.review import ReviewStore

    ReviewStore.prepare(db)
    with ReviewStore(db) as store:
        store.accounts.add_reviewer(name, role, "no password")


def blob_edge_rows(edges: dict[str, Any]) -> list[list[Any]]:
    """The report blob's edges as rows, as the page's script makes them from the columns: claim row, source row,
    shown label, passage, period, reasoning, review, link."""
    texts, labels, states = edges["t"], edges["K"], edges["R"]
    columns = zip(edges["c"], edges["s"], edges["k"], edges["r"], edges["v"], edges["l"], strict=True)
    return [
        [claim, source, labels[label], *texts[3 * i : 3 * i + 3], states[state] + reviewer, link]
        for i, (claim, source, label, state, reviewer, link) in enumerate(columns)
    ]
