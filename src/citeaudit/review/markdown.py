"""Claims and answers shown as Markdown, safely: bold, italics, lists, headings, tables and inline code render;
raw HTML never does (it shows as text); a link shows its text followed by its URL as plain text, never as an
anchor a reviewer could click through to an arbitrary address; an image shows its alt text and address.

The claim stays highlighted inside its answer: two private-use characters mark the claim's span in the source
text before it is parsed, and after rendering every run of text between them is wrapped in ``<mark>`` (the first
one ``id="claim-in-answer"``), so the highlight survives bold, links, line breaks and list items inside the span.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup, escape

__all__ = ["answer_markdown", "claim_markdown", "markdown"]

_OPEN = "\ue000"
_CLOSE = "\ue001"
_SENTINELS = re.compile(f"[{_OPEN}{_CLOSE}]")
# Block syntax at the start of a line (list item, heading, quote): the span's opening mark goes after it, or the
# line would stop being a list item or heading.
_BLOCK_MARKER = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)]|#{1,6}|>)[ \t]+")
_TAG_OR_TEXT = re.compile(r"(<[^>]*>)")
_MARK_IN_TAG = re.compile(f"<[^>]*[{_OPEN}{_CLOSE}]")


def _link_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    env.setdefault("links", []).append((token.attrGet("href") or "", token.markup == "autolink"))
    return '<span class="md-link">'


def _link_close(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    href, auto = env["links"].pop() if env.get("links") else ("", True)
    if auto or not href:
        return "</span>"
    return f'</span> <span class="md-url">({escape(_shown_url(str(href)))})</span>'


def _image(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    token = tokens[idx]
    alt = self.renderInlineAsText(token.children or [], options, env)
    src = _shown_url(str(token.attrGet("src") or ""))
    return f'<span class="md-image">[image: {escape(alt)}]</span> <span class="md-url">({escape(src)})</span>'


def _shown_url(href: str) -> str:
    """The address as written (the parser percent-encodes it for use in an attribute; here it is only read)."""
    return str(_PARSER.normalizeLinkText(href))


def _parser() -> MarkdownIt:
    parser = MarkdownIt("commonmark", {"html": False, "breaks": True, "linkify": False}).enable("table")
    parser.add_render_rule("link_open", _link_open)
    parser.add_render_rule("link_close", _link_close)
    parser.add_render_rule("image", _image)
    return parser


_PARSER = _parser()


def _render(text: str) -> str:
    env: dict[str, Any] = {}
    return str(_PARSER.render(text, env)).strip()


def markdown(text: str | None) -> Markup:
    """``text`` rendered as safe Markdown (empty for ``None``)."""
    return Markup(_render(_SENTINELS.sub("", text or "")))


def claim_markdown(text: str | None) -> Markup:
    """A claim rendered as safe Markdown; a claim of one paragraph comes without its ``<p>``, to sit in a line."""
    rendered = _render(_SENTINELS.sub("", text or ""))
    inner = rendered.removeprefix("<p>").removesuffix("</p>")
    if rendered.startswith("<p>") and rendered.endswith("</p>") and "<p>" not in inner:
        return Markup(inner)
    return Markup(rendered)


def _marked(html: str) -> str:
    """Every run of text between the two marks wrapped in ``<mark>``; tags in between are left outside."""
    head, rest = html.split(_OPEN, 1)
    span, tail = rest.split(_CLOSE, 1)
    pieces: list[str] = []
    first = True
    for piece in _TAG_OR_TEXT.split(span):
        if not piece or piece.startswith("<") or not piece.strip():
            pieces.append(piece)
            continue
        attribute = 'id="claim-in-answer"' if first else 'class="claim-part"'
        pieces.append(f"<mark {attribute}>{piece}</mark>")
        first = False
    return head + "".join(pieces) + tail


def _plain(parts: tuple[str, str, str]) -> Markup:
    before, claim, after = (escape(part) for part in parts)
    return Markup(f'<div class="plain">{before}<mark id="claim-in-answer">{claim}</mark>{after}</div>')


def answer_markdown(text: str | None, parts: tuple[str, str, str] | None = None) -> Markup:
    """An answer rendered as safe Markdown with its claim highlighted; ``parts`` is the answer split round the
    claim (before, claim, after), or ``None`` when the claim was not found in it.

    When the marks cannot both survive the parse in order (a span cut through the middle of Markdown syntax),
    the answer is shown as plain text with the claim highlighted instead: the highlight is never lost."""
    if parts is None:
        return markdown(text)
    before, claim, after = (_SENTINELS.sub("", part) for part in parts)
    if not before or before.endswith("\n"):
        lead = _BLOCK_MARKER.match(claim)
        if lead and lead.end() < len(claim):
            before, claim = before + lead.group(), claim[lead.end() :]
    html = _render(f"{before}{_OPEN}{claim}{_CLOSE}{after}")
    if html.count(_OPEN) != 1 or html.count(_CLOSE) != 1 or html.index(_OPEN) > html.index(_CLOSE):
        return _plain(parts)
    if _MARK_IN_TAG.search(html):
        return _plain(parts)
    marked = _marked(html)
    if "<mark" not in marked:
        return _plain(parts)
    return Markup(marked)
