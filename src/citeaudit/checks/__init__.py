"""Deterministic consistency checks between a claim and a passage, usable alone or as the ``checks`` judge.

They catch the errors that cost exporters most: a quantity off by a unit (20 L vs 20 mL), a page about another
model (AX220 vs AX320), a certificate of another standard, directive or holder, a validity period that ended.
Equivalent statements (20 L = 20 000 mL, 12 MPa = 120 bar, ``1,200`` in English = ``1.200`` in German) are
matches, not findings.

>>> report = run_checks("The AX220 has a 20 L tank", "AX220 tank capacity: 20 mL")
>>> [(f.kind.value, f.conflict) for f in report.findings]
[('quantity_mismatch', True)]
"""

from citeaudit.checks._findings import CheckReport, Finding, FindingKind, Match, Span
from citeaudit.checks._identifiers import model_confusion
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
