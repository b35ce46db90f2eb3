"""Format detection decides from the structure of the first JSON value, read as a stream in bounded memory."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import Result

import citeaudit.ingest as ingest
from citeaudit.ingest import detect_reader, plan_imports
from citeaudit.ingest.shape import HEAD_BYTES, shape_of, shape_of_file

FIXTURES = Path(__file__).parent / "fixtures"
PROTOCOL = FIXTURES / "protocol.yaml"
Cli = Callable[..., Result]

LONG = "x" * (4 * HEAD_BYTES)  # far more than any byte window


def _anthropic_sorted() -> bytes:
    """An Anthropic message as recorders that sort keys write it: ``"type": "message"`` after a long content."""
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": LONG}],
        "stop_reason": "end_turn",
    }
    return json.dumps(body, sort_keys=True).encode()


def _chat_pretty() -> bytes:
    """A pretty-printed chat completion with ``object`` after a long ``choices``."""
    body = {
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": LONG + " ([a.example](https://a.example/))",
                    "annotations": [
                        {
                            "type": "url_citation",
                            "url_citation": {
                                "url": "https://a.example/",
                                "start_index": len(LONG) + 1,
                                "end_index": len(LONG) + 34,
                            },
                        }
                    ],
                },
            }
        ],
        "model": "gpt-4o-search-preview",
        "object": "chat.completion",
    }
    return json.dumps(body, indent=2).encode()


@pytest.mark.parametrize(
    ("data", "expected"),
    [(_anthropic_sorted(), "anthropic"), (_chat_pretty(), "openai-chat")],
    ids=["sorted", "pretty"],
)
def test_the_deciding_keys_after_a_long_value_are_still_seen(data: bytes, expected: str) -> None:
    assert data.index(b'"object"' if expected == "openai-chat" else b'"type": "message"') > HEAD_BYTES
    assert detect_reader(data, "x.json").name == expected


def _payloads() -> list[tuple[str, Any]]:
    found = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name not in ("markdown", "jsonl")):
        for path in sorted(folder.glob("*.json")):
            if "malformed" not in path.name:
                found.append((folder.name, json.loads(path.read_text(encoding="utf-8"))))
    return found


PAYLOADS = _payloads()


def _shuffled(value: Any, order: Any) -> Any:
    """``value`` with every object's keys in an order drawn by hypothesis (values unchanged)."""
    if isinstance(value, dict):
        keys = list(value)
        keys = sorted(keys, key=lambda k: order.draw(st.integers(0, 1000), label=f"key {k}"))
        return {k: _shuffled(value[k], order) for k in keys}
    if isinstance(value, list):
        return [_shuffled(item, order) for item in value]
    return value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index=st.integers(0, len(PAYLOADS) - 1), indent=st.sampled_from([None, 1, 2, 4]), order=st.data())
def test_detection_does_not_depend_on_key_order_or_layout(index: int, indent: int | None, order: Any) -> None:
    folder, payload = PAYLOADS[index]
    data = json.dumps(_shuffled(payload, order), indent=indent, ensure_ascii=False).encode()
    assert detect_reader(data, "x.json").name == folder


def test_memory_stays_bounded_whatever_the_first_value_holds(tmp_path: Path) -> None:
    # 20 MB of answer text and 50 000 keys that are data (one per system), then the deciding keys
    path = tmp_path / "big.json"
    with path.open("w", encoding="utf-8") as handle:
        handle.write('{"content": [{"type": "text", "text": "')
        for _ in range(20):
            handle.write("y" * 1_000_000)
        handle.write('"}], "systems": {')
        handle.write(", ".join(f'"system-{i}": {{"score": {i}}}' for i in range(50_000)))
        handle.write('}, "type": "message", "role": "assistant", "stop_reason": "end_turn"}')
    tracemalloc.start()
    try:
        shape = shape_of_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert shape.value_is("type", "message")
    assert shape.has("stop_reason")
    # a 64 KiB read buffer and at most 4096 recorded paths: well under 8 MB for a 21 MB file
    assert peak < 8_000_000
    assert len(shape.paths) <= 4096


def test_deep_nesting_is_skipped_without_recursion() -> None:
    data = b'{"type": "message", "deep": ' + b"[" * 200_000 + b"]" * 200_000 + b', "stop_reason": "end_turn"}'
    shape = shape_of(data)
    assert shape.value_is("type", "message")
    assert shape.has("stop_reason")


@pytest.mark.parametrize(
    ("data", "json_like"),
    [
        (b"[1]: https://brand.com/ax220\n\nThe AX220 [1].", False),  # a Markdown reference list, not a JSON list
        (b'[{"a": 1}]', True),
        (b"  \xef\xbb\xbf", False),
        (b"plain text", False),
    ],
)
def test_what_counts_as_json(data: bytes, json_like: bool) -> None:
    assert shape_of(data).json is json_like


def test_each_file_is_recognised_once_per_import(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = ingest.shape_of_file

    def counting(path: str | Path) -> Any:
        calls.append(str(path))
        return real(path)

    monkeypatch.setattr(ingest, "shape_of_file", counting)
    files = [FIXTURES / "anthropic" / "web-search.json", FIXTURES / "gemini" / "grounded.json"]
    result = cli("ingest", *files, "--db", tmp_path / "a.db", "--questions", PROTOCOL, "--question-id", "q01")
    assert result.exit_code == 0, result.output
    assert sorted(calls) == sorted(str(f) for f in files)


def test_a_paused_turn_file_is_planned_with_the_next_one(tmp_path: Path) -> None:
    paused = tmp_path / "a.json"
    paused.write_text(json.dumps({"type": "message", "content": [], "stop_reason": "pause_turn"}), encoding="utf-8")
    continued = tmp_path / "b.json"
    continued.write_text(json.dumps({"type": "message", "content": [], "stop_reason": "end_turn"}), encoding="utf-8")
    alone = tmp_path / "c.json"
    alone.write_text(json.dumps({"type": "message", "content": [], "stop_reason": "end_turn"}), encoding="utf-8")
    plan = plan_imports([paused, continued, alone])
    assert [p.files for p in plan] == [(str(paused), str(continued)), (str(alone),)]
    assert all(p.reader.name == "anthropic" for p in plan)
