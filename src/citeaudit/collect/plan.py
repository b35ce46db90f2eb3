"""What a collection asks: every (question, engine, locale, repeat) of a protocol, each one task.

The protocol YAML says which engines, locales and how many repeats::

    engines:
      - openai                       # shorthand for {name: openai}
      - {name: gemini, model: gemini-2.5-flash, requests_per_minute: 10}
      - {name: perplexity, id: sonar-pro, model: sonar-pro}
    locales: [en-GB, de-DE]          # default: each question's own locale
    repeats: 3                       # default: 1

A task's run is ``<collection>/<engine id>/<locale>/<repeat>``: one run per engine, locale and repeat, so
repeats are the ``sample`` dimension of scoring and each run has one platform, model and locale.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citeaudit.core.errors import InvalidValue
from citeaudit.core.model import Protocol
from citeaudit.interchange.reader import load_protocol_document, protocol_from_mapping
from citeaudit.interchange.schema import EngineIn, ProtocolIn

__all__ = ["MAX_TASKS", "CollectionPlan", "EngineSpec", "Task", "check_task_count", "load_plan", "plan_from_document"]

NO_LOCALE = "-"
"""Locale part of a run id when neither the plan nor the question names a locale."""


@dataclass(frozen=True, slots=True)
class EngineSpec:
    """One engine as the protocol configures it."""

    name: str
    """Engine kind: ``openai``, ``perplexity``, ``perplexity-agent``, ``gemini``, ``anthropic``, ``serpapi``."""
    id: str
    """Name of this configuration in run ids (default: the kind); unique within a plan."""
    model: str | None = None
    """Model to ask (default: the engine's default model)."""
    platform: str | None = None
    """Platform recorded on answers (default: the ingest reader's platform for this engine)."""
    base_url: str | None = None
    """API base URL (gateways, tests); ``--base-url ID=URL`` overrides it."""
    requests_per_minute: float | None = None
    """Rate limit for request starts; ``None`` leaves only the concurrency cap."""
    concurrency: int | None = None
    """Requests in flight at once for this engine (default: the command's ``--concurrency``)."""
    options: tuple[tuple[str, Any], ...] = ()
    """Extra request-body fields merged into every request (sorted items)."""


@dataclass(frozen=True, slots=True)
class Task:
    """One question asked once of one engine in one locale."""

    question_id: str
    question: str
    engine: str
    """Engine configuration id."""
    locale: str | None
    repeat: int
    """1-based repeat number (the run's ``sample``)."""

    def run_id(self, collection: str) -> str:
        """The run this task's answer belongs to."""
        return f"{collection}/{self.engine}/{self.locale or NO_LOCALE}/{self.repeat}"

    def answer_id(self, collection: str) -> str:
        """The answer's id: one per task, so a rerun can never store it twice."""
        return f"{self.run_id(collection)}/{self.question_id}"


@dataclass(frozen=True, slots=True)
class CollectionPlan:
    """A protocol with the engines, locales and repeats to collect."""

    protocol: Protocol
    engines: tuple[EngineSpec, ...]
    locales: tuple[str, ...] = ()
    """Locales to ask every question in; empty = each question's own locale."""
    repeats: int = 1
    question_locales: dict[str, str | None] = field(default_factory=dict)
    """Each question's own locale (used when ``locales`` is empty)."""

    def engine(self, engine_id: str) -> EngineSpec:
        """The engine configuration with this id."""
        for spec in self.engines:
            if spec.id == engine_id:
                return spec
        raise KeyError(engine_id)

    def tasks(self, engines: Sequence[str] | None = None, repeats: int | None = None) -> Iterator[Task]:
        """Every task, question by question; ``engines`` restricts to those ids, ``repeats`` overrides."""
        chosen = [spec for spec in self.engines if engines is None or spec.id in engines]
        for question in self.protocol.questions:
            locales: Sequence[str | None] = self.locales or (question.locale,)
            for spec in chosen:
                for locale in locales:
                    for repeat in range(1, (repeats or self.repeats) + 1):
                        yield Task(question.id, question.text, spec.id, locale, repeat)


MAX_TASKS = 100_000
"""Most requests one collection may plan (questions × engines × locales × repeats)."""


def check_task_count(questions: int, engines: int, locales: int, repeats: int, source: str) -> None:
    """Refuse a plan of more than :data:`MAX_TASKS` requests before any of them is listed."""
    count = questions * engines * max(locales, 1) * repeats
    if count > MAX_TASKS:
        raise InvalidValue(
            source,
            "repeats",
            f"{questions} questions × {engines} engines × {max(locales, 1)} locales × {repeats} repeats = "
            f"{count} requests, more than {MAX_TASKS} in one collection; split the protocol or lower repeats",
        )


def plan_from_document(document: ProtocolIn, source: str) -> CollectionPlan:
    """The collection plan of a validated protocol file."""
    protocol = protocol_from_mapping(document, source, path="")
    specs: list[EngineSpec] = []
    seen: set[str] = set()
    for i, engine in enumerate(document.engines):
        spec = _spec(engine)
        if spec.id in seen:
            raise InvalidValue(
                source, f"engines[{i}].id", f"engine id {spec.id!r} is used twice; give each configuration an id"
            )
        seen.add(spec.id)
        specs.append(spec)
    for i, locale in enumerate(document.locales):
        if not locale.strip() or "/" in locale:
            raise InvalidValue(source, f"locales[{i}]", f"not a locale: {locale!r} (use e.g. en-GB)")
    check_task_count(len(document.questions), len(specs), len(set(document.locales)), document.repeats, source)
    return CollectionPlan(
        protocol=protocol,
        engines=tuple(specs),
        locales=tuple(dict.fromkeys(document.locales)),
        repeats=document.repeats,
        question_locales={q.id: q.locale for q in document.questions},
    )


def load_plan(path: str | Path) -> CollectionPlan:
    """Read a protocol file with its collection settings."""
    return plan_from_document(load_protocol_document(path), str(path))


def _spec(engine: EngineIn) -> EngineSpec:
    return EngineSpec(
        name=engine.name,
        id=engine.id or engine.name,
        model=engine.model,
        platform=engine.platform,
        base_url=engine.base_url,
        requests_per_minute=engine.requests_per_minute,
        concurrency=engine.concurrency,
        options=tuple(sorted(engine.options.items())),
    )
