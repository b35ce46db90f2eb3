"""``report``: the self-contained HTML report."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from citeaudit.cli.common import console, handles_errors, left_to_the_end
from citeaudit.cli.score import ByOption, KindChoice, KindOption, ProtocolOption, WhereOption

if TYPE_CHECKING:
    from citeaudit.core.model import Protocol
    from citeaudit.core.raters import Rater
    from citeaudit.core.results import ScoreResult
    from citeaudit.core.scope import Scope
    from citeaudit.core.scored import ScoredPath
    from citeaudit.core.scoring import IntervalSettings
    from citeaudit.report.trend import Trend
    from citeaudit.scoring.child import InChild
    from citeaudit.store.copies import SupportRow
    from citeaudit.store.report_input import ReportRows

    Made = tuple[ScoredPath, ScoreResult, Trend | None]
    """What :class:`_Scores` makes."""

__all__ = ["register"]


@handles_errors
def report(
    path: Annotated[Path, typer.Argument(help="An audit file or a citeaudit database.")],
    out: Annotated[Path, typer.Option("--out", help="HTML file to write.")] = Path("report.html"),
    compare: Annotated[
        Path | None,
        typer.Option(
            "--compare", help="A second file or database to compare with (as B; default with --compare-where: PATH)."
        ),
    ] = None,
    compare_where: Annotated[
        list[str] | None,
        typer.Option(
            "--compare-where",
            help="B's selection (DIMENSION=VALUE, repeatable): compare two selections of one database, e.g. "
            "--where collection=2026-10 --compare-where collection=2026-11.",
        ),
    ] = None,
    by: ByOption = "platform",
    kind: KindOption = KindChoice.PLATFORM,
    where: WhereOption = None,
    protocol: ProtocolOption = None,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples.", min=100)] = 9999,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same report figures).")] = 0,
    protocol_file: Annotated[
        Path | None,
        typer.Option(
            "--protocol-file",
            help="A protocol YAML whose engine labels name the engines in the report (default: the project "
            "file's protocol; the audit's own protocol otherwise).",
        ),
    ] = None,
) -> None:
    """Write one self-contained HTML file: disclosure, the three numbers with intervals, tables by group and by
    question, labels, joint support, severity, diagnostics, the unsupported claims with their evidence, official
    citations, the trend across collections (a database with two or more), and the comparison when --compare or
    --compare-where is given."""
    # the store, which the child's scores and this process's reads both use, is loaded once, before the fork
    import citeaudit.store.sqlite  # noqa: F401
    from citeaudit.cli.score import _by, _scope
    from citeaudit.core.collector import collector_paused
    from citeaudit.core.scoring import IntervalSettings
    from citeaudit.scoring.child import in_child
    from citeaudit.scoring.paths import load_report_scope, prefetch_report_reads
    from citeaudit.store.pipeline import second_core_idle

    with collector_paused():
        named = None if protocol_file is None else _protocol_file(protocol_file)
        scope = _scope(kind, where)
        scores = _Scores(path, scope, _by(by), protocol, IntervalSettings(resamples=resamples, seed=seed))
        # On a machine with an idle core (asked once: the work started here takes it), the scores are made in a
        # child process while this one reads the evidence, with SQLite's part of that reading on a thread. The
        # child is forked before any database is opened here or any thread started.
        idle = _is_database(path) and second_core_idle()
        ahead = in_child(scores) if idle else None
        with nullcontext() if ahead is None else ahead:
            if ahead is None:
                scored, by_question, trend = scores()
            # the report's own modules (the template engine, the evidence) after the fork: the child has no use for
            # them, and this process loads them while the child works
            from citeaudit.core.protocol import disclosure
            from citeaudit.report.evidence import mark_official
            from citeaudit.report.files import write_atomically
            from citeaudit.report.html import ReportInput, render_report, report_index

            try:
                reading = prefetch_report_reads(path, scope=scope, protocol=protocol, idle=idle)
                collections = _collections(path)
                # the official sources are marked once the scores come: decided once, by the scorer
                audit, rows = load_report_scope(
                    path, scope=scope, protocol=protocol, prefetched=reading, official=False
                )
                index = report_index(audit, named, collections, rows)
            except Exception:
                if ahead is not None:
                    _made(ahead, scores)  # an error of the scores comes first, as when they are made first
                raise
            if ahead is not None:
                scored, by_question, trend = _made(ahead, scores)
        if rows is not None:
            rows = _with_official(path, audit.protocol, rows, scored)
            mark_official(index, audit, rows.official)
        comparison = None
        names = (str(path), str(compare))
        if compare is not None or compare_where:
            from citeaudit.scoring.comparison import compare_paths

            other = compare if compare is not None else path
            scope_b = _scope(kind, compare_where) if compare_where else scope
            comparison = compare_paths(
                path,
                other,
                scope_a=scope,
                scope_b=scope_b,
                protocol_a=protocol,
                protocol_b=protocol if compare is None else None,  # one database: one protocol for both selections
                resamples=resamples,
                seed=seed,
            ).to_dict()
            names = (_selection(path, where), _selection(other, compare_where or where))
        support, support_note = _support(path, {a.id for a in audit.answers})
        html = render_report(
            ReportInput(
                source=str(path),
                audit=audit,
                result=scored.result,
                by_question=by_question,
                disclosure=disclosure(scored.protocol),
                excluded=scored.excluded_by_kind,
                failed=scored.failed_answers,
                warnings=scored.warnings,
                support=support,
                support_note=support_note,
                comparison=comparison,
                names=names,
                trend=trend,
                unresolved_links=scored.unresolved_links,
                misattribution=scored.misattribution,
                review_note=_review_note(path, None if reading is None else reading.reviewers.result()),
                names_from=named,
                collections=collections,
                stale=() if scored.brand is None else scored.brand.version_drift.stale,
                rows=rows,
                index=index,
            )
        )
        # still without the collector: a walk of all the report holds, as it starts again, would be wasted here
        write_atomically(out, html)
        console.print(f"wrote {out} ({sum(map(len, html)) // 1024} KiB, self-contained)", soft_wrap=True)
        left_to_the_end(audit, rows, index, html, scored, by_question, trend, comparison)


@dataclass(frozen=True, slots=True)
class _Scores:
    """The report's scores: by its groups with intervals and figures, by question, and the trend across the
    database's collections (made in turn, or in a child process while the evidence is read)."""

    path: Path
    scope: Scope
    groups: tuple[str, ...]
    protocol: str | None
    settings: IntervalSettings

    def __call__(self) -> Made:
        from citeaudit.scoring.paths import score_path

        path, scope, protocol = self.path, self.scope, self.protocol
        scored = score_path(
            path, scope=scope, by=self.groups, protocol=protocol, ci=self.settings, figures=True, also_by=("question",)
        )
        by_question = scored.also or score_path(path, scope=scope, by=("question",), protocol=protocol).result
        return scored, by_question, _trend(path, scope, self.settings)


