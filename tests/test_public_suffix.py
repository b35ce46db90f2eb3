"""Registrable domains follow the Public Suffix List to the letter: the list's own conformance cases, offline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import answer, document, protocol
from citeaudit import OfficialDomain, OfficialMatcher, parse_audit_bytes, registrable_domain, score
from citeaudit.core.errors import InvalidValue
from citeaudit.core.identity import identity_url

_CASES = Path(__file__).parent / "data" / "psl" / "test_psl.txt"
_CHECK = re.compile(r"^checkPublicSuffix\((null|'[^']*'), (null|'[^']*')\);$")


def _value(token: str) -> str | None:
    return None if token == "null" else token[1:-1]


def _cases() -> list[tuple[str | None, str | None]]:
    found = []
    for line in _CASES.read_text(encoding="utf-8").splitlines():
        match = _CHECK.match(line)
        if match:
            found.append((_value(match.group(1)), _value(match.group(2))))
        else:
            # every line is a comment, blank or a check: a check the pattern missed would silently drop a case
            assert line.startswith("//") or not line.strip(), line
    return found


CASES = _cases()


def test_every_conformance_case_is_read() -> None:
    # 78 check lines in the list's file: the null input plus 77 host names (4 commented-out .local cases excluded)
    assert len(CASES) == 78
    assert sum(1 for host, _ in CASES if host is not None) == 77


@pytest.mark.parametrize(("host", "expected"), CASES, ids=[repr(host) for host, _ in CASES])
def test_public_suffix_list_conformance(host: str | None, expected: str | None) -> None:
    # The list's null input is "no host": the API takes a string, so it is the empty host here.
    assert registrable_domain(host or "") == expected


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        # default rule "*": the top label is the public suffix when the list does not know it
        ("b.example.example", "example.example"),
        ("shop.brand.newtld", "brand.newtld"),
        ("brand.newtld", "brand.newtld"),
        ("newtld", None),
        # a leading dot or an empty label is not a host name
        (".brand.com", None),
        ("shop..brand.com", None),
        ("..", None),
        # the DNS root dot is not part of the name
        ("shop.brand.com.", "brand.com"),
        # addresses have no registrable domain, though "1" would look like an unlisted TLD
        ("192.0.2.1", None),
        ("[2001:db8::1]", None),
        ("2001:db8::1", None),
        ("localhost", None),
    ],
)
def test_default_rule_and_names_that_are_not_hosts(host: str, expected: str | None) -> None:
    assert registrable_domain(host) == expected


def test_a_brand_on_a_tld_newer_than_the_snapshot_is_matched() -> None:
    matcher = OfficialMatcher([OfficialDomain(domain="brand.newtld")])
    assert matcher("https://shop.brand.newtld/ax220")
    assert matcher("https://brand.newtld/")
    assert not matcher("https://brand.newtld.evil.net/")
    assert not matcher("https://notbrand.newtld/")


def _audit(official: list[str]) -> bytes:
    body = document([answer("a1", citations=["https://www.brand.newtld/x"])], [], [], protocol(official=official))
    return json.dumps(body).encode()


def test_protocol_accepts_an_official_domain_on_an_unlisted_tld_and_rejects_a_suffix() -> None:
    result = score(parse_audit_bytes(_audit(["brand.newtld"]), "brand.json"))
    # one answer, citing www.brand.newtld whose registrable domain brand.newtld is official: 1/1
    assert (result.official_rate.numerator, result.official_rate.denominator) == (1, 1)
    with pytest.raises(InvalidValue, match="'newtld'"):
        parse_audit_bytes(_audit(["newtld"]), "suffix.json")


def test_unicode_and_punycode_official_domains_match_each_other() -> None:
    unicode_declared = OfficialMatcher([OfficialDomain(domain="bücher.de")])
    punycode_declared = OfficialMatcher([OfficialDomain(domain="xn--bcher-kva.de")])
    for matcher in (unicode_declared, punycode_declared):
        assert matcher("https://shop.xn--bcher-kva.de/a")
        assert matcher("https://shop.bücher.de/a")
        assert not matcher("https://bucher.de/a")


def test_leading_dot_url_has_no_registrable_domain_and_is_never_official() -> None:
    matcher = OfficialMatcher([OfficialDomain(domain="example.com")])
    assert not matcher("https://.example.com/x")
    assert identity_url("HTTPS://.Example.COM/x") == "https://.example.com/x"


_LABEL = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=12).filter(
    lambda label: not label.startswith("-") and not label.endswith("-")
)
_SUFFIXES = ["com", "co.uk", "github.io", "kobe.jp", "ck", "mm", "newtld", "公司.cn", "k12.ak.us", "us"]


@settings(max_examples=300)
@given(labels=st.lists(_LABEL, min_size=0, max_size=4), suffix=st.sampled_from(_SUFFIXES))
def test_registrable_domain_is_a_tail_of_the_host_and_its_own_registrable_domain(
    labels: list[str], suffix: str
) -> None:
    host = ".".join([*labels, suffix])
    domain = registrable_domain(host)
    if domain is None:
        return
    # a whole number of trailing labels of the host, one label more than its public suffix at least
    assert host == domain or host.endswith("." + domain)
    assert registrable_domain(domain) == domain
    assert OfficialMatcher([OfficialDomain(domain=domain)])(f"https://{host}/page")


def test_the_list_as_read_answers_as_the_library_reads_it_itself() -> None:
    # citeaudit reads the bundled list without letting the library encode every rule, and looks a punycode host up
    # in Unicode instead: for every rule of the file, in both forms, the rule itself and hosts one and two labels
    # below it must get the registrable domain the library gives when it encodes the rules itself.
    from publicsuffixlist import PSLFILE, PublicSuffixList, encode_idn

    own = PublicSuffixList(only_icann=False, accept_unknown=True)
    rules = []
    for line in Path(PSLFILE).read_text(encoding="utf-8").splitlines():
        rule = line.lower().split(" ")[0].rstrip().lstrip("!").replace("*", "wild")
        if rule and not rule.startswith("//"):
            rules += [rule, encode_idn(rule)]
    assert len(rules) > 10_000  # the whole list was walked
    for rule in rules:
        for host in (rule, f"brand.{rule}", f"shop.brand.{rule}", f"xn--zz.{rule}", f"xn--bcher-kva.{rule}"):
            assert registrable_domain(host) == own.privatesuffix(host), host
