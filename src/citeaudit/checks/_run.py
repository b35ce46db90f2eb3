"""Run every deterministic check on one (claim, passage) pair."""

from __future__ import annotations

import re
from collections.abc import Sequence

from citeaudit.checks._dates import DateMention, dates_in
from citeaudit.checks._findings import CheckReport, Finding, FindingKind, Match, Span
from citeaudit.checks._identifiers import Mention, certificates_in, entities_in
from citeaudit.checks._numbers import validate_locale
from citeaudit.checks._quantities import QuantityMention, compare, quantities_in, ratio_note

__all__ = ["CHECKS_VERSION", "run_checks"]

CHECKS_VERSION = "checks-v2"
"""Changes whenever a rule changes, so stored suggestions say which rules made them."""

_WORD = re.compile(r"[^\W\d_]{3,}")
_STOPWORDS = frozenset({
    "the", "and", "for", "with", "has", "have", "had", "was", "were", "are", "its", "this", "that", "from", "into",
    "than", "then", "also", "only", "not", "but", "which", "who", "whom", "whose", "been", "being", "per", "about",
    "over", "under", "more", "less", "most", "least", "max", "min", "maximum", "minimum", "can", "will", "may",
})  # fmt: skip


def _span(text: str, start: int, end: int) -> Span:
    return Span(start, end, text[start:end])


def _context(text: str, start: int, end: int, window: int = 40) -> set[str]:
    # Words around a mention (same sentence side), lower-cased: what the number is about.
    left = re.split(r"[.;!?\n]\s", text[max(0, start - window) : start])[-1]
    right = re.split(r"[.;!?\n]\s", text[end : end + window])[0]
    return {w.lower() for w in _WORD.findall(f"{left} {right}")} - _STOPWORDS


def _alternatives(text: str, mentions: list[QuantityMention]) -> dict[int, list[QuantityMention]]:
    # "390 ft (120 m)": a value and its parenthesised conversion are one statement; if the passage matches either,
    # the claim's statement is matched (editors round conversions, so the two rarely agree exactly).
    groups: dict[int, list[QuantityMention]] = {i: [m] for i, m in enumerate(mentions)}
    for i, first in enumerate(mentions[:-1]):
        second = mentions[i + 1]
        between = text[first.end : second.start]
        close = first.low > 0 and abs(first.low - second.low) / max(first.low, second.low) <= 0.05
        if re.fullmatch(r"\s*[(\[]\s*", between) and first.dimensionality == second.dimensionality and close:
            groups[i].append(second)
            groups[i + 1].append(first)
    return groups


def _check_quantities(
    claim: str, passage: str, claim_locale: str, passage_locale: str
) -> tuple[list[Finding], list[Match], int]:
    findings: list[Finding] = []
    matches: list[Match] = []
    claim_mentions = quantities_in(claim, claim_locale)
    passage_mentions = quantities_in(passage, passage_locale)
    alternatives = _alternatives(claim, claim_mentions)
    for i, mention in enumerate(claim_mentions):
        comparable = [p for p in passage_mentions if compare(mention, p) is not None]
        if not comparable:
            continue
        equal = [(m, p) for m in alternatives[i] for p in comparable if compare(m, p)]
        if equal:
            other = equal[0][1]
            matches.append(
                Match("quantity", _span(claim, mention.start, mention.end), _span(passage, other.start, other.end))
            )
            continue
        about = _context(claim, mention.start, mention.end)
        overlap = [(len(about & _context(passage, p.start, p.end)), p) for p in comparable]
        best_overlap, other = max(overlap, key=lambda pair: pair[0])
        alone = (
            len(comparable) == 1 and sum(1 for m in claim_mentions if m.dimensionality == mention.dimensionality) == 1
        )
        same_subject = best_overlap > 0 or alone
        note = ratio_note(mention, other)
        detail = f"claim states {mention.text!r}, passage states {other.text!r}" + (f": {note}" if note else "")
        if not same_subject:
            detail += " (about something else, as far as the surrounding words tell)"
        findings.append(
            Finding(
                FindingKind.QUANTITY_MISMATCH,
                _span(claim, mention.start, mention.end),
                _span(passage, other.start, other.end),
                detail,
                same_subject,
            )
        )
    return findings, matches, len(claim_mentions)


def _check_slots(
    claim: str,
    passage: str,
    claim_mentions: Sequence[Mention],
    passage_mentions: Sequence[Mention],
    kind: FindingKind,
    match_kind: str,
) -> tuple[list[Finding], list[Match]]:
    findings: list[Finding] = []
    matches: list[Match] = []
    for mention in claim_mentions:
        same_slot = [p for p in passage_mentions if p.slot == mention.slot]
        equal = [p for p in same_slot if p.value == mention.value]
        if equal:
            editions = {p.edition for p in equal if p.edition}
            if mention.edition and editions and mention.edition not in editions:
                other = next(p for p in equal if p.edition)
                findings.append(
                    Finding(
                        FindingKind.CERTIFICATE_MISMATCH,
                        _span(claim, mention.start, mention.end),
                        _span(passage, other.start, other.end),
                        f"claim cites edition {mention.edition} ({mention.text!r}), passage {other.text!r}",
                        True,
                    )
                )
                continue
            matches.append(
                Match(
                    match_kind, _span(claim, mention.start, mention.end), _span(passage, equal[0].start, equal[0].end)
                )
            )
            continue
        if not same_slot:
            continue
        other = same_slot[0]
        listed = ", ".join(sorted({p.text for p in same_slot}))
        findings.append(
            Finding(
                kind,
                _span(claim, mention.start, mention.end),
                _span(passage, other.start, other.end),
                f"claim names {mention.text!r}; the passage names only {listed}",
                True,
            )
        )
    return findings, matches