def _made(ahead: InChild[Made], scores: _Scores) -> Made:
    """The scores the child made; made here when it failed (raising the error the scores raise)."""
    done, value = ahead.result()
    return value if done and value is not None else scores()


def _with_official(path: Path, protocol: Protocol, rows: ReportRows, scored: ScoredPath) -> ReportRows:
    """``rows`` with their official sources as the scores decided them (one decision for the official-domain rate
    and for the pages the report lists), else decided here: when the scores were made under other official domains
    or from a state of the ledger that lacked some of the rows' sources (a writer came in between)."""
    from citeaudit.store.report_input import with_official

    mask = scored.source_official
    if mask is not None and scored.protocol.official_domains == protocol.official_domains:
        try:
            return with_official(rows, mask)
        except ValueError:
            pass  # made before some of the rows' sources were written
    from citeaudit.store import Store
    from citeaudit.store.reading import official_mask

    with Store(path) as store:
        return with_official(rows, official_mask(store.connection, protocol))


def _is_database(path: Path) -> bool:
    """Whether ``path`` is a database (a file that cannot be read is not: the scores then say why)."""
    from citeaudit.core.errors import InputError
    from citeaudit.scoring.paths import is_database

    try:
        return is_database(path)
    except InputError:
        return False


def _support(path: Path, answer_ids: set[str]) -> tuple[tuple[list[SupportRow], list[SupportRow]] | None, str]:
    """Independent support from a database's copy groups, or why there is none to show."""
    from citeaudit.scoring.paths import is_database
    from citeaudit.store import Store
    from citeaudit.store.copies import copies_computed, support_rows

    if not is_database(path):
        return (
            None,
            "Copy groups live in a database: import the file, run citeaudit resolve and citeaudit sources copies.",
        )
    with Store(path) as store:
        computed = copies_computed(store)
        if computed is None:
            return (
                None,
                "Copy groups have not been computed yet: run citeaudit resolve, then citeaudit sources copies.",
            )
        return support_rows(store, answer_ids), f"Copy groups computed {computed}."


