"""Reading outside text within limits: bounded JSON and YAML loaders that refuse with file, place and value.

Every file citeaudit reads goes through :func:`load_json` or :func:`load_yaml`. Both refuse, with the file, the
line and column (or JSON path) and the offending value, what the standard parsers would take silently or die on:

- nesting deeper than :data:`MAX_DEPTH` levels (the standard parsers recurse once per level and die);
- a key given twice in one object or mapping (the standard parsers keep the last one silently);
- ``NaN`` and infinities (not JSON; they would print as ``NaN`` in results);
- integers outside SQLite's 64-bit range (they cannot be stored);
- lone UTF-16 surrogates such as ``"\\ud800"`` (valid JSON escapes, but no UTF-8 text can hold them);
- in YAML, more than :data:`MAX_YAML_ALIASES` aliases or a document that expands to more than
  :data:`MAX_YAML_NODES` nodes (a few hundred bytes of aliases can stand for billions of nodes).

The checks cost little on good input. JSON is parsed first by jiter (the parser under pydantic), told to refuse
a key given twice, ``NaN`` and infinities; one walk over the parsed containers then checks nesting and numbers, and
the surrogate scan runs only when the text holds a ``\\uD8xx``-style escape. Whatever jiter refuses is parsed again
by the standard library's parser with the checks above built in, which accepts what JSON allows and refuses the
rest with this module's own message; the text is read once more (bracket scan, pure-Python scanner) only after
a refusal, to say where. jiter is only the quick way to a value both parsers give: every value it gives is the
one the standard parser gives (``tests/test_json_quick.py`` holds them to that), and every refusal is the standard
parser's. A large document jiter refuses (every JSON Lines file, first read as one document) is checked as UTF-8 a
piece at a time, and when it ends on its first line with more on the next, refused from the text up to there, as
the standard parser stops there: no text of the whole file is made for it.
"""

from __future__ import annotations

import codecs
import json
import json.decoder
import json.scanner
import math
import re
from collections.abc import Callable
from typing import Any, Final

import jiter

from citeaudit.core.errors import InvalidValue, MalformedInput
from citeaudit.core.json_walk import past_limits

__all__ = [
    "MAX_DEPTH",
    "MAX_INPUT_BYTES",
    "MAX_INT",
    "MAX_REPEATS",
    "MAX_YAML_ALIASES",
    "MAX_YAML_NODES",
    "MIN_INT",
    "UNPARSED",
    "load_json",
    "load_toml",
    "load_yaml",
    "quick_json",
    "shown",
]

MAX_DEPTH = 100
"""Deepest nesting of arrays / objects (JSON) or sequences / mappings (YAML) accepted. Real payloads nest fewer
than 15 levels."""
MAX_INPUT_BYTES = 1_000_000_000
"""Largest file one import reads: the payload is kept whole in the database, and SQLite's largest value is 10⁹
bytes."""
MAX_INT = 2**63 - 1
"""Largest integer accepted: SQLite stores signed 64-bit integers."""
MIN_INT = -(2**63)
"""Smallest integer accepted."""
MAX_YAML_ALIASES = 100
"""Most aliases (``*name``) one YAML document may use."""
MAX_YAML_NODES = 1_000_000
"""Most nodes a YAML document may stand for once every alias is expanded."""
MAX_REPEATS = 1000
"""Most repeats of each question a protocol may ask for (``collect`` plans questions × engines × locales ×
repeats requests)."""


def shown(value: object, width: int = 80) -> str:
    """``repr(value)`` cut to ``width`` characters, so a message stays one readable line."""
    if isinstance(value, int) and value.bit_length() > 64 * 8:  # repr() refuses past 4 300 digits
        return f"<an integer of {len(hex(abs(value))) - 2} hex digits>"
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


