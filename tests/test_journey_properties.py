"""Invariants of the journey's parsing and matching, over generated input."""

from __future__ import annotations

import string
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from citeaudit.ingest.collection import from_pattern
from citeaudit.segment.claimsets import _as_current
from citeaudit.store.claimsets import CurrentClaim

WORD = st.text(alphabet=string.ascii_letters + string.digits + "-", min_size=1, max_size=8).filter(
    lambda w: not w.startswith("-") and not w.endswith("-") and "--" not in w
)
SENTENCE = st.lists(st.text(alphabet=string.ascii_letters, min_size=1, max_size=6), min_size=1, max_size=6).map(
    " ".join
)


@given(SENTENCE, st.sampled_from(["", ".", "!", "?", "…", "。"]), st.sampled_from(["", ".", "!", "?", "…", "。"]))
def test_a_claim_equal_up_to_trailing_punctuation_is_the_current_one(words: str, ours: str, theirs: str) -> None:
    current = CurrentClaim(7, "c7", words + theirs, 0, len(words + theirs))
    # the proposed claim ends where its own punctuation ends: same start, same words
    assert _as_current(words + ours, 0, len(words + ours), [current]) == (current.text, 0, current.end)


@given(SENTENCE, st.sampled_from([".", "!"]))
def test_other_words_or_another_start_are_never_the_current_claim(words: str, stop: str) -> None:
    current = CurrentClaim(7, "c7", words + stop, 0, len(words) + 1)
    longer = words + " more"
    assert _as_current(longer, 0, len(longer), [current]) == (longer, 0, len(longer))
    assert _as_current(words, 1, 1 + len(words), [current]) == (words, 1, 1 + len(words))


@given(
    st.lists(st.tuples(WORD, WORD, WORD, st.integers(min_value=1, max_value=99)), min_size=1, max_size=5, unique=True)
)
def test_a_name_pattern_gives_back_the_fields_the_names_were_made_from(rows: list[tuple[str, str, str, int]]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for question, engine, locale, repeat in rows:
            Path(folder, f"{question}__{engine}__{locale}__{repeat}.json").write_text("{}", encoding="utf-8")
        found, other = from_pattern(Path(folder), "{question}__{engine}__{locale}__{repeat}.json")
    assert other == []
    assert sorted((f.question, f.engine, f.locale, f.repeat) for f in found) == sorted(rows)
