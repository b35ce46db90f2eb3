"""Which links the resolver can follow: a URL that can be requested at all, and a canonical link made absolute.

A cited URL, a redirect's ``Location`` or a page's canonical link comes from outside and may be anything
(a port past 65535, an unclosed IPv6 literal): these checks turn such a link into a reason, never an exception.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

__all__ = ["canonical_link", "valid_http_url"]


def valid_http_url(url: str) -> bool:
    """True when ``url`` is an http(s) URL with a host, a well-formed IPv6 literal if any and a port below 65536:
    one that can be requested at all."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - reading it is the check: a port out of range raises ValueError
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)


def canonical_link(base: str, href: str) -> str | None:
    """The absolute canonical URL ``href`` names on the page at ``base``; ``None`` when it is not a URL that could
    be requested (a malformed canonical link is advice that cannot be taken: the page keeps its own URL)."""
    try:
        absolute = urljoin(base, href.strip())
    except ValueError:
        return None
    return absolute if valid_http_url(absolute) else None
