"""Entry points that take a path: an audit file or a database, scored the same way."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from citeaudit.core.errors import InputError, InvalidValue, ScopeError
from citeaudit.core.memory import memory_kept
from citeaudit.core.model import Audit, Label, Protocol, SourceStatus
from citeaudit.core.protocol import fingerprint
from citeaudit.core.scope import Scope, select_audit
from citeaudit.core.scored import NO_BRAND, ScoredPath, engine_not_computed
from citeaudit.core.scoring import IntervalSettings, ScoringColumns, score, score_columns
from citeaudit.ingest import read_file

if TYPE_CHECKING:
    from citeaudit.core.agreement import Agreement
    from citeaudit.core.brand.figures import EdgeOutcome
    from citeaudit.core.brand.results import BrandFigures
    from citeaudit.core.misattribution import CrossPair, MisattributionReport
    from citeaudit.core.raters import LabelPairs, Rater
    from citeaudit.store import Store
    from citeaudit.store.pipeline import BackgroundRead
    from citeaudit.store.report_input import EdgeReads, ReportRows

__all__ = [
    "ReportReads",
    "ScoredPath",
    "agreement_path",
    "is_database",
    "label_pairs_from_store",
    "load_label_pairs",
    "load_report_scope",
    "load_scope",
    "misattribution_path",
    "prefetch_report_reads",
    "score_path",
    "unresolved_links",
]

_SQLITE_MAGIC = b"SQLite format 3\x00"


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
    figures: bool = False,
    engine: str = "numpy",
    also_by: Sequence[str] | None = None,
) -> ScoredPath:
    """Score an audit file or a database within ``scope``; with ``figures``, also the brand figures and
    misattribution (each under its own key, never mixed into the scores; they cost a second read of the edges,
    so only callers that show them ask). The brand figures are computed only for a protocol that names a brand or
    competitors; :meth:`ScoredPath.computed` says which figures were computed and why the others were not. With
    ``engine`` ``duckdb`` or ``spark``, a Parquet dataset written by the export (or, with DuckDB, a database) is
    scored through the convention's SQL (no figures beside the scores). With ``also_by`` (numpy engine), the
    same answers are also scored grouped by those dimensions, without intervals (``ScoredPath.also``), from
    what was read once."""
    if engine != "numpy":
        if macro:
            raise ScopeError("--macro (the mean of per-answer values) is computed by the numpy engine only")
        from citeaudit.engines import score_with_engine

        scored = score_with_engine(path, engine, scope=scope, by=by, protocol=protocol, ci=ci)
        return ScoredPath(
            scored.result,
            scored.protocol,
            scored.excluded_by_kind,
            unresolved_links=scored.unresolved_links,
            not_computed=engine_not_computed(engine) if figures else (),
        )
    if is_database(path):
        # freed arrays reused while the columns are read and scored, not handed back and faulted in again
        with memory_kept():
            return _score_database(path, scope, by, macro, protocol, ci, figures, also_by)
    audit = read_file(path).audit
    selected, excluded = select_audit(audit, scope)
    failed = len(selected.failed_answers)
    brand = cross = None
    if figures:
        from citeaudit.core.misattribution import misattribution

        brand = _file_brand(selected, by, ci)
        # An audit file carries no cross pairs: its claims at risk are counted, none is misattributed yet.
        cross = misattribution(selected, ())
    return ScoredPath(
        score(selected, by=by, macro=macro, ci=ci),
        audit.protocol,
        excluded,
        failed,
        (),
        brand,
        cross,
        unresolved_links(selected),
        _not_computed(audit.protocol) if figures else (),
        None if also_by is None else score(selected, by=also_by),
    )


def _score_database(
    path: str | Path,
    scope: Scope,
    by: Sequence[str],
    macro: bool,
    protocol: str | None,
    ci: IntervalSettings | None,
    figures: bool,
    also_by: Sequence[str] | None,
) -> ScoredPath:
    """:func:`score_path` of a database (numpy engine)."""
    # The store is loaded only for a database: scoring a file never touches it.
    from citeaudit.store import Store
    from citeaudit.store.revisions import revision_warnings

    # Every figure from one state of the ledger, whatever other processes commit while it is read.
    with Store(path) as store, store.snapshot():
        protocol_pk = store.choose_protocol(protocol, scope)
        chosen, columns, excluded = store.scoring_input(protocol_pk, scope)
        failed = store.failed_answers(protocol_pk, scope)
        in_scope = {str(run) for run in columns.answer_dims["run"]}
        from citeaudit.store.answers import partly_understood

        warnings = (*revision_warnings(store, protocol_pk, in_scope), *partly_understood(store, in_scope))
        brand = cross = None
        if figures:
            brand, cross = _database_figures(store, chosen, protocol_pk, scope, by, ci, columns)
        from citeaudit.store.answers import unresolved_sources

        unresolved = unresolved_sources(store, columns.citation_source, columns.edge_source)
    fp = fingerprint(chosen)  # the protocol hashed once, for both groupings
    result = score_columns(columns, scoring=chosen.scoring, fingerprint=fp, by=by, macro=macro, ci=ci)
    also = None if also_by is None else score_columns(columns, scoring=chosen.scoring, fingerprint=fp, by=also_by)
    not_computed = _not_computed(chosen) if figures else ()
    official = columns.source_official
    return ScoredPath(
        result, chosen, excluded, failed, warnings, brand, cross, unresolved, not_computed, also, official
    )


def _names_a_brand(protocol: Protocol) -> bool:
    """Whether the protocol declares what the brand figures are about: a brand or competitors."""
    return protocol.brand is not None or bool(protocol.competitors)


def _not_computed(protocol: Protocol) -> tuple[tuple[str, str], ...]:
    """Why figures asked for were not computed for ``protocol``."""
    return () if _names_a_brand(protocol) else (("brand", NO_BRAND),)


def _file_brand(audit: Audit, by: Sequence[str], ci: IntervalSettings | None) -> BrandFigures | None:
    """The brand figures of an audit file's scope, when its protocol names a brand or competitors."""
    if not _names_a_brand(audit.protocol):
        return None
    from citeaudit.checks import model_confusion
    from citeaudit.core.brand.figures import brand_figures

    by_answer = () if {"collection", "collection_date"} & set(by) else by  # as for a database, above
    return brand_figures(audit, model_confusion, by=by_answer, ci=_ci(ci))


