"""``misattribution``: claims their own citations do not support but another source of the audit does."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from citeaudit.cli.common import OutputFormat, console, handles_errors
from citeaudit.cli.score import KindChoice, KindOption, ProtocolOption, WhereOption
from citeaudit.core.model import RunKind
from citeaudit.core.scope import Scope, parse_where

if TYPE_CHECKING:
    from citeaudit.core.misattribution import MisattributionReport

__all__ = ["register"]


def _csv(report: MisattributionReport) -> str:
    buffer = io.StringIO()
    from citeaudit.report.csv_cells import SafeWriter

    writer = SafeWriter(buffer, lineterminator="\n")
    writer.writerow(["claim_id", "answer_id", "claim", "cited", "supported_by", "kind", "passage", "reviewer"])
    for case in report.cases:
        cited = "; ".join(f"{key} ({label or 'pending'})" for key, label in case.cited)
        writer.writerow(
            [case.claim_id, case.answer_id, case.claim_text, cited, case.supporting_source, str(case.kind),
             case.passage or "", case.reviewer or ""]
        )  # fmt: skip
    return buffer.getvalue()


def _print_table(report: MisattributionReport, title: str) -> None:
    console.print(f"[bold]{title}[/bold]")
    console.print(f"misattributed claims / claims at risk: {report.shown().text}", markup=False)
    console.print(
        f"claims at risk with pending edges: {report.at_risk_with_pending_edges}; without cross pairs: "
        f"{report.at_risk_without_cross_pairs}; cross pairs: {report.cross_pairs} "
        f"({report.cross_pairs_pending} without a final label)"
    )
    if not report.cases:
        return
    table = Table("claim", "cited (label)", "supported by", "passage")
    for case in report.cases:
        cited = "\n".join(f"{key} ({label or 'pending'})" for key, label in case.cited)
        table.add_row(
            f"{case.claim_id}: {case.claim_text}", cited, f"{case.supporting_source} ({case.kind})", case.passage or "—"
        )
    console.print(table)


@handles_errors
def misattribution(
    path: Annotated[Path, typer.Argument(help="An audit file (citeaudit.audit/v1) or a citeaudit database.")],
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format.")] = OutputFormat.TABLE,
    kind: KindOption = KindChoice.PLATFORM,
    where: WhereOption = None,
    protocol: ProtocolOption = None,
) -> None:
    """Misattributed claims: claims whose own edges are not supported (claims at risk) but that a reviewer found
    supported by another source of the same answer or by an official page (a cross pair). Cross pairs are
    proposed by `citeaudit suggest --cross-pairs`, judged in review, and never scored as edges."""
    kinds = frozenset(RunKind) if kind is KindChoice.ALL else frozenset({RunKind(kind.value)})
    from citeaudit.scoring.paths import misattribution_path

    report, _ = misattribution_path(
        path, scope=Scope(run_kinds=kinds, where=parse_where(where or [])), protocol=protocol
    )
    if fmt is OutputFormat.JSON:
        console.out(json.dumps(report.to_dict(), indent=2, ensure_ascii=False), highlight=False)
    elif fmt is OutputFormat.CSV:
        console.out(_csv(report), end="", highlight=False)
    else:
        _print_table(report, f"misattribution — {path}")


def register(app: typer.Typer) -> None:
    """Add this group's commands to ``app``."""
    app.command()(misattribution)
