"""Streamed responses put back together: the events of one engine's stream become the response document the same
request gives without streaming, which the engine's reader then reads like any other (one path from there on).

One reassembly per protocol:

- OpenAI Responses (also Azure OpenAI and xAI, which speak it): ``response.completed`` / ``response.incomplete`` /
  ``response.failed`` carry the whole response; before it, items are built from ``response.output_item.*``,
  ``response.content_part.*``, ``response.output_text.delta`` and ``response.output_text.annotation.added``;
- OpenAI Chat Completions and Perplexity Sonar (``chat.completion.chunk``): each choice's ``delta.content``
  joined, ``delta.annotations`` appended, the last ``finish_reason``; the other top-level fields of the last
  chunk win (Sonar repeats ``citations`` and ``search_results`` in every chunk);
- Anthropic Messages: ``message_start``, then ``content_block_start`` / ``content_block_delta`` (``text_delta``,
  ``citations_delta``, ``input_json_delta``, ``thinking_delta``) / ``content_block_stop``, ``message_delta``
  (``stop_reason``) and ``message_stop``; a paused turn and its continuation in one file are two messages, which
  the reader joins as it joins their non-streamed pair;
- Gemini ``streamGenerateContent``: chunks of one response (sharing a ``responseId``, or, in an event stream, up
  to the chunk with a ``finishReason``) merged: text parts joined in order, everything else from the last chunk
  that has it (``groundingMetadata`` comes with the last);
- Gemini Interactions (``event_type``): ``interaction.complete`` carries the interaction; before it, text comes
  from ``content.delta`` events.

A stream that ends before its final event (a cut connection) gives what it holds so far, with the reason it is
incomplete.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from citeaudit.core.errors import InvalidValue
from citeaudit.core.limits import load_json, shown
from citeaudit.ingest.events import Events
from citeaudit.ingest.payload import expect

__all__ = ["PROTOCOLS", "Reassembled", "event_of", "gemini_chunks", "reassemble"]


class Reassembled(NamedTuple):
    """One response document a stream holds."""

    location: str
    """Where its first event is."""
    payload: Any
    """The response, as the engine returns it without streaming."""
    cut: str | None = None
    """Why it is incomplete when the stream ended before its final event, else ``None``."""


_RESPONSES_FINAL = frozenset({"response.completed", "response.incomplete", "response.failed"})
_RESPONSES_PART_EVENTS: dict[str, tuple[str, type]] = {
    "response.content_part.added": ("part", dict),
    "response.content_part.done": ("part", dict),
    "response.output_text.delta": ("delta", str),
    "response.output_text.done": ("text", str),
    "response.output_text.annotation.added": ("annotation", dict),
    "response.refusal.delta": ("delta", str),
    "response.refusal.done": ("refusal", str),
}
"""Events about one content part of an output item: the field each carries, and its kind."""
_ANTHROPIC_EVENTS = frozenset(
    {"message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta"}
)


def event_of(protocol: str, value: Any) -> bool:
    """Whether a JSON value is a stream event of ``protocol`` (not a whole response)."""
    if not isinstance(value, dict):
        return False
    if protocol == "openai-responses":
        kind = value.get("type")
        return isinstance(kind, str) and kind.startswith("response.")
    if protocol == "openai-chat":
        return value.get("object") in ("chat.completion.chunk", "chat.completion.done")
    if protocol == "anthropic":
        return value.get("type") in _ANTHROPIC_EVENTS
    if protocol == "gemini-interactions":
        return isinstance(value.get("event_type"), str)
    return False


def _cut(what: str, events: Events) -> str:
    where = f"inside the event at {events.cut}" if events.cut else f"after {events.count} events"
    return f"stream cut off before {what} ({where})"


def _merge(target: dict[str, Any], update: Any) -> None:
    """The fields of ``update`` over ``target`` (``None`` values do not erase what an earlier event gave)."""
    if isinstance(update, dict):
        for key, value in update.items():
            if value is not None or key not in target:
                target[key] = value


# -- OpenAI Responses ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Response:
    envelope: dict[str, Any]
    items: dict[int, dict[str, Any]] = field(default_factory=dict)

    def part(self, value: dict[str, Any]) -> dict[str, Any] | None:
        index = value.get("output_index")
        item = self.items.get(index) if isinstance(index, int) else None
        if item is None:
            return None
        content = item.setdefault("content", [])
        index = value.get("content_index", 0)
        if not isinstance(index, int) or not isinstance(content, list) or index < 0:
            return None
        while len(content) <= index:
            content.append({"type": "output_text", "text": "", "annotations": []})
        part = content[index]
        return part if isinstance(part, dict) else None

    def document(self, status: str | None = None) -> dict[str, Any]:
        body = dict(self.envelope)
        body["output"] = [self.items[i] for i in sorted(self.items)]
        if status is not None:
            body["status"] = status
        return body


def _responses(events: Events) -> Iterator[Reassembled]:
    response: _Response | None = None
    start = ""
    for event in events:
        value = event.value
        kind = value.get("type") if isinstance(value, dict) else None
        if response is None:
            response, start = _Response({"object": "response", "output": []}), event.location
        if kind in _RESPONSES_FINAL:
            final = value.get("response")
            body = dict(final) if isinstance(final, dict) else response.document()
            if not body.get("output") and response.items:
                body["output"] = response.document()["output"]
            yield Reassembled(start, body)
            response = None
        elif kind in ("response.created", "response.in_progress", "response.queued"):
            if isinstance(value.get("response"), dict):
                response.envelope = {k: v for k, v in value["response"].items() if k != "output"}
        elif kind in ("response.output_item.added", "response.output_item.done"):
            index = expect(value.get("output_index"), int, events.source, f"{event.location}: output_index")
            item = expect(value.get("item"), dict, events.source, f"{event.location}: item")
            response.items[index] = copy.deepcopy(item) if kind.endswith("added") else item
        elif kind in _RESPONSES_PART_EVENTS:
            field_name, wanted = _RESPONSES_PART_EVENTS[kind]
            part = response.part(value)
            if part is None:
                raise InvalidValue(
                    events.source,
                    event.location,
                    f"a {kind} event for output item {shown(value.get('output_index'))}, content part "
                    f"{shown(value.get('content_index', 0))}, which no response.output_item.added opened",
                )
            given = expect(value.get(field_name), wanted, events.source, f"{event.location}: {field_name}")
            if kind.startswith("response.content_part"):
                part.clear()
                part.update(copy.deepcopy(given))
            elif kind == "response.output_text.delta":
                part["text"] = str(part.get("text") or "") + given
            elif kind == "response.output_text.done":
                part["text"] = given
            elif kind == "response.refusal.delta":
                part["type"], part["refusal"] = "refusal", str(part.get("refusal") or "") + given
            elif kind == "response.refusal.done":
                part["type"], part["refusal"] = "refusal", given
            else:
                _add_annotation(part, value)
        elif kind == "error" or (isinstance(value, dict) and kind is None and isinstance(value.get("error"), dict)):
            yield Reassembled(start, {"object": "response", "status": "failed", "output": [], "error": value})
            response = None
    if response is not None:
        yield Reassembled(start, response.document("in_progress"), _cut("response.completed", events))


def _add_annotation(part: dict[str, Any], value: dict[str, Any]) -> None:
    annotations = part.setdefault("annotations", [])
    index = value.get("annotation_index")
    if isinstance(annotations, list):
        if isinstance(index, int) and 0 <= index < len(annotations):
            annotations[index] = value["annotation"]
        else:
            annotations.append(value["annotation"])


# -- Chat Completions and Sonar -----------------------------------------------------------------------------


@dataclass(slots=True)
class _Completion:
    envelope: dict[str, Any]
    choices: dict[int, dict[str, Any]] = field(default_factory=dict)
    texts: dict[int, list[str]] = field(default_factory=dict)
    """Each choice's content pieces, joined once at the end."""
    finished: bool = False

    def add(self, chunk: dict[str, Any]) -> None:
        envelope = self.envelope
        for key, value in chunk.items():  # as _merge, without a copy of the chunk (this runs for every chunk)
            if key != "choices" and (value is not None or key not in envelope):
                envelope[key] = value
        choices = chunk.get("choices") or ()
        for raw in choices if isinstance(choices, list) else ():
            if not isinstance(raw, dict):
                continue
            index = raw.get("index", 0)
            index = index if isinstance(index, int) else 0
            choice = self.choices.get(index)
            if choice is None:
                choice = self.choices[index] = {
                    "index": index,
                    "message": {"role": "assistant"},
                    "finish_reason": None,
                }
                self.texts[index] = []
            message = choice["message"]
            delta = raw.get("delta")
            if isinstance(delta, dict):
                content = delta.get("content")
                if isinstance(content, str):
                    self.texts[index].append(content)
                if isinstance(delta.get("refusal"), str):
                    message["refusal"] = (message.get("refusal") or "") + delta["refusal"]
                if isinstance(delta.get("annotations"), list):
                    message.setdefault("annotations", []).extend(delta["annotations"])
            elif isinstance(raw.get("message"), dict):
                # no delta: the chunk carries the message so far
                message.update({k: v for k, v in raw["message"].items() if k != "content"})
                if isinstance(raw["message"].get("content"), str):
                    self.texts[index] = [raw["message"]["content"]]
            if raw.get("finish_reason") is not None:
                choice["finish_reason"] = raw["finish_reason"]
                self.finished = True

    def document(self) -> dict[str, Any]:
        body = dict(self.envelope)
        body["object"] = "chat.completion"
        for index, choice in self.choices.items():
            choice["message"]["content"] = "".join(self.texts[index])
        body["choices"] = [self.choices[i] for i in sorted(self.choices)]
        return body


