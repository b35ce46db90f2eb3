"""Reader for ExpertQA (Malaviya et al.): expert-judged claims of long-form answers with their evidence.

Mapping onto citeaudit's vocabulary (docs/ingest.md, "The interchange format"):

- one answer per (question, system, answer text); identical copies across files are one answer;
  platform and run are the system name (``expertqa-<system>``);
- each ``claim_string`` is a claim (its span is where it first occurs in the answer, if it does);
- each evidence string ``[n] URL`` (optionally followed by a passage) is a citation location of that claim;
- labels, when a claim has exactly one unique source: Complete → supported, Partial and Incomplete →
  partial, N/A → unknown, no value → pending. A claim with several unique sources keeps all its edges
  pending and gets one evidence group carrying the claim-level decision (joint support is not single-edge
  support; the group's reasoning steps keep each source's passage). "Missing" claims have no edge.
- the protocol has the questions and no required facts, so coverage is undefined (null).

Several files given together are read as one dataset (their lines concatenated in the given order).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

from citeaudit.core.errors import InvalidValue, MalformedInput
from citeaudit.core.identity import source_identity
from citeaudit.core.limits import load_json
from citeaudit.core.model import (
    Answer,
    Audit,
    Citation,
    Claim,
    Edge,
    EvidenceGroup,
    Judgement,
    Label,
    Location,
    Protocol,
    Question,
    Run,
    Segmentation,
    Source,
)
from citeaudit.ingest.base import Reader
from citeaudit.ingest.payload import expect
from citeaudit.ingest.shape import Shape, shape_of

__all__ = ["LABELS", "READER", "read_audit"]

LABELS: dict[str, Label | None] = {
    "Complete": Label.SUPPORTED,
    "Partial": Label.PARTIAL,
    "Incomplete": Label.PARTIAL,
    "N/A": Label.UNKNOWN,
}
"""ExpertQA ``support`` values that give a label; ``Missing`` claims have no edge, absent means pending."""

_EVIDENCE = re.compile(r"^\s*\[(\d{1,4})\]\s+(\S+)(?:\s+(.*))?$", re.DOTALL)
_ATTRIBUTION = re.compile(r"^\s*\[(\d{1,4})\]\s+(\S+)")


def can_read(content: bytes | Shape) -> bool:
    """ExpertQA lines are objects with ``question`` and ``answers``, the answers per system holding
    ``claim_string`` / ``answer_string`` entries."""
    shape = shape_of(content)
    if not {"question", "answers"} <= shape.fields():
        return False
    return shape.any_path(
        lambda path: path.startswith("answers.") and path.endswith((".claim_string", ".answer_string"))
    )


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:16]


class _Dataset:
    """Accumulates answers, claims, edges and sources across lines (and files)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.questions: dict[str, Question] = {}
        self.answers: dict[str, Answer] = {}
        self.claims: list[Claim] = []
        self.edges: list[Edge] = []
        self.groups: list[EvidenceGroup] = []
        self.sources: dict[str, Source] = {}
        self.runs: dict[str, Run] = {}
        self.duplicates = 0

    def source_key(self, url: str, where: str) -> str:
        key = source_identity(url, self.source, where)
        self.sources.setdefault(key, Source(key=key, url=url))
        return key

    def add_line(self, where: str, line: dict[str, Any]) -> None:
        question_text = expect(line.get("question"), str, self.source, f"{where}: question")
        question_id = f"q-{_digest(question_text)[:12]}"
        self.questions.setdefault(question_id, Question(question_id, question_text))
        systems = expect(line.get("answers"), dict, self.source, f"{where}: answers")
        for system, body in systems.items():
            self.add_answer(f"{where}: answers.{system}", question_id, system, expect(body, dict, self.source, where))

    def add_answer(self, where: str, question_id: str, system: str, body: dict[str, Any]) -> None:
        text = expect(body.get("answer_string"), str, self.source, f"{where}.answer_string")
        answer_id = f"expertqa-{_digest(question_id, system, text)}"
        if answer_id in self.answers:
            self.duplicates += 1
            return
        run_id = f"expertqa-{system}"
        self.runs.setdefault(run_id, Run(run_id, platform=system))
        citations = []
        for i, entry in enumerate(expect(body.get("attribution") or [], list, self.source, f"{where}.attribution")):
            match = _ATTRIBUTION.match(expect(entry, str, self.source, f"{where}.attribution[{i}]"))
            if match is None:
                raise InvalidValue(self.source, f"{where}.attribution[{i}]", f"expected '[n] URL' (got {entry[:80]!r})")
            key = self.source_key(match.group(2), f"{where}.attribution[{i}]")
            citations.append(Citation(key, match.group(2), marker=f"[{match.group(1)}]"))
        self.answers[answer_id] = Answer(
            answer_id, question_id, run_id, text, platform=system, citations=tuple(citations)
        )
        cursor = 0
        annotator = body.get("annotator_id")
        for ci, claim in enumerate(expect(body.get("claims") or [], list, self.source, f"{where}.claims")):
            cursor = self.add_claim(f"{where}.claims[{ci}]", answer_id, ci, text, cursor, claim, annotator)

    def add_claim(
        self, where: str, answer_id: str, index: int, text: str, cursor: int, claim: Any, annotator: Any
    ) -> int:
        claim = expect(claim, dict, self.source, where)
        claim_text = expect(claim.get("claim_string"), str, self.source, f"{where}.claim_string")
        start = text.find(claim_text, cursor)
        if start < 0:
            start = text.find(claim_text)
        span = (start, start + len(claim_text)) if start >= 0 and claim_text else (None, None)
        claim_id = f"{answer_id}-c{index + 1}"
        self.claims.append(Claim(claim_id, answer_id, claim_text, span[0], span[1]))
        support = expect(claim.get("support"), (str, type(None)), self.source, f"{where}.support")
        if support is not None and support not in LABELS and support != "Missing":
            raise InvalidValue(self.source, f"{where}.support", f"unknown support value {support!r}")
        if support == "Missing":
            return span[1] if span[1] is not None else cursor
        evidence: list[tuple[str, str, str | None]] = []
        for ei, item in enumerate(expect(claim.get("evidence") or [], list, self.source, f"{where}.evidence")):
            match = _EVIDENCE.match(expect(item, str, self.source, f"{where}.evidence[{ei}]"))
            if match is None:
                raise InvalidValue(self.source, f"{where}.evidence[{ei}]", f"expected '[n] URL' (got {item[:80]!r})")
            passage = (match.group(3) or "").strip() or None
            evidence.append((f"[{match.group(1)}]", match.group(2), passage))
        by_source: dict[str, list[tuple[str, str | None]]] = {}
        for ei, (marker, url, passage) in enumerate(evidence):
            by_source.setdefault(self.source_key(url, f"{where}.evidence[{ei}]"), []).append((marker, passage))
        label = LABELS.get(support) if support is not None else None
        reviewer = str(annotator) if annotator else None
        reasoning = (
            expect(
                claim.get("reason_missing_support"), (str, type(None)), self.source, f"{where}.reason_missing_support"
            )
            or None
        )
        single = len(by_source) == 1
        for key, locations in by_source.items():
            judgements: tuple[Judgement, ...] = ()
            if single and label is not None:
                passage = next((p for _, p in locations if p), None)
                judgements = (Judgement(label, reviewer, passage=passage, reasoning=reasoning),)
            self.edges.append(Edge(claim_id, key, tuple(Location(marker) for marker, _ in locations), judgements))
        if len(by_source) > 1:
            self.groups.append(
                EvidenceGroup(
                    id=f"{claim_id}-joint",
                    claim_id=claim_id,
                    source_keys=tuple(by_source),
                    label=label,
                    required_documents=tuple(by_source),
                    reasoning_steps=tuple(
                        f"{key}: {passage}"
                        for key, locations in by_source.items()
                        for _, passage in locations
                        if passage
                    ),
                    reviewer=reviewer,
                )
            )
        return span[1] if span[1] is not None else cursor

    def audit(self) -> Audit:
        protocol = Protocol(
            id="expertqa",
            version="1",
            questions=tuple(self.questions.values()),
            segmentation=Segmentation(method="expertqa-claims", version="1"),
        )
        return Audit(
            protocol=protocol,
            runs=tuple(self.runs.values()),
            answers=tuple(self.answers.values()),
            claims=tuple(self.claims),
            sources=tuple(self.sources.values()),
            edges=tuple(self.edges),
            evidence_groups=tuple(self.groups),
        )


def read_audit(data: bytes, source: str) -> Audit:
    """Read one or more ExpertQA JSON Lines files (concatenated) as one audit."""
    return read_dataset(data, source)[0]


def read_dataset(data: bytes, source: str) -> tuple[Audit, int]:
    """The audit and how many identical answer copies were folded into one."""
    dataset = _Dataset(source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedInput(source, f"byte {exc.start}", "not UTF-8 text") from None
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        line = load_json(raw, source, f"line {number}")
        dataset.add_line(f"line {number}", expect(line, dict, source, f"line {number}"))
    return dataset.audit(), dataset.duplicates


def combine(payloads: Sequence[bytes]) -> bytes:
    """Several files as one dataset: JSON Lines concatenate line by line."""
    return b"".join(p if p.endswith(b"\n") else p + b"\n" for p in payloads)


READER = Reader(
    name="expertqa",
    description="ExpertQA JSON Lines (claims with expert support judgements); several files form one dataset",
    can_read=can_read,
    read_audit=read_audit,
    reads="ExpertQA r2 JSON Lines: per system answer_string, claims with evidence and expert judgements",
    positionless="evidence listed for a claim makes its edges; claims carry no span in the answer",
)
