"""``segment``, ``claim split|merge|edit|list`` and ``facts map|list|confirm|reject``: answers into claims, as
versioned and reviewable claim sets, and claims mapped to the required facts."""

from __future__ import annotations

import json
import time
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from citeaudit.cli.common import (
    DbOption,
    OutputFormat,
    console,
    err_console,
    existing_database,
    handles_errors,
    shown_text,
)
from citeaudit.core.errors import InputError
from citeaudit.core.limits import MAX_INT, shown

# load_embedder is looked up here at call time, so that it can be replaced (as without the models extra).
from citeaudit.segment.facts import DEFAULT_THRESHOLD, load_embedder
from citeaudit.segment.rules_v2 import METHOD as DEFAULT_METHOD
from citeaudit.segment.rules_v2 import RULES_METHODS as METHODS

if TYPE_CHECKING:
    from citeaudit.segment.claimsets import SetPlan
    from citeaudit.segment.resegment import MethodCounts, SegmentReport
    from citeaudit.segment.rules import Rules
    from citeaudit.segment.rules_v2 import RulesV2
    from citeaudit.store import Store
    from citeaudit.store.facts import MappingRow

__all__ = ["claim_app", "facts_app", "register"]

claim_app = typer.Typer(
    help="Look at and change an answer's claims by hand; every change is a new claim set, recorded with who "
    "and when. Unchanged claims keep their judgements; changed ones start pending.",
    no_args_is_help=True,
)

ReviewerOption = Annotated[
    str,
    typer.Option("--reviewer", envvar="CITEAUDIT_REVIEWER", help="Who makes the change (env CITEAUDIT_REVIEWER)."),
]

_REDRAW_SECONDS = 0.1
"""How often ``segment``'s progress bar is redrawn."""


def _open(db: Path) -> Store:
    from citeaudit.store import Store

    return Store(existing_database(db))


def _claims_line(report: SegmentReport) -> str:
    return (
        f"claims: {report.kept} kept (text and span unchanged, {report.judgements_kept} judgements kept), "
        f"{report.new} new with {report.edges_pending} pending edges, {report.retired} retired "
        f"({report.judgements_not_transferred} judgements stay with them, not transferred)"
    )


def _print_report(report: SegmentReport, fmt: OutputFormat) -> None:
    body = report.as_dict()
    if fmt is OutputFormat.JSON:
        console.out(json.dumps(body, indent=2), highlight=False)
        return
    if fmt is OutputFormat.CSV:
        console.out("name,value", highlight=False)
        for name, value in body.items():
            if isinstance(value, dict):
                label = "skipped" if name == "skipped" else "answers_with_claims"
                for key, count in value.items():
                    console.out(f"{label}_{key},{count}", highlight=False)
            elif isinstance(value, list):
                console.out(f"{name},{len(value)}", highlight=False)
            else:
                console.out(f"{name},{value}", highlight=False)
        return
    console.print(
        f"{report.answers} answers ({report.method}): {report.sets} new claim sets, {report.already} already "
        "segmented this way",
        soft_wrap=True,
    )
    if report.claims_per_answer:
        console.print(f"claims per answer ({report.method}): {_distribution(report)}", soft_wrap=True)
    if report.method == "atomic-v1":
        console.print(
            f"model: {report.asked} requests, {report.cached} responses from the cache, {report.malformed} without "
            f"readable facts (their sentence kept as one claim), {len(report.unanchored)} facts not anchored",
            soft_wrap=True,
        )
        for fact in report.unanchored:
            console.print(Text(f"  not anchored (kept on its whole sentence): {fact}"), soft_wrap=True)
    console.print(_claims_line(report), soft_wrap=True)
    _print_facts_not_transferred(report)
    skipped = ", ".join(f"{n} {reason}" for reason, n in sorted(report.skipped.items())) or "none"
    console.print(f"skipped non-assertions: {skipped}", soft_wrap=True)
    if report.unattached:
        console.print(
            f"citation locations that fell on no new claim: {report.unattached} (in skipped text, or on a replaced "
            "claim that has no span in the answer); they stay with the replaced claims in the history",
            soft_wrap=True,
        )


