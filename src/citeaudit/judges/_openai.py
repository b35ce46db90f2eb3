"""The ``openai`` judge: any OpenAI-compatible chat-completions endpoint, with a versioned, hashed prompt.

The endpoint, model and key come from the environment (``CITEAUDIT_OPENAI_BASE_URL``, ``CITEAUDIT_OPENAI_MODEL``,
``CITEAUDIT_OPENAI_API_KEY``; ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` as fallbacks) or the constructor. The
answer must be the JSON object ``{label, quote, reasoning}`` (asked for as a strict JSON schema). Whatever cannot
be used — a refusal, text that is not that object, a label that does not exist, a quote that is not in the
passages — becomes ``unknown`` with the reason, never a guessed label. Transport and HTTP errors raise
``JudgeError``: nothing is stored for that edge, and a rerun picks it up.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any

from citeaudit.core.errors import InputError, JudgeError, MissingExtra
from citeaudit.core.limits import load_json
from citeaudit.core.model import Label
from citeaudit.judges._base import JudgeRequest, Suggestion

__all__ = ["PROMPT_VERSION", "OpenAIJudge", "prompt_sha256"]

PROMPT_VERSION = "edge-label-v1"

SYSTEM_PROMPT = (
    "You check citations. Given a claim and the text of the source(s) cited for it, decide whether the sources "
    "support the claim. Judge only from the source text shown, not from what you know. Quote the shortest exact "
    "passage of the source text your label rests on (empty when there is none). Answer with the JSON object only."
)
LABEL_DEFINITIONS = {
    Label.SUPPORTED: "the sources state the whole claim",
    Label.PARTIAL: "the sources state part of the claim, not all of it",
    Label.CONFLICTING: "the sources contradict the claim (another number, unit, model, date or fact)",
    Label.IRRELEVANT: "the sources say nothing about the claim",
    Label.UNKNOWN: "the source text is unreadable or missing, so support cannot be judged",
}
USER_TEMPLATE = "Claim:\n{claim}\n\nSources:\n{sources}\n\nLabels (choose one):\n{labels}"
RESPONSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "label": {"type": "string", "enum": [str(label) for label in Label]},
        "quote": {"type": "string"},
        "reasoning": {"type": "string"},
    },
    "required": ["label", "quote", "reasoning"],
    "additionalProperties": False,
}


def prompt_sha256() -> str:
    """Hash of everything that shapes the judge's answer besides the edge: version, prompts, labels, schema."""
    canonical = json.dumps(
        {
            "version": PROMPT_VERSION,
            "system": SYSTEM_PROMPT,
            "user": USER_TEMPLATE,
            "labels": {str(k): v for k, v in LABEL_DEFINITIONS.items()},
            "schema": RESPONSE_SCHEMA,
        },
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def render_user_prompt(request: JudgeRequest) -> str:
    """The user message for one edge: the claim, numbered sources and the label options in the request's order."""
    sources = "\n\n".join(f"[{i}] {passage}" for i, passage in enumerate(request.passages, start=1))
    labels = "\n".join(f"- {label}: {LABEL_DEFINITIONS[label]}" for label in request.label_order)
    return USER_TEMPLATE.format(claim=request.claim, sources=sources, labels=labels)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


class OpenAIJudge:
    """A chat-completions model behind any OpenAI-compatible endpoint."""

    name = "openai"
    version = PROMPT_VERSION

    def __init__(
        self,
        *,
        base_url: str | None = None,
        model: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        seed: int | None = 0,
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        try:
            import openai
        except ImportError as exc:
            raise MissingExtra("openai", "the openai judge") from exc
        base_url = base_url or os.environ.get("CITEAUDIT_OPENAI_BASE_URL") or os.environ.get("OPENAI_BASE_URL")
        model = model or os.environ.get("CITEAUDIT_OPENAI_MODEL")
        api_key = api_key or os.environ.get("CITEAUDIT_OPENAI_API_KEY") or os.environ.get("OPENAI_API_KEY")
        if not base_url:
            raise JudgeError("the openai judge needs an endpoint: set CITEAUDIT_OPENAI_BASE_URL (e.g. http://host/v1)")
        if not model:
            raise JudgeError("the openai judge needs a model name: set CITEAUDIT_OPENAI_MODEL")
        self._openai: Any = openai
        # Local OpenAI-compatible servers often take no key; the client still needs a non-empty string.
        self._client: Any = openai.OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=max_retries
        )
        self.model: str | None = model
        self.base_url = base_url
        self.temperature = temperature
        self.seed = seed
        self.prompt_sha256 = prompt_sha256()

    def _unknown(self, failure: str, reasoning: str | None = None) -> Suggestion:
        return Suggestion(
            Label.UNKNOWN, self.name, self.version, self.model, self.prompt_sha256, reasoning=reasoning, failure=failure
        )

    def judge(self, request: JudgeRequest) -> Suggestion:
        """Ask the endpoint once; turn its answer into a suggestion or an ``unknown`` with the reason."""
        try:
            completion = self._client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": render_user_prompt(request)},
                ],
                temperature=self.temperature,
                seed=self.seed,
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "edge_label", "strict": True, "schema": RESPONSE_SCHEMA},
                },
            )
        except self._openai.APIError as exc:
            raise JudgeError(f"the openai judge at {self.base_url!r} failed: {exc}") from exc
        choices = getattr(completion, "choices", None) or []
        if not choices:
            return self._unknown("malformed: the response has no choices")
        message = choices[0].message
        refusal = getattr(message, "refusal", None)
        if refusal:
            return self._unknown(f"refused: {refusal}")
        content = message.content
        if not content:
            return self._unknown(f"malformed: empty content (finish_reason {choices[0].finish_reason!r})")
        try:
            answer = load_json(content, "the judge's reply")
        except InputError as exc:  # not JSON, or past a limit (nesting, a lone surrogate...)
            return self._unknown(
                f"malformed: content is not JSON citeaudit can read ({exc.message}): {content[:200]!r}"
            )
        if not isinstance(answer, dict) or not {"label", "quote", "reasoning"} <= set(answer):
            return self._unknown(f"malformed: expected an object with label, quote, reasoning: {content[:200]!r}")
        label_text, quote, reasoning = answer["label"], answer["quote"], answer["reasoning"]
        if not all(isinstance(v, str) for v in (label_text, quote, reasoning)):
            return self._unknown(f"malformed: label, quote and reasoning must be strings: {content[:200]!r}")
        try:
            label = Label(label_text.strip().lower())
        except ValueError:
            return self._unknown(f"malformed: unknown label {label_text!r}", reasoning)
        if quote.strip() and not any(_squash(quote) in _squash(p) for p in request.passages):
            return self._unknown(f"quote not found in the passages: {quote[:200]!r} (label was {label})", reasoning)
        return Suggestion(
            label, self.name, self.version, self.model, self.prompt_sha256, quote=quote or None, reasoning=reasoning
        )