def _chat(events: Events) -> Iterator[Reassembled]:
    completion: _Completion | None = None
    start = ""
    for event in events:
        value = event.value
        if not isinstance(value, dict):
            continue
        if completion is not None and value.get("id") != completion.envelope.get("id") and completion.finished:
            yield Reassembled(start, completion.document())
            completion = None
        if value.get("object") not in ("chat.completion.chunk", "chat.completion.done") and "choices" not in value:
            if isinstance(value.get("error"), dict):
                if completion is not None:
                    yield Reassembled(start, completion.document(), _cut("its last chunk", events))
                yield Reassembled(event.location, value)
                completion = None
            continue
        if completion is None:
            completion, start = _Completion({}), event.location
        if value.get("choices") is not None:
            expect(value["choices"], list, events.source, f"{event.location}: choices")
        completion.add(value)
    if completion is not None:
        cut = None if completion.finished else _cut("a finish_reason", events)
        yield Reassembled(start, completion.document(), cut)


# -- Anthropic Messages -------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Message:
    body: dict[str, Any]
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    inputs: dict[int, list[str]] = field(default_factory=dict)

    def document(self) -> dict[str, Any]:
        body = dict(self.body)
        body["content"] = [self.blocks[i] for i in sorted(self.blocks)]
        return body