class _Refused(Exception):
    """A value the loader refuses; the located second reading finds where it is."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.position: int | None = None


def _refuse_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a number JSON allows")


def _checked_int(text: str) -> int:
    if len(text) > 20:  # 19 digits and a sign at most; int() itself refuses past 4 300 digits
        raise _Refused(f"integer {shown(text, 40)} ({len(text.lstrip('-'))} digits) is outside the 64-bit range")
    value = int(text)
    if not MIN_INT <= value <= MAX_INT:
        raise _Refused(f"integer {shown(value, 40)} is outside the 64-bit range ({MIN_INT}..{MAX_INT})")
    return value


def _checked_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"number {text[:40]!r} is too large to be finite")
    return value


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"key {shown(key, 40)} is given twice in one object")
            seen.add(key)
    return mapping


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs, parse_constant=_refuse_constant)
_CHECKING_DECODER = json.JSONDecoder(
    object_pairs_hook=_unique_pairs,
    parse_int=_checked_int,
    parse_float=_checked_float,
    parse_constant=_refuse_constant,
)

_UNPARSED = object()


def _quick(text: str) -> Any:
    """``text`` parsed by jiter, or :data:`_UNPARSED` where it refuses it (a syntax error, a key given twice, ``NaN``
    or an infinity, a lone surrogate, nesting past its own guard, text UTF-8 cannot hold): the standard parser then
    decides. Strings are cached by jiter for keys only: the keys repeat, the values mostly do not. With it,
    :func:`load_json` of 20 000 Sonar answers takes about 0.7x the time it took with the standard parser and its
    duplicate-key hook, as JSON Lines and as one document (0.74 s against 1.11 s, 0.73 s against 1.01 s)."""
    try:
        encoded = text.encode()
    except UnicodeEncodeError:  # a lone surrogate in the text itself
        return _UNPARSED
    return _quick_bytes(encoded)


def _quick_bytes(data: bytes) -> Any:
    """:func:`_quick` of text already encoded (UTF-8 without a byte order mark): jiter's value, or
    :data:`_UNPARSED` where it refuses the bytes (bytes that are not UTF-8 among its refusals)."""
    try:
        return jiter.from_json(data, allow_inf_nan=False, catch_duplicate_keys=True, cache_mode="keys")
    except ValueError:
        return _UNPARSED


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKETS = str.maketrans({"[": "(", "{": "(", "]": ")", "}": ")"})
_BRACKET = re.compile(r"[\[\]{}]")
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_LONE_SURROGATE = re.compile(
    r"(?<!\\)(?:\\\\)*\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})(?<!\\)(?:\\\\)*\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(_SURROGATE_ESCAPE.pattern.encode("ascii"))
"""A surrogate escape in encoded text: :data:`_SURROGATE_ESCAPE`, the same pattern, of the bytes."""


def _line_column(text: str, position: int) -> str:
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return f"line {line} column {column}"


def _too_deep(text: str) -> int | None:
    """Position of the first bracket nested deeper than :data:`MAX_DEPTH`, or ``None``."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    # The brackets outside strings, as parentheses; each round removes the innermost pairs, so a document
    # nested n levels deep is empty after n rounds. All of it runs at C speed.
    parens = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_BRACKETS)
    for _ in range(MAX_DEPTH):
        parens = parens.replace("()", "")
        if not parens:
            return None
    # Too deep, or brackets that do not balance (then the parser reports the syntax error): walk them.
    outside = _STRING.sub(lambda m: " " * len(m.group()), text)
    depth = 0
    for match in _BRACKET.finditer(outside):
        if match.group() in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return match.start()
        else:
            depth -= 1
    return None


