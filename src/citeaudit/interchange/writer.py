"""Writing the interchange format: the canonical document of an audit (parsing it gives the audit back)."""

from __future__ import annotations

from collections.abc import Mapping

from citeaudit.core.model import Audit, Judgement
from citeaudit.core.protocol import protocol_to_mapping
from citeaudit.interchange.schema import AUDIT_FORMAT

__all__ = ["audit_to_document", "protocol_to_mapping"]


def _compact(mapping: Mapping[str, object]) -> dict[str, object]:
    """Drop unset (None) fields and defaults that carry nothing, so exports stay readable."""
    return {k: v for k, v in mapping.items() if v is not None}


def _judgement_to_mapping(judgement: Judgement) -> dict[str, object]:
    return _compact(
        {
            "label": str(judgement.label),
            "reviewer": judgement.reviewer,
            "origin": str(judgement.origin),
            "stage": str(judgement.stage),
            "passage": judgement.passage,
            "period": judgement.period,
            "reasoning": judgement.reasoning,
            "created_at": judgement.created_at,
            "judge": judgement.judge,
            "judge_model": judgement.judge_model,
            "judge_version": judgement.judge_version,
            "prompt_sha256": judgement.prompt_sha256,
            "confidence": judgement.confidence,
            "severity": None if judgement.severity is None else str(judgement.severity),
        }
    )


def audit_to_document(audit: Audit) -> dict[str, object]:
    """The canonical ``citeaudit.audit/v1`` form of an audit: parsing it gives the same audit back."""
    sources = {s.key: s for s in audit.sources}

    def link(key: str) -> dict[str, object]:
        found = sources[key]
        return _compact({"source_key": key, "url": found.url, "title": None if found.url else found.title})

    edge_rows: list[dict[str, object]] = []
    for edge in audit.edges:
        for i, location in enumerate(edge.locations):
            row: dict[str, object] = {"claim_id": edge.claim_id, **link(edge.source_key)}
            row.update(_compact({"marker": location.marker, "start": location.start, "end": location.end}))
            if i == 0 and edge.judgements:
                row["judgements"] = [_judgement_to_mapping(j) for j in edge.judgements]
            edge_rows.append(row)
    return {
        "format": AUDIT_FORMAT,
        "protocol": protocol_to_mapping(audit.protocol),
        "runs": [
            _compact(
                {
                    "id": r.id,
                    "kind": str(r.kind),
                    "platform": r.platform,
                    "model": r.model,
                    "collected_at": r.collected_at,
                    "locale": r.locale,
                    "sample": r.sample,
                }
            )
            for r in audit.runs
        ],
        "answers": [
            _compact(
                {
                    "id": a.id,
                    "question_id": a.question_id,
                    "run_id": a.run_id,
                    "platform": a.platform,
                    "model": a.model,
                    "locale": a.locale,
                    "text": a.text,
                    "payload_sha256": a.payload_sha256,
                    "retrieval": a.retrieval,
                    "retrieval_reason": a.retrieval_reason,
                    "queries": list(a.queries) or None,
                    "citations": [
                        _compact(
                            {
                                "source_key": c.source_key,
                                "url": c.url,
                                "title": c.title,
                                "marker": c.marker,
                                "kind": str(c.kind),
                                "start": c.start,
                                "end": c.end,
                                "quote": c.quote,
                            }
                        )
                        for c in a.citations
                    ],
                }
            )
            for a in audit.answers
        ],
        "claims": [
            _compact(
                {
                    "id": c.id,
                    "answer_id": c.answer_id,
                    "text": c.text,
                    "start": c.start,
                    "end": c.end,
                    "required_fact_id": c.required_fact_id,
                    "severity": c.severity,
                    "entity": c.entity,
                }
            )
            for c in audit.claims
        ],
        "edges": edge_rows,
        "sources": [
            _compact(
                {
                    "key": s.key,
                    "url": s.url,
                    "resolved_url": s.resolved_url,
                    "title": s.title,
                    "publisher": s.publisher,
                    "status": str(s.status),
                    "reason": s.reason,
                    "fetched_at": s.fetched_at,
                    "content_hash": s.content_hash,
                }
            )
            for s in audit.sources
        ],
        **(
            {
                "failed_answers": [
                    _compact(
                        {
                            "run_id": f.run_id,
                            "question_id": f.question_id,
                            "platform": f.platform,
                            "status": str(f.status),
                            "reason": f.reason,
                            "ordinal": f.ordinal,
                        }
                    )
                    for f in audit.failed_answers
                ]
            }
            if audit.failed_answers
            else {}
        ),
        "evidence_groups": [
            _compact(
                {
                    "id": g.id,
                    "claim_id": g.claim_id,
                    "sources": list(g.source_keys),
                    "label": g.label,
                    "required_documents": list(g.required_documents),
                    "reasoning_steps": list(g.reasoning_steps),
                    "reviewer": g.reviewer,
                }
            )
            for g in audit.evidence_groups
        ],
    }
