"""What a source document says about itself: date, version, the products it is about, certificates.

Conflicting sources are often both right about different things: an older datasheet revision, a sister
model, another market's variant, a copy of a third party's page. These extractors read the snapshot text
(deterministic patterns, English and German) so that the review page and ``citeaudit conflicts`` can put
such sources side by side and suggest why they disagree. They suggest; a reviewer decides.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

__all__ = [
    "Certificate",
    "ConflictSide",
    "DocumentFacts",
    "describe",
    "model_identifiers",
    "suggest_reason",
]

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan", "januar", "jänner"),
            ("february", "feb", "februar"),
            ("march", "mar", "märz", "maerz"),
            ("april", "apr"),
            ("may", "mai"),
            ("june", "jun", "juni"),
            ("july", "jul", "juli"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct", "oktober", "okt"),
            ("november", "nov"),
            ("december", "dec", "dezember", "dez"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATE = re.compile(
    rf"(?P<iso>\b(?P<y1>(?:19|20)\d\d)-(?P<m1>[01]\d)-(?P<d1>[0-3]\d)\b)"
    rf"|(?P<dmy>\b(?P<d2>[0-3]?\d)\.\s?(?P<m2>[01]?\d)\.\s?(?P<y2>(?:19|20)\d\d)\b)"
    rf"|(?P<mdy>\b(?P<mn3>{_MONTH})\.?\s+(?P<d3>[0-3]?\d),?\s+(?P<y3>(?:19|20)\d\d)\b)"
    rf"|(?P<dmy_name>\b(?P<d4>[0-3]?\d)\.?\s+(?P<mn4>{_MONTH})\.?\s+(?P<y4>(?:19|20)\d\d)\b)"
    rf"|(?P<my>\b(?P<mn5>{_MONTH})\.?\s+(?P<y5>(?:19|20)\d\d)\b)",
    re.IGNORECASE,
)
_DATED = re.compile(
    r"\b(?:last\s+)?(?:updated|update|published|revised|issued|date|stand|aktualisiert|veröffentlicht|datum)"
    r"\s*(?:on|am|:)?\s*",
    re.IGNORECASE,
)
_VERSION = re.compile(
    r"\b(?:rev(?:ision)?\.?|revisión|überarbeitung)\s*:?\s*(?P<rev>[0-9]+[a-z]?|[a-z]\b)"
    r"|\b(?P<ed1>(?:19|20)\d\d)\s+(?:edition|ausgabe)\b"
    r"|\b(?:edition|ausgabe)\s+(?P<ed2>(?:19|20)\d\d)\b"
    r"|\b(?:version|v)\s?\.?\s?(?P<ver>\d+(?:\.\d+)+|\d+\b)",
    re.IGNORECASE,
)
_NOT_MODELS = frozenset(
    {
        "ISO",
        "EN",
        "IEC",
        "DIN",
        "UL",
        "CE",
        "FCC",
        "IP",
        "ASTM",
        "ANSI",
        "NFPA",
        "CSA",
        "VDE",
        "REV",
        "V",
        "DB",
        "KW",
        "MPA",
        "BAR",
        "PSI",
        "RPM",
        "HZ",
        "ID",
        "NO",
        "NR",
        "PAGE",
        "COVID",
        "MP",
        "EC",
        "EU",
        "ROHS",
        "GS",
        "TUV",
        "TÜV",
    }
)
_MODEL = re.compile(r"\b(?P<prefix>[A-Z][A-Z]{0,3})[- ]?(?P<number>\d{2,5})(?P<suffix>[A-Z]{0,3})\b")
_MARKETS = {
    "eu": ("european union", "eu market", "eu version", "europe", "europa", "eu-markt"),
    "uk": ("united kingdom", "uk market", "uk version", "great britain", "ukca"),
    "us": ("united states", "usa", "us market", "us version", "north america", "nordamerika"),
    "ca": ("canada", "kanada"),
    "au": ("australia", "australien"),
    "cn": ("china", "chinese market", "ccc mark"),
    "jp": ("japan",),
}
_CERT_PATTERNS = (
    ("FCC ID", re.compile(r"\bFCC\s+ID\s*:?\s*(?P<id>[A-Z0-9][A-Z0-9-]{3,})", re.IGNORECASE)),
    ("ISO", re.compile(r"\bISO\s*(?P<id>\d{3,5}(?:-\d+)?(?::\d{4})?)")),
    ("UL", re.compile(r"\bUL\s+(?:file\s+(?:no\.?|number)\s*)?(?P<id>E\d{4,7}|\d{3,4}[A-Z]?)\b", re.IGNORECASE)),
    ("CE", re.compile(r"\bCE[- ](?:mark(?:ed|ing)?|conformity|kennzeichnung|certified|certificate)(?P<id>)", re.I)),
)
_HOLDER = re.compile(
    r"\b(?:certificate\s+holder|holder|issued\s+to|inhaber|zertifikatsinhaber)\s*:?\s*(?P<value>[^\n;.]{2,80})",
    re.IGNORECASE,
)
_SCOPE = re.compile(r"\b(?:scope|geltungsbereich|anwendungsbereich)\s*:?\s*(?P<value>[^\n]{3,200})", re.IGNORECASE)
_VALID_UNTIL = re.compile(
    r"\b(?:valid\s+(?:until|through|to)|expiry\s+date|expires(?:\s+on)?|gültig\s+bis)\s*:?\s*", re.IGNORECASE
)
_VALID_FROM = re.compile(r"\b(?:valid\s+from|issued\s+on|date\s+of\s+issue|gültig\s+ab)\s*:?\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Certificate:
    """A certificate or marking the document states."""

    kind: str
    """``CE``, ``UL``, ``FCC ID`` or ``ISO``."""
    identifier: str | None
    """Its number (``E123456``, ``2ABCD-AX220``, ``9001:2015``), when given."""


@dataclass(frozen=True, slots=True)
class DocumentFacts:
    """What a document says about itself."""

    date: str | None = None
    """Publication or update date (ISO), from the page metadata, else from a dated line in the text."""
    versions: tuple[str, ...] = ()
    """Version markers: ``rev 3``, ``v2.1``, ``edition 2024``."""
    models: tuple[str, ...] = ()
    """Model identifiers the text names, normalized (``AX-220`` → ``AX220``), most frequent first."""
    certificates: tuple[Certificate, ...] = ()
    holder: str | None = None
    """Certificate holder, if the text names one."""
    scope: str | None = None
    """Certificate scope, if the text states one."""
    valid_from: str | None = None
    valid_until: str | None = None
    markets: tuple[str, ...] = ()
    """Markets the text names (``eu``, ``uk``, ``us``, …)."""


def _iso(match: re.Match[str]) -> str | None:
    groups = match.groupdict()
    try:
        if groups["iso"]:
            return date(int(groups["y1"]), int(groups["m1"]), int(groups["d1"])).isoformat()
        if groups["dmy"]:
            return date(int(groups["y2"]), int(groups["m2"]), int(groups["d2"])).isoformat()
        if groups["mdy"]:
            return date(int(groups["y3"]), _MONTHS[groups["mn3"].lower()], int(groups["d3"])).isoformat()
        if groups["dmy_name"]:
            return date(int(groups["y4"]), _MONTHS[groups["mn4"].lower()], int(groups["d4"])).isoformat()
        if groups["my"]:
            return f"{int(groups['y5']):04d}-{_MONTHS[groups['mn5'].lower()]:02d}"
    except ValueError:
        return None
    return None


def _date_after(pattern: re.Pattern[str], text: str) -> str | None:
    for marker in pattern.finditer(text):
        found = _DATE.match(text, marker.end())
        if found:
            value = _iso(found)
            if value:
                return value
    return None


def model_identifiers(text: str) -> tuple[str, ...]:
    """Model identifiers in ``text`` (``AX220``, ``AX-320``, ``KX 55S``), normalized, most frequent first."""
    counts: dict[str, int] = {}
    for match in _MODEL.finditer(text):
        if match["prefix"].upper() in _NOT_MODELS:
            continue
        key = f"{match['prefix'].upper()}{match['number']}{match['suffix'].upper()}"
        counts[key] = counts.get(key, 0) + 1
    return tuple(sorted(counts, key=lambda k: (-counts[k], k)))


def describe(text: str, *, metadata_date: str | None = None) -> DocumentFacts:
    """Extract a document's self-description from its main text (``metadata_date``: the page's own date)."""
    versions: list[str] = []
    for match in _VERSION.finditer(text):
        if match["rev"]:
            versions.append(f"rev {match['rev'].lower()}")
        elif match["ver"]:
            versions.append(f"v{match['ver']}")
        else:
            versions.append(f"edition {match['ed1'] or match['ed2']}")
    certificates: list[Certificate] = []
    for kind, pattern in _CERT_PATTERNS:
        for match in pattern.finditer(text):
            identifier = match["id"] or None
            if Certificate(kind, identifier) not in certificates:
                certificates.append(Certificate(kind, identifier))
    lowered = text.lower()
    markets = tuple(code for code, names in _MARKETS.items() if any(name in lowered for name in names))
    holder = _HOLDER.search(text)
    scope = _SCOPE.search(text)
    return DocumentFacts(
        date=metadata_date or _date_after(_DATED, text),
        versions=tuple(dict.fromkeys(versions)),
        models=model_identifiers(text),
        certificates=tuple(certificates),
        holder=holder["value"].strip() if holder else None,
        scope=scope["value"].strip() if scope else None,
        valid_from=_date_after(_VALID_FROM, text),
        valid_until=_date_after(_VALID_UNTIL, text),
        markets=markets,
    )


@dataclass(frozen=True, slots=True)
class ConflictSide:
    """One source in a conflict, as the suggestion sees it."""

    key: str
    label: str
    """Final label of its edge: ``supported`` or ``conflicting`` (others are context)."""
    facts: DocumentFacts = field(default_factory=DocumentFacts)
    official: bool = False
    copy_origin: str | None = None
    """Key of the copy group's origin when the source is a copy of another page."""
    copy_origin_official: bool = False