def _block_delta(message: _Message, value: dict[str, Any], source: str, where: str) -> None:
    index, delta = value.get("index"), value.get("delta")
    block = message.blocks.get(index) if isinstance(index, int) else None
    if block is None or not isinstance(index, int) or not isinstance(delta, dict):
        raise InvalidValue(
            source, where, f"a delta for content block {shown(index)}, which no content_block_start opened"
        )
    kind = delta.get("type")
    if kind == "text_delta":
        block["text"] = str(block.get("text") or "") + str(delta.get("text") or "")
    elif kind == "citations_delta":
        citations = block.get("citations")
        block["citations"] = [*(citations if isinstance(citations, list) else []), delta.get("citation")]
    elif kind == "input_json_delta":
        message.inputs.setdefault(index, []).append(str(delta.get("partial_json") or ""))
    elif kind == "thinking_delta":
        block["thinking"] = str(block.get("thinking") or "") + str(delta.get("thinking") or "")


def _block_stop(message: _Message, index: Any, source: str, where: str) -> None:
    pieces = message.inputs.pop(index, None) if isinstance(index, int) else None
    if pieces is None:
        return
    joined = "".join(pieces)
    # The tool input arrives as pieces of JSON text: read, once joined, by the same bounded loader as any payload.
    message.blocks[index]["input"] = (
        load_json(joined, source, f"{where} (the tool input of block {index})") if joined.strip() else {}
    )


