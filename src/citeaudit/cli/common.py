"""What every command shares: the database option, output formats and turning library errors into exit 2."""

from __future__ import annotations

import functools
import gc
import getpass
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NoReturn, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from citeaudit.core.errors import CiteauditError, InputError

__all__ = [
    "DbOption",
    "OutputFormat",
    "console",
    "err_console",
    "existing_database",
    "handles_errors",
    "left_to_the_end",
    "one_line",
    "os_user",
    "out_text",
]

# Piped output (files, CI logs, `make demo | tee`) gets a readable width instead of rich's 80-column default.
console = Console(highlight=False, width=None if sys.stdout.isatty() else 110)
err_console = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 110)


def left_to_the_end(*built: object) -> None:
    """Leave what a command built (``built``: millions of small values, e.g. a large report's audit, evidence and
    HTML) to the end of the process, when that comes right after the command (the console script): they are not
    freed one at a time as the command returns and as Python tears down, and the cyclic collector, which runs again
    after the command, does not walk them nor anything else made so far (all is frozen, as the console script does
    at its end). At 100 000 edges the report's process ended about 0.1 s sooner. When a longer-lived program runs
    the command (tests, a notebook) nothing happens: what it built is freed as usual. Only for values that hold no
    open file or connection: no finalizer of theirs runs."""
    from citeaudit.cli import ENDS_WITH_THE_COMMAND

    if not ENDS_WITH_THE_COMMAND[0]:
        return
    kept: list[object] = [*built]
    kept.append(kept)  # a cycle: its count of references never falls to zero
    gc.freeze()  # and no collection looks at it again


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


_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0)) if chr(c) not in "\n\t"}


def shown_text(text: str) -> str:
    """Outside text (an answer, a claim, a URL) as a terminal may show it: control characters other than line feed
    and tab written as their escapes (``\\x1b``), so an answer cannot clear the screen or retitle the window."""
    return text.translate(_CONTROLS)


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
            _refuse(str(exc))
        except BrokenPipeError:
            sys.stderr.close()
            raise typer.Exit(0) from None
        except OSError as exc:
            # The machine refused a file (a full disk, a folder where a file was meant, a missing folder).
            if exc.errno is None:
                raise
            _refuse(f"{exc.filename}: {exc.strerror}" if exc.filename is not None else str(exc.strerror))
        except Exception as exc:
            # A database the disk cannot take (full, read-only) where no transaction of the store caught it.
            # (sqlite3 is looked up, not imported: a command that never opened a database has not loaded it.)
            sqlite3 = sys.modules.get("sqlite3")
            if sqlite3 is None or not isinstance(exc, sqlite3.Error):
                raise
            from citeaudit.store.connection import storage_failure

            if not storage_failure(exc):
                raise
            where = kwargs.get("db") or kwargs.get("path") or "the database"
            _refuse(f"cannot write to {str(where)!r} ({exc})")

    return wrapper


def _refuse(message: str) -> NoReturn:
    err_console.print(f"[bold red]error:[/] {escape(one_line(message))}", soft_wrap=True)
    raise typer.Exit(EXIT_BAD_INPUT) from None