def _database_figures(
    store: Store,
    protocol: Protocol,
    protocol_pk: int,
    scope: Scope,
    by: Sequence[str],
    ci: IntervalSettings | None,
    scoring: ScoringColumns,
) -> tuple[BrandFigures | None, MisattributionReport]:
    """The brand figures (when the protocol names a brand or competitors) and misattribution of a database's scope,
    from columns (no model object per edge), beside the scoring columns of the same scope."""
    from citeaudit.checks import model_confusion
    from citeaudit.core.brand.columns import brand_figures_columns
    from citeaudit.core.misattribution import misattribution_columns
    from citeaudit.store.brand_input import claim_texts, has_cross_pairs, page_snapshots, read_brand_columns

    pairs: list[CrossPair] = []
    required = 1
    if has_cross_pairs(store):  # most databases have none: the cross-pair tables' readers are not even loaded
        from citeaudit.store.cross_pairs import cross_pairs_of, reviews_required

        pairs, required = cross_pairs_of(store, protocol_pk), reviews_required(store)
    columns = read_brand_columns(
        store,
        protocol,
        protocol_pk,
        scope,
        model_confusion,
        scoring,
        {pair.claim_id for pair in pairs},
        digits_needed=True,  # every model identifier has a digit
    )
    # The brand figures group answers by what an answer carries; a collection is not one of those, so grouped by
    # collection they are given overall only.
    brand_by = () if {"collection", "collection_date"} & set(by) else by
    brand = None
    if _names_a_brand(protocol):  # the page history is read for the brand figures' version drift only
        snapshots = page_snapshots(store, protocol_pk)
        brand = brand_figures_columns(protocol, columns, model_confusion, snapshots=snapshots, by=brand_by, ci=_ci(ci))
    cross = misattribution_columns(
        columns.claim_ids,
        lambda claim: columns.answer_ids[int(columns.claim_answer[claim])],
        claim_texts(store, protocol_pk, (pair.claim_id for pair in pairs)),
        columns.edge_claim,
        lambda edge: columns.source_keys[int(columns.edge_source[edge])],
        columns.edge_code,
        pairs,
        reviews_required=required,
    )
    return brand, cross


