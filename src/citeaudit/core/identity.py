"""URL identity: normalisation, redirect wrappers, registrable domains, official matching, source keys.

The rules are described in docs/ingest.md ("Source identity") and docs/formats.md ("Official domains and the
Public Suffix List").

Pure: no network, no database. Scoring, the protocol, ingest and the resolver all identify sources through this
module, so two paths can never disagree on whether two citations point to the same page.

The Public Suffix List is the snapshot bundled with ``publicsuffixlist``, private suffixes on, so
``brand.github.io`` is its own registrable domain. The list's algorithm is followed to the letter: a top-level
domain the snapshot does not know follows the default ``*`` rule (``shop.brand.newtld`` → ``brand.newtld``), so a
brand on a TLD newer than the snapshot is still matched. Matching is by registrable domain, exact host or
segment-aligned path prefix; never by substring.
"""

from __future__ import annotations

import base64
import ipaddress
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import parse_qs, urlsplit

from publicsuffixlist import PublicSuffixList

from citeaudit.core.errors import InvalidValue
from citeaudit.core.limits import shown
from citeaudit.core.model import OfficialDomain, Source, SourceStatus

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "MAX_UNWRAP",
    "TRACKING_PARAMETERS",
    "OfficialMatcher",
    "RowsOn",
    "SourceRegistry",
    "document_key",
    "effective_url",
    "host_codes",
    "host_of",
    "identity_url",
    "normalize_url",
    "registrable_domain",
    "source_identity",
    "title_key",
    "unwrap",
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


# --- Redirect wrappers written in the URL itself ---------------------------------------------------------------
#
# Covered: Google's ``/url?q=`` (or ``url=``) click wrapper, Bing's ``/ck/a?…&u=a1<base64url>`` click wrapper, the
# AMP cache (``<dashed-host>.cdn.ampproject.org/c/s/<host>/<path>``) and Google's AMP viewer
# (``google.<tld>/amp/s/<host>/<path>``). Engine grounding redirects (e.g. Vertex AI Search) carry an opaque
# token and can only be followed over HTTP; they are left to the resolver.

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
    except ValueError:  # not base64 (binascii.Error), not ASCII (a plain ValueError), not UTF-8 once decoded
        return None
    return target if target.startswith(("http://", "https://")) else None


def _amp_cache(path: str) -> str | None:
    for prefix, scheme in (("/c/s/", "https://"), ("/v/s/", "https://"), ("/c/", "http://"), ("/v/", "http://")):
        if path.startswith(prefix) and len(path) > len(prefix):
            return scheme + path[len(prefix) :]
    return None


_WRAPPER_HOSTS = ("google.", "bing.com", ".cdn.ampproject.org")
"""What the host of every wrapper :func:`unwrap` knows holds (see ``_GOOGLE``, ``_BING`` and the AMP cache)."""


def _may_wrap(url: str) -> bool:
    """``False`` only where ``url`` cannot be a wrapper :func:`unwrap` knows: plain ASCII without the tab and line
    breaks the URL parser drops (so its host is a piece of it as written), naming no wrapper's host anywhere, in
    any case. Most URLs are decided so without being taken apart."""
    if not url.isascii() or "\t" in url or "\n" in url or "\r" in url:
        return True
    lowered = url.lower()
    google, bing, amp = _WRAPPER_HOSTS
    return google in lowered or bing in lowered or amp in lowered


def unwrap(url: str) -> str | None:
    """The URL a known wrapper or cache URL points to, or ``None`` when ``url`` is not one."""
    return _unwrap_parsed(url) if _may_wrap(url) else None


def _unwrap_parsed(url: str) -> str | None:
    """:func:`unwrap` decided by taking ``url`` apart, whatever :func:`_may_wrap` says of it."""
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


@lru_cache(maxsize=262144)
def effective_url(url: str) -> str:
    """``url`` with every known wrapper around it removed (at most :data:`MAX_UNWRAP` levels), kept per URL for a
    caller that asks about the same URLs again and again (an import works out each new source's once)."""
    return _unwrapped(url)


def _unwrapped(url: str) -> str:
    """:func:`effective_url`, worked out afresh."""
    current = url
    for _ in range(MAX_UNWRAP):
        target = unwrap(current)
        if target is None:
            return current
        current = target
    return current


# --- Normalisation ---------------------------------------------------------------------------------------------


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
    return _identity(url)


def _identity(url: str) -> str:
    """:func:`identity_url` worked out afresh, for a caller that keeps each URL's answer itself (an import's
    registry): three caches missed and filled for every new URL cost more than the normalising (160 000 new
    URLs: 0.57 s through them against 0.41 s without)."""
    return _normalized(_unwrapped(url))


