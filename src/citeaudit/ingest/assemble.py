"""Turn answer records read from engine payloads into an audit under a protocol.

Each answer is attached to a question, a run and a platform; each claim candidate becomes a claim with one
pending edge per cited source (duplicated markers collapse into one edge with several locations). Source
keys come from the registry the interchange reader uses, so both paths identify sources the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from itertools import chain, islice

from citeaudit.core.errors import DuplicateId, InvalidValue, UnknownReference
from citeaudit.core.identity import SourceRegistry, document_key
from citeaudit.core.model import (
    Answer,
    AnswerStatus,
    Audit,
    Citation,
    CitationKind,
    Claim,
    Edge,
    FailedAnswer,
    Location,
    Run,
    Source,
    SourceStatus,
    check_span,
)
from citeaudit.ingest.base import CHUNK, Attachment, ParsedAnswer
from citeaudit.store.chunk_rows import (
    AnswerRow,
    ChunkRows,
    CitationRow,
    ClaimRow,
    EdgeRow,
    FailureRow,
    LocationRow,
    SourceRow,
    source_row,
)

__all__ = ["CHUNK", "Attachment", "assemble", "assemble_chunks", "assemble_rows"]


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
    parsed: Iterable[ParsedAnswer], attachment: Attachment, source: str, sha256: str, default_platform: str | None
) -> Audit:
    """The audit that these answers make under ``attachment``, failed answers included.

    Builds the model objects directly (no second parse): source keys come from the same registry the
    interchange reader uses, spans are checked against each answer's text, ids are checked for clashes.
    """
    (audit,) = assemble_chunks(parsed, attachment, source, sha256, default_platform, size=None)
    return audit


def assemble_chunks(
    parsed: Iterable[ParsedAnswer],
    attachment: Attachment,
    source: str,
    sha256: str,
    default_platform: str | None,
    *,
    size: int | None = CHUNK,
) -> Iterator[Audit]:
    """:func:`assemble`, a chunk of at most ``size`` answer records at a time (``None``: one chunk), read lazily.

    Every chunk is an audit of its own answers, claims and edges, with every run and source they refer to (a
    source first seen in an earlier chunk comes again, so each chunk can be written on its own, in order). Ids,
    source keys and failure ordinals are those the whole payload gets in one piece. At least one chunk comes.
    """
    records = iter(parsed)
    head = list(islice(records, 2))
    single = len(head) == 1  # one answer in the payload: its id needs no index
    registry = SourceRegistry()
    url_keys = registry.url_keys
    runs: dict[str, Run] = {}
    seen_ids: set[str] = set()
    today = datetime.now(UTC).date().isoformat()
    answers: list[Answer] = []
    claims: list[Claim] = []
    locations: dict[tuple[str, str], list[Location]] = {}
    failures: list[FailedAnswer] = []
    referenced: dict[str, None] = {}
    taken = 0

    def chunk() -> Audit:
        return Audit(
            protocol=attachment.protocol,
            runs=tuple(runs.values()),
            answers=tuple(answers),
            claims=tuple(claims),
            sources=tuple(registry.sources[key] for key in referenced),
            edges=tuple(Edge(claim, key, tuple(found)) for (claim, key), found in locations.items()),
            failed_answers=tuple(failures),
        )

    for index, record in enumerate(chain(head, records)):
        if size is not None and taken == size:
            yield chunk()
            answers, claims, locations, failures, referenced, taken = [], [], {}, [], {}, 0
        taken += 1
        where = f"answer {index}"
        platform = attachment.platform or record.platform or default_platform
        if platform is None:
            raise InvalidValue(source, where, "which engine produced it? pass --platform NAME")
        run_id = attachment.run_id or f"{platform}-{today}"
        question_id = _question_for(record, attachment, source, index)
        runs.setdefault(run_id, Run(run_id, platform=platform))
        if record.status is not AnswerStatus.COMPLETE:
            failures.append(FailedAnswer(index, record.status, record.failure, run_id, question_id, platform))
            continue
        answer_id = record.answer_id or (f"{platform}-{sha256[:12]}" if single else f"{platform}-{sha256[:12]}-{index}")
        if answer_id in seen_ids:
            raise DuplicateId(source, f"{where}.id", f"duplicate answer id {answer_id!r}")
        seen_ids.add(answer_id)
        length = len(record.text)
        keys: list[str | None] = []
        citations: list[Citation] = []
        for ci, cited in enumerate(record.citations):
            start, end = cited.start, cited.end
            if (start is not None or end is not None) and (
                start is None or end is None or not 0 <= start <= end <= length
            ):
                check_span(source, f"{where}.citations[{ci}]", start, end, length)
            key = None
            if cited.kind is not CitationKind.DANGLING:
                # a URL seen before has its key already; the location is only spelled out for a new one
                document = None
                if cited.document is not None:
                    document = document_key(f"{answer_id}:{cited.document}" if cited.answer_scoped else cited.document)
                key = (url_keys.get(cited.url) if cited.url else None) or registry.key_for(
                    source, f"{where}.citations[{ci}]", answer_id, cited.url, cited.title, document, cited.publisher
                )
                referenced[key] = None
            keys.append(key)
            citations.append(Citation(key, cited.url, cited.title, cited.marker, cited.kind, start, end, cited.quote))
        answers.append(
            Answer(
                answer_id,
                question_id,
                run_id,
                record.text,
                platform=platform,
                model=record.model,
                citations=tuple(citations),
                payload_sha256=sha256,
                retrieval=record.retrieval,
                queries=record.queries,
                retrieval_reason=record.retrieval_reason,
            )
        )
        for k, candidate in enumerate(record.claims):
            c_start, c_end = candidate.start, candidate.end
            if c_start is None or c_end is None or not 0 <= c_start <= c_end <= length:  # located only then
                check_span(source, f"{where}.claims[{k}]", candidate.start, candidate.end, length)
            claim_id = f"{answer_id}-c{k + 1}"
            claims.append(Claim(claim_id, answer_id, candidate.text, candidate.start, candidate.end))
            for i in candidate.citations:
                key = keys[i]
                if key is None or citations[i].kind is not CitationKind.CITED:
                    continue  # dangling markers and retrieved sources never make edges
                location = citations[i]
                locations.setdefault((claim_id, key), []).append(
                    Location(location.marker, location.start, location.end)
                )
    yield chunk()


_FirstSeen = tuple[str, str | None, str | None, tuple[str | None, str]]
"""URL, title, publisher and :func:`~citeaudit.core.identity.url_location` of a source keyed by its URL alone, as
first seen."""


def _source_row(key: str, first_seen: dict[str, _FirstSeen], registered: dict[str, Source], pending: str) -> SourceRow:
    """The row of the source ``key``, as first seen: a pending source from its URL, title, publisher and location
    (a sighting by URL alone comes before any other, which the registry would not have taken), else the
    registry's. Its first sighting is let go: a source's row is sent once."""
    seen = first_seen.pop(key, None)  # sent once: the row is never made again
    if seen is not None:
        url, title, publisher, (host, path) = seen
        return (key, url, None, title, publisher, pending, None, None, None, host, path)
    return source_row(registered[key])


def assemble_rows(
    parsed: Iterable[ParsedAnswer],
    attachment: Attachment,
    source: str,
    sha256: str,
    default_platform: str | None,
    *,
    size: int | None = CHUNK,
) -> Iterator[ChunkRows]:
    """:func:`assemble_chunks` as the rows each chunk writes (:func:`citeaudit.store.chunk_rows.rows_of` of each
    chunk, the sources of earlier chunks left out as with ``sent``), made straight from the answer records
    without the model objects in between: the same checks, errors, ids and keys, in the same order. The rows are
    only valid written in order, into one import (see :func:`citeaudit.store.importing.write_rows`)."""
    records = iter(parsed)
    head = list(islice(records, 2))
    single = len(head) == 1  # one answer in the payload: its id needs no index
    registry = SourceRegistry()
    url_keys, registered, url_key_located = registry.url_keys, registry.sources, registry.url_key_located
    first_seen: dict[str, _FirstSeen] = {}
    """Each source keyed by its URL alone, as first seen (no Source made for it)."""
    pending = str(SourceStatus.PENDING)
    runs: dict[str, Run] = {}
    seen_ids: set[str] = set()
    sent: set[str] = set()
    today = datetime.now(UTC).date().isoformat()
    protocol = attachment.protocol
    cited_kind, dangling_kind = CitationKind.CITED, CitationKind.DANGLING
    kind_text = {kind: str(kind) for kind in CitationKind}
    answers: list[AnswerRow] = []
    citations: list[CitationRow] = []
    claims: list[ClaimRow] = []
    edges: list[EdgeRow] = []
    locations: list[LocationRow] = []
    failures: list[FailureRow] = []
    referenced: dict[str, None] = {}
    taken = 0

    def chunk() -> ChunkRows:
        fresh = [key for key in referenced if key not in sent]
        sent.update(fresh)
        return ChunkRows(
            protocol=protocol,
            runs=tuple(runs.values()),
            sources=[_source_row(key, first_seen, registered, pending) for key in fresh],
            answers=answers,
            citations=citations,
            claims=claims,
            edges=edges,
            locations=locations,
            evidence_groups=(),
            failures=failures,
        )

    for index, record in enumerate(chain(head, records)):
        if size is not None and taken == size:
            yield chunk()
            answers, citations, claims, edges, locations, failures, referenced, taken = [], [], [], [], [], [], {}, 0
        taken += 1
        where = f"answer {index}"
        platform = attachment.platform or record.platform or default_platform
        if platform is None:
            raise InvalidValue(source, where, "which engine produced it? pass --platform NAME")
        run_id = attachment.run_id or f"{platform}-{today}"
        question_id = _question_for(record, attachment, source, index)
        if run_id not in runs:
            runs[run_id] = Run(run_id, platform=platform)
        if record.status is not AnswerStatus.COMPLETE:
            failures.append((index, str(record.status), record.failure, run_id, question_id, platform))
            continue
        answer_id = record.answer_id or (f"{platform}-{sha256[:12]}" if single else f"{platform}-{sha256[:12]}-{index}")
        if answer_id in seen_ids:
            raise DuplicateId(source, f"{where}.id", f"duplicate answer id {answer_id!r}")
        seen_ids.add(answer_id)
        position = len(answers)
        length = len(record.text)
        keys: list[str | None] = []
        cited_at: list[bool] = []
        first = len(citations)
        for ci, cited in enumerate(record.citations):
            # the fields by position, in one step: each named field read is a look-up in the class
            url, title, marker, kind, start, end, quote, publisher, given_document, answer_scoped = cited
            if (start is not None or end is not None) and (
                start is None or end is None or not 0 <= start <= end <= length
            ):
                check_span(source, f"{where}.citations[{ci}]", start, end, length)
            key = None
            if kind is not dangling_kind:
                # a URL seen before has its key already; the location is only spelled out for a new one
                if given_document is None and url:
                    key = url_keys.get(url)
                    if key is None:
                        key, location = url_key_located(source, f"{where}.citations[{ci}]", url)
                        # kept until its chunk sends the source's row: small, where every key ever seen is many
                        if key not in registered and key not in first_seen and key not in sent:
                            first_seen[key] = (url, title, publisher, location)
                else:
                    document = None
                    if given_document is not None:
                        scoped = f"{answer_id}:{given_document}" if answer_scoped else given_document
                        document = document_key(scoped)
                    key = (url_keys.get(url) if url else None) or registry.key_for(
                        source, f"{where}.citations[{ci}]", answer_id, url, title, document, publisher
                    )
                referenced[key] = None
            keys.append(key)
            cited_at.append(kind is cited_kind)
            citations.append((position, ci, key, url, title, marker, kind_text[kind], start, end, quote))
        answers.append(
            (
                answer_id,
                question_id,
                run_id,
                record.text,
                platform,
                record.model,
                None,
                sha256,
                None if record.retrieval is None else str(record.retrieval),
                json.dumps(list(record.queries), ensure_ascii=False) if record.queries else None,
                record.retrieval_reason,
            )
        )
        for k, candidate in enumerate(record.claims):
            claim_text, c_start, c_end, marked = candidate
            if c_start is None or c_end is None or not 0 <= c_start <= c_end <= length:  # located only then
                check_span(source, f"{where}.claims[{k}]", c_start, c_end, length)
            claim_id = f"{answer_id}-c{k + 1}"
            claim_position = len(claims)
            claims.append((claim_id, position, claim_text, c_start, c_end, None, None, None))
            if len(marked) == 1:  # the common claim, closed by one marker: one edge of one location
                i = marked[0]
                key = keys[i]
                if key is not None and cited_at[i]:  # dangling markers and retrieved sources never make edges
                    row = citations[first + i]
                    locations.append((len(edges), row[5], row[7], row[8]))
                    edges.append((claim_position, key, 1, ()))
                continue
            found: dict[str, list[tuple[str | None, int | None, int | None]]] = {}
            for i in marked:
                key = keys[i]
                if key is None or not cited_at[i]:
                    continue
                row = citations[first + i]
                found.setdefault(key, []).append((row[5], row[7], row[8]))
            for key, spots in found.items():
                edge = len(edges)
                edges.append((claim_position, key, len(spots), ()))
                for marker, start, end in spots:  # a loop, not a generator made for every edge
                    locations.append((edge, marker, start, end))
    yield chunk()
