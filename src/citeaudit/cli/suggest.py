"""``suggest`` and ``judge audit``: model suggestions stored beside the edges, and how far a judge can be trusted."""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Protocol, TypeVar

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from citeaudit.cli.common import DbOption, console, err_console, existing_database, handles_errors
from citeaudit.core.model import Label
from citeaudit.evidence import SUGGEST_METHOD, RankMethod

if TYPE_CHECKING:
    from citeaudit.core.stats import Interval
    from citeaudit.judges import Judge
    from citeaudit.suggest import JudgeAuditReport, SuggestReport

__all__ = ["judge_app", "register"]

judge_app = typer.Typer(help="Model judges: how far their suggestions can be trusted.", no_args_is_help=True)


class JudgeName(StrEnum):
    """Judges the commands accept."""

    CHECKS = "checks"
    NLI = "nli"
    OPENAI = "openai"


class ReportFormat(StrEnum):
    """Output formats of these commands."""

    TABLE = "table"
    JSON = "json"


JudgeOption = Annotated[JudgeName, typer.Option("--judge", help="The judge: checks, nli or openai.")]
ModelOption = Annotated[
    str | None,
    typer.Option(
        "--model",
        help="nli: folder of a local model; openai: model name (else CITEAUDIT_OPENAI_MODEL).",
    ),
]
MethodOption = Annotated[
    RankMethod,
    typer.Option(
        "--method",
        help="How passages are ranked for the claim: window (runs of up to 3 adjacent passages, trimmed), "
        "window-hybrid, or single passages by bm25, dense or hybrid; dense and the hybrids need the models extra.",
    ),
]
TopOption = Annotated[int, typer.Option("--top", min=1, help="Passages shown to the judge (best first).")]
FormatOption = Annotated[ReportFormat, typer.Option("--format", help="Output format.")]


def _judge(name: JudgeName, model: str | None) -> Judge:
    from citeaudit.judges import make_judge

    if name is JudgeName.NLI:
        return make_judge("nli", model_path=model)
    if name is JudgeName.OPENAI:
        return make_judge("openai", model=model)
    return make_judge(str(name))


def _progress(label: str) -> Progress:
    return Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=False,
    )


def _suggest_lines(report: SuggestReport) -> list[str]:
    labels = ", ".join(f"{report.labels[label]} {label}" for label in Label if report.labels[label])
    return [
        f"{report.suggested} edge(s) suggested" + (f" ({labels})" if labels else ""),
        f"{report.already_suggested} already suggested by this judge (skipped; --refresh to redo)",
        f"{report.no_snapshot} without a snapshot of their source (run `citeaudit resolve` first)",
        f"{report.empty_snapshot} whose snapshot has no text",
        f"{report.over_limit} left by --limit",
        f"{report.edges} edge(s) without a final label in scope",
        f"{report.retired} edge(s) of retired claims left out",
    ]