@lru_cache(maxsize=262144)
def normalize_url(url: str) -> str:
    """The normalized form of ``url`` used for source identity.

    Lower-cases scheme and host, drops default ports, the fragment, user info and tracking parameters,
    sorts the remaining query parameters (kept as written, never re-encoded) and gives an empty path as
    ``/``. A string without scheme and host is returned stripped but otherwise unchanged.
    """
    return _normalized(url)


def _normalized(url: str) -> str:
    """:func:`normalize_url` worked out afresh."""
    return _normalized_located(url)[0]


def _normalized_located(url: str) -> tuple[str, tuple[str | None, str]]:
    """:func:`_normalized` of ``url`` and :func:`_location` of ``url`` stripped, from one reading of it."""
    stripped = url.strip()
    match = _URL.match(stripped)
    if match is None:
        return stripped, (None, "/")
    scheme, netloc, path, query = match.groups()
    host, port = _host_and_port(netloc)
    host = host.lower().rstrip(".")
    location = (host.strip("[]") or None, path or "/")
    if not netloc or not host:
        return stripped, location
    scheme = scheme.lower()
    if port.isdigit() and _DEFAULT_PORTS.get(scheme) != int(port):
        host = f"{host}:{int(port)}"
    normalized = f"{scheme}://{host}{path or '/'}"
    if query:
        kept = [pair for pair in query.split("&") if pair and not _is_tracking(pair.partition("=")[0])]
        if kept:
            kept.sort()
            normalized += "?" + "&".join(kept)
    return normalized, location


def host_of(url: str) -> str | None:
    """Lower-case host of ``url`` without a trailing dot, or ``None`` when it has none."""
    parts = urlsplit(url.strip())
    host = parts.hostname
    return host.rstrip(".") if host else None


def url_location(url: str | None) -> tuple[str | None, str]:
    """``(host, path)`` of the page a URL leads to (known redirect wrappers removed): host lower-cased without a
    trailing dot (``None`` when absent), path ``/`` when empty."""
    # Worked out afresh: an import asks once for each new source, and unwrapping a URL that names no wrapper's
    # host costs less than a cache's miss.
    return _location(_unwrapped(url.strip())) if url else (None, "/")


def _location(unwrapped: str) -> tuple[str | None, str]:
    """:func:`url_location` of a URL whose wrappers are removed already."""
    match = _URL.match(unwrapped)
    if match is None:
        return None, "/"
    host = _host_and_port(match.group(2))[0].lower().rstrip(".").strip("[]")
    return host or None, match.group(3) or "/"


# --- Registrable domains (Public Suffix List) ------------------------------------------------------------------


@lru_cache(maxsize=1)
def _suffix_list() -> PublicSuffixList:
    """The bundled snapshot as it is written (its Unicode rules in Unicode), read once on first use; the library
    never downloads anything by itself. Punycode hosts are looked up in Unicode (:func:`_in_unicode`), so the
    library need not encode its ~10 000 rules first, which was most of the list's start-up."""
    return PublicSuffixList(only_icann=False, accept_unknown=True, accept_encoded_idn=False)


def _in_unicode(name: str) -> str:
    """``name`` with each punycode (``xn--``) label that decodes written in Unicode; a label that does not decode
    stays as it is (no rule of the list can match it in either form)."""
    if "xn--" not in name:
        return name
    labels = name.split(".")
    for index, label in enumerate(labels):
        if label.startswith("xn--"):
            with suppress(UnicodeError):
                labels[index] = label.encode("ascii").decode("idna")
    return ".".join(labels)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


@lru_cache(maxsize=65536)
def registrable_domain(host: str) -> str | None:
    """Registrable domain of ``host`` (e.g. ``shop.brand.co.uk`` → ``brand.co.uk``), by the Public Suffix List.

    The host is lower-cased and a trailing dot (the DNS root) dropped. An unlisted top-level domain follows the
    list's default rule ``*`` (``b.example.example`` → ``example.example``). Unicode and punycode labels are
    both understood; the answer keeps the form the host was written in.

    Notes: ``None`` when the host is itself a public suffix, an IP address, empty, or has an empty label
    (``.example.com``: a leading dot is not a host name).
    """
    name = host.lower()
    if name.endswith(".") and not name.endswith(".."):
        name = name[:-1]
    if not name or _is_address(name) or "" in name.split("."):
        return None
    looked_up = _in_unicode(name)
    found: str | None = _suffix_list().privatesuffix(looked_up)
    if found is None or looked_up is name:
        return found
    # as many labels as the registrable domain has, in the form the host was written in
    return ".".join(name.split(".")[-(found.count(".") + 1) :])


