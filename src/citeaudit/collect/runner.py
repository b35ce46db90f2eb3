"""Ask every task of a plan once, archive each response before reading it, and store what the engine said.

The order of events for one task is fixed so that a kill at any moment loses nothing and repeats nothing:

1. the request (retried with exponential backoff on 429 and 5xx, honouring ``Retry-After``);
2. every response body archived and logged, then the usable one marked ``fetched``;
3. the archived body read by the engine's ingest reader and imported in one transaction;
4. the task marked ``done`` with its outcome, usage and cost;
5. for Gemini, the answer's grounding redirect links (which expire within weeks) resolved at once through
   the sources resolver, so the page they led to is known and snapshotted.

A rerun skips ``done`` tasks, imports ``fetched`` ones from the archive without asking again, and asks
``pending`` and ``error`` ones. The answer id is derived from the task, so an answer is never stored twice.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import random
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from citeaudit import __version__
from citeaudit.collect.engines import ENGINES, Engine, Request
from citeaudit.collect.ledger import Ledger, TaskRow
from citeaudit.collect.plan import CollectionPlan, EngineSpec
from citeaudit.core.errors import InputError, InvalidValue
from citeaudit.core.limits import load_json
from citeaudit.core.model import AnswerStatus, Audit, FailedAnswer, RetrievalStatus, Run
from citeaudit.ingest import READERS
from citeaudit.ingest.assemble import Attachment, assemble
from citeaudit.sources.extract import require_extra
from citeaudit.sources.fetch import ResolveSettings
from citeaudit.sources.headers import MalformedHeader, retry_after
from citeaudit.sources.resolver import resolve_sources_async
from citeaudit.store import Store

__all__ = ["CollectReport", "CollectSettings", "collect"]

USER_AGENT = f"citeaudit/{__version__} (+collect)"
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""Statuses worth asking again: rate limits, overload and transient server errors."""
AUTH_STATUSES = frozenset({401, 403})
MAX_CONTINUATIONS = 8
"""Paused turns continued at most for one task (a turn that keeps pausing is recorded as incomplete)."""
"""Statuses that stop an engine for the rest of the run (a wrong key fails every request the same way)."""

AnswerHook = Callable[[Store, Audit], None]
"""Called after an answer is stored (e.g. to resolve expiring redirect links at once)."""


@dataclass(frozen=True, slots=True)
class CollectSettings:
    """How ``collect`` runs."""

    collection: str = "default"
    """Name of this collection; runs are ``<collection>/<engine>/<locale>/<repeat>``."""
    engines: tuple[str, ...] | None = None
    """Engine ids to ask (default: all in the protocol)."""
    repeats: int | None = None
    """Override the protocol's repeats."""
    concurrency: int = 4
    """Requests in flight at once, over all engines."""
    base_urls: Mapping[str, str] = field(default_factory=dict)
    """Per engine id (or engine name): base URL overrides for gateways and tests."""
    max_attempts: int = 5
    """Attempts per request before the task is recorded as an error."""
    backoff: float = 1.0
    """First retry wait in seconds (doubled each attempt, with jitter) when no Retry-After is given."""
    max_wait: float = 120.0
    """Longest wait before a retry; a longer Retry-After ends the attempts with an error."""
    timeout: float = 180.0
    """Seconds per request (answer engines with search are slow)."""
    resolve_redirects: bool = True
    """Resolve expiring grounding redirect links (Gemini) as soon as their answer is stored."""
    resolve: ResolveSettings | None = None
    """How those links are resolved (default: the resolver's defaults)."""