_SCOPE_SLOTS = frozenset({"ul_mark", "eu_directive"})


def _check_certificates(claim: str, passage: str) -> tuple[list[Finding], list[Match], int]:
    claim_mentions = certificates_in(claim)
    passage_mentions = certificates_in(passage)
    findings: list[Finding] = []
    matches: list[Match] = []
    # Another standard of the same body, another directive, another UL category: the certificate covers something
    # else (scope). Another FCC ID, UL file or certificate number: a different certificate (mismatch).
    scoped = [m for m in claim_mentions if m.slot in _SCOPE_SLOTS or m.slot.startswith("standard:")]
    identified = [m for m in claim_mentions if m not in scoped]
    for group, kind in ((scoped, FindingKind.CERTIFICATE_SCOPE), (identified, FindingKind.CERTIFICATE_MISMATCH)):
        more_findings, more_matches = _check_slots(claim, passage, group, passage_mentions, kind, "certificate")
        findings += more_findings
        matches += more_matches
    return findings, matches, len(claim_mentions)


def _check_entities(claim: str, passage: str) -> tuple[list[Finding], list[Match], int]:
    claim_certificates = certificates_in(claim)
    passage_certificates = certificates_in(passage)
    claim_mentions = entities_in(claim, claim_certificates)
    passage_mentions = entities_in(passage, passage_certificates)
    findings, matches = _check_slots(
        claim, passage, claim_mentions, passage_mentions, FindingKind.ENTITY_MISMATCH, "entity"
    )
    return findings, matches, len(claim_mentions)


def _earlier(a: DateMention, b: DateMention) -> bool | None:
    # Compared at the coarser precision of the two; None when equal there.
    precision = min(len(a.parts), len(b.parts))
    left, right = a.parts[:precision], b.parts[:precision]
    return None if left == right else left < right


def _check_dates(
    claim: str, passage: str, claim_locale: str, passage_locale: str
) -> tuple[list[Finding], list[Match], int]:
    findings: list[Finding] = []
    matches: list[Match] = []
    claim_dates = dates_in(claim, claim_locale)
    passage_dates = dates_in(passage, passage_locale)
    for mention in claim_dates:
        if mention.role == "as_of":
            expiries = [p for p in passage_dates if p.role == "expiry"]
            expired = [p for p in expiries if _earlier(p, mention)]
            if expiries and len(expired) == len(expiries):
                other = expired[0]
                findings.append(
                    Finding(
                        FindingKind.VALIDITY_EXPIRED,
                        _span(claim, mention.start, mention.end),
                        _span(passage, other.start, other.end),
                        f"claim applies it at {mention.text!r}; the passage says it expired {other.text!r}",
                        True,
                    )
                )
            continue
        comparable = [p for p in passage_dates if p.role == mention.role] if mention.role else []
        if not mention.role:
            comparable = [p for p in passage_dates if p.role is None]
        equal = [p for p in comparable if _earlier(mention, p) is None]
        if equal:
            matches.append(
                Match("date", _span(claim, mention.start, mention.end), _span(passage, equal[0].start, equal[0].end))
            )
        elif comparable and mention.role:
            other = comparable[0]
            findings.append(
                Finding(
                    FindingKind.DATE_MISMATCH,
                    _span(claim, mention.start, mention.end),
                    _span(passage, other.start, other.end),
                    f"claim gives the {mention.role} date {mention.text!r}, passage {other.text!r}",
                    True,
                )
            )
    return findings, matches, len(claim_dates)


def run_checks(claim: str, passage: str, *, claim_locale: str = "en", passage_locale: str | None = None) -> CheckReport:
    """Compare every quantity, identifier, certificate and date the claim states with the passage.

    ``claim_locale`` and ``passage_locale`` (BCP 47; the passage defaults to the claim's) decide how numbers such
    as ``1,200`` and dates such as ``03/04/2026`` are read. Nothing is judged from missing evidence: a claim
    mention with nothing comparable in the passage yields no finding.
    """
    passage_locale = passage_locale or claim_locale
    validate_locale(claim_locale, "claim")
    validate_locale(passage_locale, "passage")
    findings: list[Finding] = []
    matches: list[Match] = []
    checked = 0
    quantity_findings, quantity_matches, n = _check_quantities(claim, passage, claim_locale, passage_locale)
    findings += quantity_findings
    matches += quantity_matches
    checked += n
    entity_findings, entity_matches, n = _check_entities(claim, passage)
    findings += entity_findings
    matches += entity_matches
    checked += n
    certificate_findings, certificate_matches, n = _check_certificates(claim, passage)
    findings += certificate_findings
    matches += certificate_matches
    checked += n
    date_findings, date_matches, n = _check_dates(claim, passage, claim_locale, passage_locale)
    findings += date_findings
    matches += date_matches
    checked += n
    findings.sort(key=lambda f: (f.claim_span.start, str(f.kind)))
    matches.sort(key=lambda m: (m.claim_span.start, m.kind))
    return CheckReport(tuple(findings), tuple(matches), checked, CHECKS_VERSION)
