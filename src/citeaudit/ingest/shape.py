"""The shape of a file's first JSON value, read as a stream: what format detection decides from.

Detection cannot rely on a byte window: recorders that sort keys write Anthropic's ``"type": "message"`` after a
content list of hundreds of kilobytes, and pretty-printed chat completions put ``object`` after ``choices``. The
scanner here reads the first JSON value from start to end, a chunk at a time, and keeps only a bounded summary:
every key path (arrays written ``[]``, so ``choices[].message.annotations[].type``) up to a fixed depth, what
kind of value stands there, and the short string values seen at it (``"message"``, ``"url_citation"``). Long
strings are skipped without being kept, deeper nesting is skipped without recursion, and when the first value is
a list (a JSON list of payloads) only its first few elements are read. Memory stays bounded whatever the file's size.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["HEAD_BYTES", "Shape", "shape_of", "shape_of_file"]

HEAD_BYTES = 8192
"""Bytes kept as they are for readers of text formats (Markdown), which have no JSON structure."""

_CHUNK = 1 << 16
_MAX_DEPTH = 7
"""Nesting levels whose keys are recorded; deeper values are skipped. The deepest key detection reads is
``choices[].message.annotations[].type`` (level 6), one more inside a JSON list of payloads."""
_MAX_PATHS = 4096
"""Distinct key paths recorded at most (keys that are data, e.g. one per system, must not grow it unbounded)."""
_LIST_ELEMENTS = 16
"""Elements of a list of payloads that are read (a failed answer first must not hide the format)."""
_MAX_ELEMENTS = 64
"""Elements of each list whose structure is recorded; later ones are skipped."""
_MAX_KEYS = 256
"""Distinct keys recorded per object path."""
_MAX_VALUES = 16
"""Distinct short string values kept per path."""
_SHORT = 96
"""Longest string value kept, in bytes; longer ones (answer texts, encrypted blobs) are skipped."""

_WHITESPACE = re.compile(rb"[ \t\r\n]*")
_STRING_END = re.compile(rb'["\\]')
_LITERAL = re.compile(rb"-?[0-9][0-9.eE+\-]*|true|false|null")
_SKIP_RUN = re.compile(rb'(?:[^"\[\]{}]+|"[^"\\]*(?:\\.[^"\\]*)*")*', re.DOTALL)
"""Everything up to the next bracket, whole strings included (matched in one go, not token by token)."""


class _NotJson(Exception):
    """The bytes are not a JSON value (detection then falls back to the text readers)."""


class _Truncated(Exception):
    """The input ended inside the first value: what was read so far still has a shape."""


@dataclass(slots=True)
class _Stream:
    """Bytes read a chunk at a time; only the unread rest of the current chunk is kept."""

    read: Callable[[int], bytes]
    buf: bytes = b""
    pos: int = 0
    eof: bool = False

    def more(self) -> bool:
        if self.eof:
            return False
        chunk = self.read(_CHUNK)
        if not chunk:
            self.eof = True
            return False
        self.buf = self.buf[self.pos :] + chunk
        self.pos = 0
        return True

    def peek(self) -> int | None:
        """The next byte that is not white space (not consumed), ``None`` at the end."""
        while True:
            match = _WHITESPACE.match(self.buf, self.pos)
            assert match is not None
            self.pos = match.end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return None

    def expect(self, byte: bytes) -> None:
        found = self.peek()
        if found is None:
            raise _Truncated
        if found != byte[0]:
            raise _NotJson
        self.pos += 1

    def string(self, keep: int) -> str | None:
        """A string starting at the current ``"``: its value when at most ``keep`` bytes long, else ``None``."""
        self.pos += 1
        kept = bytearray()
        too_long = False
        while True:
            match = _STRING_END.search(self.buf, self.pos)
            if match is None:
                if not too_long:
                    kept += self.buf[self.pos :]
                self.pos = len(self.buf)
                if not self.more():
                    raise _Truncated
            else:
                piece_end = match.start()
                if match.group() == b'"':
                    if not too_long:
                        kept += self.buf[self.pos : piece_end]
                    self.pos = match.end()
                    break
                if match.end() >= len(self.buf):  # the escaped byte is in the next chunk
                    if not too_long:
                        kept += self.buf[self.pos : piece_end]
                    self.pos = piece_end
                    if not self.more():
                        raise _Truncated
                    continue
                if not too_long:
                    kept += self.buf[self.pos : match.end() + 1]
                self.pos = match.end() + 1
            if not too_long and len(kept) > keep:
                too_long, kept = True, bytearray()
        if too_long or len(kept) > keep:
            return None
        try:
            if b"\\" not in kept:  # no escapes (nearly every key and short value): the bytes are the text
                return kept.decode("utf-8")
            value: str = json.loads(b'"' + bytes(kept) + b'"')
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise _NotJson from None
        return value

    def literal(self) -> str:
        while True:
            match = _LITERAL.match(self.buf, self.pos)
            if match is None:
                raise _NotJson
            if match.end() < len(self.buf) or not self.more():
                self.pos = match.end()
                token = match.group()
                return "number" if token[:1] not in (b"t", b"f", b"n") else ("null" if token == b"null" else "bool")

    def skip(self) -> None:
        """Skip one value without recording anything (iteratively: nesting depth costs no stack). Inside a
        container only brackets and strings matter, so the scan jumps from one to the next."""
        found = self.peek()
        if found is None:
            raise _Truncated
        if found == ord('"'):
            self.string(0)
            return
        if found not in b"[{":
            self.literal()
            return
        depth = 0
        while True:
            run = _SKIP_RUN.match(self.buf, self.pos)
            assert run is not None  # the pattern matches the empty string
            self.pos = run.end()
            if self.pos >= len(self.buf):
                if not self.more():
                    raise _Truncated
                continue
            mark = self.buf[self.pos]
            if mark == ord('"'):  # a string the chunk cuts: read on into the next chunk
                self.string(0)
                continue
            self.pos += 1
            depth += 1 if mark in b"[{" else -1
            if depth == 0:
                return


