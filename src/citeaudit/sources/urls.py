"""URL normalization, registrable domains and official-domain matching (DESIGN §3). Pure: no network.

The Public Suffix List is the snapshot bundled with tldextract, with private suffixes on, so
``brand.github.io`` is its own registrable domain. Matching is by registrable domain, exact host or
segment-aligned path prefix; never by substring.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import tldextract

from citeaudit.model import OfficialDomain

__all__ = [
    "TRACKING_PARAMETERS",
    "OfficialMatcher",
    "host_of",
    "normalize_url",
    "registrable_domain",
    "title_key",
    "url_location",
]

TRACKING_PARAMETERS = frozenset(
    {
        "gclid",
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "fbclid",
        "msclkid",
        "yclid",
        "twclid",
        "ttclid",
        "li_fat_id",
        "igshid",
        "mc_cid",
        "mc_eid",
        "_ga",
        "_gl",
        "srsltid",
        "ref_src",
    }
)
"""Query parameters that identify a click, not a document (``utm_*`` is dropped as a prefix)."""

_SPACES = re.compile(r"\s+")
_DEFAULT_PORTS = {"http": 80, "https": 443}

# No suffix-list download ever: the bundled snapshot only, and no disk cache.
_EXTRACT = tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None, include_psl_private_domains=True)


def _is_tracking(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith("utm_") or lowered in TRACKING_PARAMETERS


def normalize_url(url: str) -> str:
    """The normalized form of ``url`` used for source identity.

    Lower-cases scheme and host, drops default ports, the fragment, user info and tracking parameters,
    sorts the remaining query and gives an empty path as ``/``. A string without scheme and host is
    returned stripped but otherwise unchanged (it cannot be normalized further).
    """
    stripped = url.strip()
    parts = urlsplit(stripped)
    if not parts.scheme or not parts.netloc:
        return stripped
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and _DEFAULT_PORTS.get(scheme) != port:
        netloc = f"{netloc}:{port}"
    query = [(name, value) for name, value in parse_qsl(parts.query, keep_blank_values=True) if not _is_tracking(name)]
    query.sort()
    path = parts.path or "/"
    return urlunsplit((scheme, netloc, path, urlencode(query), ""))


def host_of(url: str) -> str | None:
    """Lower-case host of ``url`` without a trailing dot, or ``None`` when it has none."""
    parts = urlsplit(url.strip())
    host = parts.hostname
    return host.rstrip(".") if host else None


@lru_cache(maxsize=65536)
def registrable_domain(host: str) -> str | None:
    """Registrable domain of ``host`` (e.g. ``shop.brand.co.uk`` → ``brand.co.uk``).

    Notes: ``None`` when the host is itself a public suffix, an IP address or has no known suffix.
    """
    extracted = _EXTRACT(host.lower().rstrip("."))
    if not extracted.domain or not extracted.suffix:
        return None
    return f"{extracted.domain}.{extracted.suffix}"


def title_key(answer_id: str, title: str) -> str:
    """Source key for a title-only card: scoped to its answer, since titles are not identities."""
    folded = _SPACES.sub(" ", unicodedata.normalize("NFKC", title).casefold()).strip()
    return f"title:{answer_id}:{folded}"


def _path_under(path: str, prefix: str) -> bool:
    if prefix in ("", "/"):
        return True
    if prefix.endswith("/"):
        return path.startswith(prefix)
    return path == prefix or path.startswith(prefix + "/")


class OfficialMatcher:
    """Decides whether a URL belongs to one of the brand's official presences."""

    def __init__(self, official: Iterable[OfficialDomain]) -> None:
        self._domains = frozenset(d.domain.lower() for d in official if d.domain)
        self._hosts = tuple((d.host.lower().rstrip("."), d.path_prefix or "/") for d in official if d.host is not None)
        self._cache: dict[str, bool] = {}

    def __call__(self, url: str | None) -> bool:
        """True when ``url``'s registrable domain, or its host and path, is declared official."""
        if not url:
            return False
        cached = self._cache.get(url)
        if cached is None:
            cached = self._match(url)
            self._cache[url] = cached
        return cached

    def _match(self, url: str) -> bool:
        host, path = url_location(url)
        return self.match_location(host, path)

    def match_location(self, host: str | None, path: str) -> bool:
        """The same decision from a URL's host and path (as the store keeps them per source)."""
        if not host:
            return False
        if self._domains and registrable_domain(host) in self._domains:
            return True
        return any(host == h and _path_under(path, prefix) for h, prefix in self._hosts)


def url_location(url: str | None) -> tuple[str | None, str]:
    """``(host, path)`` of a URL: host lower-cased without a trailing dot (``None`` when absent), path ``/``
    when empty."""
    if not url:
        return None, "/"
    parts = urlsplit(url.strip())
    host = parts.hostname.rstrip(".") if parts.hostname else None
    return host or None, parts.path or "/"
