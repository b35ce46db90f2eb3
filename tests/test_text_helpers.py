"""The sentence and claim helpers against a plain reference: the readable character-scan definition of where
sentences start and what a claim's text is. The production helpers skip to the next punctuation and peel
markers off the end; on every generated text both must agree."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.ingest import text as helpers

_BOUNDARY_CANDIDATE = re.compile(r"[.!?。！？；\n]")


def reference_sentence_starts(text: str) -> list[int]:
    """Offsets where sentences start. A marker right after closing punctuation (``tank.[1]``) stays with the
    sentence it closes; a line break always ends a sentence."""
    starts = [0]
    n = len(text)
    found = _BOUNDARY_CANDIDATE.search(text)
    while found is not None:
        i = found.start()
        char = text[i]
        resume = i + 1
        if char == "\n":
            j = i
            while j < n and text[j].isspace():
                j += 1
            if j < n:
                starts.append(j)
            resume = j
        elif not (char == "." and helpers._is_abbreviation(text, i)):
            j = i + 1
            while j < n and text[j] in helpers._END_PUNCTUATION + "\"'”’)":
                j += 1
            while (match := helpers.ARTEFACT.match(text, j)) is not None:
                j = match.end()
            if j >= n:
                break
            if text[j].isspace() or char in helpers._CJK_END:
                k = j
                while k < n and text[k].isspace():
                    k += 1
                if k < n:
                    starts.append(k)
                resume = k
            else:
                resume = j
        found = _BOUNDARY_CANDIDATE.search(text, max(resume, i + 1))
    return starts


def reference_claim_text(text: str, start: int, end: int) -> str:
    """The claim text of a span: artefacts removed, white space folded."""
    cleaned = helpers._BULLET.sub("", helpers.ARTEFACT.sub(" ", text[start:end]))
    cleaned = re.sub(r"\s+([,.;:!?。！？；])", r"\1", re.sub(r"\s+", " ", cleaned))
    return cleaned.strip()


def reference_containing(answer: str, position: int) -> tuple[int, int]:
    starts = reference_sentence_starts(answer)
    index = max(i for i, start in enumerate(starts) if start <= position)
    end = starts[index + 1] if index + 1 < len(starts) else len(answer)
    return helpers.trim_span(answer, starts[index], end, keep_trailing_artefacts=True)


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
def test_sentence_spans_match_the_reference_scan(answer: str) -> None:
    index = helpers.SentenceIndex(answer)
    assert index.starts == reference_sentence_starts(answer)
    for position in range(len(answer)):
        expected = reference_containing(answer, position)
        assert index.containing(position) == expected
        # the claim is the sentence without its closing markers: one trim does what the general helper's two do
        assert index.claim_span(position) == helpers.trim_span(answer, *expected)


@settings(max_examples=400, deadline=None)
@given(TEXTS, st.integers(0, 400), st.integers(0, 400))
def test_claim_text_and_trim_match_the_reference(answer: str, a: int, b: int) -> None:
    start, end = sorted((min(a, len(answer)), min(b, len(answer))))
    assert helpers.claim_text(answer, start, end) == reference_claim_text(answer, start, end)
    assert helpers.trim_claim(answer, start, end) == helpers.trim_span(answer, start, end)
