"""The one sentence splitter that ingest and segmentation share: abbreviations, list bullets, markers after the
stop, Chinese punctuation; and the claim spans ingest makes from it.

Every expected offset is counted by hand in a comment; each test also slices the text, so a miscount fails.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.ingest.markers import cite_markers, numbered
from citeaudit.ingest.sentences import is_abbreviation, sentences
from citeaudit.ingest.text import SentenceIndex


def texts(text: str) -> list[str]:
    return [text[s.start : s.stop] for s in sentences(text)]


@pytest.mark.parametrize(
    "sentence",
    [
        "The U.S. Army bought the AX220 in 2024.",
        "Warner Bros. Pictures released it.",
        "It was built in St. Louis by Axtorp Inc. under licence.",
        "It was ranked No. 1 by Dr. Smith.",
        "The AX220 vs. the AX300 is a close call.",
        "Small tools, e.g. grinders, run on it.",
        "It runs on 230 V, i.e. a normal socket.",
        "John F. Kennedy visited the plant.",
        "Am 3. Oktober kommt er z.B. in den Handel.",
        "It weighs approx. 38 kg and costs ca. 1.200 €.",
        "The figure agrees with FRED/St. Louis Fed data.",
        "Service covers the Minneapolis–St. Paul area.",
    ],
)
def test_abbreviations_never_end_a_sentence(sentence: str) -> None:
    assert texts(sentence) == [sentence]


def test_abbreviations_that_also_close_sentences_end_one_before_a_sentence_opener() -> None:
    text = "He moved to the U.S. In 1990 he founded Axtorp Inc. The firm grew. Tanks, hoses, etc. Prices vary."
    # "He moved to the U.S." [0, 20); "In 1990 he founded Axtorp Inc." [21, 51); "The firm grew." [52, 66);
    # "Tanks, hoses, etc." [67, 85); "Prices vary." [86, 98)
    assert texts(text) == [
        "He moved to the U.S.",
        "In 1990 he founded Axtorp Inc.",
        "The firm grew.",
        "Tanks, hoses, etc.",
        "Prices vary.",
    ]
    assert [s.start for s in sentences(text)] == [0, 21, 52, 67, 86]


def test_markers_after_the_stop_belong_to_the_sentence_they_close() -> None:
    text = "AX220配备20升水箱。[1] 它通过了CE认证。[2] It is quiet. [3][4] It is light."
    # "AX220配备20升水箱。" = 5+2+2+1+2+1 = 13 → stop 13, "[1]" 13..16 → end 16; " " 16;
    # "它通过了CE认证。" 17..26, "[2]" 26..29; " " 29; "It is quiet." 30..42, " [3][4]" 42..49; " " 49;
    # "It is light." 50..62
    found = sentences(text)
    assert [(s.start, s.stop, s.end) for s in found] == [(0, 13, 16), (17, 26, 29), (30, 42, 49), (50, 62, 62)]
    assert text[42:49] == " [3][4]"


def test_list_bullets_and_headings_are_outside_the_sentence() -> None:
    text = "## Specs\n- The AX220 has a 20 L tank.\n* It weighs 38 kg.\n12. It is rated IP54.\n> Quiet."
    # "## " 0..3, "Specs" 3..8; "- " 9..11, "The AX220 has a 20 L tank." 11..37; "* " 38..40,
    # "It weighs 38 kg." 40..56; "12. " 57..61, "It is rated IP54." 61..78; "> " 79..81, "Quiet." 81..87
    assert [(s.start, s.stop) for s in sentences(text)] == [(3, 8), (11, 37), (40, 56), (61, 78), (81, 87)]
    assert [s.region for s in sentences(text)] == [0, 9, 38, 57, 79]


def test_ingest_claim_spans_leave_the_bullet_out_and_slice_to_the_claim() -> None:
    text = "- The AX220 has a 20 L tank [1]\n1. It weighs 38 kg [2]\n* The U.S. Army uses it [1]\n"
    citations, claims, _ = cite_markers(text, numbered([("https://brand.com/a", None), ("https://b.net", None)]))
    # "- " 0..2, "The AX220 has a 20 L tank" 2..27; "1. " 32..35, "It weighs 38 kg" 35..50;
    # "* " 55..57, "The U.S. Army uses it" 57..78
    assert [(c.start, c.end, c.text) for c in claims] == [
        (2, 27, "The AX220 has a 20 L tank"),
        (35, 50, "It weighs 38 kg"),
        (57, 78, "The U.S. Army uses it"),
    ]
    for claim in claims:
        assert text[claim.start : claim.end] == claim.text
    assert len(citations) == 3


def test_the_index_and_the_splitter_agree_on_a_chinese_answer() -> None:
    text = "AX220配备20升水箱。[1] 它通过了CE认证。[2]"
    index = SentenceIndex(text)
    # the marker at 13 closes the first sentence, the one at 26 the second
    assert text[slice(*index.claim_span(13))] == "AX220配备20升水箱。"
    assert text[slice(*index.claim_span(26))] == "它通过了CE认证。"


def test_a_lower_case_word_after_a_full_stop_continues_the_sentence() -> None:
    assert is_abbreviation("It costs approx. five euros.", 15)
    assert not is_abbreviation("The answer is no. The tank is small.", 16)
    assert is_abbreviation("It is No. 5 in the list.", 8)


def test_circa_before_a_year_does_not_end_the_sentence() -> None:
    text = "The chapel (c. 1900) was rebuilt. It was built c. 1200 in Lyon."
    # "The chapel (c. 1900) was rebuilt." [0, 33); "It was built c. 1200 in Lyon." [34, 63)
    assert texts(text) == ["The chapel (c. 1900) was rebuilt.", "It was built c. 1200 in Lyon."]
    assert [(s.start, s.stop) for s in sentences(text)] == [(0, 33), (34, 63)]
    # the bracket closing after the year still ends its sentence at the full stop after it
    assert texts("The chapel (c. 1900). It was rebuilt.") == ["The chapel (c. 1900).", "It was rebuilt."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a capital C is a letter (a vitamin, an appendix), not circa: its full stop ends the sentence
        ("He took vitamin C. 2 days later he was well.", ["He took vitamin C.", "2 days later he was well."]),
        ("See appendix C. The next part follows.", ["See appendix C.", "The next part follows."]),
        # a lower-case c before a word, not a number, is read as before
        ("See part c. The next part follows.", ["See part c.", "The next part follows."]),
    ],
)
def test_a_c_that_is_not_circa_is_read_as_before(text: str, expected: list[str]) -> None:
    assert texts(text) == expected


_TOKENS = st.sampled_from(
    [
        "The AX220",
        " has a tank",
        " ",
        "\n",
        "\n- ",
        "\n1. ",
        ".",
        ". ",
        "!",
        "?",
        "。",
        "；",
        "[1]",
        " [2]",
        "U.S.",
        " Dr.",
        " Inc.",
        " The",
        " e.g.",
        "3.5",
        "”",
        "水箱",
        "## ",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_TOKENS, max_size=30).map("".join))
def test_sentences_are_ordered_trimmed_and_never_cross_a_line(text: str) -> None:
    previous = 0
    for sentence in sentences(text):
        assert previous <= sentence.region <= sentence.start < sentence.stop <= sentence.end <= len(text)
        assert not text[sentence.start].isspace()
        assert not text[sentence.stop - 1].isspace()
        assert "\n" not in text[sentence.start : sentence.end]
        # a sentence never starts inside a marker
        assert not re.match(r"\d*\]", text[sentence.start :]) or sentence.start == 0
        previous = sentence.end
    # same text, same sentences
    assert sentences(text) == sentences(text)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["Dr.", "St.", "vs.", "e.g.", "i.e.", "Prof.", "Mr."]), st.sampled_from(["The", "Smith", "A"]))
def test_titles_and_latin_abbreviations_never_end_a_sentence(abbreviation: str, following: str) -> None:
    text = f"It was {abbreviation} {following} tank."
    assert len(sentences(text)) == 1


def test_a_stop_inside_a_quoted_title_does_not_end_the_sentence() -> None:
    text = 'She released "Razzle Dazzle! The Best of Mitzi Gaynor" in 2008. He said "Go." Then he left.'
    # the "!" stands inside quotes closed later on the line: one sentence [0, 63) up to "2008."; a stop right
    # before its closing quote still ends the sentence: 'He said "Go."' = 2+1+4+1+5 = 13 → [64, 77)
    assert texts(text) == [
        'She released "Razzle Dazzle! The Best of Mitzi Gaynor" in 2008.',
        'He said "Go."',
        "Then he left.",
    ]
    assert [(x.start, x.stop) for x in sentences(text)][:2] == [(0, 63), (64, 77)]
