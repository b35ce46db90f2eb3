"""Judges propose labels for edges; a proposal is a ``model`` judgement and never a final label on its own.

Three judges share the ``Judge`` protocol: ``checks`` (deterministic consistency checks), ``nli`` (a local
transformers NLI model from a folder; extra ``citeaudit[models]``) and ``openai`` (any OpenAI-compatible
chat-completions endpoint; extra ``citeaudit[openai]``). ``make_judge(name, ...)`` builds one by name;
``suggest_for_edge(judge, claim, source)`` ranks a source's passages and judges the best ones;
``citeaudit.judges.battery`` measures a judge's biases.
"""

from __future__ import annotations

from citeaudit.judges._base import LABEL_ORDER, Judge, JudgeRequest, JudgeTraits, Suggestion
from citeaudit.judges._checks import ChecksJudge
from citeaudit.judges._nli import NliJudge, map_nli_label
from citeaudit.judges._openai import PROMPT_VERSION, OpenAIJudge, prompt_sha256
from citeaudit.judges._registry import JUDGES, make_judge
from citeaudit.judges._suggest import EdgeSuggestion, suggest_for_edge

__all__ = [
    "JUDGES",
    "LABEL_ORDER",
    "PROMPT_VERSION",
    "ChecksJudge",
    "EdgeSuggestion",
    "Judge",
    "JudgeRequest",
    "JudgeTraits",
    "NliJudge",
    "OpenAIJudge",
    "Suggestion",
    "make_judge",
    "map_nli_label",
    "prompt_sha256",
    "suggest_for_edge",
]
