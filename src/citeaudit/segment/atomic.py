"""``atomic-v1``: each sentence decomposed into atomic facts by a chat model, each fact anchored to the answer.

Any OpenAI-compatible chat-completions endpoint serves (hosted, or local such as vLLM or Ollama). The answer
is first read as ``rules-v2`` reads it without splitting clauses (headings, tables, reference lists and other
non-assertions skipped and counted); each remaining sentence goes to the model, which returns facts, each with
the exact words of the sentence it rests on. A fact becomes a claim whose span is those words found in the
sentence; a fact whose words cannot be found is *unanchored*: it is kept as a claim spanning its whole sentence
and reported, never dropped. Every citation marker of a sentence belongs to every fact of that sentence (a
model's facts do not follow clause boundaries).

Reproducible: the prompt, the model and the temperature enter the fingerprint, and every response is cached
by the content of its request, so a rerun asks nothing and gives the same claims.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from citeaudit.core.errors import InputError, SegmentationUnavailable
from citeaudit.core.limits import load_json
from citeaudit.core.model import Segmentation
from citeaudit.segment.rules import ClaimSpan, Segmented
from citeaudit.segment.rules_v2 import RulesV2
from citeaudit.segment.rules_v2 import segment as segment_sentences

if TYPE_CHECKING:
    import httpx

__all__ = [
    "METHOD",
    "PROMPT_VERSION",
    "SYSTEM_PROMPT",
    "AtomicOutcome",
    "AtomicSettings",
    "ChatEndpoint",
    "ResponseCache",
    "Unanchored",
    "decompose",
    "prompt_sha256",
]

METHOD = "atomic-v1"
"""Method name recorded in the protocol fingerprint."""
PROMPT_VERSION = "1"
"""Version of the prompt and of the reading of responses; bump it whenever either changes."""

SYSTEM_PROMPT = """You split one sentence of an answer into atomic facts.
An atomic fact states exactly one thing that can be checked on its own: one attribute, one date, one place,
one relation. Write each fact as a short, self-contained sentence: put the subject back in (a name instead of
"he", "it" or "the company" when the sentence names it) and add nothing the sentence does not say.
For each fact also give "span": the shortest run of words copied exactly, character for character, from the
sentence that states the fact (it may be the whole sentence when the fact needs all of it).
Answer with JSON only: {"facts": [{"fact": "...", "span": "..."}]}. A sentence that asserts nothing gives
{"facts": []}."""

_USER_TEMPLATE = "Sentence:\n{sentence}"


def prompt_sha256() -> str:
    """SHA-256 of the prompt (system text and user template): recorded and fingerprinted."""
    return hashlib.sha256((SYSTEM_PROMPT + "\n\x00\n" + _USER_TEMPLATE).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class AtomicSettings:
    """What ``atomic-v1`` asks with; each field enters the fingerprint (the endpoint's address does not: the same
    model behind another address gives the same facts)."""

    model: str
    """Model name sent to the endpoint."""
    temperature: float = 0.0
    """Sampling temperature sent to the endpoint."""

    def segmentation(self) -> Segmentation:
        """The fingerprint component: method, prompt version, and model, prompt hash and temperature."""
        parameters = (
            ("model", json.dumps(self.model)),
            ("prompt_sha256", json.dumps(prompt_sha256())),
            ("temperature", json.dumps(self.temperature)),
        )
        return Segmentation(method=METHOD, version=PROMPT_VERSION, parameters=parameters)


class ResponseCache:
    """Responses stored as one JSON file each, named by the SHA-256 of their request's content."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response for ``key``, or ``None``."""
        path = self.folder / f"{key}.json"
        if not path.is_file():
            return None
        try:
            body = load_json(path.read_bytes(), str(path))
        except (OSError, InputError):
            return None  # a damaged entry is asked again and overwritten
        return body if isinstance(body, dict) else None

    def put(self, key: str, body: dict[str, Any]) -> None:
        """Store ``body`` for ``key`` (written to a temporary file, then renamed: never half a file)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{key}.json"
        partial = path.with_suffix(".part")
        partial.write_text(json.dumps(body, ensure_ascii=False, sort_keys=True), encoding="utf-8")
        partial.replace(path)


class ChatEndpoint:
    """An OpenAI-compatible ``/chat/completions`` endpoint, asked over HTTP with httpx."""

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import httpx  # only when a model is asked: the CLI starts without it

        self._http_error = httpx.HTTPError
        base_url = base_url or os.environ.get("CITEAUDIT_ATOMIC_BASE_URL")
        if not base_url:
            raise SegmentationUnavailable(
                "atomic-v1 needs a chat-completions endpoint: pass --base-url (or set CITEAUDIT_ATOMIC_BASE_URL), "
                "e.g. http://localhost:11434/v1"
            )
        key = api_key or os.environ.get("CITEAUDIT_ATOMIC_API_KEY") or os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.base_url = base_url.rstrip("/")
        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport)

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        """POST ``request`` to ``/chat/completions``; the response body."""
        url = f"{self.base_url}/chat/completions"
        try:
            response = self._client.post(url, json=request)
        except self._http_error as exc:
            raise SegmentationUnavailable(f"atomic-v1: the endpoint {url!r} cannot be reached: {exc}") from exc
        if response.status_code != 200:
            raise SegmentationUnavailable(
                f"atomic-v1: the endpoint {url!r} answered {response.status_code}: {response.text[:300]!r}"
            )
        try:
            body = response.json()
        except ValueError:
            raise SegmentationUnavailable(f"atomic-v1: the endpoint {url!r} answered no JSON") from None
        if not isinstance(body, dict):
            raise SegmentationUnavailable(f"atomic-v1: the endpoint {url!r} answered {str(body)[:200]!r}")
        return body

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()


@dataclass(frozen=True, slots=True)
class Unanchored:
    """A fact whose words were not found in its sentence: kept as a claim on the whole sentence, reported."""

    start: int
    """Start of the sentence (the claim's span)."""
    end: int
    """End of the sentence."""
    fact: str
    """The fact as the model wrote it."""
    span: str
    """The words the model said the fact rests on."""


@dataclass(slots=True)
class AtomicOutcome:
    """The claims of one answer and what happened on the way."""

    segmented: Segmented
    """Claims (facts), sentences and skipped pieces."""
    unanchored: list[Unanchored] = field(default_factory=list)
    """Facts kept on their whole sentence because their words were not found."""
    asked: int = 0
    """Requests sent to the endpoint."""
    cached: int = 0
    """Responses read from the cache."""
    malformed: int = 0
    """Responses that held no readable facts: their sentence is kept as one claim."""


_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")


def decompose(
    text: str,
    regions: Iterable[tuple[int, int]],
    settings: AtomicSettings,
    endpoint: ChatEndpoint | None,
    cache: ResponseCache,
) -> AtomicOutcome:
    """Claims of ``text`` with ``atomic-v1``: one per fact, anchored where its words are found.

    ``endpoint`` may be ``None`` when every response is already cached (a rerun); a missing response then
    raises :class:`~citeaudit.core.errors.SegmentationUnavailable`.
    """
    base = segment_sentences(text, regions, RulesV2(split_clauses=False))
    outcome = AtomicOutcome(base)
    claims: list[ClaimSpan] = []
    sentences: list[tuple[int, int, int]] = []
    for sentence_claim in base.claims:
        sentence_start, _, sentence_end = base.sentences[sentence_claim.sentence]
        facts = _facts(sentence_claim.text, settings, endpoint, cache, outcome)
        index = len(sentences)
        made: list[ClaimSpan] = []
        if facts is None:
            outcome.malformed += 1
            made.append(ClaimSpan(sentence_claim.start, sentence_claim.end, sentence_claim.text, index))
        for fact, words in facts or []:
            anchor = _anchor(text, sentence_claim.start, sentence_claim.end, words)
            if anchor is None:
                outcome.unanchored.append(Unanchored(sentence_claim.start, sentence_claim.end, fact, words))
                anchor = (sentence_claim.start, sentence_claim.end)
            made.append(ClaimSpan(anchor[0], anchor[1], fact, index))
        if not made:
            continue
        made.sort(key=lambda c: (c.start, c.end, c.text))
        claims.extend(made)
        # every marker of the sentence cites every fact of it: shared from the sentence's start
        sentences.append((sentence_start, sentence_start, sentence_end))
    outcome.segmented = Segmented(tuple(claims), tuple(sentences), base.skipped)
    return outcome


def _request(sentence: str, settings: AtomicSettings) -> dict[str, Any]:
    return {
        "model": settings.model,
        "temperature": settings.temperature,
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": _USER_TEMPLATE.format(sentence=sentence)},
        ],
    }


