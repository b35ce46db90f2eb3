"""``resolve`` and ``source set-url`` / ``source passages``: reading every cited page and keeping what it said."""

from __future__ import annotations

import dataclasses
import getpass
import ipaddress
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from citeaudit.cli.common import DbOption, OutputFormat, console, err_console, existing_database, handles_errors
from citeaudit.core.errors import InvalidValue
from citeaudit.sources.extract import MAX_HTML_BYTES

if TYPE_CHECKING:
    from citeaudit.sources import ResolveSettings
    from citeaudit.store.records import FetchOutcome, ResolveReport

__all__ = ["app", "register"]

app = typer.Typer(help="One source: attach a link to a title-only card, read its passages.", no_args_is_help=True)

ConcurrencyOption = Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight at most.")]
PerHostOption = Annotated[int, typer.Option("--per-host", min=1, help="Requests in flight at most to one host.")]
TimeoutOption = Annotated[float, typer.Option("--timeout", min=0.001, help="Seconds without progress per request.")]
MaxBytesOption = Annotated[
    int, typer.Option("--max-bytes", min=1, help="Largest body read, after decompression (bytes).")
]
AllowPrivateOption = Annotated[
    bool,
    typer.Option("--allow-private", help="Allow loopback, private, link-local, multicast and reserved addresses."),
]
ExtractWorkersOption = Annotated[
    int | None,
    typer.Option(
        "--extract-workers",
        min=0,
        show_default=False,
        help="Processes extracting text beside the fetching one; 0 extracts in it. Default: extract in it, and "
        "start one worker process only once extraction takes a measurable share of its time while a core is idle.",
    ),
]
ExtractTimeoutOption = Annotated[
    float,
    typer.Option(
        "--extract-timeout",
        min=0,
        help="Seconds one document may take to be read (in a worker process, killed past it: failed "
        "extract_timeout); 0: no limit.",
    ),
]
MaxHtmlBytesOption = Annotated[
    int,
    typer.Option(
        "--max-html-bytes",
        min=1,
        help="Largest HTML page handed to the text extractor (larger: failed extract_too_large).",
    ),
]
MapHostOption = Annotated[
    list[str] | None,
    typer.Option(
        "--map-host",
        help="NAME=IP: resolve NAME to IP before DNS (repeatable; a declared mapping is trusted).",
    ),
]


def _host_map(pairs: list[str] | None) -> tuple[tuple[str, str], ...]:

    mapped = []
    for pair in pairs or []:
        name, sep, address = pair.partition("=")
        if not sep or not name.strip() or not address.strip():
            raise InvalidValue("--map-host", pair, "expected NAME=IP, e.g. docs.example.test=127.0.0.1")
        try:
            ipaddress.ip_address(address.strip())
        except ValueError:
            raise InvalidValue("--map-host", pair, f"{address.strip()!r} is not an IP address") from None
        mapped.append((name.strip(), address.strip()))
    return tuple(mapped)


def _settings(
    concurrency: int,
    per_host: int,
    timeout: float,
    max_bytes: int,
    allow_private: bool,
    map_host: list[str] | None,
    *,
    retry_failed: bool = False,
    refresh: bool = False,
    extract_workers: int | None = None,
    extract_timeout: float = 60.0,
    max_html_bytes: int = MAX_HTML_BYTES,
) -> ResolveSettings:
    from citeaudit.sources import ResolveSettings

    return ResolveSettings(
        concurrency=concurrency,
        per_host=per_host,
        timeout=timeout,
        max_bytes=max_bytes,
        allow_private=allow_private,
        retry_failed=retry_failed,
        refresh=refresh,
        host_map=_host_map(map_host),
        extract_workers=extract_workers,
        extract_timeout=extract_timeout or None,
        max_html_bytes=max_html_bytes,
    )


def _print_report(report: ResolveReport, fmt: OutputFormat) -> None:
    if fmt is OutputFormat.JSON:
        console.print_json(json.dumps(dataclasses.asdict(report)))
        return
    rows = [
        ("read this run", report.selected),
        ("resolved", report.resolved),
        *((f"failed: {reason}", n) for reason, n in report.failed.items()),
        ("pending, no link (set one with `citeaudit source set-url`)", report.no_link),
        ("already resolved, left alone (--refresh reads again)", report.skipped_resolved),
        ("failed before, left alone (--retry-failed tries again)", report.skipped_failed),
        ("sources merged into the same page", report.merged_sources),
        ("edges merged (same claim, same page)", report.merged_edges),
        ("merged edges with differing labels (now disputed)", report.disputed_edges),
    ]
    if fmt is OutputFormat.CSV:
        console.print("count,n")
        for name, n in rows:
            console.print(f'"{name}",{n}', soft_wrap=True)
        return
    table = Table("sources", "n", title="resolve")
    for name, n in rows:
        table.add_row(name, str(n))
    console.print(table)