@dataclass(slots=True)
class _Recorder:
    paths: dict[str, set[str]] = field(default_factory=dict)
    children: dict[str, set[str]] = field(default_factory=dict)

    def child(self, path: str, key: str | None) -> str:
        """The path of ``key`` under the object at ``path``; keys past the first few of one object (keys that
        are data, one per system or per id) share one path, so they cannot crowd out the keys that decide."""
        known = self.children.get(path)
        if known is None:
            if len(self.children) >= _MAX_PATHS:
                return f"{path}.…" if path else "…"
            known = self.children[path] = set()
        name = key if key is not None else "…"
        if name not in known:
            if len(known) >= _MAX_KEYS:
                name = "…"
            known.add(name)
        return f"{path}.{name}" if path else name

    def note(self, path: str, fact: str) -> None:
        facts = self.paths.get(path)
        if facts is None:
            if len(self.paths) >= _MAX_PATHS and "." in path:
                return  # top-level keys are always recorded (at most _MAX_KEYS of them)
            facts = self.paths[path] = set()
        if len(facts) < _MAX_VALUES + 6:  # six kinds of value, then a bounded number of strings
            facts.add(fact)


def _value(stream: _Stream, recorder: _Recorder, path: str, depth: int) -> None:
    found = stream.peek()
    if found is None:
        raise _Truncated
    if depth > _MAX_DEPTH:
        stream.skip()
        return
    if found == ord("{"):
        stream.pos += 1
        recorder.note(path, ":object")
        if stream.peek() == ord("}"):
            stream.pos += 1
            return
        while True:
            if stream.peek() != ord('"'):
                raise _Truncated if stream.peek() is None else _NotJson
            key = stream.string(_SHORT)
            stream.expect(b":")
            _value(stream, recorder, recorder.child(path, key), depth + 1)
            after = stream.peek()
            if after is None:
                raise _Truncated
            stream.pos += 1
            if after == ord("}"):
                return
            if after != ord(","):
                raise _NotJson
    elif found == ord("["):
        stream.pos += 1
        recorder.note(path, ":array")
        if stream.peek() == ord("]"):
            stream.pos += 1
            return
        element = 0
        while True:
            if element < _MAX_ELEMENTS:
                _value(stream, recorder, f"{path}[]", depth + 1)
            else:
                stream.skip()  # the first elements of a list show its shape; the rest only cost time
            element += 1
            after = stream.peek()
            if after is None:
                raise _Truncated
            stream.pos += 1
            if after == ord("]"):
                return
            if after != ord(","):
                raise _NotJson
    elif found == ord('"'):
        text = stream.string(_SHORT)
        recorder.note(path, ":string")
        if text is not None:
            recorder.note(path, text)
    else:
        recorder.note(path, ":" + stream.literal())