def _protocol_file(path: Path) -> Protocol:
    """The protocol file read for its engine labels (checked as every protocol file is)."""
    from citeaudit.interchange import load_protocol

    return load_protocol(path)


def _collections(path: Path) -> dict[str, str | None] | None:
    """Per answer id, its collection (a database's answers)."""
    from citeaudit.scoring.paths import is_database
    from citeaudit.store import Store
    from citeaudit.store.answers import collection_values

    if not is_database(path):
        return None
    with Store(path) as store:
        return collection_values(store)["collection"]


def _selection(path: Path, where: list[str] | None) -> str:
    return f"{path} [{', '.join(where)}]" if where else str(path)


def _trend(path: Path, scope: Scope, settings: IntervalSettings) -> Trend | None:
    """The trend across the database's collections, when it has two or more."""
    from citeaudit.report.trend import trend_path
    from citeaudit.scoring.paths import is_database
    from citeaudit.store import Store
    from citeaudit.store.answers import collections_with_answers

    if not is_database(path):
        return None
    with Store(path) as store:
        if len(collections_with_answers(store)) < 2:
            return None
    return trend_path(path, by=("platform",), ci=settings, scope=scope)


def _review_note(path: Path, reviewers: list[tuple[Rater, int]] | None) -> str:
    """The review policy behind the final labels and how far the two most active human reviewers agree
    (``reviewers``: the human reviewers read already)."""
    from citeaudit.scoring.paths import agreement_path, is_database
    from citeaudit.store import Store
    from citeaudit.store.review_base import read_settings

    if not is_database(path):
        return "Labels as recorded in the audit file (its review policy is not recorded there)."
    with Store(path) as store:
        policy = read_settings(store.connection)["policy"]
        humans = store.ratings.human_raters() if reviewers is None else reviewers
    wording = {
        "single": "single review (one human review gives the final label)",
        "double": "double review (two independent human reviews; disagreements adjudicated)",
    }
    note = f"Review policy: {wording.get(policy, policy)}; {len(humans)} human reviewer(s) labelled edges."
    if len(humans) < 2:
        return note + " Reviewer agreement: not measured (it needs two reviewers labelling the same edges)."
    (a, _), (b, _) = humans[0], humans[1]
    found = agreement_path(path, a, b, resamples=0)
    alpha = found.krippendorff_alpha.value
    shown = "undefined" if alpha is None else f"{alpha:.3f}"
    return (
        note + f" Reviewer agreement between {a.name} and {b.name}: Krippendorff's alpha {shown} on {found.n} "
        f"edge(s) both labelled, observed agreement "
        + ("undefined" if found.observed.value is None else f"{found.observed.value:.3f}")
        + "."
    )


def register(app: typer.Typer) -> None:
    """Add this group's commands to ``app``."""
    app.command()(report)
