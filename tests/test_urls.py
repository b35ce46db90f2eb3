"""URL normalization, registrable domains and official matching (DESIGN §3), offline."""

from __future__ import annotations

import socket

import pytest

from citeaudit import OfficialDomain, OfficialMatcher, normalize_url, registrable_domain
from citeaudit.core.identity import title_key


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("HTTPS://Brand.COM:443/AX220?b=2&a=1#specs", "https://brand.com/AX220?a=1&b=2"),
        ("http://brand.com:80", "http://brand.com/"),
        ("https://brand.com:8443/x", "https://brand.com:8443/x"),
        (
            "https://brand.com/x?utm_source=openai&utm_medium=x&gclid=1&fbclid=2&msclkid=3&id=7",
            "https://brand.com/x?id=7",
        ),
        ("https://brand.com/x?utm_source=chatgpt.com", "https://brand.com/x"),
        ("https://user:pw@brand.com./x", "https://brand.com/x"),
        ("https://[2001:db8::1]:443/x", "https://[2001:db8::1]/x"),
        ("  https://brand.com/x?q=  ", "https://brand.com/x?q="),
        ("not a url", "not a url"),
    ],
)
def test_normalize_url(raw: str, normalized: str) -> None:
    assert normalize_url(raw) == normalized
    assert normalize_url(normalized) == normalized  # idempotent


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("shop.brand.co.uk", "brand.co.uk"),
        ("brand.com", "brand.com"),
        ("brand.com.evil.net", "evil.net"),
        ("x.github.io", "x.github.io"),  # private suffix on: github.io is a public suffix
        ("github.io", None),
        ("co.uk", None),
        ("192.0.2.1", None),
    ],
)
def test_registrable_domain(host: str, domain: str | None) -> None:
    assert registrable_domain(host) == domain


def test_suffix_list_never_touches_the_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    # bypass the cache so the extractor really runs
    assert registrable_domain.__wrapped__("www.some-new-host.com.au") == "some-new-host.com.au"


def test_official_matching_is_never_substring_matching() -> None:
    matcher = OfficialMatcher(
        [
            OfficialDomain(domain="brand.com"),
            OfficialDomain(domain="brand.co.uk"),
            OfficialDomain(host="shop.example.net", path_prefix="/brand/"),
            OfficialDomain(host="docs.partner.org"),
        ]
    )
    assert matcher("https://brand.com/ax220")
    assert matcher("https://www.shop.brand.com/ax220")
    assert matcher("https://brand.co.uk/")
    assert matcher("https://shop.example.net/brand/ax220")
    assert matcher("https://docs.partner.org/anything")
    assert not matcher("https://brand.com.evil.net/ax220")
    assert not matcher("https://notbrand.com/")
    assert not matcher("https://brand.co/")
    assert not matcher("https://shop.example.net/brandnew/ax220")
    assert not matcher("https://shop.example.net/other/brand/")
    assert not matcher("https://evil.example.net/brand/")
    assert not matcher(None)
    assert not matcher("title:a1:datasheet")


def test_path_prefix_without_trailing_slash_is_segment_aligned() -> None:
    matcher = OfficialMatcher([OfficialDomain(host="h.org", path_prefix="/brand")])
    assert matcher("https://h.org/brand")
    assert matcher("https://h.org/brand/x")
    assert not matcher("https://h.org/brandnew")


def test_title_keys_are_scoped_to_their_answer() -> None:
    assert title_key("a1", "  AX220   Datasheet ") == title_key("a1", "ax220 datasheet")
    assert title_key("a1", "AX220 datasheet") != title_key("a2", "AX220 datasheet")
