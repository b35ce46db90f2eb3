"""Saved event streams: the bytes of a streamed engine response, read as one event after another.

Two forms exist, and both are read here, by one parser:

- Server-Sent Events (``text/event-stream``), as the engines send them: blocks of ``field: value`` lines ended by
  a blank line, ``event:`` naming the event, ``data:`` holding its JSON (several ``data:`` lines joined with line
  feeds), ``id:`` and ``retry:`` ignored, lines starting with ``:`` comments, ``data: [DONE]`` the end of the
  stream (OpenAI). Lines end with CR LF, LF or CR.
- One event's JSON per line (JSON Lines), as SDK recorders keep them.

A stream whose connection was cut leaves its last event unfinished: its JSON breaks at the end of the file. That
event is not read; :class:`Events` says the stream was cut there (what came before is imported, marked
incomplete). A broken event anywhere else is an error naming its line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from citeaudit.core.errors import MalformedInput
from citeaudit.core.limits import load_json

__all__ = ["Event", "Events", "sse_like"]

_FIELD = re.compile(rb"(?:event|data|id|retry)[ \t]*:|:")
"""How the first line of a Server-Sent Events body starts (a field, or a comment)."""


def sse_like(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) starts a Server-Sent Events body: its first line that is not blank
    is a field (``data:``, ``event:``, ``id:``, ``retry:``) or a comment."""
    start = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    return _FIELD.match(start.lstrip(b" \t\r\n")) is not None


def _lf(text: str) -> str:
    """``text`` with every line end a line feed (CR LF and CR counted as one line end each, as SSE reads them)."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _ends_early(error: MalformedInput, data: str) -> bool:
    """Whether the JSON broke only because its text ended (a cut stream), not at a wrong character."""
    cause = error.__cause__
    if not isinstance(cause, json.JSONDecodeError):
        return False
    # a string cut off is reported where it starts; it can only be unterminated because the text ended
    return cause.pos >= len(data.rstrip()) or cause.msg.startswith("Unterminated string")


class Event(NamedTuple):
    """One event of a stream."""

    location: str
    """Where it is in the file (``line N``: the line its data starts on)."""
    name: str | None
    """The SSE ``event:`` name (``None`` without one, and for JSON Lines)."""
    value: Any
    """Its JSON value."""


class Events:
    """The events of a saved stream, read as they are iterated; after the iteration, :attr:`cut` says whether
    the stream ended inside an event and :attr:`done` whether it ended with ``[DONE]``."""

    def __init__(self, data: bytes, source: str, parsed: Iterable[tuple[str, Any]] | None = None) -> None:
        self.source = source
        self._parsed = parsed
        try:
            self._text = "" if parsed is not None else data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise MalformedInput(source, f"byte {exc.start}", "not UTF-8 text") from None
        self.sse = parsed is None and sse_like(data[:4096])
        self.cut: str | None = None
        """Where the unfinished last event starts (``line N``), when the stream was cut inside it."""
        self.done = False
        """The stream ended with ``data: [DONE]``."""
        self.count = 0
        """Events read so far."""

    @classmethod
    def of(cls, parsed: Iterable[tuple[str, Any]], source: str) -> Events:
        """Events already parsed: ``(location, value)`` of the elements of a JSON list, or of JSON Lines."""
        return cls(b"", source, parsed)

    def __iter__(self) -> Iterator[Event]:
        if self._parsed is not None:
            for location, value in self._parsed:
                self.count += 1
                yield Event(location, None, value)
            return
        pieces = self._sse() if self.sse else self._lines()
        pending: tuple[int, str | None, str] | None = None
        for piece in pieces:
            if pending is not None:
                yield self._event(*pending, last=False)
            pending = piece
        if pending is not None:
            event = self._event(*pending, last=True)
            if event is not None:
                yield event

    def _event(self, line: int, name: str | None, data: str, *, last: bool) -> Any:
        location = f"line {line}"
        try:
            value = load_json(data, self.source, location)
        except MalformedInput as exc:
            if last and _ends_early(exc, data):
                self.cut = location
                return None
            raise
        self.count += 1
        return Event(location, name, value)

    def _lines(self) -> Iterator[tuple[int, str | None, str]]:
        for number, line in enumerate(_lf(self._text).split("\n"), start=1):
            if line.strip():
                yield number, None, line

    def _sse(self) -> Iterator[tuple[int, str | None, str]]:
        # Split at blank lines first (one C call), then read each event's lines; line numbers are counted as it goes.
        line = 1
        for block in _lf(self._text).split("\n\n"):
            first = line
            line += block.count("\n") + 2
            if block.startswith("data: {") and "\n" not in block:  # nearly every event: one data line, no name
                yield first, None, block[6:]
                continue
            name: str | None = None
            data: list[str] = []
            start = first
            for number, text in enumerate(block.split("\n"), start=first):
                if not text:  # a further blank line inside the gap between events
                    if data:
                        yield from self._dispatch(start, name, data)
                    name, data = None, []
                    continue
                if text.startswith(":"):
                    continue
                field, _, value = text.partition(":")
                value = value.removeprefix(" ")
                if field == "data":
                    if not data:
                        start = number
                    data.append(value)
                elif field == "event":
                    name = value or None
            if data:
                yield from self._dispatch(start, name, data)

    def _dispatch(self, line: int, name: str | None, data: list[str]) -> Iterator[tuple[int, str | None, str]]:
        joined = "\n".join(data)
        if joined.strip() == "[DONE]":
            self.done = True
            return
        if joined.strip():
            yield line, name, joined
