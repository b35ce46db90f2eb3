"""The quick JSON parse under :func:`citeaudit.core.limits.load_json`: jiter gives a value only where the standard
parser gives the very same one, and everything it refuses is decided by the standard parser, as before."""

from __future__ import annotations

import json
import math
from typing import Any

import jiter
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.core import limits
from citeaudit.core.errors import InvalidValue, MalformedInput
from citeaudit.core.limits import MAX_INT, MIN_INT, load_json


def same(left: Any, right: Any) -> bool:
    """Equal values of equal types all the way down: dict keys in the same order, floats bit for bit (-0.0 is
    not 0.0), a bool never equal to an int."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(same(a, b) for a, b in zip(left, right, strict=True))
    if isinstance(left, float):
        return left.hex() == right.hex()
    return bool(left == right)


# Text without surrogates (a lone one is refused; a pair is a character and comes as itself), keys unique.
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
NUMBERS = st.one_of(
    st.integers(MIN_INT, MAX_INT),
    st.integers(-(2**70), 2**70),  # past SQLite's range too: refused by the walk, whichever parser read it
    st.floats(allow_nan=False, allow_infinity=False),
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(TEXT, inner, max_size=5)),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(VALUES, st.booleans(), st.sampled_from([None, 0, 2]))
def test_the_quick_parse_gives_what_the_standard_parser_gives(value: Any, ascii_only: bool, indent: int | None) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only, indent=indent)
    quick = limits._quick(text)
    # every document json.dumps writes from these values is one jiter takes: the quick way is the one used
    assert quick is not limits._UNPARSED
    assert same(quick, json.loads(text))


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(["{!r}", "{:.17e}", "{:.3g}", "{:.40f}"]))
def test_numbers_written_any_way_are_read_to_the_same_float(number: float, spelling: str) -> None:
    text = spelling.format(number).replace("inf", "1e999")
    assert same(limits._quick(text), json.loads(text))


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        '{"a": 1, "\\u0061": 2}',  # the same key, spelled with an escape
        '[{"x": {"k": 1, "k": 1}}]',
        "NaN",
        "[Infinity]",
        '{"n": -Infinity}',
        '"\\ud800"',
        '["\\udc00 after"]',
        "1e400",
        "[" * 101 + "]" * 101,
        "[" * 3000 + "]" * 3000,
        "9223372036854775808",
        "[1,]",
        '{"a": 1} {"b": 2}',
        "\ufeff[1]",
    ],
)
def test_what_the_quick_parse_refuses_is_decided_as_before(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each of these is refused, with the same error whether or not jiter reads it first."""
    with pytest.raises((InvalidValue, MalformedInput)) as quick:
        load_json(text, "x.json", "line 3")
    monkeypatch.setattr(limits, "_quick", lambda text: limits._UNPARSED)
    with pytest.raises((InvalidValue, MalformedInput)) as standard:
        load_json(text, "x.json", "line 3")
    assert type(quick.value) is type(standard.value)
    assert str(quick.value) == str(standard.value)


def test_a_document_is_read_by_jiter_when_it_can(monkeypatch: pytest.MonkeyPatch) -> None:
    """The standard parser is not reached for a document jiter takes (this fails if the quick way is dropped)."""

    class Unused:
        def decode(self, text: str) -> Any:
            raise AssertionError("the standard parser was used")

    monkeypatch.setattr(limits, "_DECODER", Unused())
    assert load_json('{"choices": [{"message": {"content": "é [1]"}}], "n": -0.0}', "x.json") == {
        "choices": [{"message": {"content": "é [1]"}}],
        "n": 0.0,
    }
    assert math.copysign(1, load_json("-0.0", "x.json")) == -1


def test_a_document_jiter_fails_on_is_read_by_the_standard_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    def refusing(data: bytes, **options: Any) -> Any:
        raise ValueError("refused")

    monkeypatch.setattr(jiter, "from_json", refusing)
    assert load_json('{"a": [1, 2.5, "b"]}', "x.json") == {"a": [1, 2.5, "b"]}


def test_text_utf8_cannot_hold_goes_the_standard_way() -> None:
    """A str with a lone surrogate in it (not an escape: no file read as UTF-8 gives one) is no document jiter
    reads; the standard parser reads it, as before."""
    assert limits._quick('["\ud800"]') is limits._UNPARSED
    assert load_json('["\ud800"]', "x.json") == json.loads('["\ud800"]')
