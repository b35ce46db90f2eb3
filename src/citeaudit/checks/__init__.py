"""Deterministic consistency checks between a claim and a passage, usable alone or as the ``checks`` judge.

They catch the errors that cost exporters most: a quantity off by a unit (20 L vs 20 mL), a page about another
model (AX220 vs AX320), a certificate of another standard, directive or holder, a validity period that ended.
Equivalent statements (20 L = 20 000 mL, 12 MPa = 120 bar, ``1,200`` in English = ``1.200`` in German) are
matches, not findings.

>>> from citeaudit.checks import run_checks
>>> report = run_checks("The AX220 has a 20 L tank", "AX220 tank capacity: 20 mL")
>>> [(f.kind.value, f.conflict) for f in report.findings]
[('quantity_mismatch', True)]
"""

import typing

from citeaudit.checks._findings import CheckReport, Finding, FindingKind, Match, Span
from citeaudit.checks._identifiers import model_confusion

if typing.TYPE_CHECKING:
    from citeaudit.checks._run import CHECKS_VERSION, run_checks

__all__ = [
    "CHECKS_VERSION",
    "CheckReport",
    "Finding",
    "FindingKind",
    "Match",
    "Span",
    "model_confusion",
    "run_checks",
]


def __getattr__(name: str) -> object:
    # The runner loads the units registry (pint) on import, a fifth of a second: it is loaded when first asked for,
    # so what reads model identifiers alone (the brand figures) does not pay for it.
    if name in ("CHECKS_VERSION", "run_checks"):
        from citeaudit.checks import _run

        return getattr(_run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
