"""``ingest``, ``export``, ``formats`` and ``schema``: getting audits in and out."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from citeaudit.cli.common import DbOption, console, err_console, handles_errors, os_user
from citeaudit.core.errors import InputError, InvalidValue

if TYPE_CHECKING:
    from citeaudit.ingest import Attachment, PlannedImport, Reader
    from citeaudit.ingest.collection import CollectedFile
    from citeaudit.store import ImportReport, Store

__all__ = ["register"]


class ExportFormat(StrEnum):
    """Export formats."""

    AUDIT_JSON = "audit-json"
    CSV = "csv"
    JSONL = "jsonl"
    PARQUET = "parquet"


@handles_errors
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files to import.", show_default=False)],
    db: DbOption = Path("citeaudit.db"),
    fmt: Annotated[str | None, typer.Option("--format", help="Reader name (default: detect from content).")] = None,
    run: Annotated[
        str | None, typer.Option("--run", help="Run id for engine answers (default: PLATFORM-DATE).")
    ] = None,
    platform: Annotated[
        str | None, typer.Option("--platform", help="Platform of engine answers (default: from the payload).")
    ] = None,
    question_id: Annotated[
        str | None, typer.Option("--question-id", help="Question every engine answer in these files answers.")
    ] = None,
    questions: Annotated[
        Path | None,
        typer.Option("--questions", help="Protocol file (YAML) whose questions engine answers belong to."),
    ] = None,
    protocol: Annotated[
        str | None, typer.Option("--protocol", help="Protocol already in the database to attach answers to.")
    ] = None,
    manifest: Annotated[
        Path | None,
        typer.Option(
            "--manifest",
            help="CSV listing the files of a folder (PATHS is that folder): file, question, engine, and optionally "
            "locale, repeat, run.",
        ),
    ] = None,
    pattern: Annotated[
        str | None,
        typer.Option(
            "--pattern",
            help="Name pattern of a folder's files, e.g. '{question}__{engine}__{locale}__{repeat}.json' (PATHS is "
            "that folder).",
        ),
    ] = None,
    collection: Annotated[
        str | None,
        typer.Option(
            "--collection", help="Name of the collection (with --manifest or --pattern; default: the folder)."
        ),
    ] = None,
    collected_on: Annotated[
        str | None,
        typer.Option(
            "--collected-on",
            help="Day the responses were collected, YYYY-MM-DD (with --manifest or --pattern; default: today): the "
            "collection's date and its place in a trend.",
        ),
    ] = None,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="A file imported before with another question, platform, run or collection: move its answers to "
            "these (their claims, edges and judgements stay with them); a collection dated before with another "
            "--collected-on: re-date it. Recorded in the audit log.",
        ),
    ] = False,
) -> None:
    """Import files into the database, each as an import of its own; the same file twice is a no-op.

    All the files are imported in one transaction: a problem in any of them, wherever it is found, leaves the
    database as it was. Engine payloads (see `citeaudit formats`) are read, checked and written a few thousand
    answers at a time, so a large file needs little memory (a payload of 1 MB or more on Linux, 16 MB
    elsewhere, is read by a second process while this one writes, when a CPU is idle); they are attached to a
    protocol question: the protocol comes from --questions or from the database. A whole collection (a folder of
    saved responses) comes in with --manifest or --pattern: each file answers its own question from its own engine,
    and the collection becomes a dimension of score, compare and trend. The engine's own response id is kept on the
    answer (`citeaudit answers list` shows it).
    """
    from citeaudit.ingest import ingest_files, plan_imports
    from citeaudit.store import Store
    from citeaudit.store.writers import new_database

    if manifest is not None or pattern is not None:
        _ingest_collection(
            paths, db, fmt, questions, protocol, manifest, pattern, collection, _day(collected_on), replace
        )
        return
    if collection is not None or collected_on is not None:
        raise InputError("--collection", "", "names a collection of --manifest or --pattern; give one of them")
    plan = plan_imports(paths, fmt)  # every file's format is recognised here, once
    attachment = _attachment(db, questions, protocol, run, platform, question_id, paths, plan)
    stored: Counter[str] = Counter()
    with err_console.status(f"importing {len(paths)} file(s)…") as status:

        def advanced(name: str, n: int) -> None:
            stored[name] += n
            status.update(f"importing {name}: {stored[name]:,} answers read, checked and written…")

        waiting = _waiting_notice(db)
        with new_database(db, on_wait=waiting) as target, Store(target, on_wait=waiting, new=target != db) as store:
            results = ingest_files(store, plan, fmt, attachment, progress=advanced, replace=replace, actor=os_user())
            _keep_response_ids(store, results)
    for name, reader, report in results:
        _print_report(report, name, reader.name)


_RESPONSE_ID_LIMIT = 32 * 1024 * 1024
"""Largest single-response file read again for its response id (larger files are batches or streams)."""


def _keep_response_ids(store: Store, results: list[tuple[str, Reader, ImportReport]]) -> None:
    """The engine's own id of each single-response file, kept on the answer it gave."""
    from citeaudit.ingest.collection import response_id
    from citeaudit.store.answers import record_response_id

    for name, reader, report in results:
        path = Path(name)
        # Only a file that is one engine response has one response id (not whole audits, batches or streams).
        if report.already_imported or reader.read_audit is not None or report.answers + report.failures != 1:
            continue
        if not path.is_file() or path.stat().st_size > _RESPONSE_ID_LIMIT:
            continue
        found = response_id(path.read_bytes())
        if found is not None:
            record_response_id(store, report.sha256, found)


