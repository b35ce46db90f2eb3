"""rules-v1 on hand-made answers in English, German and Chinese: spans, texts, skipped pieces, markers.

Every expected span is counted by hand in the comment above it; the test also checks that each span slices
the answer to the expected words, so a miscount fails loudly.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.core.model import Protocol
from citeaudit.core.protocol import fingerprint
from citeaudit.segment import Rules, segment


def spans(text: str) -> list[tuple[int, int, str]]:
    return [(c.start, c.end, c.text) for c in segment(text).claims]


def test_coordinated_predicates_split_with_the_subject_completed() -> None:
    text = "The AX220 has a 20 L tank and can operate outdoors.[1]"
    # "The AX220 has a 20 L tank" = 3+1+5+1+3+1+1+1+2+1+1+1+4 = 25 characters → [0, 25)
    # " and " is 25..30, "can operate outdoors" = 3+1+7+1+8 = 20 → [30, 50); "." at 50, "[1]" at 51..54
    assert spans(text) == [
        (0, 25, "The AX220 has a 20 L tank"),
        (30, 50, "The AX220 can operate outdoors"),
    ]
    assert text[30:50] == "can operate outdoors"
    # the marker right after the full stop belongs to the whole sentence: both claims
    assert segment(text).claims_at(51) == (0, 1)


def test_a_marker_inside_a_clause_belongs_to_that_clause() -> None:
    text = "The AX220 has a 20 L tank [1] and can operate outdoors [2]."
    result = segment(text)
    # [1] stands at 26 (after "tank "), [2] at 55: one clause each
    assert text[26:29] == "[1]"
    assert text[55:58] == "[2]"
    assert result.claims_at(26) == (0,)
    assert result.claims_at(55) == (1,)
    # the clause spans leave the markers out: "can operate outdoors" starts at 25+4+5 = 34
    assert [(c.start, c.end) for c in result.claims] == [(0, 25), (34, 54)]


def test_markers_closing_a_sentence_whose_clauses_have_none_cite_all_of_it() -> None:
    text = "The AX220 is rated IP54 and can run outdoors[1][2]. It is quiet."
    # "The AX220 is rated IP54" [0, 23); " and " 23..28; "can run outdoors" [28, 44); "[1]" 44, "[2]" 47
    result = segment(text)
    assert [(c.start, c.end) for c in result.claims][:2] == [(0, 23), (28, 44)]
    assert result.claims_at(44) == (0, 1)
    assert result.claims_at(47) == (0, 1)


def test_english_abbreviations_decimals_thousands_and_questions() -> None:
    text = "It costs 1,200 USD, e.g. in Spain. The pump reaches 3.5 bar. Is it loud? Dr. Smith tested it."
    # sentence 1: [0, 33) "It costs 1,200 USD, e.g. in Spain" (33 chars, "." at 33)
    # sentence 2: starts at 35, "The pump reaches 3.5 bar" = 24 chars → [35, 59)
    # "Is it loud?" [61, 72) is a question; sentence 4 starts at 73: "Dr. Smith tested it" = 19 → [73, 92)
    assert spans(text) == [
        (0, 33, "It costs 1,200 USD, e.g. in Spain"),
        (35, 59, "The pump reaches 3.5 bar"),
        (73, 92, "Dr. Smith tested it"),
    ]
    assert segment(text).skipped_counts() == {"question": 1}


def test_german_units_decimals_ordinals_and_coordination() -> None:
    text = "Der AX220 kostet ca. 1.200 € und wiegt 3,5 kg [2]. Am 3. Oktober kommt er z.B. in den Handel."
    # "Der AX220 kostet ca. 1.200 €" = 3+1+5+1+6+1+3+1+5+1+1 = 28 → [0, 28); " und " 28..33
    # "wiegt 3,5 kg" = 12 → [33, 45); " [2]" 45..49, "." 49; the next sentence starts at 51:
    # "Am 3. Oktober kommt er z.B. in den Handel" = 2+1+2+1+7+1+5+1+2+1+4+1+2+1+3+1+6 = 41 → [51, 92)
    assert spans(text) == [
        (0, 28, "Der AX220 kostet ca. 1.200 €"),
        (33, 45, "Der AX220 wiegt 3,5 kg"),
        (51, 92, "Am 3. Oktober kommt er z.B. in den Handel"),
    ]
    # [2] closes the sentence and the first clause has no marker of its own: it cites both clauses
    assert segment(text).claims_at(46) == (0, 1)


def test_chinese_punctuation_and_markers_after_it() -> None:
    text = "AX220配备20升水箱。[1]它可以在户外使用；噪音低！价格是多少？"
    # "AX220配备20升水箱" = 5+2+2+1+2 = 12 → [0, 12); "。" 12, "[1]" 13..16
    # "它可以在户外使用" [16, 24), "；" 24; "噪音低" [25, 28), "！" 28; "价格是多少？" is a question
    assert spans(text) == [
        (0, 12, "AX220配备20升水箱"),
        (16, 24, "它可以在户外使用"),
        (25, 28, "噪音低"),
    ]
    result = segment(text)
    assert result.claims_at(13) == (0,)
    assert result.skipped_counts() == {"question": 1}


def test_markdown_headings_lists_tables_and_greetings() -> None:
    text = (
        "# Specs\n"  # 0..7, heading
        "Sure! Here is an overview:\n"  # 8..34: greeting, lead-in
        "- The AX220 has a 20 L tank [1].\n"  # 35..67, bullet "- " 35..37
        "| Model | Tank |\n"  # 68..84, table header
        "|---|---|\n"  # 85..94
        "| AX220 | 20 L |\n"  # 95..112
        "I hope this helps!"  # 113..131
    )
    result = segment(text)
    # the list item's claim starts after "- " at 37 and is 25 characters long
    # the table row's cells start after "| " at 97: "AX220 | 20 L" = 12 characters
    assert [(c.start, c.end, c.text) for c in result.claims] == [
        (37, 62, "The AX220 has a 20 L tank"),
        (97, 109, "Model: AX220; Tank: 20 L"),
    ]
    assert result.skipped_counts() == {"heading": 3, "greeting": 2}


def test_etc_ends_a_sentence_before_a_capital_letter() -> None:
    text = "It fits tanks, hoses, etc. The AX220 is rated IP54, filters etc. are extra."
    # "It fits tanks, hoses, etc" = 2+1+4+1+6+1+6+1+3 = 25 → [0, 25); "." at 25, the next sentence starts at 27:
    # "The AX220 is rated IP54, filters etc. are extra" = 3+1+5+1+2+1+5+1+5+1+7+1+4+1+3+1+5 = 47 → [27, 74)
    assert [(c.start, c.end) for c in segment(text).claims] == [(0, 25), (27, 74)]


def test_plain_text_headings_before_a_blank_line_or_a_list_are_skipped() -> None:
    text = "Key specifications\n- Tank: 20 litres.\n\nWarranty and service\n\nAxtorp gives 3 years.\nShort line"
    result = segment(text)
    # "Key specifications" precedes a list item and "Warranty and service" a blank line: headings; the last
    # short line has nothing after it and stays a claim
    assert [c.text for c in result.claims] == ["Tank: 20 litres", "Axtorp gives 3 years", "Short line"]
    assert result.skipped_counts() == {"heading": 2}


def test_blocks_joined_without_a_space_narration_and_pieces_of_engine_spans() -> None:
    # Anthropic answers are text blocks joined as they come; cited blocks are the engine spans
    text = "I'll look up the specifications.Based on the results, the AX220 has a 20-litre tank and weighs 38 kg."
    # "I'll look up the specifications." = 4+1+4+1+2+1+3+1+15 = 32 → [0, 32); "Based on the results," [32, 53);
    # "the AX220 has a 20-litre tank" = 3+1+5+1+3+1+1+1+8+1+4 = 29 → [54, 83); "and" [84, 87);
    # "weighs 38 kg" [88, 100)
    assert text[54:83] == "the AX220 has a 20-litre tank"
    assert text[88:100] == "weighs 38 kg"
    result = segment(text, regions=[(54, 83), (88, 100)])
    # the narration is skipped, so is the lead-in cut off by the engine span and the lone "and"; the last
    # block continues the sentence's predicate and gets its subject
    assert [(c.start, c.end, c.text) for c in result.claims] == [
        (54, 83, "the AX220 has a 20-litre tank"),
        (88, 100, "the AX220 weighs 38 kg"),
    ]
    assert result.skipped_counts() == {"greeting": 1, "fragment": 1}
    # a dot between a version number and a capital is no sentence end
    assert len(segment("Use AX220 v2.Final checks apply.").claims) == 1


def test_disclaimers_are_skipped() -> None:
    text = "The AX220 is rated IP54. This is not legal advice. Please consult a dealer."
    result = segment(text)
    assert [c.text for c in result.claims] == ["The AX220 is rated IP54"]
    assert result.skipped_counts() == {"disclaimer": 2}


def test_engine_spans_are_never_crossed() -> None:
    text = "The AX220 has a 20 L tank and can operate outdoors."
    # an engine segment covering only "The AX220 has a 20 L" (0..20) forces a boundary at 20
    claims = segment(text, regions=[(0, 20)]).claims
    assert next((c.start, c.end) for c in claims) == (0, 20)
    assert all(not (c.start < 20 < c.end) for c in claims)


def test_a_subordinate_clause_is_not_taken_for_a_subject() -> None:
    text = "Whether children are targets or witnesses, the experience can hurt and can last."
    assert len(segment(text).claims) == 1


def test_parameters_enter_the_fingerprint() -> None:
    base = Protocol("p", "1")
    with_rules = Protocol("p", "1", segmentation=Rules().segmentation())
    without_split = Protocol("p", "1", segmentation=Rules(split_coordination=False).segmentation())
    assert len({fingerprint(base), fingerprint(with_rules), fingerprint(without_split)}) == 3


_WORDS = st.lists(
    st.sampled_from(["The", "AX220", "has", "and", "can", "run", "1.200", "€", "3,5", "e.g.", "z.B.", "[1]", "水箱"])
    | st.sampled_from([".", "?", "!", "。", "；", "\n", "- ", "# ", "| a | b |", ":"]),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(_WORDS)
def test_spans_are_ordered_inside_the_text_and_deterministic(words: list[str]) -> None:
    text = " ".join(words)
    first, second = segment(text), segment(text)
    assert first == second
    previous_end = 0
    for claim in first.claims:
        assert previous_end <= claim.start < claim.end <= len(text)
        assert claim.text.strip()
        assert not re.search(r"\[\d+\]", claim.text)
        previous_end = claim.end
    for skipped in first.skipped:
        assert 0 <= skipped.start <= skipped.end <= len(text)


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "[1][2]", "。"])
def test_degenerate_answers_have_no_claims(text: str) -> None:
    assert segment(text).claims == ()
