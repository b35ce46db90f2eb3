"""atomic-v1 against a fake chat-completions endpoint on 127.0.0.1 (the real wire format over a real socket):
facts anchored to the answer, unanchored facts kept and reported, responses cached by content, the prompt,
model and temperature in the fingerprint."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from builders import answer, document, protocol
from citeaudit.core.errors import SegmentationUnavailable
from citeaudit.core.model import Protocol
from citeaudit.core.protocol import fingerprint
from citeaudit.segment.atomic import AtomicSettings, ChatEndpoint, ResponseCache, decompose, prompt_sha256
from judge_servers import chat_server

Cli = Callable[..., Result]
TEXT = "The AX220 has a 20 L tank and weighs 38 kg.[1]\nSources:\n[1]: https://brand.com/ax220"
S1 = "https://brand.com/ax220"


def _facts(*pairs: tuple[str, str]) -> str:
    return json.dumps({"facts": [{"fact": fact, "span": words} for fact, words in pairs]})


def test_facts_are_anchored_unanchored_ones_kept_and_responses_cached(tmp_path: Path) -> None:
    text = "The AX220 has a 20 L tank and weighs 38 kg.[1] Is it loud?"
    cache = ResponseCache(tmp_path / "cache")
    settings = AtomicSettings(model="test-model")
    with chat_server() as server:
        server.reply_message(
            _facts(
                ("The AX220 has a 20 L tank.", "has a 20 L tank"),
                ("The AX220 weighs 38 kg.", "weighs 38 kg"),
                ("The AX220 is red.", "red"),  # words not in the sentence: unanchored
            )
        )
        endpoint = ChatEndpoint(server.base_url, api_key="sk-test")
        outcome = decompose(text, (), settings, endpoint, cache)
        endpoint.close()
        (request,) = server.requests
        headers = server.headers[0]
    # "has a 20 L tank" starts at 10 ("The AX220 " is 10 characters) and is 15 long → [10, 25);
    # "weighs 38 kg" starts at 30 → [30, 42); the unanchored fact keeps the sentence's span [0, 42)
    claims = [(c.start, c.end, c.text) for c in outcome.segmented.claims]
    assert claims == [
        (0, 42, "The AX220 is red."),
        (10, 25, "The AX220 has a 20 L tank."),
        (30, 42, "The AX220 weighs 38 kg."),
    ]
    assert [u.fact for u in outcome.unanchored] == ["The AX220 is red."]
    # the question is not sent: only the one sentence that asserts something
    assert (outcome.asked, outcome.cached, outcome.segmented.skipped_counts()) == (1, 0, {"question": 1})
    assert request["model"] == "test-model"
    assert request["temperature"] == 0.0
    assert request["messages"][1]["content"] == "Sentence:\nThe AX220 has a 20 L tank and weighs 38 kg"
    assert headers["authorization"] == "Bearer sk-test"
    # the marker after the full stop (at 43) belongs to every fact of the sentence
    assert outcome.segmented.claims_at(43) == (0, 1, 2)
    # a rerun asks nothing: the server is gone, the cache answers, the claims are the same
    again = decompose(text, (), settings, None, cache)
    assert (again.asked, again.cached) == (0, 1)
    assert again.segmented.claims == outcome.segmented.claims
    # another model is another request: not in the cache, and without an endpoint that is an error
    with pytest.raises(SegmentationUnavailable, match="not cached"):
        decompose(text, (), AtomicSettings(model="other"), None, cache)


def test_a_response_without_readable_facts_keeps_the_sentence(tmp_path: Path) -> None:
    with chat_server() as server:
        server.reply_message("I cannot help with that.")
        endpoint = ChatEndpoint(server.base_url)
        outcome = decompose("The AX220 is rated IP54.", (), AtomicSettings("m"), endpoint, ResponseCache(tmp_path))
        endpoint.close()
    # "The AX220 is rated IP54" = 23 characters → [0, 23), one claim, counted as malformed
    assert [(c.start, c.end, c.text) for c in outcome.segmented.claims] == [(0, 23, "The AX220 is rated IP54")]
    assert outcome.malformed == 1


def test_an_endpoint_error_is_a_clear_error(tmp_path: Path) -> None:
    with chat_server() as server:  # no canned reply: the server answers 500
        endpoint = ChatEndpoint(server.base_url)
        with pytest.raises(SegmentationUnavailable, match="answered 500"):
            decompose("The AX220 is rated IP54.", (), AtomicSettings("m"), endpoint, ResponseCache(tmp_path))
        endpoint.close()


def test_prompt_hash_is_pinned_to_its_version() -> None:
    # The prompt version and the hash recorded for it: a prompt edited without a new version fails here.
    from citeaudit.segment import atomic

    assert (atomic.PROMPT_VERSION, prompt_sha256()) == (
        "1",
        "cf734b413f465b99667b782e20f45b21e54cd7f2f9b6249f8cef53e75a72721b",
    )


def test_prompt_model_and_temperature_enter_the_fingerprint() -> None:
    prints = {
        fingerprint(Protocol("p", "1", segmentation=settings.segmentation()))
        for settings in (AtomicSettings("a"), AtomicSettings("b"), AtomicSettings("a", temperature=0.7))
    }
    assert len(prints) == 3
    parameters = dict(AtomicSettings("a").segmentation().parameters)
    assert parameters["prompt_sha256"] == json.dumps(prompt_sha256())


def test_segment_with_atomic_v1_through_the_cli(
    cli: Cli, tmp_path: Path, write_json: Callable[[Any, str], Path]
) -> None:
    ans = answer("a1", text=TEXT, citations=[S1])
    claims = [{"id": "c1", "answer_id": "a1", "text": TEXT[0:42], "start": 0, "end": 42}]
    edges = [{"claim_id": "c1", "url": S1, "marker": "[1]", "start": 43, "end": 46}]
    db = tmp_path / "atomic.db"
    ingested = cli("ingest", write_json(document([ans], claims, edges, proto=protocol()), "a.json"), "--db", db)
    assert ingested.exit_code == 0, ingested.stderr
    with chat_server() as server:
        server.reply_message(
            _facts(("The AX220 has a 20 L tank.", "has a 20 L tank"), ("The AX220 weighs 38 kg.", "weighs 38 kg"))
        )
        result = cli(
            "segment",
            "--db",
            db,
            "--method",
            "atomic-v1",
            "--base-url",
            server.base_url,
            "--model",
            "m",
            "--format",
            "json",
        )
        assert result.exit_code == 0, result.stderr
        report = json.loads(result.stdout)
        # the sources block after the sentence is never sent nor a claim
        assert len(server.requests) == 1
    # two facts, both new; the marker after the full stop gives each a pending edge to S1
    assert (report["method"], report["new"], report["edges_pending"], report["asked"]) == ("atomic-v1", 2, 2, 1)
    assert report["claims_per_answer"] == {"2": 1}
    assert report["skipped"] == {"reference": 2}
    with sqlite3.connect(db) as raw:
        (method, version, parameters) = raw.execute(
            "SELECT method, version, parameters FROM claim_sets ORDER BY pk DESC LIMIT 1"
        ).fetchone()
    assert (method, version) == ("atomic-v1", "1")
    assert dict(json.loads(parameters))["model"] == '"m"'
    # rerun with --force: the server is gone, every response comes from the cache next to the database
    again = cli(
        "segment",
        "--db",
        db,
        "--method",
        "atomic-v1",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--model",
        "m",
        "--force",
        "--format",
        "json",
    )
    assert again.exit_code == 0, again.stderr
    body = json.loads(again.stdout)
    assert (body["asked"], body["cached"], body["kept"], body["new"]) == (0, 1, 2, 0)
    assert (tmp_path / "atomic.db.cache" / "atomic-v1").is_dir()
    missing = cli("segment", "--db", db, "--method", "atomic-v1", "--base-url", "http://127.0.0.1:9/v1")
    assert missing.exit_code == 2
    assert "needs a model name" in missing.stderr
