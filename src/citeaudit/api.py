"""Entry points that take a path: an audit file or a database, scored the same way."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from citeaudit.agreement import (
    Agreement,
    LabelPairs,
    Rater,
    agreement,
    pair_sided,
    pairs_from_audit,
    raters_of_audit,
)
from citeaudit.errors import InputError, InvalidValue, ScopeError
from citeaudit.ingest import read_file
from citeaudit.model import Audit, Protocol
from citeaudit.protocol import disclosure, fingerprint
from citeaudit.report.formats import result_json
from citeaudit.results import ScoreResult
from citeaudit.scope import Scope, select_audit
from citeaudit.scoring import IntervalSettings, score, score_columns
from citeaudit.store import Store
from citeaudit.store.revisions import revision_warnings

__all__ = [
    "ScoredPath",
    "agreement_path",
    "is_database",
    "label_pairs_from_store",
    "load_label_pairs",
    "load_scope",
    "score_path",
]

_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True, slots=True)
class ScoredPath:
    """A scored file or database with what the reader needs to know about the scope."""

    result: ScoreResult
    """The numbers."""
    protocol: Protocol
    """The protocol they were measured under."""
    excluded_by_kind: int
    """Answers left out because of their run kind (fixtures, by default)."""
    failed_answers: int = 0
    """Answers the engines did not give (failed or incomplete) in the scope's runs: recorded, not scored."""
    warnings: tuple[str, ...] = ()
    """What a reader must see beside the numbers (e.g. required facts changed after answers arrived)."""

    def to_json(self) -> str:
        """The JSON ``citeaudit score --format json`` prints: the result, failures, warnings, disclosure."""
        return result_json(
            self.result,
            failed_answers=self.failed_answers,
            warnings=list(self.warnings),
            disclosure=disclosure(self.protocol),
        )


def is_database(path: str | Path) -> bool:
    """True when ``path`` is a SQLite file (by its header, not its name)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError as exc:
        raise InputError(str(path), "", f"cannot read: {exc.strerror}") from None


def score_path(
    path: str | Path,
    *,
    scope: Scope = Scope(),
    by: Sequence[str] = (),
    macro: bool = False,
    protocol: str | None = None,
    ci: IntervalSettings | None = None,
    engine: str = "numpy",
) -> ScoredPath:
    """Score an audit file or a database within ``scope``; with ``engine`` ``duckdb`` or ``spark``, a Parquet
    dataset written by the export (or, with DuckDB, a database) through the convention's SQL."""
    if engine != "numpy":
        if macro:
            raise ScopeError("--macro (the mean of per-answer values) is computed by the numpy engine only")
        from citeaudit.engines import score_with_engine

        scored = score_with_engine(path, engine, scope=scope, by=by, protocol=protocol, ci=ci)
        return ScoredPath(scored.result, scored.protocol, scored.excluded_by_kind)
    if is_database(path):
        with Store(path) as store:
            protocol_pk = store.choose_protocol(protocol, scope)
            chosen, columns, excluded = store.scoring_input(protocol_pk, scope)
            failed = store.failed_answers(protocol_pk, scope)
            in_scope = {str(run) for run in columns.answer_dims["run"]}
            warnings = tuple(revision_warnings(store, protocol_pk, in_scope))
        result = score_columns(
            columns, scoring=chosen.scoring, fingerprint=fingerprint(chosen), by=by, macro=macro, ci=ci
        )
        return ScoredPath(result, chosen, excluded, failed, warnings)
    audit = read_file(path).audit
    selected, excluded = select_audit(audit, scope)
    failed = len(selected.failed_answers)
    return ScoredPath(score(selected, by=by, macro=macro, ci=ci), audit.protocol, excluded, failed)


def load_scope(path: str | Path, *, scope: Scope = Scope(), protocol: str | None = None) -> Audit:
    """The audit in ``scope`` from a file or a database (for reports that list claims and evidence)."""
    if is_database(path):
        with Store(path) as store:
            audit = store.load_audit(store.choose_protocol(protocol, scope))
    else:
        audit = read_file(path).audit
    return select_audit(audit, scope)[0]


def _check_raters(path: str | Path, wanted: Sequence[Rater], present: Sequence[tuple[Rater, int]]) -> None:
    """Refuse a rater with no review judgements in scope, listing the raters that have some."""
    counts = dict(present)
    for position, rater in enumerate(wanted):
        if rater not in counts:
            listed = ", ".join(f"{r} ({n} edges)" for r, n in present) or "none"
            raise InvalidValue(
                str(path),
                f"--between {'AB'[position]}",
                f"no review judgements by {str(rater)!r}; raters with review judgements: {listed} "
                "(a model judge is named model:NAME, the final labels final)",
            )


def label_pairs_from_store(store: Store, a: Rater, b: Rater, *, protocol_pk: int | None = None) -> LabelPairs:
    """Pair rater A's and B's latest review-stage judgement per edge in an open database (all protocols, or the
    one with ``protocol_pk``). ``store.raters(protocol_pk)`` lists who can be chosen. Refuses (``InvalidValue``)
    a rater with no review judgements there, or A equal to B."""
    if a == b:
        raise InvalidValue(str(store.path), "--between", f"the two raters must differ (both are {str(a)!r})")
    _check_raters(store.path, (a, b), store.raters(protocol_pk))
    rows, edges_total = store.sided_labels(a, b, protocol_pk)
    return pair_sided(rows, a, b, edges_total=edges_total)


def load_label_pairs(path: str | Path, a: Rater, b: Rater, *, protocol: str | None = None) -> LabelPairs:
    """Pair rater A's and B's latest review-stage judgement per edge, from a database or an audit file
    (``edges[].judgements[]``); a database is read whole unless ``protocol`` selects one protocol."""
    if a == b:
        raise InvalidValue(str(path), "--between", f"the two raters must differ (both are {str(a)!r})")
    if is_database(path):
        with Store(path) as store:
            protocol_pk = None if protocol is None else store.choose_protocol(protocol)
            return label_pairs_from_store(store, a, b, protocol_pk=protocol_pk)
    audit = read_file(path).audit
    _check_raters(path, (a, b), raters_of_audit(audit))
    return pairs_from_audit(audit, a, b)


def agreement_path(
    path: str | Path,
    a: Rater,
    b: Rater,
    *,
    protocol: str | None = None,
    level: float = 0.95,
    resamples: int = 9999,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> Agreement:
    """Agreement of raters A and B (A as gold for supported-vs-rest) on the edges of a database or audit file;
    ``progress`` gets the number of bootstrap resamples done after each batch."""
    pairs = load_label_pairs(path, a, b, protocol=protocol)
    return agreement(pairs, level=level, resamples=resamples, seed=seed, progress=progress)