def unresolved_links(audit: Audit) -> int:
    """Cited sources of an audit's answers (citations and edges) whose link has not been followed: while there
    are any, the official-domain rate of the audit is provisional."""
    claims = {c.id: c.answer_id for c in audit.claims}
    cited = {c.source_key for a in audit.answers for c in a.citations if c.kind == "cited" and c.source_key}
    cited |= {e.source_key for e in audit.edges if e.claim_id in claims}
    return sum(1 for s in audit.sources if s.key in cited and s.status is SourceStatus.PENDING)


def _outcomes_in_scope(
    store: Store, protocol: Protocol, protocol_pk: int, scope: Scope
) -> tuple[Audit, list[EdgeOutcome]]:
    """The audit in scope without its edges, and the outcomes of the edges of its claims."""
    from citeaudit.store.brand_input import read_outcomes

    audit, outcomes = read_outcomes(store, protocol, protocol_pk)
    selected = select_audit(audit, scope, _extra(store, scope))[0]
    claims = {c.id for c in selected.claims}
    return selected, [e for e in outcomes if e.claim_id in claims]


def _ci(settings: IntervalSettings | None) -> tuple[float, int, int] | None:
    return None if settings is None else (settings.level, settings.resamples, settings.seed)


def misattribution_path(
    path: str | Path, *, scope: Scope = Scope(), protocol: str | None = None
) -> tuple[MisattributionReport, Audit]:
    """Misattributed claims over the claims at risk of a database (its cross pairs) or an audit file (none), with
    the audit in scope (for the sources' URLs and titles)."""
    from citeaudit.core.misattribution import misattribution

    if is_database(path):
        from citeaudit.store import Store
        from citeaudit.store.cross_pairs import cross_pairs_of, reviews_required

        # Every figure from one state of the ledger, whatever other processes commit while it is read.
        with Store(path) as store, store.snapshot():
            protocol_pk = store.choose_protocol(protocol, scope)
            chosen = store.effective_protocol(protocol_pk, scope)
            audit, outcomes = _outcomes_in_scope(store, chosen, protocol_pk, scope)
            pairs = cross_pairs_of(store, protocol_pk)
            required = reviews_required(store)
        return misattribution(audit, pairs, edges=outcomes, reviews_required=required), audit
    audit = select_audit(read_file(path).audit, scope)[0]
    return misattribution(audit, ()), audit


def load_scope(path: str | Path, *, scope: Scope = Scope(), protocol: str | None = None) -> Audit:
    """The audit in ``scope`` from a file or a database (for reports that list claims and evidence)."""
    if is_database(path):
        from citeaudit.store import Store

        with Store(path) as store:
            audit = store.load_audit(store.choose_protocol(protocol, scope))
            extra = _extra(store, scope)
        return select_audit(audit, scope, extra)[0]
    audit = read_file(path).audit
    return select_audit(audit, scope)[0]


@dataclass(frozen=True, slots=True)
class ReportReads:
    """What the HTML report reads of a database on a thread of its own while it makes its scores
    (:func:`prefetch_report_reads`), one read after the other, each given as soon as it is done."""

    protocol_pk: int
    """The protocol the edges are of."""
    edges: BackgroundRead[EdgeReads]
    """The edges' columns and the texts of their evidence rows (``read_edge_reads``)."""
    reviewers: BackgroundRead[list[tuple[Rater, int]]]
    """The human reviewers and how many edges each labelled (``Ratings.human_raters``)."""