def _facts(
    sentence: str,
    settings: AtomicSettings,
    endpoint: ChatEndpoint | None,
    cache: ResponseCache,
    outcome: AtomicOutcome,
) -> list[tuple[str, str]] | None:
    """``(fact, words)`` pairs for one sentence; ``None`` when the response holds no readable list of facts."""
    request = _request(sentence, settings)
    key = hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    body = cache.get(key)
    if body is None:
        if endpoint is None:
            raise SegmentationUnavailable("atomic-v1: a response is not cached and no endpoint is configured")
        body = endpoint.complete(request)
        cache.put(key, body)
        outcome.asked += 1
    else:
        outcome.cached += 1
    return _read(body)


def _read(body: dict[str, Any]) -> list[tuple[str, str]] | None:
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        return None
    try:
        parsed = load_json(_FENCE.sub("", content), "model reply")
    except InputError:
        return None
    facts = parsed.get("facts") if isinstance(parsed, dict) else None
    if not isinstance(facts, list):
        return None
    found = []
    for item in facts:
        if isinstance(item, dict) and isinstance(item.get("fact"), str) and item["fact"].strip():
            words = item.get("span")
            found.append((" ".join(item["fact"].split()), words if isinstance(words, str) else ""))
    return found


def _anchor(text: str, start: int, end: int, words: str) -> tuple[int, int] | None:
    """Where ``words`` stand in ``text[start:end]``: exactly, else ignoring case and runs of white space."""
    words = words.strip()
    if not words:
        return None
    at = text.find(words, start, end)
    if at >= 0:
        return at, at + len(words)
    pattern = r"\s+".join(re.escape(part) for part in words.split())
    found = re.compile(pattern, re.IGNORECASE).search(text, start, end)
    return found.span() if found else None
