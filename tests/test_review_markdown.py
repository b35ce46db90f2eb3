"""Claims and answers as safe Markdown: what renders (bold, italics, lists, inline code), what never does (raw
HTML, anchors, images), and the claim's highlight inside its answer through any Markdown round it."""

from __future__ import annotations

from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.review.markdown import answer_markdown, claim_markdown, markdown

ALLOWED_TAGS = {
    "p", "strong", "em", "ul", "ol", "li", "code", "pre", "blockquote", "hr", "br", "span", "mark", "div",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
VOID = {"br", "hr"}
ALLOWED_ATTRIBUTES = {"class", "id", "start", "style"}


class _Shape(HTMLParser):
    """Tags, attributes, nesting and the text inside ``<mark>`` of a rendered fragment."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.attributes: set[str] = set()
        self.nested = True
        self.marked = ""
        self.ids: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes |= {name for name, _ in attrs}
        self.ids += [value or "" for name, value in attrs if name == "id"]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.nested = False

    def handle_data(self, data: str) -> None:
        if "mark" in self.stack:
            self.marked += data


def shape(html: str) -> _Shape:
    parsed = _Shape()
    parsed.feed(html)
    parsed.close()
    return parsed


def test_emphasis_lists_and_code_render() -> None:
    html = markdown("**bold** and *it*\n\n- a\n  - b\n\n`x < y`")
    assert html == (
        "<p><strong>bold</strong> and <em>it</em></p>\n<ul>\n<li>a\n<ul>\n<li>b</li>\n</ul>\n</li>\n</ul>\n"
        "<p><code>x &lt; y</code></p>"
    )


def test_links_show_their_text_and_address_never_an_anchor() -> None:
    assert markdown("see [the spec](https://brand.com/ax220)") == (
        '<p>see <span class="md-link">the spec</span> <span class="md-url">(https://brand.com/ax220)</span></p>'
    )
    # an autolink shows its address once; a javascript: link is not a link at all, its source stays as text
    assert markdown("<https://brand.com>") == '<p><span class="md-link">https://brand.com</span></p>'
    assert markdown("[x](javascript:alert(1))") == "<p>[x](javascript:alert(1))</p>"
    assert markdown("![pic](https://i.example/p.png)") == (
        '<p><span class="md-image">[image: pic]</span> <span class="md-url">(https://i.example/p.png)</span></p>'
    )


def test_raw_html_and_entities_stay_text() -> None:
    assert markdown('<img src=x onerror="alert(1)">') == "<p>&lt;img src=x onerror=&quot;alert(1)&quot;&gt;</p>"
    assert markdown("**<script>**") == "<p><strong>&lt;script&gt;</strong></p>"
    # &#60;script&#62; is the entity spelling of <script>: decoded by the parser, escaped again on the way out
    assert markdown("&#60;script&#62; &amp;") == "<p>&lt;script&gt; &amp;</p>"


def test_a_one_paragraph_claim_sits_in_its_line() -> None:
    assert claim_markdown("The **AX220** has a 20 L tank.") == "The <strong>AX220</strong> has a 20 L tank."
    assert claim_markdown("one\n\ntwo") == "<p>one</p>\n<p>two</p>"


def test_the_claim_is_marked_across_bold_and_list_items() -> None:
    text = "Intro\n\n- one **two** three\n- four five\n"
    start, end = text.index("two"), text.index(" five")
    html = answer_markdown(text, (text[:start], text[start:end], text[end:]))
    found = shape(html)
    assert found.nested
    # the marked text is the claim's words without the Markdown between them: "two", " three", "four"
    assert found.marked == "two threefour"
    assert found.ids == ["claim-in-answer"]
    assert "<li>one <strong><mark" in html


def test_a_claim_that_starts_at_a_list_marker_keeps_the_list() -> None:
    text = "x\n\n- the claim\n"
    start = text.index("- the")
    html = answer_markdown(text, (text[:start], "- the claim", "\n"))
    assert '<li><mark id="claim-in-answer">the claim</mark></li>' in html


def test_a_span_cut_through_syntax_falls_back_to_plain_text_with_the_highlight() -> None:
    text = "```py\ncode\n```"
    # the span "y\ncod" starts inside the fence's info string, where no mark can survive as text
    html = answer_markdown(text, (text[:4], text[4:9], text[9:]))
    assert html == '<div class="plain">```p<mark id="claim-in-answer">y\ncod</mark>e\n```</div>'


MARKDOWNISH = st.text(alphabet=st.sampled_from(list("ab <>*_`[]()!#-+1.|\n&;:/\"'=\ue000\ue001")), max_size=60)


@settings(max_examples=300, deadline=None)
@given(MARKDOWNISH, st.data())
def test_any_answer_renders_well_nested_inert_html_with_one_highlight(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    parts = (text[:start], text[start:end], text[end:])
    found = shape(answer_markdown(text, parts))
    assert found.nested
    assert set(found.tags) <= ALLOWED_TAGS
    assert found.attributes <= ALLOWED_ATTRIBUTES
    assert found.ids.count("claim-in-answer") <= 1
    # a claim with visible text is always highlighted somewhere
    if parts[1].replace("\ue000", "").strip():
        assert found.ids == ["claim-in-answer"]


@settings(max_examples=300, deadline=None)
@given(MARKDOWNISH)
def test_any_claim_or_text_renders_well_nested_inert_html(text: str) -> None:
    for rendered in (markdown(text), claim_markdown(text)):
        found = shape(rendered)
        assert found.nested
        assert set(found.tags) <= ALLOWED_TAGS
        assert found.attributes <= ALLOWED_ATTRIBUTES
        assert found.ids == []
