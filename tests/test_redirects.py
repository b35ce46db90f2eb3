"""Redirect wrappers unwrapped without a request, and the effect on source identity and official matching."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from urllib.parse import quote, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
        "https://www.bing.com/ck/a?u=a1aHR0cHM6Ly9icmFuZC5jb20v\u00e9",  # a1 + base64 + a non-ASCII character
        "https://www.bing.com/ck/a?u=a1%C3%A9%E2%80%A8",  # the same, percent-encoded
        "https://www.bing.com/ck/a?u=a1_w",  # base64 of bytes that are not UTF-8
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


# -- the shortcuts that decide most URLs without taking them apart ---------------------------------------------

_ODD = st.sampled_from(["", "", "", "[", "]", "\t", "\n", "\r", " ", "\x00", "é", "\u2100", "K", "ｇ", "@", ":"])
_URL_PARTS = st.tuples(
    st.sampled_from(["https://", "http://", "HTTPS://", "", "//"]),
    st.sampled_from(["", "user:pw@"]),
    st.sampled_from(
        [
            "www.google.com",
            "google.co.uk",
            "WWW.GOOGLE.DE",
            "www.bing.com",
            "BING.COM",
            "brand-com.cdn.ampproject.org",
            "x.CDN.AmpProject.org",
            "brand.com",
            "[::1]",
            "ｇｏｏｇｌｅ.com",
        ]
    ),
    st.sampled_from(["", ":8080", ":443"]),
    st.sampled_from(
        [
            "/url?q=https://brand.com/x",
            "/url?url=http%3A%2F%2Fbrand.com",
            "/ck/a?u=a1aHR0cHM6Ly9icmFuZC5jb20v",
            "/amp/s/brand.com/a",
            "/c/s/brand.com/b",
            "/v/brand.com",
            "/page?utm_source=x#frag",
            "/p?b=2&utm_medium=x&&a=1&fbclid=3",
            "",
        ]
    ),
    _ODD,
    st.integers(0, 60),
)
_URLS = st.one_of(
    _URL_PARTS.map(lambda p: (lambda url: url[: p[6]] + p[5] + url[p[6] :])("".join(p[:5]))),
    st.text(max_size=40),
)


@settings(max_examples=400)
@given(url=_URLS)
def test_a_url_ruled_out_as_a_wrapper_is_one_the_parser_would_not_unwrap(url: str) -> None:
    """The shortcut only ever says "not a wrapper" where taking the URL apart says so too."""
    from citeaudit.core import identity

    assert _outcome(unwrap, url) == _outcome(identity._unwrap_parsed, url)  # every URL taken apart


def _outcome(unwrapping: Callable[[str], str | None], url: str) -> object:
    """What ``unwrapping(url)`` gives, or the error it raises (a Bing wrapper whose target holds a non-ASCII
    character is refused by the decoder, either way)."""
    try:
        return unwrapping(url)
    except ValueError as exc:
        return (type(exc), str(exc))


def _normalized_in_full(url: str) -> str:
    """The normaliser as it was written before its parts were taken from the match at once (each group read on
    its own, the kept query parameters sorted from a generator): what the normaliser must still give."""
    from citeaudit.core import identity

    stripped = url.strip()
    match = identity._URL.match(stripped)
    if match is None or not match.group(2):
        return stripped
    scheme = match.group(1).lower()
    host, port = identity._host_and_port(match.group(2))
    host = host.lower().rstrip(".")
    if not host:
        return stripped
    netloc = host
    if port.isdigit() and identity._DEFAULT_PORTS.get(scheme) != int(port):
        netloc = f"{host}:{int(port)}"
    normalized = f"{scheme}://{netloc}{match.group(3) or '/'}"
    query = match.group(4)
    if query:
        kept = sorted(p for p in query.split("&") if p and not identity._is_tracking(p.partition("=")[0]))
        if kept:
            normalized += "?" + "&".join(kept)
    return normalized


@settings(max_examples=400)
@given(url=_URLS)
def test_the_key_of_a_url_is_the_same_however_it_is_worked_out(url: str) -> None:
    """The registry's uncached key, the cached one and the normaliser as it was written before agree (or refuse
    alike: a superscript port is a digit to ``isdigit`` and none to ``int``)."""
    from citeaudit.core import identity

    assert _outcome(identity.normalize_url, url) == _outcome(_normalized_in_full, url)
    assert _outcome(identity._identity, url) == _outcome(identity_url, url)
    assert _outcome(identity_url, url) == _outcome(lambda u: _normalized_in_full(effective_url(u)), url)
    assert _outcome(identity.url_location, url) == _outcome(_location_in_full, url)


def _location_in_full(url: str) -> tuple[str | None, str]:
    """``url_location`` as it was written before (through the cached unwrapping)."""
    from citeaudit.core import identity

    match = identity._URL.match(effective_url(url.strip())) if url else None
    if match is None:
        return None, "/"
    host = identity._host_and_port(match.group(2))[0].lower().rstrip(".").strip("[]")
    return host or None, match.group(3) or "/"


@settings(max_examples=400)
@given(url=_URLS)
def test_a_url_said_to_split_is_split_without_refusal(url: str) -> None:
    """``urlsplit`` refuses no URL the shortcut lets through unsplit, on the Python these tests run on."""
    from citeaudit.core import identity

    if identity._always_splits(url):
        urlsplit(url.strip())  # raises if the shortcut was wrong


@pytest.mark.parametrize(
    ("url", "refused"),
    [
        ("http://[::1", True),  # an unclosed IPv6 host: refused with its location, as before
        ("http://::1]/", True),
        ("http://[::1]/page", False),
        ("https://brand.com/ax220", False),
        ("https://bränd.com/ax220", False),
    ],
)
def test_source_identity_refuses_exactly_what_the_parser_refuses(url: str, refused: bool) -> None:
    from citeaudit.core.errors import InvalidValue
    from citeaudit.core.identity import source_identity

    if refused:
        with pytest.raises(InvalidValue, match=r"a\.jsonl: line 3\.url: not a usable URL"):
            source_identity(url, "a.jsonl", "line 3.url")
    else:
        assert source_identity(url, "a.jsonl", "line 3.url") == identity_url(url)


@settings(max_examples=300)
@given(payload=st.text(max_size=40))
def test_a_bing_wrapper_with_any_payload_is_unwrapped_or_left_alone(payload: str) -> None:
    """Whatever follows ``u=a1``, the URL is either unwrapped to a web address or left as it is: never an error
    (a non-ASCII character once raised from the base64 decoder)."""
    from citeaudit.core.identity import url_location

    url = "https://www.bing.com/ck/a?!&&p=1&u=a1" + quote(payload, safe="")
    found = unwrap(url)
    assert found is None or found.startswith(("http://", "https://"))
    assert url_location(url)[1]  # a location is always given


_URL_PARTS = st.sampled_from(
    [
        "https://",
        "http://",
        "HTTPS://",
        "ftp://",
        " ",
        "\t",
        "www.google.com/url?q=",
        "www.bing.com/ck/a?u=a1",
        "x-com.cdn.ampproject.org/c/s/",
        "Brand.COM.",
        "[::1]",
        "[::1",
        "user:pw@",
        ":443",
        ":8080",
        ":²",
        "/ax220",
        "/",
        "?utm_source=x&b=2&a=1",
        "#top",
        "%3A%2F%2F",
        "bränd.com",
        "aHR0cHM6Ly9icmFuZC5jb20vYQ",
    ]
)


@settings(max_examples=500)
@given(parts=st.lists(_URL_PARTS, min_size=1, max_size=7), wrap=st.sampled_from(["", "google", "bing"]))
def test_a_key_and_a_location_worked_out_together_are_those_worked_out_apart(parts: list[str], wrap: str) -> None:
    """An import keys each new URL and locates it in one go (:meth:`SourceRegistry.url_key_located`, its wrappers
    removed once): the same key as :func:`source_identity`, the same location as :func:`url_location`, the same
    refusal."""
    from citeaudit.core.errors import InvalidValue
    from citeaudit.core.identity import SourceRegistry, source_identity, url_location

    url = "".join(parts)
    if wrap == "google":
        url = "https://www.google.com/url?q=" + quote(url, safe="")
    elif wrap == "bing":
        url = bing(url)
    refused: str | None = None
    try:
        expected = source_identity(url, "a.jsonl", "line 3.url", cached=False)
    except InvalidValue as exc:
        refused = str(exc)
    if refused is not None:
        with pytest.raises(InvalidValue) as caught:
            SourceRegistry().url_key_located("a.jsonl", "line 3", url)
        assert str(caught.value) == refused
        return
    registry = SourceRegistry()
    assert registry.url_key_located("a.jsonl", "line 3", url) == (expected, url_location(url))
    assert registry.url_keys == {url: expected}
    assert SourceRegistry().url_key("a.jsonl", "line 3", url) == expected