def _anthropic(events: Events) -> Iterator[Reassembled]:
    message: _Message | None = None
    start = ""
    for event in events:
        value = event.value
        kind = value.get("type") if isinstance(value, dict) else None
        if kind == "message_start":
            if message is not None:
                yield Reassembled(start, message.document(), _cut("message_stop", events))
            body = value.get("message")
            message, start = _Message(dict(body) if isinstance(body, dict) else {"type": "message"}), event.location
            message.body.setdefault("type", "message")
            continue
        if kind == "error":
            if message is not None:
                yield Reassembled(start, message.document(), _cut("message_stop", events))
            yield Reassembled(event.location, value)
            message = None
            continue
        if message is None or kind in (None, "ping"):
            continue
        if kind == "content_block_start":
            index = expect(value.get("index"), int, events.source, f"{event.location}: index")
            block = expect(value.get("content_block"), dict, events.source, f"{event.location}: content_block")
            message.blocks[index] = copy.deepcopy(block)
        elif kind == "content_block_delta":
            _block_delta(message, value, events.source, event.location)
        elif kind == "content_block_stop":
            _block_stop(message, value.get("index"), events.source, event.location)
        elif kind == "message_delta":
            _merge(message.body, value.get("delta"))
            usage = message.body.get("usage")
            if isinstance(value.get("usage"), dict):
                message.body["usage"] = {**(usage if isinstance(usage, dict) else {}), **value["usage"]}
        elif kind == "message_stop":
            yield Reassembled(start, message.document())
            message = None
    if message is not None:
        yield Reassembled(start, message.document(), _cut("message_stop", events))


# -- Gemini -------------------------------------------------------------------------------------------------


def _candidate(chunk: dict[str, Any]) -> dict[str, Any] | None:
    candidates = chunk.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    return first if isinstance(first, dict) else None


def _finished(chunk: dict[str, Any]) -> bool:
    candidate = _candidate(chunk)
    if candidate is None:
        return "promptFeedback" in chunk or "prompt_feedback" in chunk or "error" in chunk
    return bool(candidate.get("finishReason") or candidate.get("finish_reason"))


def _join_parts(parts: list[Any], more: Any) -> None:
    """Parts of a later chunk after those of the earlier ones: text joined to the text part before it (of the
    same kind: thought or answer), any other part kept as it is."""
    for part in more if isinstance(more, list) else []:
        last = parts[-1] if parts else None
        if (
            isinstance(part, dict)
            and isinstance(last, dict)
            and isinstance(part.get("text"), str)
            and isinstance(last.get("text"), str)
            and bool(part.get("thought")) == bool(last.get("thought"))
            and set(part) <= {"text", "thought", "thoughtSignature", "thought_signature"}
        ):
            merged = dict(last)
            merged.update(part)
            merged["text"] = last["text"] + part["text"]
            parts[-1] = merged
        else:
            parts.append(part)


def _gemini_merge(merged: dict[str, Any], chunk: dict[str, Any], source: str, location: str) -> None:
    candidate = _candidate(chunk)
    _merge(merged, {k: v for k, v in chunk.items() if k != "candidates"})
    if candidate is None:
        return
    target = _candidate(merged)
    if target is None:
        merged["candidates"] = [copy.deepcopy(candidate)]
        return
    content = candidate.get("content")
    into = target.setdefault("content", {})
    if isinstance(content, dict) and isinstance(into, dict):
        parts = into.setdefault("parts", [])
        if not isinstance(parts, list):  # not parts at all: the reader says so, naming them
            return
        if content.get("parts") is not None:
            expect(content["parts"], list, source, f"{location}: candidates[0].content.parts")
        _join_parts(parts, content.get("parts"))
        _merge(into, {k: v for k, v in content.items() if k != "parts"})
    _merge(target, {k: v for k, v in candidate.items() if k != "content"})