def _version_rank(facts: DocumentFacts) -> tuple[str, float]:
    """Order by date, then by the highest revision or version number (``rev 3`` → 3, ``v2.1`` → 2.1)."""
    numbers = [float(m[0]) for v in facts.versions if (m := re.findall(r"\d+(?:\.\d+)?", v))]
    return facts.date or "", max(numbers, default=-1.0)


def suggest_reason(claim: str, sides: Sequence[ConflictSide]) -> tuple[str, str]:
    """``(reason, detail)``: why supported and conflicting sources of one claim may disagree.

    Reasons, first that applies: ``other model`` (a side is about another model than the claim names),
    ``newer version`` (the sides carry different dates or revisions), ``other market`` (the sides name
    different markets), ``copy of a third party`` (a side copies a non-official page), ``unresolved``.
    """
    claimed = set(model_identifiers(claim))
    if claimed:
        for side in sides:
            about = set(side.facts.models)
            if about and not about & claimed:
                return (
                    "other model",
                    f"{side.key} ({side.label}) is about {', '.join(side.facts.models[:3])}, "
                    f"the claim about {', '.join(sorted(claimed))}",
                )
    supported = [s for s in sides if s.label == "supported"]
    conflicting = [s for s in sides if s.label == "conflicting"]
    ranked = [(s, _version_rank(s.facts)) for s in supported + conflicting if s.facts.date or s.facts.versions]
    if len({rank for _, rank in ranked}) > 1:
        newest = max(ranked, key=lambda item: item[1])[0]
        shown = ", ".join(filter(None, (newest.facts.date, *newest.facts.versions[:1])))
        return "newer version", f"{newest.key} ({newest.label}) is the newest ({shown}); check which applies"
    markets = {s.key: set(s.facts.markets) for s in sides if s.facts.markets}
    if len({frozenset(m) for m in markets.values()}) > 1:
        detail = "; ".join(f"{key}: {', '.join(sorted(m))}" for key, m in markets.items())
        return "other market", detail
    for side in sides:
        if side.copy_origin is not None and side.copy_origin != side.key and not side.copy_origin_official:
            return "copy of a third party", f"{side.key} ({side.label}) copies {side.copy_origin}"
    return "unresolved", "no date, version, model, market or copy difference found; a reviewer must decide"
