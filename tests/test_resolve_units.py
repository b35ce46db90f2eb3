"""Pure parts of the resolver: the address policy, passages, Retry-After, charset/type reading, settings."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import Result

from citeaudit.core.errors import InvalidValue
from citeaudit.core.passages import split_paragraphs
from citeaudit.sources import ResolveSettings
from citeaudit.sources.extract import split_type
from citeaudit.sources.fetch import _Body, _Failure
from citeaudit.sources.security import address_refusal


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),  # cloud metadata endpoint
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("240.0.0.1", "private"),  # reserved block; Python files it under is_private too
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped: judged as the IPv4 address
        ("100.64.0.1", "not global"),  # carrier-grade NAT
        ("93.184.215.14", None),
        ("2606:4700::1111", None),
    ],
)
def test_address_policy(address: str, kind: str | None) -> None:
    assert address_refusal(address) == kind


def test_split_type() -> None:
    assert split_type('Text/HTML; Charset="ISO-8859-1"') == ("text/html", "ISO-8859-1")
    assert split_type(None) == (None, None)


def test_body_cap_holds_for_a_decompression_bomb() -> None:
    bomb = gzip.compress(b"\0" * 10_000_000)  # ~10 kB on the wire
    body = _Body("gzip", 1_000_000)
    with pytest.raises(_Failure) as failure:
        body.feed(bomb)
    assert failure.value.reason == "too_large"
    # One byte past the cap at most was ever inflated.
    assert sum(len(part) for part in body._parts) <= 1_000_000


def test_body_rejects_unknown_encoding() -> None:
    with pytest.raises(_Failure) as failure:
        _Body("br", 10)
    assert failure.value.reason == "unsupported_encoding"


@pytest.mark.parametrize(("name", "value"), [("concurrency", 0), ("per_host", 0), ("timeout", 0.0), ("retries", -1)])
def test_settings_are_checked_first(name: str, value: float) -> None:
    with pytest.raises(InvalidValue, match=name):
        ResolveSettings(**{name: value})


def test_passages_of_an_empty_text() -> None:
    assert split_paragraphs("") == []
    assert split_paragraphs(" \n\n \t") == []


def test_passages_by_hand() -> None:
    text = "Title\n\nThe AX220 has a 20 L tank.\n\n  Second paragraph here.  "
    # "Title" is [0, 5); "The AX220 has a 20 L tank." is 26 characters from 7: [7, 33);
    # "Second paragraph here." is 22 characters from 37 (after "\n\n  "): [37, 59).
    assert [(p.start, p.end) for p in split_paragraphs(text, min_chars=0)] == [(0, 5), (7, 33), (37, 59)]
    # With the default MIN_CHARS = 80 each short passage joins the next while under 80: all three become one.
    assert [(p.start, p.end) for p in split_paragraphs(text)] == [(0, 59)]
    # Long paragraphs are cut at sentence ends: "One. Two. Three." with max 10 -> "One. Two." [0, 9), "Three." [10, 16).
    assert [p.text for p in split_paragraphs("One. Two. Three.", max_chars=10, min_chars=0)] == ["One. Two.", "Three."]


_TEXT = st.text(alphabet=st.sampled_from(list("ab .\n!é€\t")), max_size=3000)


@given(_TEXT, st.integers(min_value=5, max_value=400), st.integers(min_value=0, max_value=100))
def test_passages_invariants(text: str, max_chars: int, min_chars: int) -> None:
    min_chars = min(min_chars, max_chars)
    passages = split_paragraphs(text, max_chars=max_chars, min_chars=min_chars)
    previous_end = 0
    for i, passage in enumerate(passages):
        assert passage.ordinal == i
        assert text[passage.start : passage.end] == passage.text
        assert passage.text == passage.text.strip()
        assert passage.text
        assert len(passage.text) <= max_chars
        assert passage.start >= previous_end  # in order, never overlapping
        previous_end = passage.end
    # Every non-whitespace character is in exactly one passage.
    covered = sum(1 for p in passages for ch in p.text if not ch.isspace())
    assert covered == sum(1 for ch in text if not ch.isspace())


def test_sources_api_is_complete() -> None:
    # Its order is ruff's (RUF022: constants, classes, functions), checked by `make check`.
    import inspect

    import citeaudit.sources as sources

    public = {
        name
        for name in dir(sources)
        if not name.startswith("_") and not inspect.ismodule(getattr(sources, name)) and name != "annotations"
    }
    assert public == set(sources.__all__)


def test_failure_reasons_for_errors() -> None:
    from citeaudit.sources.fetch import _reason
    from citeaudit.sources.security import AddressBlocked, NameNotResolved

    assert _reason(NameNotResolved("nowhere.test", "no address")) == "dns"
    assert _reason(AddressBlocked("intranet.test", "10.0.0.1", "private")) == "blocked_private_address"


def test_missing_extra_names_the_install_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cli: Callable[..., Result]
) -> None:
    import sys

    # None in sys.modules makes `import trafilatura` fail as if it were not installed.
    monkeypatch.setitem(sys.modules, "trafilatura", None)
    result = cli("resolve", "--db", tmp_path / "none.db")
    assert result.exit_code == 2
    assert "pip install 'citeaudit[resolve]'" in result.stderr


ARTICLE = (
    "<html><head><title>AX220 data sheet | Axtorp</title>"
    '<meta property="og:title" content="AX220 data sheet">'
    '<meta property="article:published_time" content="2024-05-14T09:00:00Z">'
    '<meta property="article:modified_time" content="2026-03-12T10:00:00Z">'
    '<link rel="canonical" href="/en/ax220"></head><body><nav><a href="/">Home</a> <a href="/shop">Shop</a></nav>'
    "<article><h1>AX220</h1>"
    + "".join(
        f"<p>Paragraph {n}: the AX220 portable compressor has a 20 L tank and a maximum pressure of 10 bar.</p>"
        for n in range(12)
    )
    + "</article><footer>Axtorp Maschinen GmbH, Hamburg</footer></body></html>"
)


def test_an_html_page_gives_its_title_dates_canonical_link_and_main_text() -> None:
    from citeaudit.sources.extract import read_document

    document = read_document(ARTICLE.encode(), "text/html; charset=utf-8", "https://www.axtorp.example/ax220?x=1")
    assert document.title == "AX220 data sheet"  # og:title, not the <title> with the site name
    # the publication date is the original one, the update date the modification time
    assert (document.published, document.updated) == ("2024-05-14", "2026-03-12")
    assert document.canonical_url == "https://www.axtorp.example/en/ax220"  # relative href, joined to the page URL
    lines = document.text.splitlines()
    # the 12 article paragraphs are the text; navigation and footer are not
    assert sum(line.startswith("Paragraph ") for line in lines) == 12
    assert "Shop" not in document.text
    assert "Hamburg" not in document.text


@pytest.mark.parametrize(
    ("head", "title"),
    [
        ("<title>AX220 Technical Data</title>", "AX220 Technical Data"),
        ("<meta property='og:title' content='AX220   Technical Data'>", "AX220 Technical Data"),  # spaces folded
        ("<title>\n AX220 Technical Data\n</title><meta property='og:title' content='Other'>", "AX220 Technical Data"),
        # og:title is a prefix of <title> but not the title without a site name: <title> stays
        ("<title>AX220 Technical Data</title><meta property='og:title' content='AX220'>", "AX220 Technical Data"),
        ("", "AX220"),  # no title of its own: the heading is all there is
    ],
)
def test_a_page_keeps_the_title_it_gives_itself_not_its_first_heading(head: str, title: str) -> None:
    from citeaudit.sources.extract import read_document

    body = " ".join(["The AX220 has a 20 L tank and a pump rated at 12 bar for outdoor cleaning."] * 8)
    page = f"<html><head>{head}</head><body><article><h1>AX220</h1><p>{body}</p></article></body></html>"
    assert read_document(page.encode(), "text/html", "https://brand.example/ax220").title == title


@pytest.mark.parametrize(
    "raw",
    [
        [],
        [("Content-Type", "text/html"), ("content-length", "12")],
        [("Link", "</a>; rel=canonical"), ("LINK", "</b>; rel=next"), ("Date", "x")],  # repeated, any case
        [("Set-Cookie", "a=1"), ("set-cookie", "b=2"), ("Set-Cookie", "c=3"), ("Location", "/next")],
        [("X-Name", "caf\u00e9".encode("utf-8").decode("latin-1")), ("Retry-After", "5")],  # not ASCII
    ],
)
def test_headers_read_once_give_what_each_lookup_gave(raw: list[tuple[str, str]]) -> None:
    import httpx

    from citeaudit.sources.fetch import _header_map

    headers = httpx.Headers([(name.encode("latin-1"), value.encode("latin-1")) for name, value in raw])
    found = _header_map(headers)
    names = {name.lower() for name, _ in raw} | {"content-type", "location", "missing"}
    assert {name: found.get(name) for name in names} == {name: headers.get(name) for name in names}
    assert set(found) == {name.lower() for name, _ in raw}
