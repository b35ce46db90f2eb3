"""``checks``: the deterministic consistency checks on one claim and one passage."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer
from rich.table import Table

from citeaudit.cli.common import OutputFormat, console, handles_errors

__all__ = ["register"]


@handles_errors
def checks(
    claim: Annotated[str, typer.Option("--claim", help="The claim text.")],
    passage: Annotated[str, typer.Option("--passage", help="The passage text.")],
    locale: Annotated[str, typer.Option("--locale", help="Locale of both texts (BCP 47), e.g. en, de-DE.")] = "en",
    passage_locale: Annotated[
        str | None, typer.Option("--passage-locale", help="Locale of the passage when it differs from --locale.")
    ] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format.")] = OutputFormat.TABLE,
) -> None:
    """Compare the quantities, model identifiers, certificates and dates of a claim with a passage."""
    from citeaudit.checks import run_checks

    report = run_checks(claim, passage, claim_locale=locale, passage_locale=passage_locale)
    if fmt is OutputFormat.JSON:
        console.out(json.dumps(report.to_dict(), indent=2, ensure_ascii=False), highlight=False)
        return
    if fmt is OutputFormat.CSV:
        from citeaudit.report.csv_cells import SafeWriter

        writer = SafeWriter(sys.stdout, lineterminator="\n")
        writer.writerow(["kind", "conflict", "claim_span", "passage_span", "detail"])
        for finding in report.findings:
            passage_text = finding.passage_span.text if finding.passage_span else ""
            writer.writerow(
                [finding.kind, str(finding.conflict).lower(), finding.claim_span.text, passage_text, finding.detail]
            )
        return
    table = Table("kind", "conflict", "claim", "passage", "detail", header_style="bold")
    for finding in report.findings:
        passage_text = finding.passage_span.text if finding.passage_span else "—"
        conflict = "yes" if finding.conflict else "doubt"
        table.add_row(str(finding.kind), conflict, finding.claim_span.text, passage_text, finding.detail)
    if report.findings:
        console.print(table)
    console.print(
        f"{report.conflicts} conflict(s), {len(report.findings) - report.conflicts} doubt(s), "
        f"{len(report.matches)} equivalent statement(s) of {report.checked} claim mention(s) checked ({report.version})"
    )


def register(app: typer.Typer) -> None:
    """Add ``checks`` to the application."""
    app.command("checks")(checks)
