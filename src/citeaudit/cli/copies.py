"""``sources copies`` and ``conflicts``: copied pages and disagreeing sources, made visible."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from citeaudit.cli.common import DbOption, OutputFormat, console, existing_database, handles_errors
from citeaudit.core.errors import ScopeError
from citeaudit.sources.copies import CopySettings

__all__ = ["copies_command", "register"]

_DEFAULTS = CopySettings()


@handles_errors
def copies_command(
    db: DbOption = Path("citeaudit.db"),
    threshold: Annotated[
        float, typer.Option("--threshold", min=0.05, max=1.0, help="Estimated Jaccard similarity for a copy.")
    ] = _DEFAULTS.threshold,
    min_words: Annotated[
        int, typer.Option("--min-words", min=1, help="Shorter pages are not grouped.")
    ] = _DEFAULTS.min_words,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="table or json.")] = OutputFormat.TABLE,
) -> None:
    """Group sources whose snapshot text is near-identical (MinHash/LSH) and list the groups.

    Each group's origin is its official member, else its earliest-dated one. Strict precision does not change;
    reports and the review page count independent supporting sources (distinct groups) beside it.
    """
    from citeaudit.sources.copy_groups import recompute_copy_groups
    from citeaudit.store import Store
    from citeaudit.store.copies import read_copy_groups

    if fmt is OutputFormat.CSV:
        raise ScopeError("sources copies prints table or json")
    with Store(existing_database(db)) as store:
        result, without_text = recompute_copy_groups(store, CopySettings(threshold=threshold, min_words=min_words))
        groups = read_copy_groups(store)
    if fmt is OutputFormat.JSON:
        body = {
            "threshold": threshold,
            "pages": result.pages,
            "without_snapshot_text": without_text,
            "too_short": len(result.too_short),
            "groups": [
                {"origin": g.origin, "reason": g.reason, "official_origin": g.official_origin, "members": g.members}
                for g in groups
            ],
        }
        console.out(json.dumps(body, indent=2, ensure_ascii=False), highlight=False)
        return
    table = Table("origin", "why origin", "copies", "members", title=f"copy groups (threshold {threshold})")
    for group in groups:
        table.add_row(group.origin, group.reason, str(len(group.members) - 1), "\n".join(group.members[1:]))
    console.print(table)
    console.print(
        f"{result.pages} sources with snapshot text compared, {len(groups)} group(s); "
        f"{len(result.too_short)} too short to compare; {without_text} without snapshot text "
        "(run `citeaudit resolve` first)"
    )


@handles_errors
def conflicts_command(
    db: DbOption = Path("citeaudit.db"),
    fmt: Annotated[OutputFormat, typer.Option("--format", help="table or json.")] = OutputFormat.TABLE,
) -> None:
    """List every claim with supported and conflicting sources, and every required fact supported in one answer
    and contradicted in another: each source's date, version, models, scope, official flag and copy group,
    with a suggested reason (newer version, other model, other market, copy of a third party, unresolved)."""
    from citeaudit.sources.copy_groups import conflicts
    from citeaudit.store import Store

    if fmt is OutputFormat.CSV:
        raise ScopeError("conflicts prints table or json")
    with Store(existing_database(db)) as store:
        found = conflicts(store)
    if fmt is OutputFormat.JSON:
        console.out(json.dumps([c.to_dict() for c in found], indent=2, ensure_ascii=False), highlight=False)
        return
    if not found:
        console.print("no conflicts: no claim or required fact has both supported and conflicting sources")
        return
    for conflict in found:
        table = Table(
            "source",
            "label",
            "date",
            "version",
            "models",
            "official",
            "copy of",
            title=f"{conflict.kind} {conflict.subject}: {conflict.text}",
            caption=f"suggested: {conflict.reason} — {conflict.detail}",
        )
        for source in conflict.sources:
            facts = source.facts
            table.add_row(
                source.url or source.key,
                source.label,
                facts.date or "",
                ", ".join(facts.versions[:2]),
                ", ".join(facts.models[:3]),
                "yes" if source.official else "",
                source.copy_origin if source.copy_origin and source.copy_origin != source.key else "",
            )
        console.print(table)
    console.print(f"{len(found)} conflict(s)")


def register(app: typer.Typer, source_app: typer.Typer) -> None:
    """Add ``conflicts`` to ``app`` and ``copies`` to the sources group."""
    source_app.command("copies")(copies_command)
    app.command("conflicts")(conflicts_command)
