"""Redirect wrappers and cache URLs whose target is written in the URL itself: unwrapped without any request.

Covered: Google's ``/url?q=`` (or ``url=``) click wrapper, Bing's ``/ck/a?…&u=a1<base64url>`` click wrapper, the
AMP cache (``<dashed-host>.cdn.ampproject.org/c/s/<host>/<path>``) and Google's AMP viewer
(``google.<tld>/amp/s/<host>/<path>``). Engine grounding redirects (e.g. Vertex AI Search) carry an opaque token
and can only be followed over HTTP; they are left to the resolver.
"""

from __future__ import annotations

import base64
import binascii
import re
from urllib.parse import parse_qs, urlsplit

__all__ = ["MAX_UNWRAP", "effective_url", "unwrap"]

_GOOGLE = re.compile(r"(?:www\.)?google\.(?:[a-z]{2,3}|co\.[a-z]{2}|com\.[a-z]{2})")
_BING = re.compile(r"(?:www\.)?bing\.com")

MAX_UNWRAP = 5
"""Nested wrappers unwrapped at most (a wrapper around a wrapper around a page is still unwrapped)."""


def _google(path: str, query: str) -> str | None:
    if path == "/url":
        values = parse_qs(query)
        for name in ("q", "url"):
            target = values.get(name, [""])[0]
            if target.startswith(("http://", "https://")):
                return target
    if path.startswith("/amp/s/"):
        return "https://" + path[len("/amp/s/") :]
    return None


def _bing(path: str, query: str) -> str | None:
    if path != "/ck/a":
        return None
    encoded = parse_qs(query).get("u", [""])[0]
    if not encoded.startswith("a1"):
        return None
    payload = encoded[2:]
    try:
        target = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return target if target.startswith(("http://", "https://")) else None


def _amp_cache(path: str) -> str | None:
    for prefix, scheme in (("/c/s/", "https://"), ("/v/s/", "https://"), ("/c/", "http://"), ("/v/", "http://")):
        if path.startswith(prefix) and len(path) > len(prefix):
            return scheme + path[len(prefix) :]
    return None


def unwrap(url: str) -> str | None:
    """The URL a known wrapper or cache URL points to, or ``None`` when ``url`` is not one."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # not a URL at all (an unclosed IPv6 literal): not a wrapper either
        return None
    host = (parts.hostname or "").lower()
    if not host:
        return None
    if _GOOGLE.fullmatch(host):
        return _google(parts.path, parts.query)
    if _BING.fullmatch(host):
        return _bing(parts.path, parts.query)
    if host.endswith(".cdn.ampproject.org"):
        return _amp_cache(parts.path)
    return None


def effective_url(url: str) -> str:
    """``url`` with every known wrapper around it removed (at most :data:`MAX_UNWRAP` levels)."""
    current = url
    for _ in range(MAX_UNWRAP):
        target = unwrap(current)
        if target is None:
            return current
        current = target
    return current