def _day(value: str | None) -> str | None:
    """A day given as ``YYYY-MM-DD``, checked."""
    from datetime import date

    if value is None:
        return None
    try:
        if len(value) != 10:
            raise ValueError(value)
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise InputError("--collected-on", "", f"expected a day as YYYY-MM-DD (got {value!r})") from None


def _waiting_notice(db: Path) -> Callable[[], None]:
    """What a writer prints when it has to wait for another process writing to ``db``."""

    def waiting() -> None:
        err_console.print(f"waiting for another process that is writing to {str(db)!r}…", soft_wrap=True)

    return waiting


def _release_stale_tasks(
    store: Store, files: list[CollectedFile], results: list[tuple[str, Reader, ImportReport]], pk: int, replace: bool
) -> None:
    """A file imported before that an earlier manifest put in another collection, or in another task of this one:
    refused, or with ``replace`` those tasks go back to pending (the file answers the task named now)."""
    from citeaudit.store.reimport import release_tasks, stale_tasks

    for f, (name, _, report) in zip(files, results, strict=True):
        if not report.already_imported:
            continue
        stale = stale_tasks(store.connection, report.sha256, pk, (f.question, f.engine, f.locale, f.repeat))
        if not stale:
            continue
        if not replace:
            where = "; ".join(
                f"collection {c!r}, question {q!r}, engine {e!r}, locale {loc!r}, repeat {r}"
                for _, (c, q, e, loc, r) in stale
            )
            raise InputError(
                name,
                "",
                f"already imported (sha256 {report.sha256[:12]}…) as the answer of {where}; nothing written. To make "
                "it the answer of the task named now (the earlier one goes back to pending), run the same command "
                "with --replace",
            )
        release_tasks(store.connection, stale, name, report.sha256, os_user())


