"""Scoring conventions and protocol fingerprints: runs are compared only when their fingerprints match.

A fingerprint is the SHA-256 of the canonical JSON of per-component hashes, so that two protocols can be
compared component by component and a refusal can name exactly what differs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from citeaudit.core.errors import ProtocolError
from citeaudit.core.identity import registrable_domain
from citeaudit.core.model import (
    Brand,
    Competitor,
    EngineName,
    Label,
    OfficialDomain,
    Protocol,
    Question,
    RequiredFact,
    Segmentation,
    Severity,
)

__all__ = [
    "CONVENTIONS",
    "Convention",
    "check_protocol",
    "convention_for",
    "differing_components",
    "disclosure",
    "fingerprint",
    "fingerprint_components",
    "protocol_from_mapping_trusted",
    "protocol_to_mapping",
]


@dataclass(frozen=True, slots=True)
class Convention:
    """A named scoring convention: how each label counts."""

    name: str
    """Scoring-version string, e.g. ``strict-v1``."""
    labels: tuple[Label, ...]
    """The label set judgements are drawn from."""
    partial: str
    """How ``partial`` counts: ``unsupported`` (denominator only, never covers a fact)."""
    unknown: str
    """How ``unknown`` counts: ``denominator`` (stays in, counted separately)."""
    pending: str
    """How an edge without a final label counts: ``unknown`` (and the result is provisional)."""


STRICT_V1 = Convention(
    name="strict-v1",
    labels=tuple(Label),
    partial="unsupported",
    unknown="denominator",
    pending="unknown",
)

CONVENTIONS: Mapping[str, Convention] = {STRICT_V1.name: STRICT_V1}
"""Every scoring convention this version implements, by name."""


def convention_for(name: str) -> Convention:
    """The convention called ``name``; a clear error lists the known ones."""
    try:
        return CONVENTIONS[name]
    except KeyError:
        known = ", ".join(sorted(CONVENTIONS))
        raise ProtocolError(f"unknown scoring convention {name!r}; known: {known}") from None


def check_protocol(protocol: Protocol) -> None:
    """Refuse a protocol that cannot be scored as written (unknown convention, unusable official or competitor
    entry)."""
    convention_for(protocol.scoring)
    entries = [*protocol.official_domains, *(d for c in protocol.competitors for d in c.domains)]
    for entry in entries:
        if entry.domain is None:
            continue
        actual = registrable_domain(entry.domain)
        if actual is None:
            raise ProtocolError(
                f"official domain {entry.domain!r} is a public suffix or has no known suffix; "
                "list the brand's registrable domain (e.g. brand.com) instead"
            )
        if actual != entry.domain.lower():
            raise ProtocolError(
                f"official domain {entry.domain!r} is not a registrable domain (that would be {actual!r}); "
                f"declare it as {{host: {entry.domain}}} to scope it to that host"
            )


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _digest(value: object) -> str:
    return "sha256:" + hashlib.sha256(_canonical(value).encode("utf-8")).hexdigest()


def _component_values(protocol: Protocol) -> dict[str, object]:
    convention = convention_for(protocol.scoring)
    return {
        "scoring": convention.name,
        "labels": [str(label) for label in convention.labels],
        "partial_handling": convention.partial,
        "unknown_handling": convention.unknown,
        "pending_handling": convention.pending,
        "segmentation": {
            "method": protocol.segmentation.method,
            "version": protocol.segmentation.version,
            "parameters": [list(pair) for pair in protocol.segmentation.parameters],
        },
        "questions": sorted(([q.id, q.text, q.locale] for q in protocol.questions), key=_canonical),
        "required_facts": sorted(
            (
                [q.id, f.id, f.text, str(f.severity) if f.severity else None]
                for q in protocol.questions
                for f in q.required_facts
            ),
            key=_canonical,
        ),
        "weights": None if protocol.weights is None else sorted([str(s), w] for s, w in protocol.weights),
        "official_domains": _domain_values(protocol.official_domains),
        **_declared_names(protocol),
    }


def _domain_values(domains: Sequence[OfficialDomain]) -> list[list[str | None]]:
    return sorted(
        ([d.domain.lower() if d.domain else None, d.host.lower() if d.host else None, d.path_prefix] for d in domains),
        key=_canonical,
    )


def _declared_names(protocol: Protocol) -> dict[str, object]:
    """The brand's names, the competitors and the review assistance, as components only when present: a protocol
    without them keeps the fingerprint it always had."""
    components: dict[str, object] = {}
    if protocol.brand is not None:
        components["brand"] = [protocol.brand.name, sorted(protocol.brand.aliases)]
    if protocol.competitors:
        components["competitors"] = sorted(
            ([c.name, _domain_values(c.domains), sorted(c.aliases)] for c in protocol.competitors), key=_canonical
        )
    if protocol.review_assistance is not None:
        components["review_assistance"] = protocol.review_assistance
    return components


def fingerprint_components(protocol: Protocol) -> dict[str, str]:
    """Hash of each component that changes a score, by component name."""
    return {name: _digest(value) for name, value in _component_values(protocol).items()}


def fingerprint(protocol: Protocol) -> str:
    """``sha256:…`` over every component that changes a score; equal fingerprints = comparable scopes."""
    return _digest(fingerprint_components(protocol))


def differing_components(a: Protocol, b: Protocol) -> dict[str, tuple[str, str]]:
    """Fingerprint components on which two protocols differ, with both component hashes."""
    left, right = fingerprint_components(a), fingerprint_components(b)
    # Optional components (brand, competitors, review assistance) exist only where present; a missing one
    # reads "absent".
    names = [*left, *(name for name in right if name not in left)]
    return {
        name: (left.get(name, "absent"), right.get(name, "absent"))
        for name in names
        if left.get(name) != right.get(name)
    }


def disclosure(protocol: Protocol) -> dict[str, object]:
    """Everything a reader needs to know about how the numbers were measured, printed beside them."""
    values = _component_values(protocol)
    facts = sum(len(q.required_facts) for q in protocol.questions)
    return {
        "protocol": f"{protocol.id}@{protocol.version}",
        "fingerprint": fingerprint(protocol),
        **{name: values[name] for name in ("scoring", "labels", "partial_handling", "unknown_handling")},
        "pending_handling": values["pending_handling"],
        "segmentation": {
            "method": protocol.segmentation.method,
            "version": protocol.segmentation.version,
            "parameters": {name: json.loads(value) for name, value in protocol.segmentation.parameters},
        },
        "required_facts": {
            "questions": len(protocol.questions),
            "facts": facts,
            "hash": fingerprint_components(protocol)["required_facts"],
        },
        "weights": None if protocol.weights is None else {str(s): w for s, w in protocol.weights},
        "official_domains": _shown(protocol.official_domains),
        **(
            {"brand": {"name": protocol.brand.name, "aliases": list(protocol.brand.aliases)}}
            if protocol.brand is not None
            else {}
        ),
        **(
            {
                "competitors": [
                    {"name": c.name, "domains": _shown(c.domains), "aliases": list(c.aliases)}
                    for c in protocol.competitors
                ]
            }
            if protocol.competitors
            else {}
        ),
        **({"review_assistance": protocol.review_assistance} if protocol.review_assistance is not None else {}),
    }


def _shown(domains: Sequence[OfficialDomain]) -> list[str]:
    return [d.domain if d.domain else f"{d.host}{d.path_prefix or ''}" for d in domains]


def _compact(mapping: Mapping[str, object]) -> dict[str, object]:
    """Drop unset (None) fields, so the written form stays readable."""
    return {k: v for k, v in mapping.items() if v is not None}


def _written_domains(domains: Sequence[OfficialDomain]) -> list[object]:
    return [d.domain if d.domain else _compact({"host": d.host, "path_prefix": d.path_prefix}) for d in domains]


def _read_domains(entries: Sequence[Any]) -> tuple[OfficialDomain, ...]:
    return tuple(
        OfficialDomain(domain=entry)
        if isinstance(entry, str)
        else OfficialDomain(host=entry["host"], path_prefix=entry.get("path_prefix"))
        for entry in entries
    )


def protocol_to_mapping(protocol: Protocol) -> dict[str, object]:
    """The written form of a protocol: what a protocol file says, and what the store keeps as its body.

    :func:`protocol_from_mapping_trusted` is the inverse for a form written here.
    """
    return _compact(
        {
            "id": protocol.id,
            "version": protocol.version,
            "scoring": protocol.scoring,
            "official_domains": _written_domains(protocol.official_domains),
            "segmentation": _compact(
                {
                    "method": protocol.segmentation.method,
                    "version": protocol.segmentation.version,
                    "parameters": {k: json.loads(v) for k, v in protocol.segmentation.parameters},
                }
            ),
            "weights": None if protocol.weights is None else {str(s): w for s, w in protocol.weights},
            # Only when declared, so the written form of a protocol without them reads exactly as before.
            "brand": None
            if protocol.brand is None
            else {"name": protocol.brand.name, "aliases": list(protocol.brand.aliases)},
            "competitors": [
                {"name": c.name, "domains": _written_domains(c.domains), "aliases": list(c.aliases)}
                for c in protocol.competitors
            ]
            or None,
            # display names only: they change no score, so no fingerprint component reads them
            "engines": [
                _compact({"name": e.engine, "platform": e.platform, "label": e.label}) for e in protocol.engine_names
            ]
            or None,
            "questions": [
                _compact(
                    {
                        "id": q.id,
                        "text": q.text,
                        "locale": q.locale,
                        "required_facts": [
                            _compact({"id": f.id, "text": f.text, "severity": f.severity}) for f in q.required_facts
                        ],
                    }
                )
                for q in protocol.questions
            ],
        }
    )


def _parameter(value: object) -> str:
    # The canonical JSON of one segmentation parameter, as the fingerprint hashes it.
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def protocol_from_mapping_trusted(mapping: Mapping[str, Any]) -> Protocol:
    """The protocol back from :func:`protocol_to_mapping`'s form, trusted: a body the store wrote from a
    checked :class:`Protocol`, decoded without the outside-input validation a protocol file goes through."""
    segmentation = mapping.get("segmentation") or {}
    weights = mapping.get("weights")
    brand = mapping.get("brand")
    return Protocol(
        id=mapping["id"],
        version=mapping["version"],
        scoring=mapping.get("scoring", "strict-v1"),
        official_domains=_read_domains(mapping.get("official_domains", ())),
        questions=tuple(
            Question(
                id=q["id"],
                text=q["text"],
                locale=q.get("locale"),
                required_facts=tuple(
                    RequiredFact(f["id"], f["text"], None if f.get("severity") is None else Severity(f["severity"]))
                    for f in q.get("required_facts", ())
                ),
            )
            for q in mapping.get("questions", ())
        ),
        segmentation=Segmentation(
            method=segmentation.get("method", Segmentation().method),
            version=segmentation.get("version"),
            parameters=tuple(sorted((k, _parameter(v)) for k, v in segmentation.get("parameters", {}).items())),
        ),
        weights=None if weights is None else tuple(sorted((Severity(k), float(w)) for k, w in weights.items())),
        brand=None if brand is None else Brand(name=brand["name"], aliases=tuple(brand.get("aliases", ()))),
        competitors=tuple(
            Competitor(name=c["name"], domains=_read_domains(c.get("domains", ())), aliases=tuple(c.get("aliases", ())))
            for c in mapping.get("competitors", ())
        ),
        engine_names=tuple(
            EngineName(e["name"], e.get("platform"), e["label"])
            for e in mapping.get("engines", ())
            if isinstance(e, Mapping) and e.get("label")
        ),
    )
