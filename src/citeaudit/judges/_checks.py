"""The ``checks`` judge: deterministic consistency checks only. It can refute a claim, never confirm one."""

from __future__ import annotations

from citeaudit.checks import CHECKS_VERSION, run_checks
from citeaudit.core.model import Label
from citeaudit.judges._base import JudgeRequest, JudgeTraits, Suggestion

__all__ = ["ChecksJudge"]


class ChecksJudge:
    """``conflicting`` when a check finds a conflict in some passage, else ``unknown`` (nothing decided).

    A passage that restates every quantity, identifier and date of the claim does not make the claim supported:
    the checks do not read the rest of the sentence, so agreement on numbers is left to a reviewer.
    """

    name = "checks"
    version = CHECKS_VERSION
    battery_traits = JudgeTraits(
        deterministic=True, reads_passage_order=False, reads_label_order=False, says_supported=False
    )
    """Same request, same label; each passage is read on its own; no label options are shown; never supported."""
    model: str | None = None

    def judge(self, request: JudgeRequest) -> Suggestion:
        """Run the checks against each passage; the first conflict decides."""
        doubts: list[str] = []
        for passage in request.passages:
            report = run_checks(
                request.claim, passage, claim_locale=request.claim_locale, passage_locale=request.passage_locale
            )
            conflicts = [f for f in report.findings if f.conflict]
            if conflicts:
                first = conflicts[0]
                quote = first.passage_span.text if first.passage_span else None
                return Suggestion(
                    Label.CONFLICTING,
                    self.name,
                    self.version,
                    quote=quote,
                    reasoning="; ".join(f"{f.kind}: {f.detail}" for f in conflicts),
                )
            doubts += [f"{f.kind}: {f.detail}" for f in report.findings]
        reasoning = "no conflict found by the deterministic checks; support needs a reviewer"
        if doubts:
            reasoning += " (doubts: " + "; ".join(doubts) + ")"
        return Suggestion(Label.UNKNOWN, self.name, self.version, reasoning=reasoning)
