"""Redirect wrappers unwrapped without a request, and the effect on source identity and official matching."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

import pytest

from builders import answer, claim, document, edge
from citeaudit import parse_audit_bytes, score
from citeaudit.core.identity import effective_url, identity_url, unwrap


def bing(url: str) -> str:
    encoded = base64.urlsafe_b64encode(url.encode()).decode().rstrip("=")
    return f"https://www.bing.com/ck/a?!&&p=abc123&u=a1{encoded}&ntb=1"


@pytest.mark.parametrize(
    ("wrapped", "target"),
    [
        ("https://www.google.com/url?q=https://brand.com/ax220&sa=D&ust=1", "https://brand.com/ax220"),
        ("https://www.google.co.uk/url?url=https%3A%2F%2Fbrand.co.uk%2Fx%3Fa%3D1", "https://brand.co.uk/x?a=1"),
        (bing("https://brand.com/ax220?ref=b"), "https://brand.com/ax220?ref=b"),
        ("https://brand-com.cdn.ampproject.org/c/s/brand.com/news/ax220", "https://brand.com/news/ax220"),
        ("https://brand-com.cdn.ampproject.org/c/brand.com/news", "http://brand.com/news"),
        ("https://www.google.com/amp/s/brand.com/amp/ax220", "https://brand.com/amp/ax220"),
    ],
)
def test_known_wrappers_unwrap(wrapped: str, target: str) -> None:
    assert unwrap(wrapped) == target


@pytest.mark.parametrize(
    "url",
    [
        "https://brand.com/url?q=https://evil.net/",  # /url on another host is not Google's wrapper
        "https://www.google.com/search?q=brand",
        "https://www.bing.com/ck/a?u=zzz",  # not the a1 + base64 form
        "https://notgoogle.com/url?q=https://brand.com/",
        "https://vertexaisearch.cloud.google.com/grounding-api-redirect/AbC",  # opaque: needs the resolver
    ],
)
def test_other_urls_are_left_alone(url: str) -> None:
    assert unwrap(url) is None
    assert effective_url(url) == url


def test_nested_wrappers_and_identity() -> None:
    nested = "https://www.google.com/url?q=" + quote(bing("https://www.brand.com/ax220?utm_source=openai"), safe="")
    # Google wraps Bing wraps the page: both removed, then tracking parameters dropped
    assert identity_url(nested) == "https://www.brand.com/ax220"


def test_wrapped_official_link_counts_and_shares_its_source() -> None:
    doc = document(
        [answer("a1", citations=["https://www.google.com/url?q=https://brand.com/ax220"])],
        [claim("c1", "a1")],
        [edge("c1", "https://brand.com/ax220", "supported"), edge("c1", bing("https://brand.com/ax220"))],
    )
    audit = parse_audit_bytes(json.dumps(doc).encode(), "t.json")
    result = score(audit)
    # both edge rows lead to brand.com/ax220: one edge with two locations; the wrapped citation is official
    assert (result.overall.edges.unique, result.overall.edges.locations) == (1, 2)
    assert (result.official_rate.numerator, result.official_rate.denominator) == (1, 1)
    # the raw URL stays as the engine gave it
    assert audit.answers[0].citations[0].url == "https://www.google.com/url?q=https://brand.com/ax220"