def _same_collection(store: Store, files: list[CollectedFile], name: str) -> None:
    """Refuse a file an earlier import put in another collection: the same bytes name the same answer, which
    ``--replace`` moves to collection ``name``."""
    from citeaudit.store.reimport import other_collections

    for f in files:
        with f.path.open("rb") as stream:
            sha = hashlib.file_digest(stream, "sha256").hexdigest()
        found = other_collections(store.connection, sha, name)
        if found:
            raise InputError(
                str(f.path),
                "",
                f"already imported (sha256 {sha[:12]}…) into another collection: collection {found[0]!r} → "
                f"{name!r}; nothing written. To move its answer to collection {name!r} (its claims, edges and "
                f"judgements stay with it; its task in {found[0]!r} goes back to pending), run the same command "
                "with --replace",
            )


def _redate(store: Store, pk: int, name: str, day: str, origin: str, replace: bool) -> None:
    """A collection with answers named with another day: refused, or with ``replace`` re-dated (all its
    answers), with an audit-log row."""
    from citeaudit.store.reimport import collection_day, redate_collection

    dated = collection_day(store.connection, pk)
    if not replace:
        raise InputError(
            "--collected-on",
            "",
            f"collection {name!r} is already dated {dated!r} (not {day!r}); nothing written. To re-date the "
            "collection (the date of each of its answers), run the same command with --replace",
        )
    redate_collection(store.connection, pk, day, origin, os_user())


def _ingest_collection(
    paths: list[Path],
    db: Path,
    fmt: str | None,
    questions: Path | None,
    protocol: str | None,
    manifest: Path | None,
    pattern: str | None,
    name: str | None,
    day: str | None,
    replace: bool,
) -> None:
    """Import a folder of saved responses as one collection, all or nothing."""
    from citeaudit.ingest import Attachment, ingest_files, plan_imports
    from citeaudit.ingest.collection import from_manifest, from_pattern
    from citeaudit.store import Store
    from citeaudit.store.answers import date_collection, link_collected
    from citeaudit.store.collections import open_collection
    from citeaudit.store.writers import new_database

    if manifest is not None and pattern is not None:
        raise InputError("--manifest", "", "give --manifest or --pattern, not both")
    if len(paths) != 1 or not paths[0].is_dir():
        raise InputError(str(paths[0]), "", "with --manifest or --pattern, PATHS is one folder of saved responses")
    folder = paths[0]
    others: list[Path] = []
    if manifest is not None:
        files = from_manifest(manifest, folder)
    else:
        assert pattern is not None
        files, others = from_pattern(folder, pattern)
    name = name or folder.resolve().name
    plan = plan_imports([f.path for f in files], fmt)
    if len(plan) != len(files):
        raise InputError(
            str(folder),
            "",
            "a collection's files are imported one by one: a file that joins another "
            "(an ExpertQA set, a paused Anthropic turn) does not belong in one",
        )
    chosen = _attachment(db, questions, protocol, None, None, None, [f.path for f in files], plan)
    if chosen is None:
        raise InputError(str(folder), "", "a collection holds engine responses, not whole audits")
    attachments = {
        str(f.path): Attachment(
            protocol=chosen.protocol, run_id=f.run or f"{name}-{f.engine}", platform=f.engine, question_id=f.question
        )
        for f in files
    }

    waiting = _waiting_notice(db)
    with (
        err_console.status(f"importing collection {name!r}: {len(files)} file(s)…"),
        new_database(db, on_wait=waiting) as target,
        Store(target, on_wait=waiting, new=target != db) as store,
        store.transaction(),
    ):
        if not replace:
            _same_collection(store, files, name)
        results = ingest_files(store, plan, fmt, attachments=attachments, replace=replace, actor=os_user())
        _same_bytes_once(files, results, str(manifest or folder))
        _keep_response_ids(store, results)
        row = open_collection(store, name, store.ensure_protocol(chosen.protocol))
        if day is not None and date_collection(store, row.pk, day) != day:
            _redate(store, row.pk, name, day, str(manifest or folder), replace)
        _release_stale_tasks(store, files, results, row.pk, replace)
        answered = link_collected(
            store,
            row.pk,
            [
                ((f.question, f.engine, f.locale, f.repeat), report.sha256)
                for f, (_, _, report) in zip(files, results, strict=True)
            ],
        )
    for file_name, reader, report in results:
        _print_report(report, file_name, reader.name)
    console.print(f"collection {name!r}: {len(files)} file(s), {answered} answer(s)", soft_wrap=True)
    if others:
        console.print(
            f"  not imported: {len(others)} file(s) of the folder whose names do not match the pattern: "
            + ", ".join(p.name for p in others),
            soft_wrap=True,
        )


