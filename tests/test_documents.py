"""Document self-descriptions (date, version, models, certificates) and suggested conflict reasons."""

from __future__ import annotations

import pytest

from citeaudit.sources.documents import (
    Certificate,
    ConflictSide,
    DocumentFacts,
    describe,
    model_identifiers,
    suggest_reason,
)

OLD_SHEET = """Axtorp AX220 portable compressor - data sheet Rev. 2
Published: 14 May 2024
Tank 24 L, maximum pressure 10 bar."""
NEW_SHEET = """Axtorp AX220 portable compressor - data sheet Rev. 3
Last updated: March 12, 2026
Tank 20 L, maximum pressure 10 bar."""
CERTIFICATE = """EC type-examination certificate
Certificate holder: Axtorp Maschinen GmbH; Hamburg
Scope: Portable piston compressors AX220 and AX300 for the EU market
Valid from: 2025-01-01
Valid until: 31.12.2027
CE marking per Machinery Directive. ISO 9001:2015. UL File No. E123456. FCC ID: 2ABCD-AX220"""


def test_old_and_new_datasheet_revisions() -> None:
    old, new = describe(OLD_SHEET), describe(NEW_SHEET)
    assert (old.date, old.versions, old.models) == ("2024-05-14", ("rev 2",), ("AX220",))
    assert (new.date, new.versions, new.models) == ("2026-03-12", ("rev 3",), ("AX220",))


def test_certificate_holder_scope_validity_and_markings() -> None:
    facts = describe(CERTIFICATE)
    assert facts.holder == "Axtorp Maschinen GmbH"  # stops at ';'
    assert facts.scope == "Portable piston compressors AX220 and AX300 for the EU market"
    assert (facts.valid_from, facts.valid_until) == ("2025-01-01", "2027-12-31")  # 31.12.2027 read day-first
    assert set(facts.certificates) == {
        Certificate("CE", None),
        Certificate("ISO", "9001:2015"),
        Certificate("UL", "E123456"),
        Certificate("FCC ID", "2ABCD-AX220"),
    }
    assert facts.markets == ("eu",)


def test_german_dates_and_editions() -> None:
    facts = describe("Datenblatt AX-320, Ausgabe 2024, Stand: 03.05.2024, gültig bis 31.12.2025")
    assert facts.versions == ("edition 2024",)
    assert facts.date == "2024-05-03"
    assert facts.valid_until == "2025-12-31"
    assert facts.models == ("AX320",)


def test_page_metadata_date_wins_over_the_text() -> None:
    assert describe(OLD_SHEET, metadata_date="2024-06-01").date == "2024-06-01"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The AX220 and the AX-220 differ from the AX 320.", ("AX220", "AX320")),
        ("Rated IP54, ISO 9001, EN 1012-1, 68 dB, 230 V, UL 1450.", ()),  # standards and units are not models
        ("Part KX55S replaces KX55.", ("KX55", "KX55S")),
    ],
)
def test_model_identifiers(text: str, expected: tuple[str, ...]) -> None:
    assert model_identifiers(text) == expected


def test_page_about_another_model_is_the_suggested_reason() -> None:
    sides = [
        ConflictSide("axtorp.com/ax220", "supported", describe(NEW_SHEET)),
        ConflictSide("shop.example/ax320", "conflicting", describe("Axtorp AX320: tank 50 L, AX320 wheels.")),
    ]
    reason, detail = suggest_reason("The AX220 has a 20 L tank", sides)
    assert reason == "other model"
    assert "AX320" in detail


def test_older_revision_is_a_newer_version_conflict() -> None:
    sides = [
        ConflictSide("new", "supported", describe(NEW_SHEET)),
        ConflictSide("old", "conflicting", describe(OLD_SHEET)),
    ]
    reason, detail = suggest_reason("The AX220 has a 20 L tank", sides)
    assert reason == "newer version"
    assert detail.startswith("new (supported) is the newest (2026-03-12")


def test_other_market_and_third_party_copy_and_unresolved() -> None:
    eu = DocumentFacts(markets=("eu",))
    us = DocumentFacts(markets=("us",))
    assert (
        suggest_reason("It runs on 230 V", [ConflictSide("a", "supported", eu), ConflictSide("b", "conflicting", us)])[
            0
        ]
        == "other market"
    )
    copy = ConflictSide("blog", "conflicting", copy_origin="forum", copy_origin_official=False)
    assert suggest_reason("It runs on 230 V", [ConflictSide("a", "supported"), copy])[0] == "copy of a third party"
    official_copy = ConflictSide("mirror", "conflicting", copy_origin="axtorp", copy_origin_official=True)
    assert suggest_reason("It runs on 230 V", [ConflictSide("a", "supported"), official_copy])[0] == "unresolved"
