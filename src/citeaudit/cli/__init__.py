"""The ``citeaudit`` command line: one module per command group, library errors turned into exit code 2."""

from __future__ import annotations

import typer

from citeaudit.cli import data, demo, protocol, report, score, segment

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
score.register(app)
app.add_typer(protocol.app, name="protocol")
report.register(app)
segment.register(app)
demo.register(app)


def main() -> None:
    """Console-script entry point."""
    app()
