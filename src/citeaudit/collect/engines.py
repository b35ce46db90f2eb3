"""The engines' documented HTTP APIs: how to ask one question with web search on, and what comes back.

Each engine builds its request from the question, locale and configuration, names the ingest reader for its
response, and knows where the response keeps usage and cost and whether the model refused. Request shapes
follow the engines' public API references (what their responses hold: docs/formats.md); API keys come from the
environment and never enter the archive (responses are archived, requests are not).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from citeaudit.collect.plan import EngineSpec, Task

__all__ = ["ENGINES", "Engine", "Request", "split_locale"]


@dataclass(frozen=True, slots=True)
class Request:
    """One HTTP request to an engine."""

    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    json: dict[str, Any] | None = None
    params: dict[str, str] = field(default_factory=dict)
    secret_params: frozenset[str] = frozenset()
    """Query parameters holding the key: left out of anything recorded."""

    def loggable_url(self) -> str:
        """The URL with its public query parameters (keys never recorded)."""
        public = [f"{k}={v}" for k, v in self.params.items() if k not in self.secret_params]
        return self.url + ("?" + "&".join(public) if public else "")


def split_locale(locale: str | None) -> tuple[str | None, str | None]:
    """``en-GB`` → ``("en", "GB")``; ``de`` → ``("de", None)``; ``None`` → ``(None, None)``."""
    if not locale:
        return None, None
    parts = locale.replace("_", "-").split("-")
    language = parts[0].lower() or None
    country = next((p.upper() for p in parts[1:] if len(p) == 2 and p.isalpha()), None)
    return language, country


_Build = Callable[[EngineSpec, Task, str, str], Request]


@dataclass(frozen=True, slots=True)
class Engine:
    """One engine API."""

    name: str
    reader: str
    """Ingest reader for its responses."""
    key_env: str
    """Environment variable holding the API key."""
    default_base_url: str
    default_model: str | None
    build: _Build
    """``build(spec, task, key, base_url)``: the request that asks ``task``."""
    locale_setting: str | None
    """How the locale reaches the engine (``None``: the API has no such setting; recorded on the run only)."""
    usage_field: str | None = "usage"
    """Top-level response field with token and request counts."""
    refused: Callable[[Mapping[str, Any]], bool] = lambda body: False
    """Whether the model declined to answer (an answer recorded as given, counted as a refusal)."""
    follow_up: Callable[[Mapping[str, Any], Task, str, str], Request | None] = lambda body, task, key, base: None
    """A second request the first response asks for (SerpApi's lazily loaded AI Overview)."""
    continuation: Callable[[Request, Mapping[str, Any]], Request | None] = lambda request, body: None
    """The request that continues a turn the response paused (Anthropic's ``pause_turn``): given the request
    just sent and its response. The paused response and its continuation are one answer, archived together."""

    def usage(self, body: Mapping[str, Any]) -> tuple[dict[str, Any] | None, float | None]:
        """Usage counts and, when the engine reports it, the cost in USD."""
        usage = body.get(self.usage_field) if self.usage_field else None
        if not isinstance(usage, dict):
            return None, None
        cost = usage.get("cost")
        if isinstance(cost, dict):
            cost = cost.get("total_cost")
        return usage, float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None


def _options(spec: EngineSpec) -> dict[str, Any]:
    return dict(spec.options)


def _openai(spec: EngineSpec, task: Task, key: str, base: str) -> Request:
    _, country = split_locale(task.locale)
    tool: dict[str, Any] = {"type": "web_search"}
    if country:
        tool["user_location"] = {"type": "approximate", "country": country}
    body = {
        "model": spec.model or OPENAI.default_model,
        "input": task.question,
        "tools": [tool],
        "include": ["web_search_call.action.sources"],
        **_options(spec),
    }
    return Request("POST", f"{base}/v1/responses", {"Authorization": f"Bearer {key}"}, body)


def _openai_refused(body: Mapping[str, Any]) -> bool:
    for item in body.get("output") or ():
        if isinstance(item, dict) and item.get("type") == "message":
            for part in item.get("content") or ():
                if isinstance(part, dict) and part.get("type") == "refusal":
                    return True
    return False


def _sonar(spec: EngineSpec, task: Task, key: str, base: str) -> Request:
    _, country = split_locale(task.locale)
    body: dict[str, Any] = {
        "model": spec.model or SONAR.default_model,
        "messages": [{"role": "user", "content": task.question}],
    }
    if country:
        body["web_search_options"] = {"user_location": {"country": country}}
    body.update(_options(spec))
    return Request("POST", f"{base}/chat/completions", {"Authorization": f"Bearer {key}"}, body)


def _agent(spec: EngineSpec, task: Task, key: str, base: str) -> Request:
    body: dict[str, Any] = {"input": task.question}
    if spec.model:
        body["model"] = spec.model
        body["tools"] = [{"type": "web_search"}]
    else:
        body["preset"] = "medium"
    body.update(_options(spec))
    return Request("POST", f"{base}/v1/agent", {"Authorization": f"Bearer {key}"}, body)


def _gemini(spec: EngineSpec, task: Task, key: str, base: str) -> Request:
    body = {
        "contents": [{"role": "user", "parts": [{"text": task.question}]}],
        "tools": [{"google_search": {}}],
        **_options(spec),
    }
    model = spec.model or GEMINI.default_model
    return Request("POST", f"{base}/v1beta/models/{model}:generateContent", {"x-goog-api-key": key}, body)


def _anthropic(spec: EngineSpec, task: Task, key: str, base: str) -> Request:
    _, country = split_locale(task.locale)
    tool: dict[str, Any] = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
    if country:
        tool["user_location"] = {"type": "approximate", "country": country}
    body = {
        "model": spec.model or ANTHROPIC.default_model,
        "max_tokens": 2048,
        "messages": [{"role": "user", "content": task.question}],
        "tools": [tool],
        **_options(spec),
    }
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    return Request("POST", f"{base}/v1/messages", headers, body)


def _anthropic_refused(body: Mapping[str, Any]) -> bool:
    return body.get("stop_reason") == "refusal"


def _anthropic_continuation(request: Request, body: Mapping[str, Any]) -> Request | None:
    """After ``stop_reason: pause_turn`` (a long server-tool turn the API paused), the same request with the
    paused response appended as the assistant turn, as the Messages API documents; Claude then continues where
    it stopped. A turn paused again is continued with its whole content so far."""
    content = body.get("content")
    if body.get("stop_reason") != "pause_turn" or not isinstance(content, list) or request.json is None:
        return None
    messages = list(request.json.get("messages") or [])
    if messages and isinstance(messages[-1], dict) and messages[-1].get("role") == "assistant":
        earlier = messages[-1].get("content")
        messages[-1] = {"role": "assistant", "content": [*(earlier if isinstance(earlier, list) else []), *content]}
    else:
        messages.append({"role": "assistant", "content": content})
    return dataclasses.replace(request, json={**request.json, "messages": messages})


def _serpapi(spec: EngineSpec, task: Task, key: str, base: str) -> Request:
    language, country = split_locale(task.locale)
    params = {"engine": "google", "q": task.question, "no_cache": "true"}
    if language:
        params["hl"] = language
    if country:
        params["gl"] = country.lower()
    params.update({k: str(v) for k, v in spec.options})
    params["api_key"] = key
    return Request("GET", f"{base}/search.json", params=params, secret_params=frozenset({"api_key"}))


def _serpapi_follow_up(body: Mapping[str, Any], task: Task, key: str, base: str) -> Request | None:
    overview = body.get("ai_overview")
    if isinstance(overview, dict) and "text_blocks" not in overview and isinstance(overview.get("page_token"), str):
        # The overview loads lazily: SerpApi's token must be used within four minutes, so ask at once.
        params = {"engine": "google_ai_overview", "page_token": overview["page_token"], "api_key": key}
        return Request("GET", f"{base}/search.json", params=params, secret_params=frozenset({"api_key"}))
    return None


OPENAI = Engine(
    "openai",
    "openai-responses",
    "OPENAI_API_KEY",
    "https://api.openai.com",
    "gpt-5",
    _openai,
    "web_search user_location.country",
    refused=_openai_refused,
)
SONAR = Engine(
    "perplexity",
    "perplexity",
    "PERPLEXITY_API_KEY",
    "https://api.perplexity.ai",
    "sonar-pro",
    _sonar,
    "web_search_options.user_location.country",
)
AGENT = Engine(
    "perplexity-agent",
    "perplexity",
    "PERPLEXITY_API_KEY",
    "https://api.perplexity.ai",
    None,
    _agent,
    None,
)
GEMINI = Engine(
    "gemini",
    "gemini",
    "GEMINI_API_KEY",
    "https://generativelanguage.googleapis.com",
    "gemini-2.5-flash",
    _gemini,
    None,
    usage_field="usageMetadata",
)
ANTHROPIC = Engine(
    "anthropic",
    "anthropic",
    "ANTHROPIC_API_KEY",
    "https://api.anthropic.com",
    "claude-sonnet-4-5",
    _anthropic,
    "web_search user_location.country",
    refused=_anthropic_refused,
    continuation=_anthropic_continuation,
)
SERPAPI = Engine(
    "serpapi",
    "serpapi-ai-overview",
    "SERPAPI_API_KEY",
    "https://serpapi.com",
    None,
    _serpapi,
    "hl and gl",
    usage_field="search_metadata",
    follow_up=_serpapi_follow_up,
)

ENGINES: dict[str, Engine] = {engine.name: engine for engine in (OPENAI, SONAR, AGENT, GEMINI, ANTHROPIC, SERPAPI)}
"""Every engine ``collect`` can ask, by name."""