@dataclass
class CollectReport:
    """What one ``collect`` call did."""

    collection: str
    planned: int = 0
    already_done: int = 0
    asked: int = 0
    imported_from_archive: int = 0
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)
    """``(engine id, outcome)`` counts of tasks finished in this call."""
    errors: Counter[tuple[str, str]] = field(default_factory=Counter)
    """``(engine id, reason)`` counts of tasks left in ``error`` (a rerun asks again)."""
    not_attempted: Counter[str] = field(default_factory=Counter)
    """Tasks per engine skipped because the engine refused the key."""
    redirects_resolved: int = 0
    """Grounding redirect links resolved at collection time."""
    redirects_failed: Counter[str] = field(default_factory=Counter)
    """Grounding redirect links that could not be resolved, by reason (they stay pending or failed)."""
    cost_usd: float = 0.0

    @property
    def complete(self) -> bool:
        """Whether every planned task is done."""
        return not self.errors and not self.not_attempted


class _Limiter:
    """Spaces request starts to at most ``per_minute`` a minute."""

    def __init__(self, per_minute: float | None) -> None:
        self.interval = 0.0 if per_minute is None else 60.0 / per_minute
        self.next_start = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            delay = self.next_start - now
            self.next_start = max(now, self.next_start) + self.interval
        if delay > 0:
            await asyncio.sleep(delay)


def _usage(body: bytes, engine: Engine) -> tuple[Mapping[str, Any] | None, dict[str, Any] | None, float | None]:
    """The response that ends the answer, and the usage and cost of the whole answer: for a paused turn and its
    continuation (a JSON list of responses) the numbers of every response are added up."""
    parsed = _json(body)
    if parsed is not None:
        usage, cost = engine.usage(parsed)
        return parsed, usage, cost
    try:
        parts = load_json(body, "response")
    except InputError:  # not JSON, or past a limit (nesting, duplicate keys...): not a body to read
        return None, None, None
    if not isinstance(parts, list) or not parts or not all(isinstance(part, dict) for part in parts):
        return None, None, None
    total: dict[str, Any] = {}
    spent: float | None = None
    for part in parts:
        usage, cost = engine.usage(part)
        for name, value in (usage or {}).items():
            if isinstance(value, int) and not isinstance(value, bool):
                total[name] = total.get(name, 0) + value
        if cost is not None:
            spent = (spent or 0.0) + cost
    return parts[-1], total or None, spent


def _json(body: bytes) -> Mapping[str, Any] | None:
    try:
        value = load_json(body, "response")
    except InputError:  # not JSON, or past a limit (nesting, duplicate keys...): not a body to read
        return None
    return value if isinstance(value, dict) else None


