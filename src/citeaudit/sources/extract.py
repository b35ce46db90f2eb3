"""Reading a fetched body: media type and charset, then the main text, title, dates and canonical link.

HTML goes through trafilatura (main content, title, dates via htmldate), PDF through pypdf, plain text is
decoded. Both libraries come with the ``resolve`` extra and are imported on first use.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import io
import re
from datetime import datetime
from typing import Any

from citeaudit.core.errors import MissingExtra
from citeaudit.sources.links import canonical_link
from citeaudit.store.records import Document

__all__ = [
    "HTML_TYPES",
    "MAX_HTML_BYTES",
    "PDF_TYPES",
    "TEXT_TYPES",
    "UnreadableDocument",
    "read_document",
    "read_document_text",
    "require_extra",
    "split_type",
]

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
"""Media types read as HTML."""
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
"""Media types read as PDF."""
TEXT_TYPES = frozenset({"text/plain", "text/markdown"})
"""Media types read as plain text."""
MAX_HTML_BYTES = 2 * 1024 * 1024
"""Largest HTML page handed to the text extractor by default: its time grows with about the square of the size
(a 10 MB page took minutes)."""

_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE)
_INSTALL = "pip install 'citeaudit[resolve]'"


class UnreadableDocument(Exception):
    """The body cannot be read as a document; ``reason`` is the failure reason to record."""

    def __init__(self, reason: str, detail: str) -> None:
        # Both in args, so the error survives pickling back from an extraction worker process.
        super().__init__(reason, detail)
        self.reason, self.detail = reason, detail

    def __str__(self) -> str:
        return self.detail


def require_extra() -> None:
    """Raise :class:`~citeaudit.core.errors.MissingExtra` with the exact install line when the ``resolve`` extra is
    missing."""
    try:
        import htmldate  # noqa: F401
        import pypdf  # noqa: F401
        import trafilatura  # noqa: F401
    except ImportError as exc:
        missing = repr(exc.name) if exc.name else f"a package ({exc})"
        raise MissingExtra(f"resolving sources needs {missing}; install it with: {_INSTALL}") from None


def split_type(content_type: str | None) -> tuple[str | None, str | None]:
    """``(media type, charset)`` of a ``Content-Type`` header value (lower-case media type)."""
    if not content_type:
        return None, None
    media, *params = (part.strip() for part in content_type.split(";"))
    charset = None
    for param in params:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    return media.lower() or None, charset


def _sniff(body: bytes) -> str | None:
    head = body[:1024].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html", b"<head", b"<body")):
        return "text/html"
    return None


def _decode(body: bytes, charset: str | None, html: bool) -> str:
    candidates = [charset] if charset else []
    if html:
        meta = _META_CHARSET.search(body[:4096])
        if meta:
            candidates.append(meta.group(1).decode("ascii", "replace"))
    candidates.append("utf-8")
    for candidate in candidates:
        try:
            return body.decode(candidate)
        except (LookupError, UnicodeDecodeError):
            continue
    from charset_normalizer import from_bytes

    best = from_bytes(body).best()
    return str(best) if best is not None else body.decode("latin-1")


def _iso_date(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.date().isoformat()
    text = str(value).strip()
    return text or None


_SPACES = re.compile(r"\s+")
_SITE_SEPARATORS = frozenset("|-–—:·•»")
"""Characters that part a page title from the site name in ``<title>``."""


def _clean(text: str) -> str | None:
    return _SPACES.sub(" ", text).strip() or None


def _declared_title(tree: Any) -> str | None:
    """The document's own title: ``<title>`` (in the head first), then the ``og:title`` meta property.

    When ``og:title`` is the ``<title>`` without the site name around it (``AX220 data sheet`` in
    ``AX220 data sheet | Axtorp``), the shorter one is the document's title.
    """
    tag = None
    for path in ("head/title", ".//title"):
        tag = next((found for element in tree.iterfind(path) if (found := _clean(element.text_content()))), None)
        if tag:
            break
    graph = next(
        (
            found
            for meta in tree.iter("meta")
            if (meta.get("property") or meta.get("name") or "").strip().lower() == "og:title"
            and (found := _clean(meta.get("content") or ""))
        ),
        None,
    )
    if tag and graph and graph != tag and (tag.startswith(graph) or tag.endswith(graph)):
        rest = tag.replace(graph, "", 1).strip()
        if rest[:1] in _SITE_SEPARATORS or rest[-1:] in _SITE_SEPARATORS:
            return graph
    return tag or graph


_EXTRACTION: Any = None
"""trafilatura's options for every page, made once: making them reads its configuration again (an eighth of the
time of reading a short page)."""


def _extraction_options(url: str) -> Any:
    """The options ``trafilatura.bare_extraction`` builds from the arguments :func:`_html` gives it (trafilatura's
    own extractor only, no metadata, no comments), for ``url``."""
    global _EXTRACTION
    if _EXTRACTION is None:
        from trafilatura.settings import Extractor

        dates: dict[str, Any] = {"original_date": True, "extensive_search": False}
        _EXTRACTION = Extractor(
            output_format="python",
            # trafilatura's own extractor only: the justext fallback costs several times more per page.
            fast=True,
            comments=False,
            # the title and date come from _title_and_date, which skips what is not kept
            with_metadata=False,
            date_params=dates,
        )
    options = copy.copy(_EXTRACTION)
    options.url = url
    options.source = url.encode("utf-8", "replace").decode("utf-8")
    return options


def _html(body: bytes, charset: str | None, url: str) -> tuple[str, str | None, str | None, str | None, str | None]:
    import lxml.etree
    import lxml.html
    import trafilatura
    from htmldate import find_date

    markup = _decode(body, charset, html=True)
    try:
        tree = lxml.html.fromstring(markup)
    except (ValueError, lxml.etree.ParserError) as exc:
        raise UnreadableDocument("unreadable", f"not parseable as HTML: {exc}") from None
    canonical = None
    for link in tree.iter("link"):
        rel = (link.get("rel") or "").lower().split()
        href = (link.get("href") or "").strip()
        if "canonical" in rel and href:
            canonical = canonical_link(url, href)
            break
    declared_title = _declared_title(tree)
    # The page is parsed once, here: trafilatura and htmldate both take the tree and work on copies of it.
    updated = _iso_date(find_date(tree, original_date=False, extensive_search=False))
    extracted = trafilatura.bare_extraction(tree, options=_extraction_options(url))
    text = getattr(extracted, "text", None) if extracted is not None else None
    found_title = published = None
    if extracted is not None:
        try:
            found_title, published = _title_and_date(tree, url, need_title=not declared_title)
        except (TypeError, ValueError):
            # trafilatura drops the whole extraction when its metadata step fails this way
            text = None
    if not text:
        # Short pages fall under trafilatura's main-content threshold; their whole text is the content.
        text = trafilatura.html2txt(markup) or ""
    # The title the document gives itself, not the first heading trafilatura may prefer ("AX220" for a page
    # titled "AX220 Technical Data").
    title = declared_title or _clean(found_title or "")
    return text, title, _iso_date(published), updated, canonical


def _title_and_date(tree: Any, url: str, need_title: bool) -> tuple[str | None, str | None]:
    """The title (when ``need_title``) and the publication date trafilatura's metadata step gives for ``tree``
    (its ``extract_metadata`` with the date settings above), without the author, site name, categories, tags and
    licence it also looks for: those took a third of the time of reading a page and are not kept."""
    import contextlib

    from htmldate import find_date
    from trafilatura.metadata import examine_meta, extract_meta_json, extract_title, extract_url
    from trafilatura.settings import Document as Metadata

    # the same steps, in the same order, as extract_metadata takes for these fields
    metadata = examine_meta(tree)
    if metadata.author and " " not in metadata.author:
        metadata.author = None
    with contextlib.suppress(Exception):  # trafilatura logs a fault in JSON-LD and goes on
        metadata = extract_meta_json(tree, metadata)
    if need_title and not metadata.title:
        metadata.title = extract_title(tree)
    if not metadata.url:
        metadata.url = extract_url(tree, url)
    metadata.date = find_date(tree, original_date=True, extensive_search=False, url=metadata.url)
    kept = Metadata()
    kept.title, kept.date = (metadata.title if need_title else None), metadata.date
    kept.clean_and_trim()
    return kept.title, kept.date


def _pdf_date(value: Any) -> str | None:
    try:
        return _iso_date(value)
    except (TypeError, ValueError):
        return None


def _pdf(body: bytes) -> tuple[str, str | None, str | None, str | None]:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(body))
        pages = [page.extract_text() or "" for page in reader.pages]
        meta = reader.metadata
        title = meta.title if meta is not None else None
        created = _pdf_date(meta.creation_date) if meta is not None else None
        modified = _pdf_date(meta.modification_date) if meta is not None else None
    except (PyPdfError, ValueError, KeyError, TypeError) as exc:
        raise UnreadableDocument("unreadable", f"not a readable PDF: {exc}") from None
    return "\n\n".join(p.strip() for p in pages if p.strip()), (title or None), created, modified


def read_document(body: bytes, content_type: str | None, url: str, max_html_bytes: int = MAX_HTML_BYTES) -> Document:
    """The document in ``body`` as served from ``url`` with ``content_type``.

    Raises :class:`UnreadableDocument` with reason ``unsupported_type`` for media that are not HTML, plain text or
    PDF, ``extract_too_large`` for HTML over ``max_html_bytes``, and ``unreadable`` for a body that claims to be
    one of them and is not.
    """
    media, charset = split_type(content_type)
    if media is None or media in ("application/octet-stream", "binary/octet-stream"):
        media = _sniff(body) or media
    sha = hashlib.sha256(body).hexdigest()
    if media in HTML_TYPES:
        if len(body) > max_html_bytes:
            raise UnreadableDocument(
                "extract_too_large", f"an HTML page of {len(body)} bytes is over the {max_html_bytes}-byte bound"
            )
        text, title, published, updated, canonical = _html(body, charset, url)
        return Document(sha, media, body, text, title, published, updated, canonical)
    if media in PDF_TYPES:
        text, title, published, updated = _pdf(body)
        return Document(sha, media, body, text, title, published, updated)
    if media in TEXT_TYPES:
        return Document(sha, media, body, _decode(body, charset, html=False))
    raise UnreadableDocument("unsupported_type", f"cannot read media type {media!r}")


def read_document_text(
    body: bytes, content_type: str | None, url: str, max_html_bytes: int = MAX_HTML_BYTES
) -> Document:
    """:func:`read_document` without the bytes in the result (``body`` is ``b""``): what a worker process sends
    back to the process that holds the bytes already."""
    return dataclasses.replace(read_document(body, content_type, url, max_html_bytes), body=b"")