def prefetch_report_reads(
    path: str | Path, *, scope: Scope = Scope(), protocol: str | None = None, idle: bool | None = None
) -> ReportReads | None:
    """The report's reads whose time is SQLite's (:class:`ReportReads`) started on a thread of their own, when
    ``path`` is a database and another core is idle to run them (``idle``, by default
    :func:`~citeaudit.store.pipeline.second_core_idle` now); ``None`` otherwise: the report then reads them in
    turn."""
    if not is_database(path):
        return None
    from citeaudit.store.pipeline import BackgroundRead, second_core_idle

    if not (second_core_idle() if idle is None else idle):
        return None
    from citeaudit.store import Store
    from citeaudit.store.judgements import read_human_raters
    from citeaudit.store.report_input import read_edge_reads

    with Store(path) as store:  # opened first: the thread reads a database brought up to date
        protocol_pk = store.choose_protocol(protocol, scope)
    edges = BackgroundRead(Path(path), lambda db: read_edge_reads(db, protocol_pk), name="citeaudit-report-edges")
    # after the edges, which the report needs first: a third thread would take the core the scores need
    return ReportReads(
        protocol_pk, edges, BackgroundRead(Path(path), read_human_raters, name="citeaudit-reviewers", after=edges)
    )


def load_report_scope(
    path: str | Path,
    *,
    scope: Scope = Scope(),
    protocol: str | None = None,
    prefetched: ReportReads | None = None,
    official: bool = True,
) -> tuple[Audit, ReportRows | None]:
    """The audit in ``scope`` for the HTML report: from a database without its edges, which come beside it as rows
    (every edge of the protocol; the report keeps those of the audit's claims) with its official sources (not yet
    decided with ``official`` false: see :func:`~citeaudit.store.report_input.with_official`); from a file whole,
    with ``None``. ``prefetched``: what :func:`prefetch_report_reads` read (its texts are used when they are of the
    protocol chosen here)."""
    if not is_database(path):
        return load_scope(path, scope=scope, protocol=protocol), None
    from citeaudit.store import Store
    from citeaudit.store.report_input import read_report_input

    with Store(path) as store:
        protocol_pk = store.choose_protocol(protocol, scope)
        ahead = None if prefetched is None or prefetched.protocol_pk != protocol_pk else prefetched.edges
        audit, rows = read_report_input(store, protocol_pk, ahead, official=official)
        extra = _extra(store, scope)
    return select_audit(audit, scope, extra)[0], rows


def _extra(store: Store, scope: Scope) -> dict[str, dict[str, str | None]] | None:
    """The collection dimensions of a database's answers, when the scope filters on them."""
    if not {"collection", "collection_date"} & set(scope.where):
        return None
    from citeaudit.store.answers import collection_values

    return collection_values(store)


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
    from citeaudit.core.raters import pair_sided

    if a == b:
        raise InvalidValue(str(store.path), "--between", f"the two raters must differ (both are {str(a)!r})")
    _check_raters(store.path, (a, b), store.ratings.raters(protocol_pk))
    rows, edges_total = store.ratings.sided_labels(a, b, protocol_pk)
    return pair_sided(rows, a, b, edges_total=edges_total)


def load_label_pairs(path: str | Path, a: Rater, b: Rater, *, protocol: str | None = None) -> LabelPairs:
    """Pair rater A's and B's latest review-stage judgement per edge, from a database or an audit file
    (``edges[].judgements[]``); a database is read whole unless ``protocol`` selects one protocol."""
    from citeaudit.core.raters import pairs_from_audit, raters_of_audit

    if a == b:
        raise InvalidValue(str(path), "--between", f"the two raters must differ (both are {str(a)!r})")
    if is_database(path):
        from citeaudit.store import Store

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
    ac1_categories: Sequence[Label | str] | None = None,
) -> Agreement:
    """Agreement of raters A and B (A as gold for supported-vs-rest) on the edges of a database or audit file;
    ``progress`` gets the number of bootstrap resamples done after each batch; ``ac1_categories`` as in
    :func:`citeaudit.core.agreement.agreement`."""
    from citeaudit.core.agreement import agreement

    pairs = load_label_pairs(path, a, b, protocol=protocol)
    return agreement(
        pairs, level=level, resamples=resamples, seed=seed, progress=progress, ac1_categories=ac1_categories
    )