class _Collector:
    def __init__(
        self,
        store: Store,
        plan: CollectionPlan,
        settings: CollectSettings,
        keys: Mapping[str, str],
        client: httpx.AsyncClient,
        report: CollectReport,
        on_answer: AnswerHook | None,
        advance: Callable[[], None],
    ) -> None:
        self.store = store
        self.plan = plan
        self.settings = settings
        self.keys = keys
        self.client = client
        self.report = report
        self.on_answer = on_answer
        self.advance = advance
        self.ledger = Ledger(store, settings.collection, plan.protocol)
        self.slots = asyncio.Semaphore(settings.concurrency)
        self.engine_slots = {
            spec.id: asyncio.Semaphore(spec.concurrency or settings.concurrency) for spec in plan.engines
        }
        self.limiters = {spec.id: _Limiter(spec.requests_per_minute) for spec in plan.engines}
        self.refused_key: dict[str, str] = {}
        self.db_path = store.path
        self.resolving: set[str] = set()

    def base_url(self, spec: EngineSpec, engine: Engine) -> str:
        given = self.settings.base_urls
        return (given.get(spec.id) or given.get(spec.name) or spec.base_url or engine.default_base_url).rstrip("/")

    async def run(self, rows: Sequence[TaskRow]) -> None:
        await asyncio.gather(*(self.one(row) for row in rows))

    async def one(self, row: TaskRow) -> None:
        spec = self.plan.engine(row.task.engine)
        engine = ENGINES[spec.name]
        try:
            if row.state == "fetched" and row.payload_sha256 is not None:
                self.report.imported_from_archive += 1
                await self.resolve(self.finish(row, spec, engine, row.payload_sha256))
                return
            if spec.id in self.refused_key:
                self.report.not_attempted[spec.id] += 1
                return
            async with self.slots, self.engine_slots[spec.id]:
                if spec.id in self.refused_key:
                    self.report.not_attempted[spec.id] += 1
                    return
                sha = await self.ask(row, spec, engine)
            if sha is not None:
                await self.resolve(self.finish(row, spec, engine, sha))
        finally:
            self.advance()

    async def resolve(self, keys: list[str]) -> None:
        """Resolve expiring redirect links now (they die within weeks); failures are counted, never fatal."""
        keys = [key for key in keys if key not in self.resolving]  # answers often share links: read each once
        if not keys or not self.settings.resolve_redirects:
            return
        self.resolving.update(keys)
        report = await resolve_sources_async(self.db_path, self.settings.resolve, keys=keys)
        self.report.redirects_resolved += report.resolved
        self.report.redirects_failed.update(report.failed)

    async def ask(self, row: TaskRow, spec: EngineSpec, engine: Engine) -> str | None:
        """Send the task's request (and a follow-up the response asks for); the archived body to read."""
        key = self.keys[engine.key_env]
        base = self.base_url(spec, engine)
        self.report.asked += 1
        request: Request | None = engine.build(spec, row.task, key, base)
        attempt = row.attempts
        sha: str | None = None
        paused: list[bytes] = []
        while request is not None:
            result = await self.send(row, spec, request, attempt)
            if result is None:
                return None
            attempt, sha, body = result
            parsed = _json(body)
            continued = None if parsed is None else engine.continuation(request, parsed)
            if continued is not None and len(paused) < MAX_CONTINUATIONS:
                paused.append(body)
                request = continued
                continue
            request = None if parsed is None else engine.follow_up(parsed, row.task, key, base)
        assert sha is not None
        if paused:
            # The paused turn(s) and the continuation are one answer: archived as one payload, a JSON list in
            # order, which the engine's reader reads as one answer (each response stays archived on its own too).
            joined = b"[" + b",\n".join(part.strip() for part in (*paused, body)) + b"]"
            sha = self.ledger.archive(joined, "application/json")
        self.ledger.fetched(row.pk, sha)
        return sha

    async def send(
        self, row: TaskRow, spec: EngineSpec, request: Request, attempt: int
    ) -> tuple[int, str, bytes] | None:
        """One request with retries; ``(attempts so far, archived sha, body)`` of a 2xx response."""
        url = request.loggable_url()
        for tries in range(1, self.settings.max_attempts + 1):
            await self.limiters[spec.id].wait()
            attempt += 1
            wait: float | None = None
            try:
                response = await self.client.request(
                    request.method, request.url, headers=request.headers, json=request.json, params=request.params
                )
            except httpx.TimeoutException:
                self.ledger.log_response(row.pk, attempt, url, None, "timeout", None)
                reason = "timeout"
            except httpx.TransportError as exc:
                self.ledger.log_response(row.pk, attempt, url, None, f"transport: {type(exc).__name__}", None)
                reason = f"transport_error ({type(exc).__name__})"
            else:
                body = response.content
                media_type = response.headers.get("content-type", "application/octet-stream").split(";")[0]
                sha = self.ledger.archive(body, media_type)
                self.ledger.log_response(row.pk, attempt, url, response.status_code, None, sha)
                if response.is_success:
                    return attempt, sha, body
                reason = f"http_{response.status_code}"
                if response.status_code in AUTH_STATUSES:
                    self.refused_key[spec.id] = reason
                    self.ledger.error(row.pk, f"{reason}: the engine refused the API key")
                    self.report.errors[(spec.id, reason)] += 1
                    return None
                if response.status_code not in RETRY_STATUSES:
                    self.ledger.error(row.pk, reason)
                    self.report.errors[(spec.id, reason)] += 1
                    return None
                try:
                    wait = retry_after(response.headers.get("retry-after"))
                except MalformedHeader as exc:
                    reason = f"{reason} ({exc})"
                    break
                if wait is not None and wait > self.settings.max_wait:
                    reason = f"{reason} (Retry-After {wait:.0f} s exceeds --max-wait)"
                    break
            if tries == self.settings.max_attempts:
                break
            if wait is None:
                wait = min(self.settings.max_wait, self.settings.backoff * 2 ** (tries - 1))
                wait *= 0.5 + random.random() / 2  # jitter keeps parallel retries apart
            await asyncio.sleep(wait)
        self.ledger.error(row.pk, reason)
        self.report.errors[(spec.id, reason)] += 1
        return None

    def finish(self, row: TaskRow, spec: EngineSpec, engine: Engine, sha: str) -> list[str]:
        """Read the archived body and store the answer (or the recorded failure), then close the task.

        Returns the keys of the answer's sources behind expiring redirect links, to resolve at once."""
        task = row.task
        collection = self.settings.collection
        run_id = task.run_id(collection)
        answer_id = task.answer_id(collection)
        source = f"collect:{answer_id}"
        reader = READERS[engine.reader]
        platform = spec.platform or reader.name.split("-")[0]
        run = Run(
            run_id,
            platform=platform,
            model=spec.model or engine.default_model,
            collected_at=self.ledger.created_at[:10],
            locale=task.locale,
            sample=task.repeat,
        )
        body = self.ledger.payload(sha)
        parsed_body, usage, cost = _usage(body, engine)
        assert reader.read_answers is not None
        try:
            parsed = list(reader.read_answers(body, source))
            if not parsed:
                raise InvalidValue(source, "", "the response holds no answer")
        except InputError as exc:
            audit = Audit(
                protocol=self.plan.protocol,
                runs=(run,),
                failed_answers=(
                    FailedAnswer(
                        0, AnswerStatus.FAILED, f"malformed response: {exc}", run_id, task.question_id, platform
                    ),
                ),
            )
            self.store_import(audit, body, source, reader.name, reader.media_type)
            self.close(row, spec, "malformed", None, str(exc), usage, cost)
            return []
        parsed = [
            p._replace(answer_id=answer_id if len(parsed) == 1 else f"{answer_id}/{i + 1}")
            for i, p in enumerate(parsed)
        ]
        attachment = Attachment(self.plan.protocol, run_id=run_id, platform=platform, question_id=task.question_id)
        audit = dataclasses.replace(assemble(parsed, attachment, source, sha, platform), runs=(run,))
        imported = self.store_import(audit, body, source, reader.name, reader.media_type)
        if not imported:
            origin = self.ledger.import_origin(sha)
            if origin != source:
                self.close(
                    row, spec, "duplicate_payload", None, f"byte-identical to the response of {origin}", usage, cost
                )
                return []
        if self.on_answer is not None and audit.answers:
            self.on_answer(self.store, audit)
        outcome, reason = _outcome(audit, parsed_body, engine)
        self.close(row, spec, outcome, answer_id if audit.answers else None, reason, usage, cost)
        return [source.key for source in audit.sources if source.url and _expiring(source.url)]

    def store_import(self, audit: Audit, body: bytes, source: str, fmt: str, media_type: str) -> bool:
        report = self.store.import_audit(audit, body, origin=source, fmt=fmt, media_type=media_type)
        return not report.already_imported

    def close(
        self,
        row: TaskRow,
        spec: EngineSpec,
        outcome: str,
        answer_id: str | None,
        reason: str | None,
        usage: dict[str, Any] | None,
        cost: float | None,
    ) -> None:
        self.ledger.done(row.pk, outcome, answer_id, reason, usage, cost)
        self.report.outcomes[(spec.id, outcome)] += 1
        self.report.cost_usd += cost or 0.0