def _same_bytes_once(files: list[CollectedFile], results: list[tuple[str, Reader, ImportReport]], source: str) -> None:
    """Refuse two files of one collection that hold the same bytes: stored once (a payload is content-addressed),
    they would be one answer standing for two repeats."""
    first: dict[str, int] = {}
    for n, (f, (_, _, report)) in enumerate(zip(files, results, strict=True)):
        earlier = files[first.setdefault(report.sha256, n)]
        if earlier is not f:
            raise InvalidValue(
                source,
                str(f.path),
                f"holds the same bytes as {str(earlier.path)!r} (repeat {earlier.repeat}): one response cannot be "
                f"two repeats",
            )


def _attachment(
    db: Path,
    questions: Path | None,
    protocol: str | None,
    run: str | None,
    platform: str | None,
    question_id: str | None,
    paths: list[Path],
    plan: list[PlannedImport],
) -> Attachment | None:
    """Where engine answers go; ``None`` when every file is a whole audit."""
    from citeaudit.ingest import Attachment
    from citeaudit.interchange import load_protocol
    from citeaudit.scoring.paths import is_database
    from citeaudit.store import Store

    if not any(planned.needs_attachment for planned in plan):
        return None
    if questions is not None:
        chosen = load_protocol(questions)
    elif db.exists() and is_database(db):
        with Store(db) as store:
            chosen = store.protocol(store.choose_protocol(protocol))
    else:
        raise InputError(
            str(paths[0]),
            "",
            "engine answers need a protocol: pass --questions PROTOCOL.yaml (or --db a database that holds one)",
        )
    return Attachment(protocol=chosen, run_id=run, platform=platform, question_id=question_id)


def _print_report(report: ImportReport, source: str, reader: str) -> None:
    if report.moved:
        console.print(
            f"{source}: already imported (sha256 {report.sha256[:12]}…); {report.moved} answer(s) moved to the "
            "question, platform and run given now, their claims, edges and judgements with them",
            soft_wrap=True,
        )
        return
    if report.already_imported:
        console.print(f"{source}: already imported (sha256 {report.sha256[:12]}…), nothing written", soft_wrap=True)
        return
    console.print(
        f"{source} ({reader}): {report.answers} answers, {report.claims} claims, {report.edges} edges "
        f"from {report.locations} locations, {report.judgements} judgements, {report.sources_new} new sources "
        f"({report.sources_known} already known), {report.evidence_groups} evidence groups, {report.runs} new runs",
        soft_wrap=True,
    )
    extras = [
        f"{report.dangling} dangling marker(s) pointing past the source list" if report.dangling else "",
        f"{report.retrieved} retrieved-only source(s) (not cited)" if report.retrieved else "",
        f"{report.failures} failed or incomplete answer(s) recorded" if report.failures else "",
        f"{report.unplaced} cited source(s) without a position in the text (answer-level: they count for the "
        "official-domain rate, no claim edge)"
        if report.unplaced
        else "",
        f"{report.placed_by_markers} citation(s) given without a position placed by the answer's \\[n] markers "
        "(the list numbered in order)"
        if report.placed_by_markers
        else "",
        f"{report.partial} answer(s) only partly understood (the payload holds parts this reader does not know)"
        if report.partial
        else "",
    ]
    if any(extras):
        console.print("  also: " + "; ".join(e for e in extras if e), soft_wrap=True)