def _locate(text: str) -> int | None:
    """Where the pure-Python scanner refuses ``text``: the start of the innermost object or array."""
    decoder = json.JSONDecoder(
        object_pairs_hook=_unique_pairs,
        parse_int=_checked_int,
        parse_float=_checked_float,
        parse_constant=_refuse_constant,
    )

    def located(parse: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(s_and_end: tuple[str, int], *args: Any) -> Any:
            try:
                return parse(s_and_end, *args)
            except _Refused as exc:
                if exc.position is None:
                    exc.position = s_and_end[1] - 1
                raise

        return wrapper

    decoder.parse_object = located(json.decoder.JSONObject)  # type: ignore[attr-defined]
    decoder.parse_array = located(json.decoder.JSONArray)  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        decoder.decode(text)
    except _Refused as exc:
        return exc.position
    except ValueError:
        return None
    return None


def load_json(data: bytes | str, source: str, location: str = "", *, bom: bool = True) -> Any:
    """Parse one JSON document from ``data`` within the limits above.

    ``location`` (e.g. ``line 7`` of a JSON Lines file) prefixes the line / column given in errors. ``bom``: whether
    bytes may open with a UTF-8 byte order mark, which is then skipped (a file may; a line of JSON Lines after the
    first may not). Raises :class:`MalformedInput` for text that is not JSON or nests too deeply and
    :class:`InvalidValue` for a refused value; both name ``source``, where and what.
    """
    if isinstance(data, str):
        return _load_text(data, source, location, _quick(data))
    # Bytes go to jiter as they are, which checks their UTF-8 as strictly as Python's decoder does: they are decoded
    # only when jiter refuses them, or when a check below needs the text (a surrogate escape, a value past the
    # limits), and then decided as text is, jiter's value reused.
    body = data[len(codecs.BOM_UTF8) :] if bom and data.startswith(codecs.BOM_UTF8) else data
    value = _quick_bytes(body)
    if value is not _UNPARSED and _plain(value, body):
        return value
    if value is _UNPARSED and len(body) > _SMALL_DOCUMENT:
        # A large document jiter refused, above all a JSON Lines file read as one document: its bytes are checked a
        # piece at a time and the document's own error found in the text up to its second line, before any text of
        # the whole is made (one to four bytes for each of the file's characters; 30 MB of Sonar answers took 0.015 s)
        _check_utf8(body, source)
        _stop_after_first_line(body, source, location)
    try:
        text = data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedInput(source, f"byte {exc.start}", "not UTF-8 text") from None
    return _load_text(text, source, location, value)


_SMALL_DOCUMENT = 1 << 16
"""Bytes below which a document jiter refused is decoded whole at once: the pieces would not pay."""

_UTF8_PIECE = 1 << 18
"""Bytes of a large document checked as UTF-8 at a time (:func:`_check_utf8`): each piece's text, up to four times
its size, is all the memory the check takes."""

_JSON_BLANK = re.compile(rb"[^ \t\n\r]")
"""The first byte that is not JSON white space."""


def _check_utf8(body: bytes, source: str) -> None:
    """Refuse ``body`` where it is not UTF-8, with the error its whole decoding gives (the first bad byte, counted
    from the start of ``body``), a piece of :data:`_UTF8_PIECE` bytes at a time; ASCII at once, at C speed."""
    if body.isascii():
        return
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(body)
    start = 0
    try:
        while start < len(body):
            held = len(decoder.getstate()[0])  # an unfinished character from the piece before
            end = start + _UTF8_PIECE
            decoder.decode(view[start:end], final=end >= len(body))
            start = end
    except UnicodeDecodeError as exc:
        raise MalformedInput(source, f"byte {start - held + exc.start}", "not UTF-8 text") from None


def _stop_after_first_line(body: bytes, source: str, location: str) -> None:
    """Raise the error :func:`_load_text` gives for the whole of ``body`` (valid UTF-8, refused by jiter) when the
    document ends on its first line and something follows on another (every JSON Lines file): the standard parser
    stops at that first character after the first value, so the text up to it decides. Anything else returns: the
    whole text decides."""
    newline = body.find(b"\n")
    if newline < 0:
        return
    after = _JSON_BLANK.search(body, newline + 1)
    if after is None:
        return
    # whole characters only: the first character after the line feed may take several bytes
    prefix = codecs.getincrementaldecoder("utf-8")().decode(body[: after.start() + 4], final=False)
    try:
        _load_text(prefix, source, location, _UNPARSED)
    except MalformedInput as exc:
        cause = exc.__cause__
        if isinstance(cause, json.JSONDecodeError) and cause.msg == "Extra data" and cause.pos < len(prefix):
            raise
    except (InvalidValue, ValueError, RecursionError):  # a refusal inside the first value: the whole text decides
        pass


def _plain(value: Any, body: bytes) -> bool:
    """Whether jiter's ``value`` of ``body`` is the document as parsed within the limits: no surrogate escape in
    the bytes (their text decides), no nesting or number past the limits (decided again with the text at hand to
    say where)."""
    if _SURROGATE_ESCAPE_BYTES.search(body) is not None:
        return False
    try:
        return not past_limits(value, MAX_DEPTH, MIN_INT, MAX_INT)
    except (ValueError, RecursionError):
        return False


UNPARSED: Final = _UNPARSED
"""What :func:`quick_json` gives for a document that :func:`load_json` has to decide."""


def quick_json(data: bytes) -> Any:
    """:func:`load_json` of UTF-8 bytes without a byte order mark, in its common case only: the value where jiter
    takes them and they need no further look (see :func:`_plain`), else :data:`UNPARSED` (then call
    :func:`load_json`, which decides and says where). For a caller that parses many small documents."""
    value = _quick_bytes(data)
    return value if value is not _UNPARSED and _plain(value, data) else _UNPARSED


def _load_text(text: str, source: str, location: str, quick: Any) -> Any:
    """:func:`load_json` of ``text``, which jiter gave ``quick`` for (:data:`_UNPARSED` where it refused it)."""

    def where(position: int | None) -> str:
        if position is None:
            return location
        if location and "\n" not in text:  # one line of a JSON Lines file
            return f"{location} column {position + 1}"
        return f"{location} {_line_column(text, position)}".strip()

    refused: str | None = None
    # Parse first, at C speed, stopping at the first syntax error (JSON Lines read as one document fail fast);
    # the text is looked at again only when something is wrong, to say where.
    try:
        value = _DECODER.decode(text) if quick is _UNPARSED else quick
        past = past_limits(value, MAX_DEPTH, MIN_INT, MAX_INT)
    except json.JSONDecodeError as exc:
        # Chained, so a caller can tell a syntax error (JSON Lines may follow) from a broken limit.
        raise MalformedInput(source, where(exc.pos), f"invalid JSON: {exc.msg}") from exc
    except _Refused as exc:
        refused, past = exc.message, True
    except ValueError:  # int() refuses an integer over 4 300 digits before any check of ours sees it
        past = True
    except RecursionError:  # nested far deeper than the limit: the parser's own guard stopped it
        past = True
    if past:
        deep = _too_deep(text)
        if deep is not None:
            raise MalformedInput(source, where(deep), f"nested deeper than {MAX_DEPTH} levels")
        if refused is None:
            try:
                _CHECKING_DECODER.decode(text)
            except _Refused as exc:
                refused = exc.message
        # Located only now: the locating scanner recurses, so nesting is checked first.
        raise InvalidValue(source, where(_locate(text)), refused or "a value past the limits")
    if _SURROGATE_ESCAPE.search(text):
        lone = _LONE_SURROGATE.search(text)
        if lone is not None:
            escape = lone.group().lstrip("\\")
            raise InvalidValue(
                source,
                where(lone.end() - 6),
                f"lone surrogate \\{escape} in a string: not a character UTF-8 can store",
            )
    return value


def load_yaml(text: str, source: str) -> Any:
    """Parse one YAML document (JSON is YAML too) within the limits above; errors name line and column."""
    # The YAML loader is loaded on first use: reading JSON (every score of an audit file) needs no YAML.
    from citeaudit.core.bounded_yaml import load_bounded_yaml

    return load_bounded_yaml(text, source)


def _toml_refusal(document: dict[str, Any]) -> tuple[str, str] | None:
    """``(key path, reason)`` of the first value of a parsed TOML document past the limits, or ``None``."""
    stack: list[tuple[Any, str, int]] = [(document, "", 1)]
    while stack:
        node, where, level = stack.pop()
        if isinstance(node, dict | list):
            if level > MAX_DEPTH:
                return where, f"nested deeper than {MAX_DEPTH} levels"
            if isinstance(node, dict):
                stack.extend((child, f"{where}.{key}" if where else key, level + 1) for key, child in node.items())
            else:
                stack.extend((child, f"{where}[{i}]", level + 1) for i, child in enumerate(node))
        elif isinstance(node, int) and not isinstance(node, bool) and not MIN_INT <= node <= MAX_INT:
            return where, f"integer {shown(node, 40)} is outside the 64-bit range ({MIN_INT}..{MAX_INT})"
        elif isinstance(node, float) and not math.isfinite(node):
            return where, f"{node!r} is not a finite number"
    return None


def load_toml(text: str, source: str) -> dict[str, Any]:
    """Parse one TOML document within the limits above (nesting, 64-bit integers, finite numbers: TOML allows
    ``inf`` and ``nan``, which no setting can mean); errors name the line and column, or the key."""
    import tomllib  # only the project file is TOML: most commands never need the parser

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise MalformedInput(source, "", f"not valid TOML: {exc}") from None
    except RecursionError:  # the parser recurses once per nested array
        raise MalformedInput(source, "", f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:  # int() refuses an integer over 4 300 digits before the parser can say where
        raise InvalidValue(source, "", "an integer of over 4300 digits is outside the 64-bit range") from None
    refused = _toml_refusal(document)
    if refused is not None:
        where, reason = refused
        where = where if len(where) <= 60 else where[:57] + "..."
        kind = MalformedInput if reason.startswith("nested") else InvalidValue
        raise kind(source, where, reason)
    return document
