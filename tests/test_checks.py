"""Deterministic consistency checks: each expected value derived by hand in the comment beside it."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import Result

from citeaudit.checks import FindingKind, run_checks
from citeaudit.checks._numbers import parse_number
from citeaudit.core.errors import InvalidValue

Cli = Callable[..., Result]


def kinds(claim: str, passage: str, **locales: str) -> list[tuple[str, bool]]:
    return [(f.kind.value, f.conflict) for f in run_checks(claim, passage, **locales).findings]


# --- numbers by locale ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "locale", "value"),
    [
        ("1,200", "en", 1200.0),  # comma groups thousands in English
        ("1.200", "de", 1200.0),  # dot groups thousands in German
        ("1 200", "fr", 1200.0),  # spaced group, any locale
        ("1\u202f200", "fr", 1200.0),  # French narrow no-break space
        ("1'200", "de-CH", 1200.0),  # Swiss apostrophe
        ("1.200", "en", 1.2),  # dot is the English decimal mark
        ("1,2", "de", 1.2),  # comma is the German decimal mark
        ("1,200.5", "en", 1200.5),  # both marks: the last is decimal
        ("1.200,5", "de", 1200.5),
        ("2,5", "en", 2.5),  # "2,5" cannot be a thousands group (one digit after), so decimal
        ("1,200,000", "de", 1_200_000.0),  # a repeated mark is a group separator whatever the locale
        ("0,500", "en", 0.5),  # a group never follows a lone zero
    ],
)
def test_numbers_are_read_by_locale(token: str, locale: str, value: float) -> None:
    assert parse_number(token, locale).value == pytest.approx(value)


def test_precision_follows_the_written_digits() -> None:
    # "5.3" is rounded to tenths: half a step is 0.05; "20" to units: 0.5
    assert parse_number("5.3").half_step == pytest.approx(0.05)
    assert parse_number("20").half_step == pytest.approx(0.5)


# --- quantities -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "passage"),
    [
        ("The AX220 has a 20 L tank", "AX220 tank: 20 litres"),
        ("The AX220 has a 20 L tank", "AX220 tank: 20 000 mL"),  # 20 L × 1000 mL/L = 20 000 mL
        ("The AX220 has a 20 L tank", "AX220 tank: 20,000 ml"),
        ("Working pressure 12 MPa", "Working pressure: 120 bar"),  # 12 MPa = 12e6 Pa = 120 × 1e5 Pa
        ("It weighs 35 kg", "Weight: 35 000 g"),  # 35 kg × 1000 g/kg
        ("It weighs 35 kg", "Gewicht: 35.000 g"),  # German grouping, read with the passage locale below
        ("Output 1,200 W", "Output 1.2 kW"),  # 1200 W = 1.2 kW
        ("The tank holds 20 L", "The tank holds 5.3 gal"),  # 20 L / 3.785 L/gal = 5.28 gal, written to 0.05
        ("Runs at 90 °C", "Runs at 194 °F"),  # 90 × 9/5 + 32 = 194
        ("Max pressure up to 120 bar", "max. 12 MPa"),
        ("A 20 L tank", "tank volume 15–25 L"),  # 20 lies in [15, 25]
        ("Tank of 15 to 25 L", "tank between 15 and 25 litres"),  # same range, other wording
        ("Warranty of 2 years", "2-year warranty: 24 months"),  # 2 years = 24 months (pint: 1 year = 12 months)
    ],
)
def test_equivalent_quantities_are_no_alarm(claim: str, passage: str) -> None:
    passage_locale = "de" if "Gewicht" in passage else "en"
    report = run_checks(claim, passage, passage_locale=passage_locale)
    assert report.findings == ()
    assert any(m.kind == "quantity" for m in report.matches)


@pytest.mark.parametrize(
    ("claim", "passage", "fold"),
    [
        ("The AX220 has a 20 L tank", "AX220 tank capacity: 20 mL", "thousandfold"),  # 20 L / 20 mL = 1000
        ("The AX220 has a 20 L tank", "AX220 tank capacity: 2 L", "tenfold"),  # 20 / 2 = 10
        ("It weighs 35 kg", "Weight 35 g", "thousandfold"),  # 35 kg / 35 g = 1000
        ("Pressure 12 MPa", "Pressure 12 bar", "tenfold"),  # 12e6 Pa / 12e5 Pa = 10
        ("Output 1,200 W", "Output 1,200 kW", "thousandfold"),
    ],
)
def test_power_of_ten_errors_are_conflicts_and_named(claim: str, passage: str, fold: str) -> None:
    (finding,) = run_checks(claim, passage).findings
    assert finding.kind is FindingKind.QUANTITY_MISMATCH
    assert finding.conflict
    assert fold in finding.detail


def test_mismatch_spans_point_at_both_values() -> None:
    claim, passage = "The AX220 has a 20 L tank", "AX220 tank capacity: 20 mL"
    (finding,) = run_checks(claim, passage).findings
    # "The AX220 has a " is 16 characters, so "20 L" spans 16..20; "AX220 tank capacity: " is 21, "20 mL" 21..26
    assert (finding.claim_span.start, finding.claim_span.end, finding.claim_span.text) == (16, 20, "20 L")
    assert finding.passage_span is not None
    assert (finding.passage_span.start, finding.passage_span.end, finding.passage_span.text) == (21, 26, "20 mL")


def test_same_number_in_other_locales_is_no_alarm() -> None:
    # 1,200 W in English, 1.200 W in German and 1 200 W in French are all twelve hundred watts
    assert kinds("Output 1,200 W", "Leistung 1.200 W", claim_locale="en", passage_locale="de") == []
    assert kinds("Output 1,200 W", "Puissance 1 200 W", claim_locale="en", passage_locale="fr") == []


def test_locale_decides_a_thousandfold_difference() -> None:
    # read both as English: "1.200 kg" is 1.2 kg, "1,200 kg" is 1200 kg: a thousandfold difference
    assert kinds("It weighs 1,200 kg", "Weight: 1.200 kg") == [("quantity_mismatch", True)]


def test_range_outside_and_bounds() -> None:
    assert kinds("A 30 L tank", "tank volume 15–25 L") == [("quantity_mismatch", True)]  # 30 outside [15, 25]
    assert kinds("pressure up to 120 bar", "pressure up to 100 bar") == [("quantity_mismatch", True)]
    assert kinds("lasts at least 5 years", "lasts at least 5 years") == []


def test_quantities_of_another_dimension_are_not_compared() -> None:
    # litres and kilograms are not comparable: nothing to say
    assert kinds("A 20 L tank", "It weighs 20 kg") == []


def test_unrelated_quantities_are_a_doubt_not_a_conflict() -> None:
    # Two masses in the passage, neither about weight of the unit: the check cannot tell what they measure.
    findings = run_checks("The unit weighs 35 kg", "Maximum payload 150 kg, pallet load 900 kg").findings
    assert [(f.kind.value, f.conflict) for f in findings] == [("quantity_mismatch", False)]


def test_decibels_and_percentages_are_only_compared_with_their_own_kind() -> None:
    # 60 dB would be a ratio of 10^6 and 20 % a ratio of 0.2 once converted; they must never meet
    assert kinds("Noise 60 dB", "Efficiency 20%") == []
    assert kinds("Efficiency 20%", "Efficiency 25 %") == [("quantity_mismatch", True)]


# --- model identifiers and part numbers --------------------------------------------------------------------------


def test_page_about_another_model_is_an_entity_mismatch() -> None:
    findings = run_checks("The AX220 has a 20 L tank", "The AX320 has a 20 L tank").findings
    assert [(f.kind.value, f.conflict) for f in findings] == [("entity_mismatch", True)]
    assert findings[0].claim_span.text == "AX220"
    assert findings[0].passage_span is not None
    assert findings[0].passage_span.text == "AX320"


def test_model_identifiers_ignore_hyphens_and_comparison_pages() -> None:
    assert kinds("The AX220 has a 20 L tank", "The AX-220 has a 20 L tank") == []  # same id, hyphenated
    assert kinds("The AX220 has a 20 L tank", "AX220 and AX320 both have 20 L tanks") == []
    assert kinds("The AX220 has a 20 L tank", "The BZ900 has a 20 L tank") == []  # other family: no claim on AX


def test_part_numbers() -> None:
    assert kinds("Filter part no. 220-114-B fits", "Replacement filter P/N 220-114-C") == [("entity_mismatch", True)]
    assert kinds("Filter part no. 220-114-B fits", "Replacement filter P/N 220114B") == []


# --- certificates ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "passage", "expected"),
    [
        ("Holds FCC ID 2ABCD-AX220", "FCC ID: 2ABCD-AX320", [("certificate_mismatch", True)]),
        ("Holds FCC ID 2ABCD-AX220", "FCC ID: 2ABCDAX220", []),
        ("Listed under UL file E123456", "UL File No. E654321", [("certificate_mismatch", True)]),
        ("It is ISO 9001 certified", "The plant is ISO 14001 certified", [("certificate_scope", True)]),
        ("It is ISO 9001 certified", "Certified to ISO 9001:2015", []),  # no edition in the claim
        ("Certified to ISO 9001:2008", "Certified to ISO 9001:2015", [("certificate_mismatch", True)]),
        ("The AX220 is UL Listed", "The AX220 motor is UL Recognized", [("certificate_scope", True)]),
        ("CE marked under 2006/42/EC", "CE: 2014/35/EU and 2014/30/EU", [("certificate_scope", True)]),
        ("CE marked under 2014/35/EU", "CE: 2014/35/EU and 2014/30/EU", []),
        ("CE marked under the Low Voltage Directive", "Declaration of conformity: 2014/35/EU", []),
        ("CE marked under the Machinery Directive", "CE: LVD and EMC directive", [("certificate_scope", True)]),
        ("A red RED-compliant radio", "Complies with 2014/53/EU", []),
        ("Complies with IEC 60335-2-79", "Tested to IEC 60335-2-79", []),
        ("Certificate no. TÜV-12345", "certificate number TÜV-12346", [("certificate_mismatch", True)]),
    ],
)
def test_certificates(claim: str, passage: str, expected: list[tuple[str, bool]]) -> None:
    assert kinds(claim, passage) == expected


def test_standard_numbers_are_not_model_identifiers() -> None:
    # "ISO 9001" must not be read as a model of family "ISO"
    report = run_checks("It is ISO 9001 certified", "It is ISO 9001 certified")
    assert [m.kind for m in report.matches] == ["certificate"]


# --- dates and validity -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "passage", "expected"),
    [
        ("Certificate valid until 31 March 2027", "This certificate expires on 2025-03-31", [("date_mismatch", True)]),
        ("Certificate valid until 31 March 2027", "Expiry date: 2027-03-31", []),
        ("Certificate valid until March 2027", "expires 31 March 2027", []),  # compared at month precision
        ("Issued on 1 April 2022", "valid from 2 April 2022 to 2025", [("date_mismatch", True)]),
        ("As of 2026 the AX220 holds the certificate", "valid from 2020 to 2024", [("validity_expired", True)]),
        ("As of 2026 the AX220 holds the certificate", "valid from 2020 to 2028", []),
        ("She was born on July 11, 1909", "Born 11 July 1909 in Los Angeles", []),
        # issued 1 March 2024 + 3 years = 1 March 2027; + 2 years = 1 March 2026, not 2027
        ("Certificate valid until March 2027", "Issued on 1 March 2024, valid for 3 years", []),
        ("Certificate valid until March 2027", "Issued on 1 March 2024, valid for 2 years", [("date_mismatch", True)]),
        # 2024-03-01 + 18 months = 2025-09-01
        ("Valid until 2025-09-01", "Issued on 2024-03-01 and valid for 18 months", []),
        ("Valid until 2025-08-01", "Issued on 2024-03-01 and valid for 18 months", [("date_mismatch", True)]),
        ("Valid until 2025", "Issued 2024, valid for 18 months", []),  # a year + 18 months has no year: no finding
        ("Valid until 03/04/2026", "Valid until 4 March 2026", []),  # en: month first, 4 March
    ],
)
def test_dates(claim: str, passage: str, expected: list[tuple[str, bool]]) -> None:
    assert kinds(claim, passage) == expected


def test_day_first_locales_read_slashed_dates_day_first() -> None:
    # en-GB reads 03/04/2026 as 3 April 2026, so against "4 March 2026" the expiry differs
    assert kinds("Valid until 03/04/2026", "Valid until 4 March 2026", claim_locale="en-GB") == [
        ("date_mismatch", True)
    ]


def test_dates_without_roles_are_never_alarms() -> None:
    # an article's many dates: nothing says which one the claim's date is about
    assert kinds("The law changed on 1 May 2020", "Published 3 June 2021, updated 5 July 2022") == []


# --- no false alarms on plain text --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "passage"),
    [
        (
            "Irene Hervey appeared in over fifty films",
            "She appeared in such films as The Count of Monte Cristo in 1934",
        ),
        ("The company was founded in 1998", "In 2004 the company moved to Leeds"),
        ("COVID-19 vaccines were approved in 2020", "The WHO listed the vaccine in December 2020"),
        ("The AX220 is quiet", "Reviewers found the AX220 quiet at 52 dB"),
    ],
)
def test_no_false_alarm_on_prose(claim: str, passage: str) -> None:
    assert [f for f in run_checks(claim, passage).findings if f.conflict] == []


# --- properties -------------------------------------------------------------------------------------------------

_LITRE_FORMS = {
    "L": 1.0,
    "mL": 1000.0,
    "cl": 100.0,
}


@settings(max_examples=200, deadline=None)
@given(
    litres=st.integers(min_value=1, max_value=5000),
    unit=st.sampled_from(sorted(_LITRE_FORMS)),
    locale=st.sampled_from(["en", "de", "fr"]),
)
def test_property_a_quantity_restated_in_another_unit_and_locale_never_alarms(
    litres: int, unit: str, locale: str
) -> None:
    value = litres * int(_LITRE_FORMS[unit])
    grouped = f"{value:,}"  # English grouping, e.g. 20,000
    written = {"en": grouped, "de": grouped.replace(",", "."), "fr": grouped.replace(",", "\u202f")}[locale]
    report = run_checks(f"The tank holds {litres} L", f"The tank holds {written} {unit}", passage_locale=locale)
    assert report.findings == ()


@settings(max_examples=200, deadline=None)
@given(litres=st.integers(min_value=1, max_value=5000), power=st.sampled_from([1, 2, 3]))
def test_property_a_power_of_ten_change_is_always_a_conflict(litres: int, power: int) -> None:
    changed = litres * 10**power
    (finding,) = run_checks(f"The tank holds {litres} L", f"The tank holds {changed} L").findings
    assert finding.conflict


# --- CLI --------------------------------------------------------------------------------------------------------


def test_cli_json_has_the_documented_shape(cli: Cli) -> None:
    result = cli(
        "checks", "--claim", "The AX220 has a 20 L tank", "--passage", "AX220 tank capacity: 20 mL", "--format", "json"
    )
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    (finding,) = body["findings"]
    assert set(finding) == {"kind", "claim_span", "passage_span", "detail", "conflict"}
    assert finding["kind"] == "quantity_mismatch"
    assert finding["conflict"] is True
    assert finding["claim_span"] == {"start": 16, "end": 20, "text": "20 L"}
    assert body["conflicts"] == 1
    assert body["version"] == "checks-v2"


def test_cli_table_and_bad_locale(cli: Cli) -> None:
    result = cli("checks", "--claim", "It weighs 35 kg", "--passage", "Weight 35 000 g")
    assert result.exit_code == 0
    assert "0 conflict(s)" in result.stdout
    bad = cli("checks", "--claim", "x", "--passage", "y", "--locale", "xx-qq")
    assert bad.exit_code == 2
    assert "unknown locale 'xx-qq'" in bad.stderr


def test_unknown_locale_raises_input_error() -> None:
    with pytest.raises(InvalidValue, match="passage: locale"):
        run_checks("a", "b", passage_locale="zz-not-a-locale")


# --- real data ----------------------------------------------------------------------------------------------------


def test_no_conflict_on_wice_claims_against_the_sentences_annotators_say_support_them() -> None:
    # WiCE "supported" claims with each annotator's supporting sentences: the sentences state the claim, so any
    # conflict the checks report there is a false alarm.
    from conftest import SHARED

    folder = SHARED / "data" / "wice" / "claim"
    if not folder.is_dir():
        pytest.skip(f"WiCE data not found at {folder}")
    pairs = 0
    alarms = []
    for name in ("dev.jsonl", "test.jsonl"):
        for line in (folder / name).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["label"] != "supported":
                continue
            for sentence_ids in row["supporting_sentences"]:
                pairs += 1
                passage = " ".join(row["evidence"][i] for i in sentence_ids)
                alarms += [f.detail for f in run_checks(row["claim"], passage).findings if f.conflict]
    assert pairs > 200
    assert alarms == []


def test_cli_csv_lists_one_row_per_finding(cli: Cli) -> None:
    result = cli(
        "checks", "--claim", "The AX220 has a 20 L tank", "--passage", "The AX320 tank: 20 mL", "--format", "csv"
    )
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    # header + entity_mismatch (AX220 vs AX320) + quantity_mismatch (20 L vs 20 mL), in claim order
    assert lines[0] == "kind,conflict,claim_span,passage_span,detail"
    assert [line.split(",")[:4] for line in lines[1:]] == [
        ["entity_mismatch", "true", "AX220", "AX320"],
        ["quantity_mismatch", "true", "20 L", "20 mL"],
    ]


_PIECES = st.sampled_from(
    [
        "20", "1,200", "1.200", "1 200", "0,5", " ", "L", "mL", "kg", "bar", "MPa", "%", "up to ", "between ", " and ",
        "–", "AX220", "AX-320", "FCC ID: 2ABCD-1", "ISO 9001:2015", "UL Listed", "valid until ", "31 March 2027",
        "2024-02-30", "03/04/2026", "1990s", "(", ")", ".", "part no. 12-34", "°C", "°F", "as of ", "2026",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    claim=st.lists(_PIECES, max_size=12).map("".join),
    passage=st.lists(_PIECES, max_size=12).map("".join),
    locale=st.sampled_from(["en", "de", "fr", "en-GB"]),
)
def test_property_checks_never_fail_and_spans_point_into_the_texts(claim: str, passage: str, locale: str) -> None:
    report = run_checks(claim, passage, claim_locale=locale)
    for finding in report.findings:
        assert claim[finding.claim_span.start : finding.claim_span.end] == finding.claim_span.text
        if finding.passage_span is not None:
            assert passage[finding.passage_span.start : finding.passage_span.end] == finding.passage_span.text
    for match in report.matches:
        assert passage[match.passage_span.start : match.passage_span.end] == match.passage_span.text
    assert report.conflicts <= len(report.findings)


@settings(max_examples=300, deadline=None)
@given(text=st.lists(_PIECES, max_size=12).map("".join), locale=st.sampled_from(["en", "de", "fr", "en-GB"]))
def test_property_a_text_never_contradicts_itself(text: str, locale: str) -> None:
    assert run_checks(text, text, claim_locale=locale).findings == ()
