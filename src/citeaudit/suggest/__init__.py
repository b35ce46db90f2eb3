"""Model-assisted review on a database: ``suggest_edges`` stores a judge's suggestion (a ``model`` judgement,
never a final label) and the ranked snapshot passages it read; ``judge_audit`` runs the bias battery against a
gold reviewer."""

from citeaudit.suggest._audit import JudgeAuditReport, judge_audit
from citeaudit.suggest._run import SuggestReport, prompt_hash_of, suggest_edges

__all__ = ["JudgeAuditReport", "SuggestReport", "judge_audit", "prompt_hash_of", "suggest_edges"]
