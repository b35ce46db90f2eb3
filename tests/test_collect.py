"""``collect`` against local servers speaking each engine's wire format on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import Result

from citeaudit.collect import CollectSettings, collect, load_plan, split_locale
from citeaudit.core.errors import InvalidValue
from engine_server import FIXTURES, GOOD, EngineServer, Reply, engine_server, fixture_reply

Cli = Callable[..., Result]

KEYS = {
    "OPENAI_API_KEY": "sk-test-openai",
    "PERPLEXITY_API_KEY": "pplx-test",
    "GEMINI_API_KEY": "gem-test",
    "ANTHROPIC_API_KEY": "ant-test",
    "SERPAPI_API_KEY": "serp-test",
}
QUESTIONS = [
    {"id": "q01", "text": "What tank size does the AX220 have?", "locale": "en-GB"},
    {"id": "q02", "text": "Can the AX220 be used outdoors?", "locale": "en-GB"},
]


@pytest.fixture
def server() -> Iterator[EngineServer]:
    with engine_server() as running:
        yield running


def write_protocol(tmp_path: Path, engines: list[Any], **extra: Any) -> Path:
    document = {
        "id": "axtorp-collect",
        "version": "1",
        "official_domains": ["axtorp-machines.com"],
        "questions": QUESTIONS,
        "engines": engines,
        **extra,
    }
    path = tmp_path / "protocol.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


def fast(**changes: Any) -> CollectSettings:
    """Settings with quick retries, so tests do not sleep for real backoff; grounding links are resolved only
    where a test serves them (the fixtures' links point at the real redirect host)."""
    return CollectSettings(**{"backoff": 0.01, "max_attempts": 3, "resolve_redirects": False, **changes})


def rows(db: Path, sql: str, *args: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(sql, args).fetchall()


# -- the plan ----------------------------------------------------------------------------------------------


def test_plan_expands_questions_engines_locales_and_repeats(tmp_path: Path) -> None:
    path = write_protocol(
        tmp_path, ["openai", {"name": "gemini", "id": "gem"}, "anthropic"], locales=["en-GB", "de-DE"], repeats=2
    )
    plan = load_plan(path)
    tasks = list(plan.tasks())
    # 2 questions x 3 engines x 2 locales x 2 repeats = 24 tasks, all distinct
    assert len(tasks) == 2 * 3 * 2 * 2
    assert len({t.answer_id("c1") for t in tasks}) == 24
    assert tasks[0].run_id("c1") == "c1/openai/en-GB/1"
    assert tasks[0].answer_id("c1") == "c1/openai/en-GB/1/q01"
    # --engine and --repeats narrow and override: 2 questions x 1 engine x 2 locales x 1 repeat
    assert len(list(plan.tasks(["gem"], 1))) == 4


def test_plan_without_locales_uses_each_questions_locale(tmp_path: Path) -> None:
    questions = [{"id": "q1", "text": "A?", "locale": "de-DE"}, {"id": "q2", "text": "B?"}]
    path = write_protocol(tmp_path, ["openai"], questions=questions)
    assert [t.run_id("c") for t in load_plan(path).tasks()] == ["c/openai/de-DE/1", "c/openai/-/1"]


def test_plan_rejects_duplicate_engine_ids_and_unknown_engines(tmp_path: Path) -> None:
    with pytest.raises(InvalidValue, match=r"engines\[1\]\.id"):
        load_plan(write_protocol(tmp_path, ["openai", "openai"]))
    with pytest.raises(InvalidValue, match="engines"):
        load_plan(write_protocol(tmp_path, ["bing"]))


@pytest.mark.parametrize(
    ("locale", "expected"),
    [("en-GB", ("en", "GB")), ("de", ("de", None)), ("zh_Hans_CN", ("zh", "CN")), (None, (None, None))],
)
def test_split_locale(locale: str | None, expected: tuple[str | None, str | None]) -> None:
    assert split_locale(locale) == expected


# -- every engine, end to end ----------------------------------------------------------------------------


def test_every_engine_answers_once_per_task_with_its_documented_request(
    server: EngineServer, tmp_path: Path, db_path: Path
) -> None:
    engines = [{"name": name, "base_url": server.url} for name in GOOD]
    for name, fixture in GOOD.items():
        server.default(name, fixture_reply(fixture))
    plan = load_plan(write_protocol(tmp_path, engines))
    report = collect(db_path, plan, fast(collection="nov"), env=KEYS)
    # 2 questions x 6 engines x 1 locale x 1 repeat = 12 tasks, all answered
    assert report.planned == 12
    assert report.complete
    assert sum(report.outcomes.values()) == 12
    assert rows(db_path, "SELECT count(*) FROM answers") == [(12,)]
    assert rows(db_path, "SELECT count(DISTINCT run_pk) FROM answers") == [(6,)]
    assert rows(db_path, "SELECT state, count(*) FROM collection_tasks GROUP BY state") == [("done", 12)]
    # every raw response is archived and linked to its answer
    assert rows(
        db_path,
        "SELECT count(*) FROM answers a JOIN payloads p ON p.sha256 = a.payload_sha256",
    ) == [(12,)]
    # runs carry platform, requested model, locale and repeat (the sample dimension)
    assert ("nov/openai/en-GB/1", "openai", "gpt-5", "en-GB", 1) in rows(
        db_path, "SELECT id, platform, model, locale, sample FROM runs"
    )

    openai = server.requests_to("openai")[0]
    assert openai.headers["authorization"] == "Bearer sk-test-openai"
    assert openai.body["input"] in {q["text"] for q in QUESTIONS}
    assert openai.body["tools"] == [{"type": "web_search", "user_location": {"type": "approximate", "country": "GB"}}]
    assert openai.headers["user-agent"].startswith("citeaudit/")
    sonar = server.requests_to("perplexity")[0]
    assert sonar.body["web_search_options"] == {"user_location": {"country": "GB"}}
    gemini = server.requests_to("gemini")[0]
    assert gemini.headers["x-goog-api-key"] == "gem-test"
    assert gemini.body["tools"] == [{"google_search": {}}]
    anthropic = server.requests_to("anthropic")[0]
    assert anthropic.headers["x-api-key"] == "ant-test"
    assert anthropic.headers["anthropic-version"] == "2023-06-01"
    assert anthropic.body["tools"][0]["type"] == "web_search_20250305"
    serp = server.requests_to("serpapi")[0]
    assert serp.query["engine"] == ["google"]
    assert serp.query["gl"] == ["gb"]
    assert serp.query["hl"] == ["en"]
    assert serp.query["api_key"] == ["serp-test"]
    # the key is never recorded in the request log
    logged = [url for (url,) in rows(db_path, "SELECT url FROM collection_responses")]
    assert len(logged) == 12
    assert not any("serp-test" in url for url in logged)


def test_rerun_of_a_finished_collection_asks_nothing(server: EngineServer, tmp_path: Path, db_path: Path) -> None:
    server.default("openai", fixture_reply(GOOD["openai"]))
    plan = load_plan(write_protocol(tmp_path, [{"name": "openai", "base_url": server.url}]))
    collect(db_path, plan, fast(), env=KEYS)
    again = collect(db_path, plan, fast(), env=KEYS)
    assert (again.already_done, again.asked) == (2, 0)
    assert len(server.requests_to("openai")) == 2
    assert rows(db_path, "SELECT count(*) FROM answers") == [(2,)]


def test_429_then_success_honours_retry_after(server: EngineServer, tmp_path: Path, db_path: Path) -> None:
    server.script("anthropic", Reply(429, b'{"type": "error"}', {"Retry-After": "1"}))
    server.default("anthropic", fixture_reply(GOOD["anthropic"]))
    plan = load_plan(write_protocol(tmp_path, [{"name": "anthropic", "base_url": server.url}]))
    report = collect(db_path, plan, fast(engines=("anthropic",), concurrency=1), env=KEYS)
    assert report.complete
    first, second, _ = server.requests_to("anthropic")  # 2 tasks + 1 retry = 3 requests
    assert second.at - first.at >= 0.95  # waited the Retry-After second, not the 0.01 s backoff
    # the retried task made 2 attempts; both exchanges are in the request log
    assert rows(db_path, "SELECT attempts FROM collection_tasks ORDER BY attempts") == [(1,), (2,)]
    assert rows(db_path, "SELECT http_status FROM collection_responses ORDER BY pk") == [(429,), (200,), (200,)]


def test_500_is_retried_then_left_in_error_and_a_rerun_fills_the_gap(
    server: EngineServer, tmp_path: Path, db_path: Path, cli: Cli
) -> None:
    server.default("perplexity", Reply(500, b'{"error": "internal"}', {"Content-Type": "application/json"}))
    path = write_protocol(tmp_path, [{"name": "perplexity", "base_url": server.url}])
    args = ("collect", "--protocol", path, "--db", db_path, "--max-attempts", "2", "--max-wait", "0")
    result = cli(*args, env=KEYS)
    assert result.exit_code == 1
    assert "2 task(s) left in error: http_500" in result.stderr
    # 2 tasks x 2 attempts = 4 requests, no answer stored, nothing guessed
    assert len(server.requests_to("perplexity")) == 4
    assert rows(db_path, "SELECT count(*) FROM answers") == [(0,)]
    assert rows(db_path, "SELECT state, reason FROM collection_tasks") == [("error", "http_500")] * 2

    server.default("perplexity", fixture_reply(GOOD["perplexity"]))
    result = cli(*args, env=KEYS)
    assert result.exit_code == 0, result.stderr
    assert rows(db_path, "SELECT count(*) FROM answers") == [(2,)]
    assert rows(db_path, "SELECT DISTINCT state FROM collection_tasks") == [("done",)]


def test_malformed_json_is_archived_and_counted_never_a_silent_zero(
    server: EngineServer, tmp_path: Path, db_path: Path, cli: Cli
) -> None:
    server.script("openai", Reply(200, b'{"id": "resp_x", "output": [', {"Content-Type": "application/json"}))
    server.default("openai", fixture_reply(GOOD["openai"]))
    path = write_protocol(tmp_path, [{"name": "openai", "base_url": server.url}])
    result = cli("collect", "--protocol", path, "--db", db_path, "--concurrency", "1", env=KEYS)
    assert result.exit_code == 0, result.stderr
    assert rows(db_path, "SELECT outcome, count(*) FROM collection_tasks GROUP BY outcome ORDER BY outcome") == [
        ("answered", 1),
        ("malformed", 1),
    ]
    (body,) = rows(
        db_path,
        "SELECT p.body FROM collection_tasks t JOIN payloads p ON p.sha256 = t.payload_sha256 "
        "WHERE t.outcome = 'malformed'",
    )[0]
    assert bytes(body) == b'{"id": "resp_x", "output": ['
    assert rows(db_path, "SELECT status FROM ingest_failures") == [("failed",)]
    scored = cli("score", db_path, "--format", "json")
    assert json.loads(scored.stdout)["failed_answers"] == 1


def test_agent_http_200_failure_and_anthropic_tool_error_are_recorded(
    server: EngineServer, tmp_path: Path, db_path: Path
) -> None:
    server.default("perplexity-agent", fixture_reply("perplexity/agent-failed.json"))
    server.default("anthropic", fixture_reply("anthropic/tool-error.json"))
    engines = [{"name": "perplexity-agent", "base_url": server.url}, {"name": "anthropic", "base_url": server.url}]
    report = collect(db_path, load_plan(write_protocol(tmp_path, engines)), fast(), env=KEYS)
    # each engine: 2 questions -> 2 tasks with its failure outcome
    assert report.outcomes[("perplexity-agent", "engine_failed")] == 2
    assert report.outcomes[("anthropic", "retrieval_failed")] == 2
    assert rows(db_path, "SELECT count(*) FROM ingest_failures WHERE status = 'failed'") == [(2,)]
    assert rows(db_path, "SELECT retrieval, count(*) FROM answers GROUP BY retrieval") == [("failed", 2)]


def test_serpapi_lazy_overview_is_followed_up_at_once(server: EngineServer, tmp_path: Path, db_path: Path) -> None:
    token = json.loads((FIXTURES / "serpapi-ai-overview/page-token.json").read_text())["ai_overview"]["page_token"]
    server.script("serpapi", fixture_reply("serpapi-ai-overview/page-token.json"))
    server.default("serpapi", fixture_reply("serpapi-ai-overview/ai-overview-engine.json"))
    report = collect(
        db_path,
        load_plan(write_protocol(tmp_path, [{"name": "serpapi", "base_url": server.url}])),
        fast(concurrency=1),
        env=KEYS,
    )
    assert report.outcomes[("serpapi", "answered")] == 2
    follow_up = server.requests_to("serpapi")[1]
    assert follow_up.query["engine"] == ["google_ai_overview"]
    assert follow_up.query["page_token"] == [token]
    # 2 tasks, 3 responses archived and logged (the first task needed two)
    assert rows(db_path, "SELECT count(*) FROM collection_responses") == [(3,)]


def test_a_refused_key_stops_that_engine(server: EngineServer, tmp_path: Path, db_path: Path) -> None:
    server.default("gemini", Reply(401, b'{"error": {"code": 401}}', {"Content-Type": "application/json"}))
    plan = load_plan(write_protocol(tmp_path, [{"name": "gemini", "base_url": server.url}]))
    report = collect(db_path, plan, fast(concurrency=1), env=KEYS)
    # the first request is refused; the second task is not sent at all
    assert len(server.requests_to("gemini")) == 1
    assert report.not_attempted["gemini"] == 1
    assert not report.complete


def test_missing_key_fails_before_anything_is_written(tmp_path: Path, db_path: Path, cli: Cli) -> None:
    path = write_protocol(tmp_path, ["openai", "gemini"])
    result = cli("collect", "--protocol", path, "--db", db_path, env={"OPENAI_API_KEY": "x", "GEMINI_API_KEY": ""})
    assert result.exit_code == 2
    assert "GEMINI_API_KEY" in result.stderr
    assert not db_path.exists()


def test_dry_run_lists_tasks_without_keys(tmp_path: Path, db_path: Path, cli: Cli) -> None:
    path = write_protocol(tmp_path, ["openai"], repeats=2)
    result = cli("collect", "--protocol", path, "--db", db_path, "--dry-run", "--collection", "dec")
    assert result.exit_code == 0
    assert "4 tasks" in result.stdout  # 2 questions x 1 engine x 2 repeats
    assert "dec/openai/en-GB/2" in result.stdout
    assert not db_path.exists()


def test_bad_base_url_option_names_the_value(tmp_path: Path, db_path: Path, cli: Cli) -> None:
    path = write_protocol(tmp_path, ["openai"])
    result = cli("collect", "--protocol", path, "--db", db_path, "--base-url", "openai:localhost", env=KEYS)
    assert result.exit_code == 2
    assert "openai:localhost" in result.stderr


# -- kill and restart ----------------------------------------------------------------------------------


def test_killed_collection_resumes_without_duplicate_or_gap(server: EngineServer, tmp_path: Path) -> None:
    db = tmp_path / "killed.db"
    server.default("perplexity", Reply(**{**fixture_reply(GOOD["perplexity"]).__dict__, "delay": 0.4}))
    questions = [{"id": f"q{n:02d}", "text": f"Question {n} about the AX220?"} for n in range(8)]
    path = write_protocol(tmp_path, [{"name": "perplexity", "base_url": server.url}], questions=questions)
    command = [
        str(Path(sys.executable).parent / "citeaudit"),
        "collect",
        "--protocol",
        str(path),
        "--db",
        str(db),
        "--concurrency",
        "1",
    ]
    env = {**os.environ, **KEYS}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while len(server.requests_to("perplexity")) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    first_pass = len(server.requests_to("perplexity"))
    assert 4 <= first_pass < 8, "the kill must land mid-run"
    done_before = rows(db, "SELECT count(*) FROM collection_tasks WHERE state = 'done'")[0][0]
    assert done_before < 8

    finished = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
    # 8 tasks, 8 answers, one per question; each answer id once
    assert rows(db, "SELECT count(*), count(DISTINCT id) FROM answers") == [(8, 8)]
    assert rows(db, "SELECT count(DISTINCT question_pk) FROM answers") == [(8,)]
    assert rows(db, "SELECT DISTINCT state FROM collection_tasks") == [("done",)]
    # only the tasks not yet archived were asked again: at most the in-flight one is asked twice
    assert len(server.requests_to("perplexity")) <= 8 + 1


def test_collection_settings_do_not_change_the_fingerprint(tmp_path: Path) -> None:
    from citeaudit.core.protocol import fingerprint

    with_engines = load_plan(write_protocol(tmp_path, ["openai"], locales=["de-DE"], repeats=3)).protocol
    without = load_plan(write_protocol(tmp_path, [])).protocol
    assert fingerprint(with_engines) == fingerprint(without)


# -- expiring grounding links ------------------------------------------------------------------------------


def test_gemini_grounding_redirects_are_resolved_while_collecting(
    server: EngineServer, tmp_path: Path, db_path: Path
) -> None:
    pytest.importorskip("trafilatura")
    from citeaudit.sources import ResolveSettings

    port = server.url.rsplit(":", 1)[1]
    fixture = (FIXTURES / "gemini/grounded.json").read_text(encoding="utf-8")
    chunk_uri = r'"uri": "https://vertexaisearch\.cloud\.google\.com(/grounding-api-redirect/\w+)"'
    redirects = sorted(set(re.findall(chunk_uri, fixture)))
    assert len(redirects) == 4  # four grounding chunks, each behind its own redirect link
    for n, path in enumerate(redirects):
        server.pages[path] = Reply(302, b"", {"Location": f"http://axtorp-machines.com:{port}/page/{n}"})
        article = "AX220 tank 20 L. " * 20
        text = f"<html><head><title>Page {n}</title></head><body><article><p>{article}</p></article></body></html>"
        server.pages[f"/page/{n}"] = Reply(200, text.encode(), {"Content-Type": "text/html; charset=utf-8"})
    body = fixture.replace("https://vertexaisearch.cloud.google.com", f"http://vertexaisearch.cloud.google.com:{port}")
    document = json.loads(body)

    def fresh() -> bytes:
        document["responseId"] = f"r-{time.monotonic_ns()}"
        return json.dumps(document).encode()

    server.default("gemini", Reply(200, fresh, {"Content-Type": "application/json"}))
    hosts = (("vertexaisearch.cloud.google.com", "127.0.0.1"), ("axtorp-machines.com", "127.0.0.1"))
    plan = load_plan(write_protocol(tmp_path, [{"name": "gemini", "base_url": server.url}]))
    settings = fast(resolve_redirects=True, resolve=ResolveSettings(host_map=hosts, timeout=5.0))
    report = collect(db_path, plan, settings, env=KEYS)
    # both answers cite the same four links: each is resolved once, when the first answer arrives
    assert report.redirects_resolved == 4
    assert not report.redirects_failed
    resolved = rows(db_path, "SELECT url, resolved_url, status FROM sources ORDER BY resolved_url")
    assert [r[2] for r in resolved] == ["resolved"] * 4
    assert [r[1] for r in resolved] == [f"http://axtorp-machines.com:{port}/page/{n}" for n in range(4)]
    assert all("grounding-api-redirect" in r[0] for r in resolved)  # the raw redirect link is kept
