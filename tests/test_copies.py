"""Copy groups: constructed near-duplicates group together, distinct pages about the same product do not."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.core.support import independent_support
from citeaudit.sources.copies import CopySettings, Page, copy_groups, shingles
from conftest import SHARED

DATASHEET = [
    "Axtorp AX220 portable air compressor: technical data sheet, revision 3, March 2026.",
    "The AX220 is a belt-driven piston compressor for workshops and building sites with a 20 litre tank.",
    "Maximum working pressure is 10 bar and the free air delivery is 220 litres per minute at 6 bar.",
    "The motor is a 1.5 kW single-phase unit for 230 V mains supply with thermal overload protection.",
    "The housing is rated IP54, so the compressor may be used outdoors when it is sheltered from heavy rain.",
    "Noise is 68 dB(A) at one metre, measured according to ISO 2151 under full load conditions.",
    "Axtorp supplies spare parts for ten years after a model is discontinued and gives a three year warranty.",
    "Service is available through authorised partners in the European Union, the United Kingdom and Norway.",
]
OTHER_PAGE = [
    "Review: we tested the Axtorp AX220 compressor on a building site for two weeks in the rain.",
    "Our tester found the 20 litre tank refilled quickly, though the unit is loud at close range.",
    "The carrying handle is comfortable and the wheels cope with gravel, but the hose is short.",
    "Compared with rival machines at this price the AX220 delivers slightly more air at 6 bar.",
    "Verdict: a solid choice for tradespeople who need a small compressor that can work outdoors.",
    "Price at the time of testing was 389 euros including VAT from a large online retailer.",
]


def page(key: str, lines: list[str], **kwargs: object) -> Page:
    return Page(key, "\n".join(lines), **kwargs)  # type: ignore[arg-type]


def test_boilerplate_change_and_reordering_are_copies_a_review_is_not() -> None:
    original = page("axtorp", DATASHEET, date="2026-03-01", official=True)
    reblogged = page("blog", ["Home > Tools > Compressors", *DATASHEET, "Share this page", "© 2026 Tool News"])
    reordered = page("shop", [*DATASHEET[4:], *DATASHEET[:4], "Add to basket"], date="2026-02-01")
    review = page("review", OTHER_PAGE)
    result = copy_groups([reblogged, review, reordered, original])
    # one group of the three datasheet pages; the official page is the origin although another is older
    assert len(result.groups) == 1
    (group,) = result.groups
    assert group.origin == "axtorp"
    assert group.reason == "official"
    assert set(group.members) == {"axtorp", "blog", "shop"}
    assert "review" not in result.group_of()


def test_earliest_dated_member_is_the_origin_without_an_official_one() -> None:
    pages = [
        page("late", DATASHEET, date="2026-05-01"),
        page("early", [*DATASHEET, "Posted by admin"], date="2026-01-15"),
        page("undated", ["Menu", *DATASHEET]),
    ]
    (group,) = copy_groups(pages).groups
    assert (group.origin, group.reason) == ("early", "earliest")


def test_short_pages_are_counted_not_grouped() -> None:
    result = copy_groups([page("a", ["AX220 20 L tank"]), page("b", ["AX220 20 L tank"])])
    assert result.groups == ()
    assert result.too_short == ("a", "b")


def test_independent_support_counts_copy_groups_once() -> None:
    group_of = {"axtorp": 0, "blog": 0, "shop": 0}
    # three copies of one origin: one independent source, flagged
    assert independent_support(["axtorp", "blog", "shop"], group_of) == (1, True)
    # two copies and an independent review: two independent sources
    assert independent_support(["blog", "shop", "review"], group_of) == (2, False)
    # a single source is never "copies only"
    assert independent_support(["blog"], group_of) == (1, False)
    assert independent_support([], group_of) == (0, False)


def test_reordering_paragraphs_leaves_the_shingles_unchanged() -> None:
    assert shingles("\n".join(DATASHEET)) == shingles("\n".join(reversed(DATASHEET)))


VOCABULARY = ["alpha", "beta", "gamma", "delta", "tank", "bar", "litre", "pressure", "motor", "ax220"]
words = st.lists(st.sampled_from(VOCABULARY), min_size=40)


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(words, min_size=1, max_size=6), copies=st.integers(min_value=0, max_value=3))
def test_groups_partition_the_pages_and_exact_copies_always_group(texts: list[list[str]], copies: int) -> None:
    pages = [Page(f"p{i}", " ".join(t)) for i, t in enumerate(texts)]
    pages += [Page(f"copy{i}", pages[0].text) for i in range(copies)]
    result = copy_groups(pages, CopySettings(min_words=10))
    seen = [key for group in result.groups for key in group.members]
    assert len(seen) == len(set(seen))  # disjoint
    assert set(seen) <= {p.key for p in pages}
    assert all(group.origin == group.members[0] and len(group.members) >= 2 for group in result.groups)
    if copies:
        group_of = result.group_of()
        assert all(group_of[f"copy{i}"] == group_of["p0"] for i in range(copies))


def test_distinct_real_pages_are_not_grouped() -> None:
    folder = SHARED / "data" / "wice" / "claim"
    if not folder.exists():
        pytest.skip(f"WiCE data not found at {folder}")
    pages: dict[str, list[str]] = {}
    for split in ("dev", "test"):
        for line in (folder / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            pages.setdefault(row["evidence"][0], row["evidence"])
    result = copy_groups(Page(title, "\n".join(lines)) for title, lines in pages.items())
    # every grouped pair must really be near-identical: exact Jaccard of their shingle sets >= 0.7
    for group in result.groups:
        first = set(shingles("\n".join(pages[group.origin])))
        for key in group.members[1:]:
            other = set(shingles("\n".join(pages[key])))
            assert len(first & other) / len(first | other) >= 0.6, (group.origin, key)
    assert result.pages == len(pages)
    # exact all-pairs Jaccard over these 670 pages peaks at 0.46 (see the module docstring), far below 0.7
    assert result.groups == ()
