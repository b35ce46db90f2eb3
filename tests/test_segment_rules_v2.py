"""rules-v2 on hand-made answers in English, German and Chinese: clauses, put-back subjects, markers,
reference lists; and its place next to rules-v1 (selectable, fingerprinted apart).

Every expected span is counted by hand in the comment above it; the test also slices the answer, so a
miscount fails loudly.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.core.model import Protocol
from citeaudit.core.protocol import fingerprint
from citeaudit.ingest.text import claim_text
from citeaudit.segment import Rules, lexicon, segment
from citeaudit.segment.rules import SkipReason
from citeaudit.segment.rules_v2 import RulesV2
from citeaudit.segment.rules_v2 import segment as segment_v2


def claims(text: str) -> list[tuple[int, int, str]]:
    return [(c.start, c.end, c.text) for c in segment_v2(text).claims]


def test_an_enumeration_after_has_gives_one_claim_per_object() -> None:
    text = "The AX220 has a 500 Wh battery and a range of up to 120 km."
    # "The AX220 has a 500 Wh battery" = 3+1+5+1+3+1+1+1+3+1+2+1+7 = 30 → [0, 30); " and " 30..35;
    # "a range of up to 120 km" = 1+1+5+1+2+1+2+1+2+1+3+1+2 = 23 → [35, 58)
    assert claims(text) == [
        (0, 30, "The AX220 has a 500 Wh battery"),
        (35, 58, "The AX220 has a range of up to 120 km"),
    ]
    assert text[35:58] == "a range of up to 120 km"


def test_objects_sharing_a_predicate_each_get_the_subject_and_verb() -> None:
    text = "The AX220 supports Bluetooth, Wi-Fi and NFC."
    # "The AX220 supports Bluetooth" = 3+1+5+1+8+1+9 = 28 → [0, 28); ", " 28..30; "Wi-Fi" [30, 35);
    # " and " 35..40; "NFC" [40, 43)
    assert claims(text) == [
        (0, 28, "The AX220 supports Bluetooth"),
        (30, 35, "The AX220 supports Wi-Fi"),
        (40, 43, "The AX220 supports NFC"),
    ]


def test_coordinated_predicates_and_clauses() -> None:
    text = "The AX220 has a 20 L tank and can operate outdoors, but the AX300 is louder."
    # "The AX220 has a 20 L tank" [0, 25); " and " 25..30; "can operate outdoors" [30, 50); ", but " 50..56;
    # "the AX300 is louder" = 3+1+5+1+2+1+6 = 19 → [56, 75): a clause with its own subject
    assert claims(text) == [
        (0, 25, "The AX220 has a 20 L tank"),
        (30, 50, "The AX220 can operate outdoors"),
        (56, 75, "the AX300 is louder"),
    ]


def test_appositives_and_non_restrictive_relative_clauses() -> None:
    text = "The AX220, which weighs 38 kg, is sold in Germany. Axtorp, a Swedish maker, builds it."
    # "The AX220" [0, 9); ", which " 9..17; "weighs 38 kg" = 6+1+2+1+2 = 12 → [17, 29); ", " 29..31;
    # "is sold in Germany" = 2+1+4+1+2+1+7 = 18 → [31, 49); "." 49
    # "Axtorp" [51, 57); ", " 57..59; "a Swedish maker" = 1+1+7+1+5 = 15 → [59, 74); ", " 74..76;
    # "builds it" [76, 85)
    assert claims(text) == [
        (17, 29, "The AX220 weighs 38 kg"),
        (31, 49, "The AX220 is sold in Germany"),
        (59, 74, "Axtorp is a Swedish maker"),
        (76, 85, "Axtorp builds it"),
    ]


def test_comma_set_adjuncts_and_a_relative_clause_after_a_copula() -> None:
    text = "Manohar resigned as chairman on June 30, 2020, after four years in the role."
    # "Manohar resigned as chairman on June 30, 2020" = 7+1+8+1+2+1+8+1+2+1+4+1+3+1+4 = 45 → [0, 45)
    # (the comma before a year is no split); ", " 45..47; "after four years in the role" = 28 → [47, 75)
    assert claims(text) == [
        (0, 45, "Manohar resigned as chairman on June 30, 2020"),
        (47, 75, "Manohar resigned after four years in the role"),
    ]
    text = "Taylor was an engineer who is known for his methods."
    # "Taylor was an engineer" = 6+1+3+1+2+1+8 = 22 → [0, 22); " who " 22..27; "is known for his methods" [27, 51)
    assert claims(text) == [(0, 22, "Taylor was an engineer"), (27, 51, "Taylor is known for his methods")]


def test_german_coordination_appositive_and_enumeration() -> None:
    text = "Der AX220, ein Kompressor von Axtorp, wiegt 38 kg und ist nach IP54 geschützt [1]."
    # "Der AX220" [0, 9); ", " 9..11; "ein Kompressor von Axtorp" = 3+1+10+1+3+1+6 = 25 → [11, 36); ", " 36..38;
    # "wiegt 38 kg" = 11 → [38, 49); " und " 49..54; "ist nach IP54 geschützt" = 3+1+4+1+4+1+9 = 23 → [54, 77)
    assert claims(text) == [
        (11, 36, "Der AX220 ist ein Kompressor von Axtorp"),
        (38, 49, "Der AX220 wiegt 38 kg"),
        (54, 77, "Der AX220 ist nach IP54 geschützt"),
    ]
    text = "Der AX220 bietet einen Tank, einen Schlauch und eine Pistole."
    # "Der AX220 bietet einen Tank" = 3+1+5+1+6+1+6+1+4 = 27 → [0, 27); ", " 27..29; "einen Schlauch" [29, 43);
    # " und " 43..48; "eine Pistole" [48, 60)
    assert claims(text) == [
        (0, 27, "Der AX220 bietet einen Tank"),
        (29, 43, "Der AX220 bietet einen Schlauch"),
        (48, 60, "Der AX220 bietet eine Pistole"),
    ]


def test_chinese_markers_after_the_full_stop_and_a_shared_subject() -> None:
    text = "AX220配备20升水箱。[1] 它通过了CE认证。[2]"
    # "AX220配备20升水箱" = 5+2+2+1+2 = 12 → [0, 12); "。" 12, "[1]" 13..16, " " 16; "它通过了CE认证" [17, 25)
    result = segment_v2(text)
    assert [(c.start, c.end, c.text) for c in result.claims] == [
        (0, 12, "AX220配备20升水箱"),
        (17, 25, "它通过了CE认证"),
    ]
    assert result.claims_at(13) == (0,)
    assert result.claims_at(26) == (1,)
    text = "AX220的水箱容量为20升，可以在户外使用"
    # "AX220的水箱容量为20升" = 5+1+4+1+2+1 = 14 → [0, 14); "，" 14; "可以在户外使用" [15, 22); the topic before 的
    # is put back
    assert claims(text) == [(0, 14, "AX220的水箱容量为20升"), (15, 22, "AX220可以在户外使用")]


def test_an_attribute_lends_no_subject_to_a_later_chinese_clause() -> None:
    # "最大工作压力为10巴" has no topic: the clause after the comma stays with it rather than get a wrong one
    assert [c.text for c in segment_v2("最大工作压力为10巴，适合连续使用。").claims] == [
        "最大工作压力为10巴，适合连续使用"
    ]


def test_markers_of_a_sentence_go_to_every_claim_unless_inside_one_clause() -> None:
    text = "The AX220 supports Bluetooth, Wi-Fi and NFC.[1] It has a tank [2] and weighs 38 kg [3]."
    # sentence 1 as above, "." 43, "[1]" 44..47: after the full stop, so it cites all three claims
    # sentence 2: "It has a tank" [48, 61), "[2]" 62..65, " and " ..., "weighs 38 kg" [70, 82), "[3]" 83..86
    result = segment_v2(text)
    assert text[44:47] == "[1]"
    assert text[62:65] == "[2]"
    assert text[83:86] == "[3]"
    assert result.claims_at(44) == (0, 1, 2)
    assert [(c.start, c.end, c.text) for c in result.claims[3:]] == [
        (48, 61, "It has a tank"),
        (70, 82, "It weighs 38 kg"),
    ]
    assert result.claims_at(62) == (3,)
    assert result.claims_at(83) == (4,)


def test_reference_lists_sources_blocks_and_footnotes_are_never_claims() -> None:
    text = (
        "The AX220 has a 20 L tank [1].\n"  # 0..30
        "\n"
        "Sources:\n"  # 32..40
        "[1]: https://brand.com/ax220\n"
        '2. https://example.org/review "Review"\n'
        "- https://example.net/forum\n"
        "\n"
        "[^1]: Measured by the maker.\n"
        "https://brand.com/ax220/manual\n"
    )
    result = segment_v2(text)
    assert [c.text for c in result.claims] == ["The AX220 has a 20 L tank"]
    # the heading, three entries, the footnote definition and the bare link
    assert result.skipped_counts() == {"reference": 6}


def test_abbreviations_and_bullets_never_cut_a_claim() -> None:
    text = "- The U.S. Army bought it from Warner Bros. in St. Louis.\n1. It costs approx. 900 USD."
    # "- " 0..2; "The U.S. Army bought it from Warner Bros. in St. Louis" = 54 → [2, 56); "." 56, "\n" 57
    # "1. " 58..61; "It costs approx. 900 USD" = 2+1+5+1+7+1+3+1+3 = 24 → [61, 85)
    assert claims(text) == [
        (2, 56, "The U.S. Army bought it from Warner Bros. in St. Louis"),
        (61, 85, "It costs approx. 900 USD"),
    ]


def test_rules_v1_and_v2_are_fingerprinted_apart_and_v1_is_unchanged() -> None:
    v1 = Protocol("p", "1", segmentation=Rules().segmentation())
    v2 = Protocol("p", "1", segmentation=RulesV2().segmentation())
    v2_unsplit = Protocol("p", "1", segmentation=RulesV2(split_clauses=False).segmentation())
    assert len({fingerprint(v1), fingerprint(v2), fingerprint(v2_unsplit)}) == 3
    assert RulesV2().segmentation().method == "rules-v2"
    # rules-v1 keeps its own splitter: "U.S." still ends its sentence, as it always did
    assert [c.text for c in segment("The U.S. Army bought it.").claims] == ["The U.S", "Army bought it"]


def test_without_clause_splitting_a_sentence_is_one_claim() -> None:
    text = "The AX220 has a 20 L tank and can operate outdoors."
    # the whole sentence without its full stop: [0, 50)
    assert [(c.start, c.end) for c in segment_v2(text, rules=RulesV2(split_clauses=False)).claims] == [(0, 50)]


_WORDS = st.lists(
    st.sampled_from(
        ["The", "AX220", "has", "and", "can", "run", ",", "who", "which", "is", "a", "tank", "U.S.", "e.g.", "1862"]
    )
    | st.sampled_from(["[1]", "水箱", "，", "可以", "的", ".", "?", "。", "\n", "- ", "# ", "| a | b |", "Sources:"])
    | st.sampled_from(["[2]: https://x.org", "(clipper)", "in", "London", "on", "May", "including", "und", "ist"]),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(_WORDS)
def test_spans_are_ordered_exact_and_texts_self_contained(words: list[str]) -> None:
    text = " ".join(words)
    first, second = segment_v2(text), segment_v2(text)
    assert first == second
    previous_end = 0
    for claim in first.claims:
        assert previous_end <= claim.start < claim.end <= len(text)
        assert claim.text.strip()
        assert not re.search(r"\[\d+\]", claim.text)
        line_start = text.rfind("\n", 0, claim.start) + 1
        if not text[line_start:].lstrip().startswith("|"):  # a table row's text pairs cells with headers
            # the claim's text ends with the text of its span: what is put back goes in front, never elsewhere
            assert claim.text.endswith(claim_text(text, claim.start, claim.end))
        previous_end = claim.end


@pytest.mark.parametrize("text", ["", "   ", "\n\n", "[1][2]", "。", "Sources:\n[1]: https://x.org"])
def test_degenerate_answers_have_no_claims(text: str) -> None:
    assert segment_v2(text).claims == ()


def test_a_nationality_a_leading_adverbial_and_adjectives_of_one_noun() -> None:
    text = "Ford was an Australian theologian."
    # "Ford was an Australian" = 4+1+3+1+2+1+10 = 22 → [0, 22); "theologian" [23, 33) gets "Ford was a" in front
    assert claims(text) == [(0, 22, "Ford was an Australian"), (23, 33, "Ford was a theologian")]
    text = "As a delegate of her country, Barboza competed against 79 others and was second."
    # the adverbial stays in the first span: "As a delegate of her country, Barboza competed against 79 others"
    # = 2+1+1+1+8+1+2+1+3+1+8+1+7+1+8+1+7+1+2+1+6 = 64 → [0, 64); " and " 64..69; "was second" [69, 79) gets the
    # subject found after the comma
    assert claims(text) == [
        (0, 64, "As a delegate of her country, Barboza competed against 79 others"),
        (69, 79, "Barboza was second"),
    ]
    # two adjectives of one noun are no enumeration
    assert len(claims("He is known for his innovative and controversial work.")) == 1


def test_a_german_relative_clause_and_a_chinese_enumeration() -> None:
    text = "Der AX220, der 20 Liter fasst, wiegt 38 kg."
    # "Der AX220" [0, 9); ", der " 9..15; "20 Liter fasst" = 2+1+5+1+5 = 14 → [15, 29); ", " 29..31;
    # "wiegt 38 kg" = 11 → [31, 42); the antecedent goes in front of the relative clause (its verb stays last)
    assert claims(text) == [(15, 29, "Der AX220 20 Liter fasst"), (31, 42, "Der AX220 wiegt 38 kg")]
    text = "AX220支持蓝牙、WLAN和NFC。"
    # "AX220支持蓝牙" = 5+2+2 = 9 → [0, 9); "、" 9; "WLAN" [10, 14); "和" 14; "NFC" [15, 18); subject and verb
    # "AX220支持" go in front of each later object
    assert claims(text) == [(0, 9, "AX220支持蓝牙"), (10, 14, "AX220支持WLAN"), (15, 18, "AX220支持NFC")]


def test_a_second_adjunct_after_a_year_gets_the_verb_and_its_object() -> None:
    text = "Kang received his first acting award in 2006 for his role in Be Strong."
    # "Kang received his first acting award in 2006" = 4+1+8+1+3+1+5+1+6+1+5+1+2+1+4 = 44 → [0, 44);
    # "for his role in Be Strong" = 3+1+3+1+4+1+2+1+2+1+6 = 25 → [45, 70)
    assert claims(text) == [
        (0, 44, "Kang received his first acting award in 2006"),
        (45, 70, "Kang received his first acting award for his role in Be Strong"),
    ]


def test_an_appositive_closing_the_predicate_describes_the_noun_before_it() -> None:
    text = "He studied at Bello University, a research university in Zaria."
    # "He studied at Bello University" = 2+1+7+1+2+1+5+1+10 = 30 → [0, 30); ", " 30..32;
    # "a research university in Zaria" = 1+1+8+1+10+1+2+1+5 = 30 → [32, 62): about "Bello University"
    assert claims(text) == [
        (0, 30, "He studied at Bello University"),
        (32, 62, "Bello University is a research university in Zaria"),
    ]


def test_list_items_share_the_words_up_to_the_preposition_and_the_possessive() -> None:
    text = "He is known for his work ethic, commitment and humour."
    # "He is known for his work ethic" = 2+1+2+1+5+1+3+1+3+1+4+1+5 = 30 → [0, 30); ", " 30..32;
    # "commitment" [32, 42); " and " 42..47; "humour" [47, 53); "for his" is shared by the later items
    assert claims(text) == [
        (0, 30, "He is known for his work ethic"),
        (32, 42, "He is known for his commitment"),
        (47, 53, "He is known for his humour"),
    ]
    text = "She is an advocate for diversity and inclusion."
    # "She is an advocate for diversity" = 3+1+2+1+2+1+8+1+3+1+9 = 32 → [0, 32); " and " 32..37;
    # "inclusion" [37, 46)
    assert claims(text) == [(0, 32, "She is an advocate for diversity"), (37, 46, "She is an advocate for inclusion")]


def test_examples_after_such_as_are_claims_of_their_own() -> None:
    text = "He appeared in films such as Heat and Ronin."
    # "He appeared in films" = 2+1+8+1+2+1+5 = 20 → [0, 20); " such as " 20..29; "Heat" [29, 33); " and " 33..38;
    # "Ronin" [38, 43); the examples share "appeared in", not the noun "films"
    assert claims(text) == [
        (0, 20, "He appeared in films"),
        (29, 33, "He appeared in Heat"),
        (38, 43, "He appeared in Ronin"),
    ]
    text = "She produced hits like Judwaa (1997)."
    # "She produced hits" = 3+1+8+1+4 = 17 → [0, 17); " like " 17..23; "Judwaa" [23, 29); " (" 29..31;
    # "1997" [31, 35); no preposition before "hits": only the subject and verb are shared; the year in brackets
    # after the title is a claim about the title
    assert claims(text) == [
        (0, 17, "She produced hits"),
        (23, 29, "She produced Judwaa"),
        (31, 35, "Judwaa is from 1997"),
    ]
    # a lower-case word after "such as" is no named example: one claim
    assert len(claims("It uses metals such as copper.")) == 1


def test_a_noun_after_a_copula_then_best_known_for_gives_two_claims() -> None:
    text = "Doug Sheehan is an actor best known for his role as Ben."
    # "Doug Sheehan is an actor" = 4+1+7+1+2+1+2+1+5 = 24 → [0, 24); " " 24;
    # "best known for his role as Ben" = 4+1+5+1+3+1+3+1+4+1+2+1+3 = 30 → [25, 55): the copula is put back
    assert claims(text) == [
        (0, 24, "Doug Sheehan is an actor"),
        (25, 55, "Doug Sheehan is best known for his role as Ben"),
    ]
    text = "Acme was a firm based in Ulm."
    # "Acme was a firm" = 4+1+3+1+1+1+4 = 15 → [0, 15); "based in Ulm" = 5+1+2+1+3 = 12 → [16, 28)
    assert claims(text) == [(0, 15, "Acme was a firm"), (16, 28, "Acme was based in Ulm")]
    # without a copula before the noun nothing splits: "She wrote a book known for its wit" is one claim
    assert len(claims("She wrote a book known for its wit.")) == 1


def test_including_lists_named_items_and_a_leading_born() -> None:
    text = "He wrote for a range of networks, including CBS and NBC."
    # "He wrote for a range of networks" = 2+1+5+1+3+1+1+1+5+1+2+1+8 = 32 → [0, 32); ", including " 32..44;
    # "CBS" [44, 47); " and " 47..52; "NBC" [52, 55); "a range of" is a quantity: the items share "for"
    assert claims(text) == [
        (0, 32, "He wrote for a range of networks"),
        (44, 47, "He wrote for CBS"),
        (52, 55, "He wrote for NBC"),
    ]
    text = "He directed the series The Closer and Bones."
    # "He directed the series The Closer" = 2+1+8+1+3+1+6+1+3+1+6 = 33 → [0, 33); " and " 33..38; "Bones" [38, 43);
    # the name after the lower-case noun is the first item: "the series" is shared
    assert claims(text) == [
        (0, 33, "He directed the series The Closer"),
        (38, 43, "He directed the series Bones"),
    ]
    text = "Born in Lyon, Diallo joined Monaco."
    # "Born in Lyon" = 4+1+2+1+4 = 12 → [0, 12) with "Diallo was" in front (and "born" in lower case); ", " 12..14;
    # "Diallo joined Monaco" = 6+1+6+1+6 = 20 → [14, 34)
    assert claims(text) == [(0, 12, "Diallo was born in Lyon"), (14, 34, "Diallo joined Monaco")]


def test_participle_clauses_become_claims_in_the_simple_past() -> None:
    text = "He was a praetor before becoming a consul."
    # "He was a praetor" = 2+1+3+1+1+1+7 = 16 → [0, 16); " before becoming " 16..33; "a consul" [33, 41):
    # "becoming" → "became" goes in front with the subject
    assert claims(text) == [(0, 16, "He was a praetor"), (33, 41, "He became a consul")]
    text = "Valli returned to the stage, appearing in plays."
    # "Valli returned to the stage" = 5+1+8+1+2+1+3+1+5 = 27 → [0, 27); ", appearing " 27..39;
    # "in plays" [39, 47): "appearing" → "appeared" (stem "appear" + "ed")
    assert claims(text) == [(0, 27, "Valli returned to the stage"), (39, 47, "Valli appeared in plays")]
    text = "She is a donor, having established a fund."
    # "She is a donor" = 3+1+2+1+1+1+5 = 14 → [0, 14); ", having established " 14..35; "a fund" [35, 41)
    assert claims(text) == [(0, 14, "She is a donor"), (35, 41, "She had established a fund")]
    # "has also won": the adverb stays in the verb group, so items of an "including" list get the whole verb
    text = "She has also won awards, including a Grammy."
    # "She has also won awards" = 3+1+3+1+4+1+3+1+6 = 23 → [0, 23); ", including " 23..35; "a Grammy" [35, 43)
    assert claims(text) == [(0, 23, "She has also won awards"), (35, 43, "She has also won a Grammy")]


@pytest.mark.parametrize(
    ("gerund", "past"),
    # irregular by list; "stem + d" after an e; consonant + y → "ied"; else "stem + ed"
    [("becoming", "became"), ("retiring", "retired"), ("studying", "studied"), ("playing", "played")],
)
def test_past_tense_of_a_gerund(gerund: str, past: str) -> None:
    assert lexicon.past_tense(gerund) == past


def test_a_year_in_brackets_after_a_title_is_a_claim_about_the_title() -> None:
    text = "Hicks starred in A Bronx Tale (1993)."
    # "Hicks starred in A Bronx Tale" = 5+1+7+1+2+1+1+1+5+1+4 = 29 → [0, 29); " (" 29..31; "1993" [31, 35);
    # the title runs back over capitalised words to "in"
    assert claims(text) == [(0, 29, "Hicks starred in A Bronx Tale"), (31, 35, "A Bronx Tale is from 1993")]
    # a bracket that is no year, or a year not closing the clause, makes no claim of its own
    assert len(claims("Hicks starred in A Bronx Tale (a drama).")) == 1
    assert len(claims("The AX220 (2021) has a tank.")) == 1


def test_a_greeting_is_a_whole_word_not_the_start_of_a_name() -> None:
    text = "Sure! Surendra is a chef."
    # "Sure!" [0, 5) is a greeting; "Surendra is a chef" = 8+1+2+1+1+1+4 = 18 → [6, 24) starts with "Sure" but is
    # a name: a claim
    assert claims(text) == [(6, 24, "Surendra is a chef")]
    assert [s.reason for s in segment_v2(text).skipped] == [SkipReason.GREETING]


def test_brackets_after_the_subject_give_birth_and_death_claims() -> None:
    text = "Ada Lee (1957 - 2011) was a judge."
    # "Ada Lee (" 0..9; "1957" [9, 13); " - " 13..16; "2011" [16, 20); ") " 20..22; the predicate then starts at the
    # verb so no span overlaps another: "was a judge" = 3+1+1+1+5 = 11 → [22, 33) with the subject in front
    assert claims(text) == [
        (9, 13, "Ada Lee was born in 1957"),
        (16, 20, "Ada Lee died in 2011"),
        (22, 33, "Ada Lee was a judge"),
    ]
    text = "Wendy (born Son Seung-wan) is a singer."
    # "Wendy (" 0..7; "born Son Seung-wan" = 4+1+3+1+9 = 18 → [7, 25); ") " 25..27; "is a singer" [27, 38)
    assert claims(text) == [(7, 25, "Wendy was born Son Seung-wan"), (27, 38, "Wendy is a singer")]
    # "bin" between two names is a name particle, not German "bin": the subject is the whole name
    assert claims("Osama bin Laden was a militant.") == [(0, 30, "Osama bin Laden was a militant")]


def test_a_list_item_opens_like_the_first_item_after_its_preposition() -> None:
    text = "His works hang in the halls of the Prado in Madrid and the Louvre in Paris."
    # "His works hang in the halls of the Prado in Madrid" = 3+1+5+1+4+1+2+1+3+1+5+1+2+1+3+1+5+1+2+1+6 = 50 →
    # [0, 50); " and " 50..55; "the Louvre in Paris" = 3+1+6+1+2+1+5 = 19 → [55, 74); the second item opens with
    # "the" as the first does after "of": "in the halls of" is shared, not "… the Prado in"
    assert claims(text) == [
        (0, 50, "His works hang in the halls of the Prado in Madrid"),
        (55, 74, "His works hang in the halls of the Louvre in Paris"),
    ]


def test_a_year_after_a_place_of_birth_is_a_claim_of_its_own() -> None:
    text = "He was born in Lyon, France in 1994."
    # "He was born in Lyon" = 2+1+3+1+4+1+2+1+4 = 19 → [0, 19); ", " 19..21; "France" [21, 27) is where Lyon lies;
    # " " 27; "in 1994" [28, 35) gets "He was born" in front
    assert claims(text) == [
        (0, 19, "He was born in Lyon"),
        (21, 27, "Lyon is in France"),
        (28, 35, "He was born in 1994"),
    ]
    # without a birth or a death the year stays with its predicate
    assert len(claims("He joined Real Madrid in 1995.")) == 1


def test_a_place_after_a_place_and_a_where_clause() -> None:
    text = "Acme is a fashion house in Milan, Italy."
    # "Acme is a fashion house in Milan" = 4+1+2+1+1+1+7+1+5+1+2+1+5 = 32 → [0, 32); ", " 32..34; "Italy" [34, 39)
    assert claims(text) == [(0, 32, "Acme is a fashion house in Milan"), (34, 39, "Milan is in Italy")]
    # a list of places is no place in a place: "He lived in Paris" / "… London" / "… Berlin"
    assert [c[2] for c in claims("He lived in Paris, London and Berlin.")] == [
        "He lived in Paris",
        "He lived in London",
        "He lived in Berlin",
    ]
    text = "Lee attended Yale, where he studied law."
    # "Lee attended Yale" = 3+1+8+1+4 = 17 → [0, 17); ", where he " 17..28; "studied law" [28, 39): the pronoun's
    # place is taken by the subject
    assert claims(text) == [(0, 17, "Lee attended Yale"), (28, 39, "Lee studied law")]


def test_verbs_sharing_one_object_stay_one_verb_group() -> None:
    text = "Lee has written and directed films and operas."
    # "Lee has written and directed films" = 3+1+3+1+7+1+3+1+8+1+5 = 34 → [0, 34); " and " 34..39;
    # "operas" [39, 45): both verbs go in front of the second object
    assert claims(text) == [
        (0, 34, "Lee has written and directed films"),
        (39, 45, "Lee has written and directed operas"),
    ]
    # "Washington, DC" is one place, not "Washington is in DC"
    assert claims("He lives in Washington, DC.") == [(0, 26, "He lives in Washington, DC")]