def _ascii_form(domain: str) -> str:
    """``domain`` in its ASCII (punycode) form, so ``bücher.de`` and ``xn--bcher-kva.de`` compare equal."""
    try:
        return domain.encode("idna").decode("ascii")
    except UnicodeError:
        return domain


# --- Official matching -----------------------------------------------------------------------------------------


def _path_under(path: str, prefix: str) -> bool:
    if prefix in ("", "/"):
        return True
    if prefix.endswith("/"):
        return path.startswith(prefix)
    return path == prefix or path.startswith(prefix + "/")


class OfficialMatcher:
    """Decides whether a URL belongs to one of the brand's official presences."""

    def __init__(self, official: Iterable[OfficialDomain]) -> None:
        self._domains = frozenset(_ascii_form(d.domain.lower()) for d in official if d.domain)
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
        if self._domains:
            domain = registrable_domain(host)
            if domain is not None and (domain in self._domains or _ascii_form(domain) in self._domains):
                return True
        return any(host == h and _path_under(path, prefix) for h, prefix in self._hosts)

    def match_host(self, host: str | None) -> bool | None:
        """:meth:`match_location`'s decision for every path on ``host`` at once: ``True`` when every URL there is
        official, ``False`` when none is, ``None`` when the path decides (the host is declared with a path
        prefix). Lets a caller with many sources on few hosts decide per host and read paths only where needed."""
        if not host:
            return False
        if self._domains:
            domain = registrable_domain(host)
            if domain is not None and (domain in self._domains or _ascii_form(domain) in self._domains):
                return True
        prefixes = [prefix for h, prefix in self._hosts if h == host]
        if not prefixes:
            return False
        return True if any(prefix in ("", "/") for prefix in prefixes) else None

    def official_each(
        self,
        hosts: Sequence[str | None],
        rows_on: RowsOn,
        paths: Callable[[npt.NDArray[np.int64]], Sequence[str | None]],
        size: int,
    ) -> npt.NDArray[np.bool_]:
        """Per row of a table of ``size`` sources, whether the source is official, read host first.

        ``hosts`` are the table's distinct hosts. Each is decided once (:meth:`match_host`; sources far outnumber
        hosts); ``rows_on(indices)`` gives the rows on the hosts at those indices and each row's host index, and is
        asked only for hosts that are official or whose paths decide; ``paths(rows)`` gives those rows' paths
        (``/`` when empty) and is asked only for rows on a host declared with a path prefix."""
        import numpy as np

        decisions = [self.match_host(host) for host in hosts]
        official = np.zeros(size, dtype=np.bool_)
        wanted = [index for index, decision in enumerate(decisions) if decision is not False]
        if not wanted:
            return official
        rows, codes = rows_on(wanted)
        whole = np.array([decision is True for decision in decisions], dtype=np.bool_)
        official[rows] = whole[codes]
        undecided = ~whole[codes]
        by_path, by_path_codes = rows[undecided], codes[undecided]
        if len(by_path):
            for row, code, path in zip(by_path.tolist(), by_path_codes.tolist(), paths(by_path), strict=True):
                official[row] = self.match_location(hosts[code], path or "/")
        return official


RowsOn = Callable[[Sequence[int]], "tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]"]
"""Given indices into a table's distinct hosts, the rows on those hosts and each row's host index."""


