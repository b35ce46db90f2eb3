"""An audit (or one chunk of a payload) as the plain rows an import writes (:class:`ChunkRows`): made from the audit
where it was read (:func:`rows_of`), possibly in another process, and written by
:func:`citeaudit.store.importing.write_rows`. No database here: the rows refer to each other by id and position."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from citeaudit.core.identity import url_location
from citeaudit.core.model import Audit, CitationKind, EvidenceGroup, Judgement, Protocol, Run, Source

__all__ = [
    "KIND_TEXT",
    "AnswerRow",
    "ChunkRows",
    "CitationRow",
    "ClaimRow",
    "EdgeRow",
    "FailureRow",
    "LocationRow",
    "SourceRow",
    "rows_of",
    "source_row",
]

KIND_TEXT = {kind: str(kind) for kind in CitationKind}
"""How each citation kind is stored."""

_Text = str | None
SourceRow = tuple[str, _Text, _Text, _Text, _Text, str, _Text, _Text, _Text, _Text, str]
"""``(key, url, resolved_url, title, publisher, status, reason, fetched_at, content_hash, host, path)``: host and path
of the page (:func:`~citeaudit.core.identity.url_location` of the resolved URL, else the URL), worked out where the
rows are made, so that a worker process reading a payload does it, not the process writing."""


def source_row(s: Source) -> SourceRow:
    """A source as the importer writes it (:data:`SourceRow`)."""
    host, path = url_location(s.resolved_url or s.url)
    return (
        s.key,
        s.url,
        s.resolved_url,
        s.title,
        s.publisher,
        str(s.status),
        s.reason,
        s.fetched_at,
        s.content_hash,
        host,
        path,
    )


AnswerRow = tuple[str, str, str, str, _Text, _Text, _Text, _Text, _Text, _Text, _Text]
"""``(id, question_id, run_id, text, platform, model, locale, payload_sha256, retrieval, queries, reason)``."""
CitationRow = tuple[int, int, _Text, _Text, _Text, _Text, str, int | None, int | None, _Text]
"""``(answer position, ordinal, source key, url, title, marker, kind, start, end, quote)``."""
ClaimRow = tuple[str, int, str, int | None, int | None, _Text, _Text, _Text]
"""``(id, answer position, text, start, end, required fact id, severity, entity)``."""
EdgeRow = tuple[int, str, int, tuple[Judgement, ...]]
"""``(claim position, source key, number of locations, judgements)``."""
LocationRow = tuple[int, _Text, int | None, int | None]
"""``(edge position, marker, start, end)``."""
FailureRow = tuple[int, str, _Text, str, _Text, str]
"""``(ordinal, status, reason, run id, question id, platform)``."""


class ChunkRows(NamedTuple):
    """One audit (or one chunk of a payload) as the rows it writes, in plain tuples that refer to each other by
    id and position rather than by database key: made from the audit where it was read (see :func:`rows_of`),
    possibly in another process (see :mod:`citeaudit.ingest.worker` for how they travel), and written by
    :func:`~citeaudit.store.importing.write_rows`."""

    protocol: Protocol
    """The protocol the answers are measured under."""
    runs: tuple[Run, ...]
    """Every run the answers belong to."""
    sources: list[SourceRow]
    """Every source the chunk refers to."""
    answers: list[AnswerRow]
    """The answers, in order."""
    citations: list[CitationRow]
    """Every answer's citations, in order."""
    claims: list[ClaimRow]
    """The claims, in order."""
    edges: list[EdgeRow]
    """The edges, in order."""
    locations: list[LocationRow]
    """Every edge's citation locations, in order."""
    evidence_groups: tuple[EvidenceGroup, ...]
    """Joint-support groups."""
    failures: list[FailureRow]
    """The answers the engine did not give."""


def _text(value: str | None) -> str | None:
    """A text enum's value as a plain string (stored the same; a plain string travels faster)."""
    return None if value is None else str(value)


def rows_of(audit: Audit, sent: set[str] | None = None) -> ChunkRows:
    """The rows ``audit`` writes. ``sent``: the keys of the sources that the rows of earlier chunks of the same
    import carried; those sources are left out (the writer knows them, see
    :func:`~citeaudit.store.importing.write_rows`), and the keys of the others are added to it."""
    answer_at = {answer.id: i for i, answer in enumerate(audit.answers)}
    claim_at = {claim.id: i for i, claim in enumerate(audit.claims)}
    kind_text = KIND_TEXT
    return ChunkRows(
        protocol=audit.protocol,
        runs=audit.runs,
        sources=[source_row(s) for s in (audit.sources if sent is None else _unsent(audit.sources, sent))],
        answers=[
            (
                a.id,
                a.question_id,
                a.run_id,
                a.text,
                a.platform,
                a.model,
                a.locale,
                a.payload_sha256,
                _text(a.retrieval),
                json.dumps(list(a.queries), ensure_ascii=False) if a.queries else None,
                a.retrieval_reason,
            )
            for a in audit.answers
        ],
        citations=[
            (i, ci, c.source_key, c.url, c.title, c.marker, kind_text[c.kind], c.start, c.end, c.quote)
            for i, answer in enumerate(audit.answers)
            for ci, c in enumerate(answer.citations)
        ],
        claims=[
            (c.id, answer_at[c.answer_id], c.text, c.start, c.end, c.required_fact_id, _text(c.severity), c.entity)
            for c in audit.claims
        ],
        edges=[
            (claim_at[edge.claim_id], edge.source_key, len(edge.locations), edge.judgements) for edge in audit.edges
        ],
        locations=[
            (i, location.marker, location.start, location.end)
            for i, edge in enumerate(audit.edges)
            for location in edge.locations
        ],
        evidence_groups=audit.evidence_groups,
        failures=[
            (f.ordinal, str(f.status), f.reason, f.run_id, f.question_id, f.platform) for f in audit.failed_answers
        ],
    )


def _unsent(sources: Iterable[Source], sent: set[str]) -> Iterator[Source]:
    for source in sources:
        if source.key not in sent:
            sent.add(source.key)
            yield source
