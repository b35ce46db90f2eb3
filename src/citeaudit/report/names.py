"""Names people read: engines by their product name, questions by their text, the brand and its competitors.

A protocol may name an engine's answers (``engines: {openai: {label: ChatGPT search}}``); otherwise a platform
gets a readable default from :data:`DEFAULT_ENGINE_NAMES`, and an unknown platform is shown as it is recorded.
"""

from __future__ import annotations

from collections.abc import Mapping

from citeaudit.core.model import Protocol

__all__ = ["DEFAULT_ENGINE_NAMES", "EngineNames", "question_names"]

DEFAULT_ENGINE_NAMES: Mapping[str, str] = {
    "openai": "ChatGPT (OpenAI)",
    "chatgpt": "ChatGPT (OpenAI)",
    "perplexity": "Perplexity",
    "perplexity-agent": "Perplexity (agent)",
    "anthropic": "Claude (Anthropic)",
    "claude": "Claude (Anthropic)",
    "gemini": "Gemini (Google)",
    "serpapi": "Google AI Overviews",
    "google-ai-overview": "Google AI Overviews",
    "copilot": "Copilot (Microsoft)",
    "grok": "Grok (xAI)",
}
"""Readable names of the platforms answers are recorded under, by the recorded name (lower case)."""


class EngineNames:
    """The display name of each recorded platform: the protocol's label, else the default, else the name itself."""

    def __init__(self, *protocols: Protocol | None) -> None:
        """Labels from ``protocols``, the later ones winning (a protocol file read for the report over the
        audit's own)."""
        self._labels: dict[str, str] = {}
        for protocol in protocols:
            if protocol is None:
                continue
            for engine in protocol.engine_names:
                self._labels[engine.platform or engine.engine] = engine.label

    def __call__(self, platform: str | None) -> str:
        """The name shown for ``platform`` (an em-dash for none)."""
        if not platform:
            return "—"
        return self._labels.get(platform) or DEFAULT_ENGINE_NAMES.get(platform.lower(), platform)


def question_names(protocol: Protocol) -> dict[str, str]:
    """``q01 · What tank size does the AX220 have?`` by question id."""
    return {q.id: f"{q.id} · {q.text}" if q.text else q.id for q in protocol.questions}
