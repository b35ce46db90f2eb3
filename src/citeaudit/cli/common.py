"""What every command shares: the database option, output formats and turning library errors into exit 2."""

from __future__ import annotations

import functools
import getpass
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from citeaudit.errors import CiteauditError, InputError

__all__ = [
    "DbOption",
    "OutputFormat",
    "console",
    "err_console",
    "existing_database",
    "handles_errors",
    "one_line",
    "os_user",
    "out_text",
]

# Piped output (files, CI logs, `make demo | tee`) gets a readable width instead of rich's 80-column default.
console = Console(highlight=False, width=None if sys.stdout.isatty() else 110)
err_console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 110)


def out_text(text: str) -> None:
    """Print machine-readable text (JSON) as it is, with a final newline, as ``console.out`` prints it: rich lays
    out every line of its text first, which takes seconds for the megabytes of a large audit's JSON."""
    console.file.write(text + "\n")
    console.file.flush()


DbOption = Annotated[
    Path,
    typer.Option("--db", envvar="CITEAUDIT_DB", help="Database file (env CITEAUDIT_DB).", show_default=True),
]


class OutputFormat(StrEnum):
    """Output formats shared by every command that prints results."""

    TABLE = "table"
    JSON = "json"
    CSV = "csv"


P = ParamSpec("P")
R = TypeVar("R")

EXIT_BAD_INPUT = 2

_LINE_BREAKS = {ord(c): repr(c)[1:-1] for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"}


def one_line(message: str) -> str:
    """``message`` with every character that would break the line written as its escape: an error stays one line
    even when the value it shows (a file name, a path) holds a newline."""
    return message.translate(_LINE_BREAKS)


def os_user() -> str:
    """The operating-system user running the command, for the audit log ("" when the system names none)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name and no passwd entry (a bare container)
        return ""


def existing_database(db: Path) -> Path:
    """``db`` when the file exists: a command that reads a database never creates an empty one."""
    if not db.exists():
        raise InputError(
            str(db),
            "",
            f"no such database: there is no database at this path; import answers first with "
            f"`citeaudit ingest FILE --db {db}`",
        )
    return db


def handles_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Print a library error as one clean line on stderr and exit 2 (no traceback)."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except CiteauditError as exc:
            err_console.print(f"[bold red]error:[/] {escape(one_line(str(exc)))}", soft_wrap=True)
            raise typer.Exit(EXIT_BAD_INPUT) from None
        except BrokenPipeError:
            sys.stderr.close()
            raise typer.Exit(0) from None

    return wrapper
