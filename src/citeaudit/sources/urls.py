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
from urllib.parse import urlsplit

import tldextract

from citeaudit.model import OfficialDomain
from citeaudit.sources.redirects import effective_url

__all__ = [
    "TRACKING_PARAMETERS",
    "OfficialMatcher",
    "host_of",
    "identity_url",
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


_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)://([^/?#]*)([^?#]*)(?:\?([^#]*))?")


def _host_and_port(netloc: str) -> tuple[str, str]:
    netloc = netloc.rpartition("@")[2]
    if netloc.startswith("["):
        close = netloc.find("]")
        if close > 0:
            rest = netloc[close + 1 :]
            return netloc[: close + 1], rest[1:] if rest.startswith(":") else ""
    host, _, port = netloc.partition(":")
    return host, port


@lru_cache(maxsize=262144)
def identity_url(url: str) -> str:
    """The normalized URL of the page ``url`` leads to, known redirect wrappers removed: a source's key."""
    return normalize_url(effective_url(url))


@lru_cache(maxsize=262144)
def normalize_url(url: str) -> str:
    """The normalized form of ``url`` used for source identity.

    Lower-cases scheme and host, drops default ports, the fragment, user info and tracking parameters,
    sorts the remaining query parameters (kept as written, never re-encoded) and gives an empty path as
    ``/``. A string without scheme and host is returned stripped but otherwise unchanged.
    """
    stripped = url.strip()
    match = _URL.match(stripped)
    if match is None or not match.group(2):
        return stripped
    scheme = match.group(1).lower()
    host, port = _host_and_port(match.group(2))
    host = host.lower().rstrip(".")
    if not host:
        return stripped
    netloc = host
    if port.isdigit() and _DEFAULT_PORTS.get(scheme) != int(port):
        netloc = f"{host}:{int(port)}"
    normalized = f"{scheme}://{netloc}{match.group(3) or '/'}"
    query = match.group(4)
    if query:
        kept = sorted(pair for pair in query.split("&") if pair and not _is_tracking(pair.partition("=")[0]))
        if kept:
            normalized += "?" + "&".join(kept)
    return normalized


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
    """``(host, path)`` of the page a URL leads to (known redirect wrappers removed): host lower-cased without a
    trailing dot (``None`` when absent), path ``/`` when empty."""
    match = _URL.match(effective_url(url.strip())) if url else None
    if match is None:
        return None, "/"
    host = _host_and_port(match.group(2))[0].lower().rstrip(".").strip("[]")
    return host or None, match.group(3) or "/"