@handles_errors
def suggest(
    db: DbOption,
    judge: JudgeOption = JudgeName.CHECKS,
    method: MethodOption = SUGGEST_METHOD,
    top: TopOption = 3,
    model: ModelOption = None,
    run: Annotated[str | None, typer.Option("--run", help="Only edges of answers in this run.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=0, help="Suggest for at most N edges this time.")] = None,
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Suggest again for edges this judge already suggested for.")
    ] = False,
    fmt: FormatOption = ReportFormat.TABLE,
    cross_pairs: Annotated[
        bool,
        typer.Option(
            "--cross-pairs",
            help="Instead of edges: propose the cross pairs of claims whose edges are not supported (other sources "
            "of the same answer, official pages) and suggest for those (misattribution; never scored as edges).",
        ),
    ] = False,
    triage: Annotated[
        bool,
        typer.Option(
            "--triage",
            help="Instead of a judge's label for every edge: offer for the review UI's triage page the edges a "
            "consistency check finds in conflict with an on-topic passage, or whose best passage the relevance "
            "judge (all-MiniLM-L6-v2, models extra) rates below the threshold. A reviewer confirms each one.",
        ),
    ] = False,
    conflict_min: Annotated[
        float | None,
        typer.Option(
            "--conflict-min",
            min=-1.0,
            max=1.0,
            help="With --triage: offer as conflicting an edge where a check finds a conflict in a passage at least "
            "this similar to the claim. Off by default: on Factcheck-Bench no threshold reached precision 0.95 "
            "(the best on the selection half, 0.70, was right 1 of 2 times; 0 of 1 on the held-out half).",
        ),
    ] = None,
    irrelevant_below: Annotated[
        float | None,
        typer.Option(
            "--irrelevant-below",
            min=-1.0,
            max=1.0,
            help="With --triage: offer as irrelevant an edge whose best passage is less similar than this.",
        ),
    ] = None,
) -> None:
    """Rank each unlabelled edge's snapshot passages for its claim and store the judge's suggestion.

    A suggestion is a model judgement with its provenance (judge, model, version, prompt hash, confidence) and
    the top passages it read; it never sets a final label. Reruns skip edges this judge already suggested for.
    With --cross-pairs the same is done for cross pairs (see `citeaudit misattribution`). With --triage the edges
    the offline judges are sure about are offered to reviewers to confirm (see docs/review.md, "Triage").
    """
    from citeaudit.suggest import suggest_edges

    path = existing_database(db)
    if not triage:
        for name, value in (("--conflict-min", conflict_min), ("--irrelevant-below", irrelevant_below)):
            if value is not None:
                from citeaudit.core.errors import InvalidValue

                raise InvalidValue("suggest", f"{name} {value!r}", "needs --triage")
    if triage:
        from citeaudit.core.errors import InvalidValue

        if cross_pairs:
            raise InvalidValue("suggest", "--triage", "offers edges, not cross pairs; leave out --cross-pairs")
        # the triage's judges are fixed (the checks and the packaged relevance model) and it offers every edge once
        for name, given in (
            ("--judge", None if judge is JudgeName.CHECKS else str(judge)),
            ("--model", model),
            ("--limit", limit),
            ("--refresh", True if refresh else None),
        ):
            if given is not None:
                where = name if given is True else f"{name} {given!r}"
                raise InvalidValue("suggest", where, "does not apply with --triage; leave it out")
        _triage(path, method, top, run, conflict_min, irrelevant_below, fmt)
        return
    chosen = _judge(judge, model)
    if cross_pairs:
        _suggest_cross(path, chosen, method, top, run, limit, refresh, fmt)
        return
    report = _suggested(
        f"suggesting ({chosen.name})",
        lambda advance: suggest_edges(
            path, chosen, method=method, k=top, run=run, limit=limit, refresh=refresh, progress=advance
        ),
        chosen,
        method,
        top,
        fmt,
    )
    if report is not None:
        for line in _suggest_lines(report):
            console.print(line)


def _triage(
    path: Path,
    method: RankMethod,
    top: int,
    run: str | None,
    conflict_min: float | None,
    irrelevant_below: float | None,
    fmt: ReportFormat,
) -> None:
    from citeaudit.judges.triage import DEFAULT_THRESHOLDS, TriageThresholds
    from citeaudit.suggest import triage_edges

    # the conflict reason is on only when asked for (its default is off)
    thresholds = TriageThresholds(
        DEFAULT_THRESHOLDS.conflict_min if conflict_min is None else conflict_min,
        DEFAULT_THRESHOLDS.irrelevant_below if irrelevant_below is None else irrelevant_below,
    )
    with _progress("triage") as progress:
        task = progress.add_task("triage", total=None)
        report = triage_edges(
            path,
            thresholds=thresholds,
            k=top,
            method=method,
            run=run,
            progress=lambda done, total: progress.update(task, completed=done, total=total),
        )
    if fmt is ReportFormat.JSON:
        body = {"method": str(method), "top": top, **report.to_dict()}
        console.out(json.dumps(body, indent=2, ensure_ascii=False), highlight=False)
        return
    offered = ", ".join(f"{count} {reason}" for reason, count in sorted(report.offered.items()) if count)
    console.print(f"{sum(report.offered.values())} edge(s) offered for triage" + (f" ({offered})" if offered else ""))
    console.print(f"{report.left_to_reviewer} left to the reviewer (no reason is sure)")
    console.print(f"{report.already_offered} already offered (skipped)")
    console.print(f"{report.no_snapshot} without a snapshot of their source (run `citeaudit resolve` first)")
    console.print(f"{report.empty_snapshot} whose snapshot has no text")
    console.print(f"{report.edges} edge(s) without a final label in scope")
    conflict = (
        "conflicts not offered"
        if thresholds.conflict_min is None
        else f"conflict in a passage with similarity >= {thresholds.conflict_min:.2f}"
    )
    console.print(f"thresholds: {conflict}; irrelevant below {thresholds.irrelevant_below:.2f}")
    if thresholds.conflict_min is None:
        from citeaudit.judges.triage import CONFLICT_OFF

        console.print(f"check_conflict: {CONFLICT_OFF}", soft_wrap=True)


class _Reported(Protocol):
    def to_dict(self) -> dict[str, object]: ...


_R = TypeVar("_R", bound=_Reported)


def _suggested(
    title: str,
    work: Callable[[Callable[[int, int], None]], _R],
    chosen: Judge,
    method: RankMethod,
    top: int,
    fmt: ReportFormat,
) -> _R | None:
    """Run a suggestion pass with a progress bar; in JSON, print its report (judge, method, counts) and return
    ``None``, else return the report for the caller's lines."""
    with _progress(title) as progress:
        task = progress.add_task("suggest", total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        report = work(advance)
    if fmt is ReportFormat.JSON:
        body = {
            "judge": {"name": chosen.name, "model": chosen.model, "version": chosen.version},
            "method": str(method),
            "top": top,
            **report.to_dict(),
        }
        console.out(json.dumps(body, indent=2, ensure_ascii=False), highlight=False)
        return None
    return report


def _suggest_cross(
    path: Path,
    chosen: Judge,
    method: RankMethod,
    top: int,
    run: str | None,
    limit: int | None,
    refresh: bool,
    fmt: ReportFormat,
) -> None:
    from citeaudit.suggest import suggest_cross_pairs

    report = _suggested(
        f"suggesting for cross pairs ({chosen.name})",
        lambda advance: suggest_cross_pairs(
            path, chosen, method=method, k=top, run=run, limit=limit, refresh=refresh, progress=advance
        ),
        chosen,
        method,
        top,
        fmt,
    )
    if report is None:
        return
    console.print(f"proposed {report.proposed} new cross pair(s); {report.cross_pairs} without a human judgement")
    console.print(
        f"suggested {report.suggested}, already suggested {report.already_suggested}, no snapshot "
        f"{report.no_snapshot}, empty snapshot {report.empty_snapshot}, left by --limit {report.over_limit}"
    )
    labels = ", ".join(f"{label}: {report.labels[str(label)]}" for label in Label)
    console.print(f"suggested labels: {labels}")


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _interval(ci: Interval | None) -> str:
    if ci is None or ci.low is None or ci.high is None:
        return "—"
    return f"[{ci.low:.3f}, {ci.high:.3f}]"


def _print_audit(report: JudgeAuditReport) -> None:
    battery = report.battery
    console.print(
        f"judge {battery.judge} {battery.version}"
        + (f" ({battery.model})" if battery.model else "")
        + f" against gold reviewer {report.gold}: {report.tested} edge(s) tested of {report.gold_edges} gold "
        f"({report.from_suggestions} with stored passages, {report.ranked_now} ranked now, "
        f"{report.without_text} without text, {report.over_limit} left by --limit)"
    )
    table = Table(
        "perturbation", "edges", "flips", "flip rate", "95% CI", "excess over repeat", "Δ P(supported)", "verdict"
    )
    table.columns[0].no_wrap = True  # the perturbation names are looked up as written
    for result in battery.results:
        table.add_row(
            str(result.perturbation),
            str(result.edges),
            str(result.flips),
            _rate(result.flip_rate),
            _interval(result.flip_ci),
            _rate(result.excess_over_repeat) + (f" {_interval(result.excess_ci)}" if result.excess_ci else ""),
            _rate(result.supported_delta),
            result.reading,
        )
    console.print(table)
    caution = next((r.flip_ci.caution for r in battery.results if r.flip_ci.caution), None)
    if caution:
        console.print(f"caution: {caution}")
    console.print(f"agreement with gold (Cohen's kappa above 0): {battery.agreement.verdict} ({battery.agreement.why})")
    agreement = report.agreement
    figures = Table("agreement with gold", "value", "95% CI")
    for name, coefficient in (
        ("observed", agreement.observed),
        ("Cohen's kappa", agreement.cohen_kappa),
        ("Krippendorff's alpha", agreement.krippendorff_alpha),
        ("Gwet's AC1", agreement.gwet_ac1),
    ):
        figures.add_row(name, _rate(coefficient.value), _interval(coefficient.ci))
    console.print(figures)
    calibration = battery.calibration
    if calibration is None:
        console.print("calibration: — (the judge gives no confidences)")
    else:
        console.print(
            f"calibration on {calibration.edges} edge(s): ECE {calibration.ece:.3f}, Brier {calibration.brier:.3f}"
        )


@handles_errors
def audit(
    db: DbOption,
    judge: JudgeOption,
    gold: Annotated[str, typer.Option("--gold", help="The reviewer whose latest review labels are the gold.")],
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Test at most N gold edges.")] = None,
    method: MethodOption = SUGGEST_METHOD,
    top: TopOption = 3,
    model: ModelOption = None,
    resamples: Annotated[int, typer.Option("--resamples", min=2, help="Bootstrap resamples for the intervals.")] = 9999,
    fmt: FormatOption = ReportFormat.TABLE,
) -> None:
    """Run the judge-bias battery on the edges a gold reviewer labelled: flip rates with paired intervals,
    agreement with the reviewer and calibration. Writes nothing."""
    from citeaudit.suggest import judge_audit

    path = existing_database(db)
    chosen = _judge(judge, model)
    with _progress(f"asking {chosen.name}") as progress:
        task = progress.add_task("audit", total=None)
        report = judge_audit(
            path,
            chosen,
            gold,
            limit=limit,
            k=top,
            method=method,
            resamples=resamples,
            progress=lambda calls: progress.advance(task, calls),
        )
    if fmt is ReportFormat.JSON:
        console.out(json.dumps(report.to_dict(), indent=2, ensure_ascii=False), highlight=False)
        return
    _print_audit(report)


def register(app: typer.Typer) -> None:
    """Add ``suggest`` and the ``judge`` group to the application."""
    app.command("suggest")(suggest)
    judge_app.command("audit")(audit)
    app.add_typer(judge_app, name="judge")