EXPIRING_REDIRECT_HOSTS = frozenset({"vertexaisearch.cloud.google.com"})
"""Hosts of engine redirect links that stop working after a while (Gemini grounding redirects)."""


def _expiring(url: str) -> bool:
    return (urlsplit(url).hostname or "") in EXPIRING_REDIRECT_HOSTS


def _outcome(audit: Audit, body: Mapping[str, Any] | None, engine: Engine) -> tuple[str, str | None]:
    if audit.failed_answers:
        failure = audit.failed_answers[0]
        kind = "engine_failed" if failure.status is AnswerStatus.FAILED else "incomplete"
        return kind, failure.reason
    answer = audit.answers[0]
    if body is not None and engine.refused(body):
        return "refused", "the model declined to answer"
    if answer.retrieval is RetrievalStatus.NOT_USED:
        return "no_retrieval", "the engine answered without searching"
    if answer.retrieval is RetrievalStatus.FAILED:
        return "retrieval_failed", "the search tool failed"
    return "answered", None


def missing_keys(plan: CollectionPlan, engines: Sequence[str] | None, env: Mapping[str, str]) -> list[str]:
    """Environment variables the chosen engines need and do not have."""
    chosen = [spec for spec in plan.engines if engines is None or spec.id in engines]
    return sorted({ENGINES[s.name].key_env for s in chosen if not env.get(ENGINES[s.name].key_env)})


