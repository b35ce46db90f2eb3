"""Turn answer records read from engine payloads into an audit under a protocol.

Each answer is attached to a question, a run and a platform; each claim candidate becomes a claim with one
pending edge per cited source (duplicated markers collapse into one edge with several locations). The
result goes through the same checks as an interchange document, so both paths share one set of rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from citeaudit.errors import InvalidValue, UnknownReference
from citeaudit.ingest.base import ParsedAnswer
from citeaudit.interchange import AUDIT_FORMAT, AuditDocument, audit_from_document, protocol_to_mapping
from citeaudit.model import AnswerStatus, Audit, CitationKind, FailedAnswer, Protocol

__all__ = ["Attachment", "assemble"]


@dataclass(frozen=True, slots=True)
class Attachment:
    """Where answers read from a payload belong."""

    protocol: Protocol
    """The protocol whose questions they answer."""
    run_id: str | None = None
    """Run id (default: ``<platform>-<date of import>``)."""
    platform: str | None = None
    """Platform (default: what the payload says, else the reader's default)."""
    question_id: str | None = None
    """Question every answer in the payload answers (default: the payload's own, or the only question)."""


def _question_for(parsed: ParsedAnswer, attachment: Attachment, source: str, index: int) -> str:
    protocol = attachment.protocol
    question = attachment.question_id or parsed.question_id
    if question is None:
        if len(protocol.questions) == 1:
            return protocol.questions[0].id
        raise InvalidValue(
            source,
            f"answer {index}",
            f"which question does it answer? protocol {protocol.id!r} has {len(protocol.questions)} questions; "
            "pass --question-id Q (or give question_id in the payload)",
        )
    if question not in {q.id for q in protocol.questions}:
        raise UnknownReference(
            source, f"answer {index}", f"no question {question!r} in protocol {protocol.id!r}@{protocol.version}"
        )
    return question


def assemble(
    parsed: Sequence[ParsedAnswer], attachment: Attachment, source: str, sha256: str, default_platform: str | None
) -> tuple[Audit, list[FailedAnswer]]:
    """The audit that these answers make under ``attachment``, and the answers that failed."""
    answers: list[dict[str, Any]] = []
    claims: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    runs: dict[str, dict[str, Any]] = {}
    failures: list[FailedAnswer] = []
    today = datetime.now(UTC).date().isoformat()
    for index, record in enumerate(parsed):
        platform = attachment.platform or record.platform or default_platform
        if platform is None:
            raise InvalidValue(source, f"answer {index}", "which engine produced it? pass --platform NAME")
        run_id = attachment.run_id or f"{platform}-{today}"
        question_id = _question_for(record, attachment, source, index)
        if record.status is not AnswerStatus.COMPLETE:
            failures.append(FailedAnswer(index, record.status, record.failure, run_id, question_id, platform))
            continue
        runs.setdefault(run_id, {"id": run_id, "platform": platform})
        answer_id = record.answer_id or (
            f"{platform}-{sha256[:12]}" if len(parsed) == 1 else f"{platform}-{sha256[:12]}-{index}"
        )
        citations = []
        for c in record.citations:
            if c.kind is CitationKind.DANGLING:
                citations.append({"marker": c.marker, "kind": "dangling", "start": c.start, "end": c.end})
            else:
                citations.append(
                    {
                        "url": c.url,
                        "title": c.title,
                        "marker": c.marker,
                        "kind": str(c.kind),
                        "start": c.start,
                        "end": c.end,
                    }
                )
        answers.append(
            {
                "id": answer_id,
                "question_id": question_id,
                "run_id": run_id,
                "platform": platform,
                "model": record.model,
                "text": record.text,
                "payload_sha256": sha256,
                "retrieval": record.retrieval,
                "citations": [{k: v for k, v in c.items() if v is not None} for c in citations],
            }
        )
        for k, candidate in enumerate(record.claims):
            claim_id = f"{answer_id}-c{k + 1}"
            claims.append(
                {
                    "id": claim_id,
                    "answer_id": answer_id,
                    "text": candidate.text,
                    "start": candidate.start,
                    "end": candidate.end,
                }
            )
            for i in candidate.citations:
                cited = record.citations[i]
                if cited.kind is not CitationKind.CITED or not (cited.url or cited.title):
                    continue  # dangling markers and retrieved sources never make edges
                row = {
                    "claim_id": claim_id,
                    "url": cited.url,
                    "title": None if cited.url else cited.title,
                    "marker": cited.marker,
                    "start": cited.start,
                    "end": cited.end,
                }
                edges.append({k: v for k, v in row.items() if v is not None})
    document = {
        "format": AUDIT_FORMAT,
        "protocol": protocol_to_mapping(attachment.protocol),
        "runs": list(runs.values()),
        "answers": [{k: v for k, v in a.items() if v is not None} for a in answers],
        "claims": claims,
        "edges": edges,
    }
    return audit_from_document(AuditDocument.model_validate(document), source), failures