@dataclass(frozen=True, slots=True)
class Shape:
    """A summary of a file's first JSON value (of its first elements, merged, when that value is a list)."""

    json: bool
    """Whether the file starts with a JSON object or list (a truncated one included)."""
    paths: dict[str, frozenset[str]]
    """Key path → facts: ``:object``, ``:array``, ``:string``, ``:number``, ``:bool``, ``:null`` for the kinds of
    value seen there, and the short string values themselves."""
    head: bytes
    """The first :data:`HEAD_BYTES` bytes as they are, for text formats."""
    listed: bool = False
    """The first value is a list (of payloads): ``paths`` describe its first elements."""
    more: bool = False
    """Another value follows the first (JSON Lines)."""
    complete: bool = True
    """The first value was read to its end (``False`` for a truncated or broken document, whose shape is what was
    read before it ended or broke)."""
    stream: bool = False
    """The file is a saved Server-Sent Events stream: ``paths`` describe its first event's JSON."""

    def has(self, path: str) -> bool:
        """Whether ``path`` occurs."""
        return path in self.paths

    def values(self, path: str) -> frozenset[str]:
        """The short string values seen at ``path``."""
        return frozenset(v for v in self.paths.get(path, ()) if not v.startswith(":"))

    def value_is(self, path: str, *wanted: str) -> bool:
        """Whether one of ``wanted`` is a string value seen at ``path``."""
        facts = self.paths.get(path, frozenset())
        return any(w in facts for w in wanted)

    def fields(self, path: str = "") -> frozenset[str]:
        """The keys of the object(s) at ``path`` (``""``: the top level)."""
        prefix = f"{path}." if path else ""
        found = set()
        for name in self.paths:
            if name.startswith(prefix):
                rest = name[len(prefix) :]
                key = re.split(r"[.\[]", rest, maxsplit=1)[0]
                if key and not (not path and name.startswith("[")):
                    found.add(key)
        return frozenset(found)

    def any_path(self, predicate: Callable[[str], bool]) -> bool:
        """Whether some recorded path satisfies ``predicate``."""
        return any(predicate(name) for name in self.paths)


def _scan(read: Callable[[int], bytes]) -> Shape:
    stream = _Stream(read)
    stream.more()
    head = stream.buf[:HEAD_BYTES]
    if stream.buf.startswith(b"\xef\xbb\xbf"):
        stream.pos = 3
    recorder = _Recorder()
    first = stream.peek()
    if first is not None and first not in b"[{" and _SSE_START.match(stream.buf, stream.pos):
        return _first_event(stream, head)
    if first is None or first not in b"[{":
        return Shape(False, {}, head)
    listed = first == ord("[")
    complete = True
    more = False
    try:
        if listed:
            stream.pos += 1
            element = stream.peek()
            if element is not None and element in b"-0123456789tfn":
                # ``[1]: https://…`` opens a Markdown reference list; a list of payloads holds objects
                return Shape(False, {}, head)
            for _ in range(_LIST_ELEMENTS):
                if stream.peek() in (ord("]"), None):
                    break
                _value(stream, recorder, "", 1)
                if stream.peek() != ord(","):
                    break
                stream.pos += 1
        else:
            _value(stream, recorder, "", 0)
            more = stream.peek() is not None
    except _Truncated:
        complete = False
    except _NotJson:
        if len(recorder.paths) <= 1:
            return Shape(False, {}, head)
        # JSON that breaks further on: what was read before the break still says which reader should report it
        complete = False
    return Shape(True, {k: frozenset(v) for k, v in recorder.paths.items()}, head, listed, more, complete)


_SSE_START = re.compile(rb"(?:event|data|id|retry)[ \t]*:|:")
_SSE_EVENT_END = re.compile(rb"(?:\r\n|\r|\n)(?:\r\n|\r|\n)")
_SSE_DATA = re.compile(rb"^data:[ ]?(.*?)\r?$", re.MULTILINE)
_EVENT_BYTES = 1 << 22
"""Bytes read at most to find the end of a stream's first event carrying data."""


def _first_event(stream: _Stream, head: bytes) -> Shape:
    """The shape of the JSON in the first event of a Server-Sent Events body that carries data."""
    start = stream.pos
    while True:
        for end in _SSE_EVENT_END.finditer(stream.buf, start):
            block = stream.buf[start : end.start()]
            data = b"\n".join(match.group(1) for match in _SSE_DATA.finditer(block))
            if data.strip():
                shape = _scan(io.BytesIO(data).read)
                return Shape(shape.json, shape.paths, head, more=True, complete=shape.complete, stream=True)
            start = end.end()
        stream.pos = start  # what is kept when the next chunk is read
        if len(stream.buf) - start > _EVENT_BYTES or not stream.more():
            break
        start = stream.pos
    data = b"\n".join(match.group(1) for match in _SSE_DATA.finditer(stream.buf[start:]))
    shape = _scan(io.BytesIO(data).read)
    return Shape(shape.json, shape.paths, head, more=True, complete=False, stream=True)


def shape_of(data: bytes | Shape) -> Shape:
    """The shape of ``data``'s first JSON value (a :class:`Shape` is passed through)."""
    if isinstance(data, Shape):
        return data
    return _scan(io.BytesIO(data).read)


def shape_of_file(path: str | Path) -> Shape:
    """The shape of the first JSON value of the file at ``path``, read a chunk at a time."""
    with Path(path).open("rb") as handle:
        return _scan(handle.read)
