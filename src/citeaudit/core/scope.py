"""Which answers a score covers: run kinds and dimension filters, applied the same way to files and databases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from citeaudit.core.errors import ScopeError
from citeaudit.core.model import Audit, RunKind

__all__ = ["Scope", "parse_where", "select_audit"]

FILTER_DIMENSIONS = ("platform", "run", "question", "model", "locale", "sample", "collection", "collection_date")


@dataclass(frozen=True, slots=True)
class Scope:
    """A selection of answers. Fixture runs are left out unless asked for."""

    run_kinds: frozenset[RunKind] = frozenset({RunKind.PLATFORM})
    """Run kinds in scope."""
    where: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Per dimension, the values kept (an answer must match every dimension given)."""


def parse_where(clauses: Sequence[str]) -> dict[str, frozenset[str]]:
    """``["platform=perplexity", "platform=gemini", "run=r1"]`` → ``{"platform": {…}, "run": {…}}``."""
    where: dict[str, set[str]] = {}
    for clause in clauses:
        name, sep, value = clause.partition("=")
        name = name.strip()
        if not sep or not value:
            raise ScopeError(f"filter {clause!r} must look like DIMENSION=VALUE, e.g. platform=perplexity")
        if name not in FILTER_DIMENSIONS:
            raise ScopeError(f"cannot filter on {name!r}; choose from {', '.join(FILTER_DIMENSIONS)}")
        where.setdefault(name, set()).add(value)
    return {name: frozenset(values) for name, values in where.items()}


def select_audit(
    audit: Audit, scope: Scope, extra: Mapping[str, Mapping[str, str | None]] | None = None
) -> tuple[Audit, int]:
    """The audit restricted to ``scope``, and how many answers were left out by run kind. ``extra`` gives the
    dimensions the audit itself does not carry (a database's collections), by dimension and answer id; without
    it they are ``None``."""
    runs = {run.id: run for run in audit.runs}
    questions = {q.id: q for q in audit.protocol.questions}
    kept = []
    excluded_kind = 0
    for answer in audit.answers:
        run = runs.get(answer.run_id)
        kind = run.kind if run else RunKind.PLATFORM
        if kind not in scope.run_kinds:
            excluded_kind += 1
            continue
        values = {
            "platform": answer.platform or (run.platform if run else None),
            "run": answer.run_id,
            "question": answer.question_id,
            "model": answer.model or (run.model if run else None),
            "locale": answer.locale or questions[answer.question_id].locale,
            "sample": str(run.sample) if run and run.sample is not None else None,
            **{name: (extra or {}).get(name, {}).get(answer.id) for name in ("collection", "collection_date")},
        }
        if all(values[name] in allowed for name, allowed in scope.where.items()):
            kept.append(answer)
    failed = tuple(
        f
        for f in audit.failed_answers
        if (runs[f.run_id].kind if f.run_id in runs else RunKind.PLATFORM) in scope.run_kinds
    )
    if len(kept) == len(audit.answers) and len(failed) == len(audit.failed_answers):
        return audit, 0
    answer_ids = {a.id for a in kept}
    claims = tuple(c for c in audit.claims if c.answer_id in answer_ids)
    claim_ids = {c.id for c in claims}
    edges = tuple(e for e in audit.edges if e.claim_id in claim_ids)
    groups = tuple(g for g in audit.evidence_groups if g.claim_id in claim_ids)
    run_ids = {a.run_id for a in kept}
    return (
        Audit(
            protocol=audit.protocol,
            runs=tuple(r for r in audit.runs if r.id in run_ids),
            answers=tuple(kept),
            claims=claims,
            sources=audit.sources,
            edges=edges,
            evidence_groups=groups,
            failed_answers=failed,
        ),
        excluded_kind,
    )
