"""The ``citeaudit`` command line: one module per command group, library errors turned into exit code 2."""

from __future__ import annotations

import typer

from citeaudit.cli import (
    agreement,
    checks,
    collect,
    copies,
    data,
    demo,
    protocol,
    report,
    review,
    score,
    segment,
    sources,
    sql,
    suggest,
)

__all__ = ["app", "main"]

app = typer.Typer(
    name="citeaudit",
    help="Audit the citations in AI answers: official-domain rate, citation precision and fact coverage, "
    "each with its numerator and denominator.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
data.register(app)
collect.register(app)
score.register(app)
sql.register(app)
app.add_typer(protocol.app, name="protocol")
report.register(app)
agreement.register(app)
sources.register(app)
copies.register(app, sources.app)
# `citeaudit sources …` is the same group as `citeaudit source …`.
app.add_typer(sources.app, name="sources")
segment.register(app)
demo.register(app)
app.add_typer(review.review_app, name="review")
app.add_typer(review.reviewer_app, name="reviewer")
app.add_typer(review.audit_log_app, name="audit-log")
checks.register(app)
suggest.register(app)


def main() -> None:
    """Console-script entry point."""
    app()
