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


# -- bytes: read by jiter as they are, decided as their text is --------------------------------------------------


def outcome(read: Any) -> tuple[str, Any]:
    """What a read gave: ``("value", value)`` or ``("error", (type, message))``."""
    try:
        return "value", read()
    except (InvalidValue, MalformedInput) as exc:
        return "error", (type(exc), str(exc))


def as_text_was_read(data: bytes, bom: bool = True) -> Any:
    """``load_json`` of bytes as it read them before it gave them to jiter: decoded first, then read as text."""
    try:
        text = data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedInput("x.json", f"byte {exc.start}", "not UTF-8 text") from None
    return load_json(text, "x.json", "line 3")


def agree(data: bytes, bom: bool = True) -> None:
    kind, got = outcome(lambda: load_json(data, "x.json", "line 3", bom=bom))
    expected_kind, expected = outcome(lambda: as_text_was_read(data, bom))
    assert kind == expected_kind, (data, got, expected)
    assert same(got, expected) if kind == "value" else got == expected


# Bytes a document may be spoiled with: broken and overlong UTF-8, an encoded surrogate, a byte order mark, white
# space str.isspace knows and JSON does not, escapes of lone and paired surrogates.
SPOILERS = st.sampled_from(
    [
        *(
            b"\xff",
            b"\xc3",
            b"\xe2\x82",
            b"\xc0\xaf",
            b"\xed\xa0\x80",
            b"\xf4\x90\x80\x80",
            b"\xef\xbb\xbf",
            b"\xc2\xa0",
        ),
        *(b"\x1c", b"\x00", b'"\\ud800"', b'"\\ud83d\\ude00"', b"\\udc00", b"NaN", b"1e999", b"99999999999999999999"),
    ]
)


@settings(max_examples=400, deadline=None)
@given(VALUES, st.booleans(), st.sampled_from([None, 2]), st.booleans(), st.booleans(), st.data())
def test_bytes_are_read_as_their_text_is(
    value: Any, ascii_only: bool, indent: int | None, bom: bool, spoil: bool, data: st.DataObject
) -> None:
    """Whatever the bytes, ``load_json`` gives the value or the error it gives their text (what it gave them before
    jiter read bytes): UTF-8 is checked as strictly, a byte order mark is skipped only where allowed, and every
    limit and surrogate check still holds."""
    encoded = json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode()
    if spoil:
        at = data.draw(st.integers(0, len(encoded)))
        encoded = encoded[:at] + data.draw(SPOILERS) + encoded[at:]
    if data.draw(st.booleans()):
        encoded = b"\xef\xbb\xbf" + encoded
    agree(encoded, bom)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40))
def test_any_bytes_are_read_as_their_text_is(data: bytes) -> None:
    agree(data)
    agree(data, bom=False)


def test_a_paired_surrogate_escape_is_a_character_and_a_lone_one_is_refused() -> None:
    assert load_json(b'["\\ud83d\\ude00"]', "x.json") == ["\U0001f600"]
    with pytest.raises(InvalidValue, match=r"lone surrogate \\ud800"):
        load_json(b'["\\ud800"]', "x.json")


def test_bytes_go_to_jiter_without_being_decoded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A document in bytes is read by jiter as it is: neither the text's quick parse (which encodes the text again)
    nor the standard parser is reached (this fails if bytes are decoded first, as they were)."""

    class Unused:
        def decode(self, text: str) -> Any:
            raise AssertionError("the standard parser was used")

    def text_parse(text: str) -> Any:
        raise AssertionError("the bytes were decoded and read as text")

    monkeypatch.setattr(limits, "_DECODER", Unused())
    monkeypatch.setattr(limits, "_quick", text_parse)
    assert load_json('\ufeff{"a": ["é", 1.5]}'.encode(), "x.json") == {"a": ["é", 1.5]}
    # {"a": "\xff"}: the bad byte is the eighth, at offset 7
    with pytest.raises(MalformedInput, match=r"x\.json: byte 7: not UTF-8 text"):
        load_json(b'{"a": "\xff"}', "x.json")


# -- JSON Lines: split and read as bytes, as their text was ------------------------------------------------------


def payloads_as_text_read(data: bytes) -> list[tuple[str, Any]]:
    """What ``load_payloads`` gave when it decoded the file first and split the text: the file refused if it is
    not UTF-8; one document, else JSON Lines (lines split at line feeds, those ``str.strip`` leaves empty skipped,
    numbered among all), else the document's own error."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MalformedInput("x.jsonl", f"byte {exc.start}", "not UTF-8 text") from None
    try:
        whole = load_json(text, "x.jsonl")
    except MalformedInput as first_error:
        if not isinstance(first_error.__cause__, json.JSONDecodeError):
            raise
        lines = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
        if len(lines) < 2:
            raise first_error from None
        try:
            load_json(lines[0][1], "x.jsonl", f"line {lines[0][0]}")
        except MalformedInput as exc:
            if isinstance(exc.__cause__, json.JSONDecodeError):
                raise first_error from None
            raise
        return [(f"line {n}", load_json(line, "x.jsonl", f"line {n}")) for n, line in lines]
    return [(f"[{i}]", item) for i, item in enumerate(whole)] if isinstance(whole, list) else [("$", whole)]


