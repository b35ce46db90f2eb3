"""Entry points that take a path: an audit file or a database, scored the same way."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from citeaudit.errors import InputError
from citeaudit.ingest import read_file
from citeaudit.model import Audit, Protocol
from citeaudit.protocol import fingerprint
from citeaudit.results import ScoreResult
from citeaudit.scope import Scope, select_audit
from citeaudit.scoring import IntervalSettings, score, score_columns
from citeaudit.store import Store
from citeaudit.store.revisions import revision_warnings

__all__ = ["ScoredPath", "is_database", "load_scope", "score_path"]

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
) -> ScoredPath:
    """Score an audit file or a database within ``scope``."""
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
