"""``collect`` continues a paused Anthropic turn as the Messages API documents, and stores the two as one answer.

The local server replays two real responses (../shared/data/engine-payloads/anthropic: a turn that stopped with
``pause_turn`` after ten searches, and the response to its continuation request) over a real socket.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from citeaudit.collect import CollectSettings, collect, load_plan
from conftest import SHARED
from engine_server import EngineServer, Reply, engine_server

RECORDINGS = SHARED / "data" / "engine-payloads" / "anthropic"
FIRST = RECORDINGS / "pydantic-pause-turn-first.json"
CONTINUED = RECORDINGS / "pydantic-pause-turn-continued.json"


def _recording(path: Path) -> bytes:
    if not path.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"the recorded engine payloads are missing at {path}: CI must have ../shared/data")
        pytest.skip(f"recorded engine payload not found at {path} (see ../shared/data/engine-payloads/SOURCES.md)")
    return path.read_bytes()


@pytest.fixture
def server() -> Iterator[EngineServer]:
    with engine_server() as running:
        yield running


def _plan(tmp_path: Path, base_url: str) -> Path:
    document = {
        "id": "sf-today",
        "version": "1",
        "official_domains": ["sf.gov"],
        "questions": [{"id": "q1", "text": "What is happening in San Francisco today?", "locale": "en-US"}],
        "engines": [{"name": "anthropic", "base_url": base_url}],
    }
    path = tmp_path / "protocol.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def test_a_paused_turn_is_continued_and_stored_as_one_answer(server: EngineServer, tmp_path: Path) -> None:
    first, continued = _recording(FIRST), _recording(CONTINUED)
    json_reply = {"Content-Type": "application/json"}
    server.script("anthropic", Reply(200, first, json_reply), Reply(200, continued, json_reply))
    db = tmp_path / "audit.db"
    settings = CollectSettings(backoff=0.01, max_attempts=1, resolve_redirects=False)
    report = collect(db, load_plan(_plan(tmp_path, server.url)), settings, env={"ANTHROPIC_API_KEY": "ant-test"})

    asked, continuation = server.requests_to("anthropic")
    # the continuation request is the first one with the paused response appended as the assistant turn
    paused = json.loads(first)
    assert continuation.body["messages"] == [
        *asked.body["messages"],
        {"role": "assistant", "content": paused["content"]},
    ]
    assert {k: v for k, v in continuation.body.items() if k != "messages"} == {
        k: v for k, v in asked.body.items() if k != "messages"
    }
    assert report.outcomes[("anthropic", "answered")] == 1

    with sqlite3.connect(db) as connection:
        answers = connection.execute("SELECT count(*) FROM answers").fetchone()[0]
        failures = connection.execute("SELECT count(*) FROM ingest_failures").fetchone()[0]
        claims = connection.execute("SELECT count(*) FROM claims").fetchone()[0]
        text = connection.execute("SELECT text FROM answers").fetchone()[0]
    # one answer, not an incomplete one: the 15 cited text blocks of the continuation are its claims, and its
    # text starts with the paused turn's lead-in
    assert (answers, failures, claims) == (1, 0, 15)
    assert text.startswith(paused["content"][1]["text"])
