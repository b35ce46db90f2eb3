"""The sentence and claim helpers against plain references: the sentence look-ups against the splitter's own
sentences, and a claim's text against the readable definition. The production helpers cache and peel markers
off the end; on every generated text both must agree."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.ingest import text as helpers
from citeaudit.ingest.sentences import sentences


def reference_claim_text(text: str, start: int, end: int) -> str:
    """The claim text of a span: artefacts removed, white space folded."""
    cleaned = helpers._BULLET.sub("", helpers.ARTEFACT.sub(" ", text[start:end]))
    cleaned = re.sub(r"\s+([,.;:!?。！？；])", r"\1", re.sub(r"\s+", " ", cleaned))
    return cleaned.strip()


TOKENS = st.sampled_from(
    [
        "The AX220",
        "tank",
        " ",
        "  ",
        "\n",
        "\n\n- ",
        "\u00a0",
        ".",
        "!",
        "?!",
        "。",
        "；",
        "”",
        ")",
        "(",
        '"',
        "[1]",
        "[12]",
        "[9]",
        " [3]",
        "e.g.",
        "E.G.",
        "z.B.",
        "approx.",
        "p.",
        "(e.g.",
        "x.e.g.",
        "3.5",
        "axtorp-machines.com",
        "水箱",
        "[^2^]",
        "[cite: 1, 2]",
        "【4†source】",
        "\ue2004\ue201",
        "([a.com](https://a.com/x.html))",
        "[b](https://b.example/p)",
        "1. ",
        "# ",
        " ,",
    ]
)
TEXTS = st.lists(TOKENS, max_size=30).map("".join)


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_sentence_look_ups_match_the_splitter(answer: str) -> None:
    index = helpers.SentenceIndex(answer)
    found = sentences(answer)
    assert index.starts == [s.region for s in found]
    for position in range(len(answer)):
        # the sentence a position belongs to: the last whose stretch starts at or before it (the first when none)
        owner = max((s for s in found if s.region <= position), key=lambda s: s.region, default=None)
        owner = owner or (found[0] if found else None)
        start, end = (owner.start, owner.end) if owner else (0, len(answer))
        expected = helpers.trim_span(answer, start, end, keep_trailing_artefacts=True)
        assert index.containing(position) == expected
        # the claim is the sentence without its closing markers: one trim does what the general helper's two do
        assert index.claim_span(position) == helpers.trim_span(answer, *expected)


@settings(max_examples=400, deadline=None)
@given(TEXTS, st.integers(0, 400), st.integers(0, 400))
def test_claim_text_and_trim_match_the_reference(answer: str, a: int, b: int) -> None:
    start, end = sorted((min(a, len(answer)), min(b, len(answer))))
    assert helpers.claim_text(answer, start, end) == reference_claim_text(answer, start, end)
    assert helpers.trim_claim(answer, start, end) == helpers.trim_span(answer, start, end)