def collect(
    db: str | Path,
    plan: CollectionPlan,
    settings: CollectSettings = CollectSettings(),
    *,
    env: Mapping[str, str] | None = None,
    on_answer: AnswerHook | None = None,
    progress: Callable[[int], Callable[[], None]] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> CollectReport:
    """Collect every task of ``plan`` not yet done into the database at ``db``.

    ``progress(total)`` returns the function to call after each task; ``transport`` replaces httpx's network
    transport (name resolution hooks, tests).
    """
    env = os.environ if env is None else env
    if not plan.engines:
        raise InvalidValue("protocol", "engines", "the protocol lists no engines to collect from")
    known = {spec.id for spec in plan.engines}
    for engine_id in settings.engines or ():
        if engine_id not in known:
            raise InvalidValue("--engine", "", f"no engine {engine_id!r} in the protocol (known: {sorted(known)})")
    for engine_id in settings.base_urls:
        if engine_id not in known and engine_id not in {spec.name for spec in plan.engines}:
            raise InvalidValue("--base-url", "", f"no engine {engine_id!r} in the protocol (known: {sorted(known)})")
    chosen = [spec for spec in plan.engines if settings.engines is None or spec.id in settings.engines]
    if settings.resolve_redirects and any(spec.name == "gemini" for spec in chosen):
        require_extra()  # Gemini's grounding links expire: they are resolved during the collection
    missing = missing_keys(plan, settings.engines, env)
    if missing:
        raise InvalidValue("environment", "", f"set {', '.join(missing)} (the API key of each engine to ask)")
    keys = {name: env[name] for name in {ENGINES[s.name].key_env for s in plan.engines} if env.get(name)}
    tasks = list(plan.tasks(settings.engines, settings.repeats))
    report = CollectReport(settings.collection, planned=len(tasks))
    with Store(db) as store:
        ledger = Ledger(store, settings.collection, plan.protocol)
        ledger.add(tasks)
        rows = ledger.rows(tasks)
        todo = [row for row in rows if row.state != "done"]
        report.already_done = len(rows) - len(todo)
        advance = progress(len(todo)) if progress is not None else (lambda: None)

        async def main() -> None:
            limits = httpx.Limits(max_connections=settings.concurrency * 2)
            async with httpx.AsyncClient(
                transport=transport,
                timeout=settings.timeout,
                limits=limits,
                headers={"User-Agent": USER_AGENT},
                follow_redirects=False,
            ) as client:
                collector = _Collector(store, plan, settings, keys, client, report, on_answer, advance)
                await collector.run(todo)

        asyncio.run(main())
    return report