def _distribution(report: SegmentReport) -> str:
    counts = sorted(report.claims_per_answer.elements())
    mean = sum(counts) / len(counts)
    median = (
        counts[len(counts) // 2] if len(counts) % 2 else (counts[len(counts) // 2 - 1] + counts[len(counts) // 2]) / 2
    )
    return f"mean {mean:.2f}, median {median:g}, min {counts[0]}, max {counts[-1]} over {len(counts)} answers segmented"


@handles_errors
def segment(
    db: DbOption = Path("citeaudit.db"),
    method: Annotated[
        str,
        typer.Option("--method", help="Segmentation method: rules-v2 (default), rules-v1 or atomic-v1 (a chat model)."),
    ] = DEFAULT_METHOD,
    run: Annotated[str | None, typer.Option("--run", help="Only this run's answers.")] = None,
    split_coordination: Annotated[
        bool,
        typer.Option(
            "--split-coordination/--no-split-coordination",
            help="rules-v1: split coordinated predicates sharing a subject into separate claims.",
        ),
    ] = True,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            envvar="CITEAUDIT_ATOMIC_BASE_URL",
            help="atomic-v1: OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (key from "
            "CITEAUDIT_ATOMIC_API_KEY or OPENAI_API_KEY).",
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", envvar="CITEAUDIT_ATOMIC_MODEL", help="atomic-v1: model name.")
    ] = None,
    temperature: Annotated[float, typer.Option("--temperature", min=0.0, help="atomic-v1: temperature.")] = 0.0,
    split_clauses: Annotated[
        bool,
        typer.Option(
            "--split-clauses/--no-split-clauses",
            help="rules-v2: split sentences into clauses (coordination, enumerations, appositives, relative "
            "clauses, adjuncts).",
        ),
    ] = True,
    skip_non_assertions: Annotated[
        bool,
        typer.Option(
            "--skip-non-assertions/--keep-non-assertions",
            help="Skip questions, greetings, disclaimers and headings (counted).",
        ),
    ] = True,
    reviewer: Annotated[
        str | None, typer.Option("--reviewer", envvar="CITEAUDIT_REVIEWER", help="Recorded as who segmented.")
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Segment answers already segmented this way again (replaces manual edits)."),
    ] = False,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare", help="Write nothing: list how many claims each rules method makes per answer, and the current."
        ),
    ] = False,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format of the summary.")] = OutputFormat.TABLE,
) -> None:
    """Split every answer into claims with exact spans, as a new claim set per answer.

    Engine-given spans are kept; the rules split only within them. Method, version and parameters enter the
    protocol fingerprint. A claim whose text and span are unchanged keeps its edges and judgements; the others
    go back to pending. Resumable: answers already segmented this way are left as they are. The summary says
    how many claims the method made per answer.
    """
    from citeaudit.segment.resegment import compare_methods, resegment
    from citeaudit.segment.rules import Rules
    from citeaudit.segment.rules_v2 import RulesV2

    if compare:
        with _open(db) as store:
            _print_comparison(compare_methods(store, run), fmt)
        return
    if method == "atomic-v1":
        _segment_atomic(db, run, reviewer, force, fmt, base_url, model, temperature)
        return
    rules: Rules | RulesV2
    if method == "rules-v1":
        rules = Rules(split_coordination=split_coordination, skip_non_assertions=skip_non_assertions)
    else:
        if not split_coordination:
            raise InputError("--no-split-coordination", "", "applies to rules-v1 only; use --no-split-clauses")
        rules = RulesV2(split_clauses=split_clauses, skip_non_assertions=skip_non_assertions)
    with _open(db) as store:
        total = len(store.claims.answers(run))
        # Redrawn from this thread, not by a refresh thread of its own: with no other thread running, the answers
        # can be segmented in a worker process (see citeaudit.segment.worker).
        with Progress(
            TextColumn("segmenting"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
            auto_refresh=False,
        ) as progress:
            task = progress.add_task("segment", total=total)
            drawn = [time.monotonic()]

            def advance(n: int) -> None:
                progress.advance(task, n)
                if time.monotonic() - drawn[0] >= _REDRAW_SECONDS:
                    progress.refresh()
                    drawn[0] = time.monotonic()

            report = resegment(store, method, rules, run, reviewer, advance, force)
    _print_report(report, fmt)


def _print_comparison(rows: list[MethodCounts], fmt: OutputFormat) -> None:
    methods = list(METHODS)
    if fmt is OutputFormat.JSON:
        body = [{"answer": r.answer, "current": r.current, **r.by_method} for r in rows]
        console.out(json.dumps(body, indent=2), highlight=False)
        return
    if fmt is OutputFormat.CSV:
        console.out(",".join(["answer", "current", *methods]), highlight=False)
        for r in rows:
            console.out(",".join([r.answer, str(r.current), *(str(r.by_method[m]) for m in methods)]), highlight=False)
        return
    table = Table("answer", "current", *methods, title="claims per answer", header_style="bold")
    for r in rows:
        table.add_row(Text(r.answer), str(r.current), *(str(r.by_method[m]) for m in methods))
    if rows:
        means = [sum(r.by_method[m] for r in rows) / len(rows) for m in methods]
        current = sum(r.current for r in rows) / len(rows)
        table.add_row("mean", f"{current:.2f}", *(f"{v:.2f}" for v in means))
    console.print(table)


def _segment_atomic(
    db: Path,
    run: str | None,
    reviewer: str | None,
    force: bool,
    fmt: OutputFormat,
    base_url: str | None,
    model: str | None,
    temperature: float,
) -> None:
    if not model:
        raise InputError("--model", "", "atomic-v1 needs a model name: pass --model (or set CITEAUDIT_ATOMIC_MODEL)")
    from citeaudit.segment.atomic import AtomicSettings, ChatEndpoint, ResponseCache
    from citeaudit.segment.resegment import resegment_atomic
    from citeaudit.store import Store

    path = existing_database(db)
    cache = ResponseCache(path.parent / f"{path.name}.cache" / "atomic-v1")
    endpoint = ChatEndpoint(base_url)
    try:
        with Store(path) as store:
            total = len(store.claims.answers(run))
            with Progress(
                TextColumn("segmenting (atomic-v1)"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=err_console,
                transient=True,
            ) as progress:
                task = progress.add_task("segment", total=total)
                settings = AtomicSettings(model=model, temperature=temperature)
                report = resegment_atomic(
                    store, settings, endpoint, cache, run, reviewer, lambda n: progress.advance(task, n), force
                )
    finally:
        endpoint.close()
    _print_report(report, fmt)


def _print_facts_not_transferred(report: SegmentReport) -> None:
    if report.facts_not_transferred:
        console.print(
            f"required-fact mappings of retired claims: {report.facts_not_transferred} (not moved to the new "
            "claims; map them again with `citeaudit facts map` and `citeaudit facts confirm`)",
            soft_wrap=True,
        )


def _print_plan(plan: SetPlan) -> None:
    from citeaudit.segment.resegment import SegmentReport

    report = SegmentReport(answers=1)
    report.add(plan)
    console.print("new claim set recorded; " + _claims_line(report), soft_wrap=True)
    _print_facts_not_transferred(report)
    if report.unattached:
        console.print(f"citation locations that fell on no claim: {report.unattached}")


@claim_app.command("split")
@handles_errors
def split_command(
    claim_id: Annotated[str, typer.Argument(help="Claim to split.")],
    at: Annotated[int, typer.Option("--at", help="Answer offset (characters) where the second claim starts.")],
    reviewer: ReviewerOption,
    db: DbOption = Path("citeaudit.db"),
) -> None:
    """Split a claim in two at an answer offset; each citation marker goes to the part it stands in."""
    from citeaudit.segment.resegment import split_claim

    with _open(db) as store:
        _print_plan(split_claim(store, claim_id, at, reviewer))


@claim_app.command("merge")
@handles_errors
def merge_command(
    claim_ids: Annotated[list[str], typer.Argument(help="Claims of one answer to merge (two or more).")],
    reviewer: ReviewerOption,
    db: DbOption = Path("citeaudit.db"),
) -> None:
    """Merge claims of one answer into one claim spanning them; it gets every citation location, pending."""
    from citeaudit.segment.resegment import merge_claims

    with _open(db) as store:
        _print_plan(merge_claims(store, claim_ids, reviewer))


@claim_app.command("edit")
@handles_errors
def edit_command(
    claim_id: Annotated[str, typer.Argument(help="Claim to change.")],
    reviewer: ReviewerOption,
    text: Annotated[str | None, typer.Option("--text", help="New claim text.")] = None,
    start: Annotated[int | None, typer.Option("--start", help="New span start (answer offset).")] = None,
    end: Annotated[int | None, typer.Option("--end", help="New span end (exclusive).")] = None,
    db: DbOption = Path("citeaudit.db"),
) -> None:
    """Change a claim's text and/or span: the changed claim is a new claim whose edges start pending."""
    from citeaudit.segment.resegment import edit_claim

    with _open(db) as store:
        _print_plan(edit_claim(store, claim_id, reviewer, text, start, end))


@claim_app.command("list")
@handles_errors
def list_command(
    answer_id: Annotated[str, typer.Argument(help="Answer whose current claims to list.")],
    db: DbOption = Path("citeaudit.db"),
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format.")] = OutputFormat.TABLE,
) -> None:
    """List an answer's current claims with their spans and edge counts."""
    with _open(db) as store:
        state = store.claims.of_answer(store.claims.answer_pk(answer_id))
    edges = {c.pk: sum(1 for e in state.edges if e.claim_pk == c.pk) for c in state.claims}  # current only
    rows = [{"id": c.id, "start": c.start, "end": c.end, "edges": edges[c.pk], "text": c.text} for c in state.claims]
    if fmt is OutputFormat.JSON:
        console.out(json.dumps(rows, indent=2, ensure_ascii=False), highlight=False)
        return
    table = Table("claim", "span", "edges", "text", header_style="bold")
    for row in rows:
        table.add_row(
            Text(shown_text(str(row["id"]))),
            f"{row['start']}–{row['end']}",
            str(row["edges"]),
            Text(shown_text(str(row["text"]))),
        )
    console.print(table)


facts_app = typer.Typer(
    help="Map claims to the required facts of their question: proposals from lexical similarity and entity "
    "agreement (dense embeddings with the models extra), confirmed by a reviewer before coverage counts them.",
    no_args_is_help=True,
)


class Dense(StrEnum):
    """Whether ``facts map`` uses sentence embeddings."""

    AUTO = "auto"
    ON = "on"
    OFF = "off"


@facts_app.command("map")
@handles_errors
def facts_map_command(
    db: DbOption = Path("citeaudit.db"),
    run: Annotated[str | None, typer.Option("--run", help="Only this run's answers.")] = None,
    threshold: Annotated[
        float, typer.Option("--threshold", min=0.0, max=1.0, help="Minimum similarity for a proposal (0..1).")
    ] = DEFAULT_THRESHOLD,
    dense: Annotated[
        Dense, typer.Option("--dense", help="Sentence embeddings: auto = when the models extra is installed.")
    ] = Dense.AUTO,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format of the summary.")] = OutputFormat.TABLE,
) -> None:
    """Propose claim → required-fact mappings for every answer's current claims (pending until confirmed).

    A proposal needs the fact's model identifiers in the claim exactly and its numbers with units stated with
    the same value (20 L = 20,000 mL), and a similarity at or above --threshold. Resumable: facts already
    proposed or confirmed are left alone; rejected pairs are never proposed again.
    """
    from citeaudit.segment.mapping import map_facts

    embedder = None
    if dense is not Dense.OFF:
        embedder = load_embedder()
        if embedder is None and dense is Dense.ON:
            raise InputError(
                "--dense on",
                "",
                "sentence embeddings need the models extra: pip install torch==2.13.0 'citeaudit[models]'",
            )
    with _open(db) as store:
        total = len(store.claims.answers(run))
        with Progress(
            TextColumn("mapping facts"), BarColumn(), MofNCompleteColumn(), console=err_console, transient=True
        ) as progress:
            task = progress.add_task("map", total=total)
            report = map_facts(store, run, threshold, embedder, lambda n: progress.advance(task, n))
    body = {name: getattr(report, name) for name in report.__dataclass_fields__}
    if fmt is OutputFormat.JSON:
        console.out(json.dumps(body, indent=2), highlight=False)
        return
    console.print(
        f"{report.answers} answers ({report.method}): {report.facts_open} required facts without a claim, "
        f"{report.proposed} proposals recorded (pending until `citeaudit facts confirm`), "
        f"{report.without_candidate} with no agreeing claim; {report.already} already proposed or confirmed",
        soft_wrap=True,
    )


@facts_app.command("list")
@handles_errors
def facts_list_command(
    db: DbOption = Path("citeaudit.db"),
    state: Annotated[
        str | None, typer.Option("--state", help="proposed, confirmed or rejected (default: all).")
    ] = "proposed",
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format.")] = OutputFormat.TABLE,
) -> None:
    """List claim → fact mappings of current claims (by default the proposals awaiting review)."""
    if state not in (None, "proposed", "confirmed", "rejected", "all"):
        raise InputError("--state", "", f"{state!r} is not one of proposed, confirmed, rejected, all")
    with _open(db) as store:
        rows = store.facts.mappings(None if state == "all" else state)
    if fmt is OutputFormat.JSON:
        console.out(json.dumps([dict(zip(_MAPPING_FIELDS, _row(r), strict=True)) for r in rows], indent=2))
        return
    table = Table("id", "state", "answer", "claim", "fact", "score", "claim text", "fact text", header_style="bold")
    for row in rows:
        table.add_row(*(Text(str(v)) for v in _row(row)))
    console.print(table)


_MAPPING_FIELDS = ("id", "state", "answer", "claim", "fact", "score", "claim_text", "fact_text")


def _row(row: MappingRow) -> tuple[object, ...]:
    score = None if row.score is None else round(row.score, 3)
    return (row.pk, row.state, row.answer_id, row.claim_id, row.fact_id, score, row.claim_text, row.fact_text)


@facts_app.command("confirm")
@handles_errors
def facts_confirm_command(
    reviewer: ReviewerOption,
    mapping_ids: Annotated[list[int] | None, typer.Argument(help="Proposal ids (see `citeaudit facts list`).")] = None,
    claim: Annotated[str | None, typer.Option("--claim", help="Map this claim directly (with --fact).")] = None,
    fact: Annotated[str | None, typer.Option("--fact", help="Required fact id for --claim.")] = None,
    db: DbOption = Path("citeaudit.db"),
) -> None:
    """Confirm proposals (or map --claim to --fact directly): coverage counts the fact from now on. All or
    nothing: one refused id leaves every mapping as it was."""
    if not mapping_ids and not (claim and fact):
        raise InputError("facts confirm", "", "name proposal ids, or --claim and --fact")
    _proposal_ids("facts confirm", mapping_ids or [])
    requests: list[tuple[int | None, str | None, str | None]] = [(m, None, None) for m in mapping_ids or []]
    if claim and fact:
        requests.append((None, claim, fact))
    with _open(db) as store:
        confirmed = store.facts.confirm(requests, reviewer)  # all or none
    for claim_id, fact_id in confirmed:
        console.print(f"confirmed: claim {claim_id} states fact {fact_id}")


@facts_app.command("reject")
@handles_errors
def facts_reject_command(
    mapping_ids: Annotated[list[int], typer.Argument(help="Proposal ids (see `citeaudit facts list`).")],
    reviewer: ReviewerOption,
    db: DbOption = Path("citeaudit.db"),
) -> None:
    """Reject proposals: those claims are never proposed for those facts again."""
    _proposal_ids("facts reject", mapping_ids)
    with _open(db) as store:
        rejected = store.facts.reject(mapping_ids, reviewer)  # all or none
    for claim_id, fact_id in rejected:
        console.print(f"rejected: claim {claim_id} for fact {fact_id}")


def _proposal_ids(command: str, mapping_ids: list[int]) -> None:
    """Refuse an id no proposal can have (SQLite keys are 1 … 2⁶³ − 1; a larger one cannot even be looked up)."""
    for mapping_id in mapping_ids:
        if not 1 <= mapping_id <= MAX_INT:
            raise InputError(command, "ID", f"{shown(mapping_id, 40)} is not a proposal id (1 to {MAX_INT})")


def register(app: typer.Typer) -> None:
    """Add this group's commands to ``app``."""
    app.command()(segment)
    app.add_typer(claim_app, name="claim")
    app.add_typer(facts_app, name="facts")