def host_codes(row_hosts: Iterable[str | None]) -> tuple[list[str | None], RowsOn]:
    """The distinct hosts of a table given a host per row, and the :data:`RowsOn` of its rows, for
    :meth:`OfficialMatcher.official_each`."""
    import numpy as np

    index: dict[str | None, int] = {}
    codes = np.fromiter((index.setdefault(host, len(index)) for host in row_hosts), dtype=np.int64)

    def rows_on(wanted: Sequence[int]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        rows = np.flatnonzero(np.isin(codes, np.asarray(wanted, dtype=np.int64))).astype(np.int64)
        return rows, codes[rows]

    return list(index), rows_on


# --- Source keys -----------------------------------------------------------------------------------------------


def title_key(answer_id: str, title: str) -> str:
    """Source key for a title-only card: scoped to its answer, since titles are not identities."""
    folded = _SPACES.sub(" ", unicodedata.normalize("NFKC", title).casefold()).strip()
    return f"title:{answer_id}:{folded}"


def document_key(identifier: str) -> str:
    """Source key for a document without a URL that an engine searched or cited (an uploaded file, a chunk of a
    file-search store): ``document:`` and what identifies it in the engine's own terms (a file id, a document
    name, or an answer-scoped position when the payload gives nothing else)."""
    return f"document:{identifier.strip()}"


def _always_splits(url: str) -> bool:
    """Whether ``urlsplit`` takes ``url`` apart without refusing it, known without calling it: it refuses only a
    square bracket out of place or a non-ASCII host that normalises to a delimiter, so plain ASCII without
    brackets always splits (a property test holds the two together)."""
    return url.isascii() and "[" not in url and "]" not in url


def source_identity(url: str, source: str, where: str, *, cached: bool = True) -> str:
    """The source identity of ``url`` (:func:`identity_url`), or a located error for a URL that cannot be taken
    apart (an unclosed IPv6 host such as ``http://[::1``). ``cached=False`` for a caller that keeps each URL's
    answer itself."""
    return _usable(url, source, where, identity_url if cached else _identity)


_Read = TypeVar("_Read")


def _usable(url: str, source: str, where: str, read: Callable[[str], _Read]) -> _Read:
    """``read(url)``, or the located error for a URL that cannot be taken apart (what ``read`` refuses with a
    ``ValueError`` included)."""
    try:
        if not _always_splits(url):
            urlsplit(url.strip())  # refuses what cannot be taken apart, which the normaliser would not notice
        return read(url)
    except ValueError as exc:
        raise InvalidValue(source, where, f"not a usable URL: {shown(url)} ({exc})") from None


def _unwrapped_located(url: str) -> tuple[str, tuple[str, tuple[str | None, str]]]:
    """What ``url``'s wrappers lead to, and :func:`_normalized_located` of that."""
    unwrapped = _unwrapped(url)
    return unwrapped, _normalized_located(unwrapped)


class SourceRegistry:
    """Assigns source keys and collects one :class:`Source` per key, first sighting wins.

    A key given outright is used as is; a URL is keyed by :func:`identity_url` (or by the declared source it
    identifies); a title-only card by :func:`title_key`. Both the interchange reader and engine ingest key
    sources here, so the two paths identify sources the same way.
    """

    def __init__(self, declared: Sequence[Source] = ()) -> None:
        self.sources: dict[str, Source] = {}
        self._by_url: dict[str, str] = {}
        self.url_keys: dict[str, str] = {}
        """The key each URL given as is was assigned (engines cite the same pages again and again)."""
        for entry in declared:
            self.sources[entry.key] = entry
            for url in (entry.url, entry.resolved_url):
                if url:
                    self._by_url.setdefault(identity_url(url), entry.key)

    def url_key(self, source: str, where: str, url: str) -> str:
        """The key :meth:`key_for` gives a citation of ``url`` without a source key, kept in :attr:`url_keys`, but
        no :class:`Source` registered: a caller that writes rows keeps the first sighting itself."""
        known = self.url_keys.get(url)
        if known is not None:
            return known
        return self.url_key_located(source, where, url)[0]

    def url_key_located(self, source: str, where: str, url: str) -> tuple[str, tuple[str | None, str]]:
        """:meth:`url_key` of a URL not keyed yet, and its :func:`url_location`, worked out together: the URL's
        wrappers are removed, and what they lead to read, once for both."""
        # checked as source_identity checks it; kept in url_keys instead of identity_url's cache
        unwrapped, (normalized, location) = _usable(url, source, f"{where}.url", _unwrapped_located)
        if unwrapped is not url and unwrapped != unwrapped.strip():
            # url_location reads what a wrapper leads to as it is; the normaliser strips it first
            location = _location(unwrapped)
        key = self._by_url.get(normalized, normalized) if self._by_url else normalized
        self.url_keys[url] = key
        return key, location

    def key_for(
        self,
        source: str,
        where: str,
        answer_id: str,
        url: str | None,
        title: str | None,
        source_key: str | None,
        publisher: str | None = None,
    ) -> str:
        """The source key of a citation or edge row, registering a pending source on first sight.

        ``source`` and ``where`` name the file and location in the error raised when the row identifies nothing.
        """
        if source_key is not None:
            key = source_key
        elif url:
            known = self.url_keys.get(url)
            if known is not None:
                return known
            key = self.url_key(source, where, url)
        elif title and title.strip():
            key = title_key(answer_id, title)
        else:
            raise InvalidValue(source, where, "needs a url, a title or a source_key (got none)")
        if key not in self.sources:
            self.sources[key] = Source(
                key=key,
                url=url or None,
                title=title,
                publisher=publisher,
                status=SourceStatus.PENDING,
                reason=None if url else "no_link",
            )
        return key