@handles_errors
def export(
    db: DbOption = Path("citeaudit.db"),
    fmt: Annotated[ExportFormat, typer.Option("--format", help="Export format.")] = ExportFormat.AUDIT_JSON,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Output file for audit-json (default: standard output); a folder for the others."),
    ] = None,
    protocol: Annotated[
        str | None, typer.Option("--protocol", help="Protocol id, id@version or fingerprint prefix.")
    ] = None,
    by: Annotated[str | None, typer.Option("--by", help="Grouping of the scores table (csv, jsonl).")] = None,
) -> None:
    """Export everything measured under one protocol: losslessly as citeaudit.audit/v1, as flat tables
    (answers, citations, required facts, claims, edges, judgements, scores: enough to rebuild every headline
    number) in CSV or JSON Lines, or as the engine tables in Parquet
    (streamed, hive-partitioned by protocol and run; `citeaudit score DIR --engine duckdb|spark` reads them)."""
    from citeaudit.core.scope import Scope, select_audit
    from citeaudit.core.scoring import score
    from citeaudit.interchange import audit_to_document
    from citeaudit.report.exports import export_tables
    from citeaudit.report.files import write_atomically
    from citeaudit.scoring.paths import is_database, unresolved_links
    from citeaudit.store import Store

    if not is_database(db):
        raise InputError(str(db), "", "is not a citeaudit database")
    if fmt is ExportFormat.PARQUET:
        if out is None:
            raise InputError("--out", "", "parquet export writes a dataset folder: name a new folder with --out")
        # Streamed table by table: memory stays flat however large the ledger is.
        from citeaudit.engines import export_parquet

        dataset = export_parquet(db, out, protocol=protocol)
        counts = ", ".join(f"{name} {rows}" for name, rows in dataset.rows.items())
        console.print(f"wrote {out} ({dataset.files} files, hive-partitioned by protocol and run): {counts} rows")
        return
    with Store(db) as store:
        audit = store.load_audit(store.choose_protocol(protocol))
    if fmt is not ExportFormat.AUDIT_JSON:
        if out is None:
            raise InputError("--out", "", f"{fmt} export writes one file per table: name a folder with --out")
        groups = tuple(part.strip() for part in (by or "").split(",") if part.strip())
        selected, _ = select_audit(audit, Scope())
        written = export_tables(audit, score(selected, by=groups), str(fmt), out, unresolved_links(selected))
        console.print(f"wrote {', '.join(str(path) for path in written)}", soft_wrap=True)
        return
    text = json.dumps(audit_to_document(audit), indent=2, ensure_ascii=False) + "\n"
    if out is None:
        console.out(text, end="", highlight=False)
        return
    write_atomically(out, text.encode("utf-8"))
    console.print(f"wrote {out} ({len(audit.answers)} answers, {len(audit.edges)} edges)")


def formats() -> None:
    """List the readers `citeaudit ingest` knows: what each reads (API versions, payload variants), the saved event
    streams it reads, and what it does with citations that have no position in the answer text."""
    from citeaudit.ingest import READERS

    columns = ("format", "gives", "reads", "event streams", "citations without a position")
    table = Table(*columns, header_style="bold", show_lines=True)
    for name, reader in sorted(READERS.items()):
        gives = "whole audit" if reader.read_audit is not None else "engine answers"
        table.add_row(
            name,
            gives,
            Text(reader.reads or reader.description),
            Text(reader.streams or "-"),
            Text(reader.positionless or "-"),
        )
    console.print(table)


def schema() -> None:
    """Print the JSON Schema of the citeaudit.audit/v1 interchange format."""
    text = resources.files("citeaudit").joinpath("schemas/audit-v1.schema.json").read_text(encoding="utf-8")
    console.out(text, end="", highlight=False)


def register(app: typer.Typer) -> None:
    """Add this group's commands to ``app``."""
    app.command()(ingest)
    app.command()(export)
    app.command()(formats)
    app.command()(schema)
