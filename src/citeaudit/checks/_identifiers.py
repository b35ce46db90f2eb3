"""Identifiers whose mix-up costs most: model identifiers and part numbers, certificate identifiers and scope.

Each mention has a *slot* (what it identifies: a model family, a part number, an FCC ID, the ISO standard
series...) and a *value* normalized for comparison (upper case, no spaces or hyphens). A claim mention is
contradicted when the passage fills the same slot with other values only.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["Mention", "certificates_in", "entities_in", "model_confusion"]


@dataclass(frozen=True, slots=True)
class Mention:
    """An identifier in text."""

    start: int
    """Start offset."""
    end: int
    """End offset (exclusive)."""
    text: str
    """As written."""
    slot: str
    """What it identifies, e.g. ``model:AX``, ``part``, ``fcc_id``, ``standard:ISO``, ``ul_mark``."""
    value: str
    """Normalized value compared within the slot."""
    edition: str | None = None
    """Edition year of a standard (``ISO 9001:2015`` → ``2015``)."""


def _norm(text: str) -> str:
    return re.sub(r"[\s\-_./]", "", text).upper()


# A model identifier: starts with a capital letter and mixes letters and digits (``AX220``, ``V5``, ``X5``).
_MODEL = re.compile(r"(?<![\w-])(?=[A-Z0-9-]*\d)([A-Z][A-Z]*-?[A-Z]*\d[A-Z0-9]*(?:-[A-Z0-9]+)*)(?![\w-])")
# Written in lower case (``s24``, ``a54``): one or two letters and digits, never right after a number, where it
# is a unit (``20 m2``).
_LOWER_MODEL = re.compile(r"(?<![\w-])(?<!\d )(?<!\d)([a-z]{1,2}\d{1,4}[a-z]?)(?![\w-])")
# A product line written in camel case and its number: ``iPhone 15``, ``iPad 10``.
_NAMED_MODEL = re.compile(r"(?<![\w-])([a-z]+[A-Z][A-Za-z]*)[ -]?(\d{1,4}[A-Za-z]?)(?![\w-])")
# Lower-case unit powers and multipliers that look like identifiers.
_LOWER_NOT_MODELS = re.compile(r"^(?:[mck]?m|dm|ft|in|yd|mi|x)[1-9]$")
# Two-character tokens that are quarters and half-years, not models.
_SHORT_NOT_MODELS = re.compile(r"^(?:Q[1-4]|H[12])$")
_PART = re.compile(
    r"(?i:part\s*(?:no\.?|number|#)|p/n|sku|item\s*(?:no\.?|number)|art(?:icle)?\.?\s*(?:no\.?|nr\.?|number))"
    r"\s*:?\s*(?P<value>[A-Z0-9][A-Z0-9./-]{2,}[A-Z0-9])"
)
_FCC = re.compile(r"FCC\s*ID\s*:?\s*(?P<value>[A-Z0-9]{3,5}-?[A-Z0-9][A-Z0-9-]{0,13})")
_UL_FILE = re.compile(r"UL\s*(?i:file)?\s*(?i:no\.?|number|#)?\s*:?\s*(?P<value>E\d{5,6})\b")
_STANDARD = re.compile(
    r"\b(?P<body>ISO/IEC|ISO|IEC|EN|DIN EN|DIN|ASTM|UL)\s?(?P<number>\d{2,5}(?:-\d+)*[A-Z]?)"
    r"(?::(?P<edition>(?:19|20)\d{2}))?\b"
)
_UL_MARK = re.compile(r"\bUL[\s-](?P<value>Listed|Recognized|Recognised|Classified|Certified)\b", re.IGNORECASE)
_DIRECTIVE = re.compile(r"\b(?P<value>(?:19|20)\d{2}/\d{1,4}/E[UC])\b")
# EU directives by name, so "Low Voltage Directive" and "2014/35/EU" are the same scope.
_DIRECTIVE_NAMES = {
    "low voltage directive": "2014/35/EU",
    "lvd": "2014/35/EU",
    "emc directive": "2014/30/EU",
    "electromagnetic compatibility directive": "2014/30/EU",
    "machinery directive": "2006/42/EC",
    "radio equipment directive": "2014/53/EU",
    "red": "2014/53/EU",
    "rohs directive": "2011/65/EU",
    "rohs": "2011/65/EU",
    "pressure equipment directive": "2014/68/EU",
    "ped": "2014/68/EU",
    "atex directive": "2014/34/EU",
    "atex": "2014/34/EU",
}
_DIRECTIVE_NAME = re.compile(
    r"\b(?P<value>" + "|".join(re.escape(n) for n in sorted(_DIRECTIVE_NAMES, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
_CERTIFICATE_NO = re.compile(r"(?i:certificate|cert\.?)\s*(?i:no\.?|number|#|id)\s*:?\s*(?P<value>\w[\w./-]{3,}\w)")
_NOT_MODELS = re.compile(r"^(?:ISO|IEC|EN|DIN|ASTM|UL|FCC|CE|E\d+|\d+)$")
# Every model pattern above needs a digit: a text without one names no model identifier.
_DIGIT = re.compile(r"\d")


def certificates_in(text: str) -> list[Mention]:
    """FCC IDs, UL file numbers, UL marks, standards with their edition, EU directives and certificate numbers."""
    mentions: list[Mention] = []
    for pattern, slot in ((_FCC, "fcc_id"), (_UL_FILE, "ul_file"), (_CERTIFICATE_NO, "certificate_no")):
        for m in pattern.finditer(text):
            mentions.append(Mention(m.start(), m.end(), m.group(), slot, _norm(m.group("value"))))
    for m in _UL_MARK.finditer(text):
        value = m.group("value").lower().replace("recognised", "recognized")
        mentions.append(Mention(m.start(), m.end(), m.group(), "ul_mark", value))
    for m in _STANDARD.finditer(text):
        body = m.group("body").replace("DIN EN", "EN")
        slot = "standard:" + ("UL" if body == "UL" else "ISO" if body.startswith("ISO") else body)
        mentions.append(Mention(m.start(), m.end(), m.group(), slot, _norm(m.group("number")), m.group("edition")))
    for m in _DIRECTIVE.finditer(text):
        mentions.append(Mention(m.start(), m.end(), m.group(), "eu_directive", m.group("value").upper()))
    for m in _DIRECTIVE_NAME.finditer(text):
        name = m.group("value")
        # the short forms (LVD, RED, PED, ATEX, RoHS) count only in capitals: "red" is also a colour
        if len(name) <= 5 and not name.isupper() and name.lower() != "rohs":
            continue
        value = _DIRECTIVE_NAMES[name.lower()].upper()
        mentions.append(Mention(m.start(), m.end(), m.group(), "eu_directive", value))
    return sorted(mentions, key=lambda mention: mention.start)


def entities_in(text: str, exclude: list[Mention] | None = None) -> list[Mention]:
    """Model identifiers (slot ``model:<letter prefix>``) and part numbers (slot ``part``).

    Spans inside ``exclude`` (certificate mentions) are skipped, so ``ISO 9001`` or ``E123456`` is not a model.
    """
    taken = [(m.start, m.end) for m in exclude or []]
    mentions: list[Mention] = []
    for m in _PART.finditer(text):
        mentions.append(Mention(m.start(), m.end(), m.group(), "part", _norm(m.group("value"))))
        taken.append((m.start(), m.end()))
    for m in _NAMED_MODEL.finditer(text):
        if any(start <= m.start() < end for start, end in taken):
            continue
        line = _norm(m.group(1))
        mentions.append(Mention(m.start(), m.end(), m.group(), f"model:{line}", line + _norm(m.group(2))))
        taken.append((m.start(), m.end()))
    for m in _MODEL.finditer(text):
        if any(start <= m.start() < end for start, end in taken):
            continue
        token = m.group(1)
        if _NOT_MODELS.match(token) or _SHORT_NOT_MODELS.match(token) or len(_norm(token)) < 2:
            continue
        mentions.append(_model_mention(m.start(), m.end(), token))
    for m in _LOWER_MODEL.finditer(text):
        if any(start <= m.start() < end for start, end in taken) or _LOWER_NOT_MODELS.match(m.group(1)):
            continue
        mentions.append(_model_mention(m.start(), m.end(), m.group(1)))
    return sorted(mentions, key=lambda mention: mention.start)


def _model_mention(start: int, end: int, token: str) -> Mention:
    """A model identifier in the slot of its letter prefix (``s24`` and ``S23`` share ``model:S``)."""
    family = re.match(r"[A-Za-z-]*", token)
    prefix = _norm(family.group() if family else "")
    return Mention(start, end, token, f"model:{prefix}", _norm(token))


@functools.lru_cache(maxsize=1 << 14)
def _model_mentions(text: str) -> tuple[Mention, ...]:
    """The model identifiers in ``text``; kept for the texts read last, since an audit asks again for the same
    claim (one per edge) and the same passage (one page quoted for many claims)."""
    # Model mentions come from the three model patterns only: a text none of them matches names none.
    if _DIGIT.search(text) is None or not (
        _MODEL.search(text) or _LOWER_MODEL.search(text) or _NAMED_MODEL.search(text)
    ):
        return ()
    return tuple(m for m in entities_in(text, certificates_in(text)) if m.slot.startswith("model:"))


def model_confusion(claim: str, passage: str) -> tuple[tuple[str, ...], tuple[str, str] | None]:
    """The model identifiers ``claim`` names, and ``(claim's, passage's)`` for the first one whose family the
    passage fills with other identifiers only (a page about another model); ``None`` when there is none.

    >>> model_confusion("The iPhone 15 has USB-C", "The iPhone 14 has Lightning")
    (('iPhone 15',), ('iPhone 15', 'iPhone 14'))
    """
    claimed = _model_mentions(claim)
    if not claimed or not passage:
        return tuple(m.text for m in claimed), None
    found = _model_mentions(passage)
    for mention in claimed:
        same_family = [p for p in found if p.slot == mention.slot]
        if same_family and all(p.value != mention.value for p in same_family):
            return tuple(m.text for m in claimed), (mention.text, same_family[0].text)
    return tuple(m.text for m in claimed), None