def _same_response(first: dict[str, Any], chunk: dict[str, Any]) -> bool:
    ids = [c.get("responseId", c.get("response_id")) for c in (first, chunk)]
    return ids[0] is not None and ids[0] == ids[1]


def gemini_chunks(payloads: Iterable[tuple[str, Any]], source: str, *, stream: bool) -> Iterator[Reassembled]:
    """Gemini responses, the chunks of a streamed one merged: consecutive chunks that share a ``responseId``, and
    in an event stream (``stream``) every chunk up to one with a ``finishReason``. A chunk with a ``finishReason``
    ends its response in either form (only a stream's last chunk has one), so one complete response given twice is
    two responses, which the import refuses as the same response twice, never one answer with its text doubled."""
    merged: dict[str, Any] | None = None
    first: dict[str, Any] = {}
    start = ""
    for location, payload in payloads:
        if not isinstance(payload, dict):
            if merged is not None:
                yield Reassembled(start, merged)
                merged = None
            yield Reassembled(location, payload)
            continue
        if merged is not None and not (stream or _same_response(first, payload)):
            yield Reassembled(start, merged)
            merged = None
        if merged is None:
            merged, first, start = {}, payload, location
        _gemini_merge(merged, payload, source, location)
        if _finished(payload):
            yield Reassembled(start, merged)
            merged = None
    if merged is not None:
        yield Reassembled(start, merged, "stream cut off before a finishReason" if stream else None)


def _gemini(events: Events) -> Iterator[Reassembled]:
    found = list(gemini_chunks(((e.location, e.value) for e in events), events.source, stream=True))
    for item in found:
        if item.cut is not None:
            yield item._replace(cut=_cut("a chunk with a finishReason", events))
        else:
            yield item


# -- Gemini Interactions ------------------------------------------------------------------------------------


def _interactions(events: Events) -> Iterator[Reassembled]:
    interaction: dict[str, Any] | None = None
    texts: dict[int, dict[str, Any]] = {}
    start = ""
    for event in events:
        value = event.value
        kind = value.get("event_type") if isinstance(value, dict) else None
        if interaction is None:
            interaction, texts, start = {"object": "interaction"}, {}, event.location
        if kind in ("interaction.start", "interaction.status_update", "interaction.complete"):
            body = value.get("interaction")
            if isinstance(body, dict):
                _merge(interaction, body)
            if kind == "interaction.complete":
                yield Reassembled(start, _interaction(interaction, texts))
                interaction = None
        elif kind in ("content.start", "content.delta"):
            index = value.get("index", 0)
            piece = value.get("content") if kind == "content.start" else value.get("delta")
            if isinstance(index, int) and isinstance(piece, dict):
                text = texts.setdefault(index, {"type": "text", "text": "", "annotations": []})
                if piece.get("type") == "text" and isinstance(piece.get("text"), str):
                    text["text"] += piece["text"]
                if isinstance(piece.get("annotations"), list):
                    text["annotations"].extend(piece["annotations"])
                if piece.get("type") not in (None, "text"):
                    text.setdefault("other", piece.get("type"))
        elif kind == "error":
            yield Reassembled(
                event.location, {"object": "interaction", "status": "failed", "error": value.get("error")}
            )
            interaction = None
    if interaction is not None:
        yield Reassembled(start, _interaction(interaction, texts), _cut("interaction.complete", events))


def _interaction(interaction: dict[str, Any], texts: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """The interaction; when the final event carried no output, the text the deltas gave."""
    if interaction.get("steps") or interaction.get("outputs"):
        return interaction
    body = dict(interaction)
    content = [{k: v for k, v in texts[i].items() if k != "other"} for i in sorted(texts) if "other" not in texts[i]]
    body["steps"] = [{"type": "model_output", "content": content}] if content else []
    return body


PROTOCOLS = {
    "openai-responses": _responses,
    "openai-chat": _chat,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "gemini-interactions": _interactions,
}
"""The reassembly of each protocol's event stream."""


def reassemble(protocol: str, events: Events) -> Iterator[Reassembled]:
    """The responses the events of a ``protocol`` stream hold, in order."""
    return PROTOCOLS[protocol](events)
