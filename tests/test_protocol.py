"""Protocol files, fingerprints and comparability."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from citeaudit import (
    OfficialDomain,
    Protocol,
    Question,
    RequiredFact,
    Segmentation,
    Severity,
    differing_components,
    fingerprint,
    fingerprint_components,
    load_audit,
    load_protocol,
)

BASE = Protocol(
    id="p",
    version="1",
    official_domains=(OfficialDomain(domain="brand.com"),),
    questions=(Question("q1", "Tank size?", "en-GB", (RequiredFact("f1", "20 L", Severity.HIGH),)),),
)

CHANGES = {
    "segmentation": dataclasses.replace(BASE, segmentation=Segmentation("rules-v1", "1")),
    "required_facts": dataclasses.replace(
        BASE, questions=(Question("q1", "Tank size?", "en-GB", (RequiredFact("f1", "25 L", Severity.HIGH),)),)
    ),
    "weights": dataclasses.replace(BASE, weights=((Severity.HIGH, 2.0),)),
    "official_domains": dataclasses.replace(BASE, official_domains=(OfficialDomain(domain="brand.de"),)),
    "questions": dataclasses.replace(
        BASE, questions=(Question("q1", "Tank volume?", "en-GB", BASE.questions[0].required_facts),)
    ),
}


@pytest.mark.parametrize("component", sorted(CHANGES))
def test_each_component_changes_the_fingerprint_and_is_named(component: str) -> None:
    changed = CHANGES[component]
    assert fingerprint(changed) != fingerprint(BASE)
    assert set(differing_components(BASE, changed)) == {component}


def test_fingerprint_covers_the_convention() -> None:
    names = set(fingerprint_components(BASE))
    assert {
        "scoring",
        "labels",
        "partial_handling",
        "unknown_handling",
        "segmentation",
        "required_facts",
        "weights",
        "official_domains",
    } <= names


def test_renaming_or_reordering_does_not_change_what_is_measured() -> None:
    renamed = dataclasses.replace(BASE, id="other", version="9")
    assert fingerprint(renamed) == fingerprint(BASE)
    two = dataclasses.replace(
        BASE, official_domains=(OfficialDomain(domain="brand.com"), OfficialDomain(domain="brand.de"))
    )
    swapped = dataclasses.replace(two, official_domains=tuple(reversed(two.official_domains)))
    assert fingerprint(two) == fingerprint(swapped)


def test_yaml_protocol_has_the_fingerprint_of_the_embedded_one(exporter_path: Path) -> None:
    yaml_protocol = load_protocol(exporter_path.with_name("exporter.protocol.yaml"))
    assert fingerprint(yaml_protocol) == fingerprint(load_audit(exporter_path).protocol)


def test_yaml_protocol_with_path_scoped_entry(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "id: ax\nversion: 3\nofficial_domains:\n  - brand.com\n  - {host: shop.example.net, path_prefix: /brand/}\n"
        "segmentation: {method: rules-v1, version: '1', parameters: {min_chars: 8}}\n"
        "questions:\n  - id: q1\n    text: Tank?\n    required_facts:\n      - {id: f1, text: 20 L, severity: high}\n",
        encoding="utf-8",
    )
    protocol = load_protocol(path)
    assert protocol.version == "3"
    assert protocol.official_domains[1] == OfficialDomain(host="shop.example.net", path_prefix="/brand/")
    assert protocol.segmentation == Segmentation("rules-v1", "1", (("min_chars", "8"),))