# White space JSON allows, white space only str.isspace knows, and bytes that are not UTF-8 or not JSON.
FILLERS = st.sampled_from(
    ["", " ", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u2028", "\u3000", "\ufeff", "\x00", "x"]
)
LINES = st.one_of(
    VALUES.map(lambda value: json.dumps(value, ensure_ascii=False).encode()),
    st.lists(FILLERS, max_size=3).map(lambda parts: "".join(parts).encode()),
    st.tuples(FILLERS, VALUES, FILLERS).map(lambda t: (t[0] + json.dumps(t[1]) + t[2]).encode()),
    SPOILERS,
    st.just(b'{"a": 1'),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(LINES, max_size=6), st.booleans(), st.booleans())
def test_json_lines_read_as_bytes_give_what_their_text_gave(lines: list[bytes], bom: bool, last_feed: bool) -> None:
    """Every value at its location, or the same error, as when the file was decoded and split as text."""
    lines_agree(json_lines(lines, bom, last_feed))


def json_lines(lines: list[bytes], bom: bool, last_feed: bool) -> bytes:
    return (b"\xef\xbb\xbf" if bom else b"") + b"\n".join(lines) + (b"\n" if last_feed else b"")


def lines_agree(data: bytes) -> None:
    """``load_payloads`` of ``data`` gives every value at its location, or the same error, as its text did."""
    from citeaudit.ingest.payload import load_payloads

    kind, got = outcome(lambda: list(load_payloads(data, "x.jsonl")))
    expected_kind, expected = outcome(lambda: payloads_as_text_read(data))
    assert kind == expected_kind, (data, got, expected)
    if kind == "value":
        assert [location for location, _ in got] == [location for location, _ in expected]
        assert all(same(a, b) for (_, a), (_, b) in zip(got, expected, strict=True))
    else:
        assert got == expected


@pytest.mark.parametrize(
    "filler",
    [" ", "\t\r", "\x0b\x0c", "\x1c", " \x1d", "\x1e\x1f", "\x85", "\xa0", " \u2028", "\u3000", "\x00", "\ufeff"],
)
def test_a_line_of_white_space_is_skipped_as_its_text_was(filler: str) -> None:
    """A line ``str.strip`` leaves empty is blank, though its bytes are not ASCII white space (``\\x1c``-``\\x1f``,
    NEL, no-break space, the line separator, the ideographic space); NUL and a byte order mark are not white space,
    so that line is JSON that breaks."""
    from citeaudit.ingest.payload import load_payloads

    data = ('{"a": 1}\n' + filler + '\n{"b": 2}\n').encode()
    kind, got = outcome(lambda: list(load_payloads(data, "x.jsonl")))
    assert (kind, got) == outcome(lambda: payloads_as_text_read(data))
    if filler.strip():
        assert kind == "error"
        assert "line 2 column 1: invalid JSON" in got[1]
    else:  # lines 1 and 3 read, line 2 skipped
        assert got == [("line 1", {"a": 1}), ("line 3", {"b": 2})]


# -- The walk over every parsed document ---------------------------------------------------------------------------


def _depth(value: Any) -> int:
    """Containers nested in ``value``, counted the plain recursive way (a scalar 0, ``[]`` 1, ``[[1]]`` 2)."""
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


def _numbers_past(value: Any) -> bool:
    """An integer outside SQLite's range or an infinite float anywhere in ``value`` (a bool is no number)."""
    if isinstance(value, dict):
        return any(map(_numbers_past, value.values()))
    if isinstance(value, list):
        return any(map(_numbers_past, value))
    if isinstance(value, bool):
        return False
    return (isinstance(value, int) and not MIN_INT <= value <= MAX_INT) or (
        isinstance(value, float) and math.isinf(value)
    )


def _nest(value: Any, levels: list[bool]) -> Any:
    """``value`` inside one container a level: a list for True, an object for False."""
    for in_list in reversed(levels):
        value = [value] if in_list else {"k": value}
    return value


DEEP = st.tuples(
    VALUES, st.lists(st.booleans(), max_size=limits.MAX_DEPTH + 3), st.sampled_from([None, 2**63, -(2**63) - 1])
).map(lambda t: _nest(t[0] if t[2] is None else [t[0], t[2]], t[1]))
WIDE = st.recursive(
    st.one_of(SCALARS, st.just(math.inf), st.just(-math.inf)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(DEEP, WIDE), st.sampled_from([1, 3, limits.MAX_DEPTH]))
def test_the_walk_finds_what_a_plain_recursion_finds(value: Any, max_depth: int) -> None:
    """``past_limits`` (a walk compiled with the reading, no longer than ``max_depth`` deep) against the plain
    recursive definition: nested past ``max_depth``, or a number out of range, anywhere in the value."""
    from citeaudit.core.json_walk import past_limits

    expected = _depth(value) > max_depth or _numbers_past(value)
    assert past_limits(value, max_depth, MIN_INT, MAX_INT) is expected


# -- large documents jiter refuses: UTF-8 checked a piece at a time, JSON Lines refused from their first lines ----


@settings(max_examples=400, deadline=None)
@given(st.lists(LINES, max_size=6), st.booleans(), st.booleans(), st.integers(1, 9))
def test_a_large_file_is_decided_a_piece_at_a_time_as_its_whole_text_was(
    lines: list[bytes], bom: bool, last_feed: bool, piece: int
) -> None:
    """Each file taken as large (the pieces a few bytes): the same values at the same locations, or the same
    error, as when the whole text was decoded first."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(limits, "_SMALL_DOCUMENT", 0)
        patch.setattr(limits, "_UTF8_PIECE", piece)
        lines_agree(json_lines(lines, bom, last_feed))


@settings(max_examples=400, deadline=None)
@given(VALUES, st.booleans(), st.sampled_from([None, 2]), st.booleans(), st.lists(st.tuples(st.integers(0), SPOILERS)))
def test_a_large_document_is_read_as_its_text_is(
    value: Any, ascii_only: bool, indent: int | None, bom: bool, spoilers: list[tuple[int, bytes]]
) -> None:
    """One document, spread over lines or not, spoiled anywhere: read as large, the value or error of its text."""
    encoded = json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode()
    for at, spoiler in spoilers:
        at %= len(encoded) + 1
        encoded = encoded[:at] + spoiler + encoded[at:]
    for piece in (1, 2, 5):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(limits, "_SMALL_DOCUMENT", 0)
            patch.setattr(limits, "_UTF8_PIECE", piece)
            agree(encoded, bom)


def test_a_large_json_lines_file_is_never_decoded_whole() -> None:
    """Read as one document first, a JSON Lines file of 8 MB is refused from its first two lines: the memory taken on
    the way is far less than the file's size (its whole text would take at least that: one byte a character, two
    with a character past Latin-1 in it)."""
    import tracemalloc

    from citeaudit.ingest.payload import load_payloads

    answer = {"id": "r", "choices": [{"message": {"content": "AX220 ✓ " + "x" * 200}}]}
    line = json.dumps(answer, ensure_ascii=False) + "\n"
    data = (line * (8_000_000 // len(line))).encode()
    assert len(data) > 7_900_000
    assert not data.isascii()
    tracemalloc.start()
    try:
        first = next(load_payloads(data, "x.jsonl"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert first == ("line 1", json.loads(line))
    assert peak < len(data) // 4, peak


def test_bytes_past_a_pieces_end_are_refused_where_the_whole_decoding_refuses_them() -> None:
    """A large file whose first piece ends inside a character, a bad byte right after that character: the same byte
    named as when the whole file was decoded (counted from the start, a byte order mark left out)."""
    piece = limits._UTF8_PIECE
    opening = b'{"a": 1}\n{"b": "'  # 16 bytes
    head = opening + b"y" * (piece - 1 - len(opening))  # "é" (c3 a9) starts at the piece's last byte
    data = b"\xef\xbb\xbf" + head + b"\xc3\xa9\xff" + b'"}\n' + b"q" * 100_000
    bad = piece + 1  # c3 at piece - 1, a9 at piece, the bad byte after them
    assert data[3 + bad] == 0xFF
    assert data[3 + piece - 1 : 3 + piece + 1] == b"\xc3\xa9"
    with pytest.raises(MalformedInput, match=rf"x\.jsonl: byte {bad}: not UTF-8 text"):
        load_json(data, "x.jsonl")
    with pytest.raises(UnicodeDecodeError) as whole:
        data.decode("utf-8-sig")
    assert whole.value.start == bad