def _run(db: Path, settings: ResolveSettings, keys: list[str] | None = None) -> ResolveReport:
    from citeaudit.sources import resolve_sources

    progress = Progress(
        TextColumn("resolving"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[last]}"),
        TimeElapsedColumn(),
        console=err_console,
        transient=False,
    )
    with progress:
        task = progress.add_task("resolve", total=None, last="")

        def started(total: int) -> None:
            progress.update(task, total=total)

        def advanced(outcome: FetchOutcome) -> None:
            progress.update(task, advance=1, last=outcome.reason or "ok")

        return resolve_sources(db, settings, keys=keys, progress=advanced, on_start=started)


@handles_errors
def resolve(
    db: DbOption = Path("citeaudit.db"),
    concurrency: ConcurrencyOption = 16,
    per_host: PerHostOption = 4,
    timeout: TimeoutOption = 10.0,
    max_bytes: MaxBytesOption = 10 * 1024 * 1024,
    allow_private: AllowPrivateOption = False,
    retry_failed: Annotated[bool, typer.Option("--retry-failed", help="Try failed sources again.")] = False,
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Read resolved sources again (a new snapshot; old ones are kept).")
    ] = False,
    map_host: MapHostOption = None,
    extract_workers: ExtractWorkersOption = None,
    extract_timeout: ExtractTimeoutOption = 60.0,
    max_html_bytes: MaxHtmlBytesOption = MAX_HTML_BYTES,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format of the counts.")] = OutputFormat.TABLE,
) -> None:
    """Follow every cited link to its page and keep a snapshot: redirects and wrappers followed and recorded,
    canonical link, title, main text, dates and passages; each source ends resolved or failed with a reason.
    Resumable: a rerun reads only what is still pending."""
    from citeaudit.sources.extract import require_extra

    require_extra()
    settings = _settings(
        concurrency,
        per_host,
        timeout,
        max_bytes,
        allow_private,
        map_host,
        retry_failed=retry_failed,
        refresh=refresh,
        extract_workers=extract_workers,
        extract_timeout=extract_timeout,
        max_html_bytes=max_html_bytes,
    )
    _print_report(_run(existing_database(db), settings), fmt)


@app.command("set-url")
@handles_errors
def set_url(
    key: Annotated[str, typer.Argument(help="Source key (e.g. a title-only card's `title:…` key).")],
    url: Annotated[str, typer.Argument(help="The link the source should have.")],
    db: DbOption = Path("citeaudit.db"),
    by: Annotated[
        str | None, typer.Option("--by", help="Who attaches the link: a review account (default: the login name).")
    ] = None,
    no_resolve: Annotated[bool, typer.Option("--no-resolve", help="Attach the link only; resolve later.")] = False,
    concurrency: ConcurrencyOption = 16,
    per_host: PerHostOption = 4,
    timeout: TimeoutOption = 10.0,
    max_bytes: MaxBytesOption = 10 * 1024 * 1024,
    allow_private: AllowPrivateOption = False,
    map_host: MapHostOption = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format of the counts.")] = OutputFormat.TABLE,
) -> None:
    """Attach a link to a source (recorded with who and when) and resolve it."""
    from citeaudit.sources import set_source_url
    from citeaudit.sources.extract import require_extra

    if not url.strip().lower().startswith(("http://", "https://")):
        raise InvalidValue("URL", url, "must be an http:// or https:// link")
    if not no_resolve:
        require_extra()
    who = by or getpass.getuser()
    settings = _settings(concurrency, per_host, timeout, max_bytes, allow_private, map_host)
    report = set_source_url(existing_database(db), key, url.strip(), who, settings, resolve=not no_resolve)
    console.print(f"link of {key!r} set to {url.strip()!r} by {who!r}", soft_wrap=True)
    if report is not None:
        _print_report(report, fmt)


@app.command("passages")
@handles_errors
def passages(
    key: Annotated[str, typer.Argument(help="Source key (current or former).")],
    db: DbOption = Path("citeaudit.db"),
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format.")] = OutputFormat.TABLE,
) -> None:
    """Print the passages of a source's latest snapshot with their character offsets."""
    from citeaudit.sources import source_passages

    found = source_passages(existing_database(db), key)
    if fmt is OutputFormat.JSON:
        console.print_json(json.dumps([dataclasses.asdict(p) for p in found]))
        return
    table = Table("#", "start", "end", "passage", title=f"passages of {key}")
    for p in found:
        table.add_row(str(p.ordinal), str(p.start), str(p.end), p.text)
    console.print(table)
    if not found:
        err_console.print("no snapshot yet: run `citeaudit resolve` first")


def register(root: typer.Typer) -> None:
    """Add ``resolve`` and the ``source`` group to ``root``."""
    root.command()(resolve)
    root.add_typer(app, name="source")
