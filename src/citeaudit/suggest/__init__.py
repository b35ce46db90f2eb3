"""Model-assisted review on a database: ``suggest_edges`` stores a judge's suggestion (a ``model`` judgement,
never a final label) and the ranked snapshot passages it read; ``suggest_cross_pairs`` does the same for the cross
pairs of claims at risk (misattribution); ``triage_edges`` offers the edges the offline judges are sure about
for a reviewer to confirm; ``judge_audit`` runs the bias battery against a
gold reviewer."""

from citeaudit.suggest._audit import JudgeAuditReport, judge_audit
from citeaudit.suggest._cross import CrossSuggestReport, suggest_cross_pairs
from citeaudit.suggest._run import SuggestReport, suggest_edges
from citeaudit.suggest._runner import prompt_hash_of
from citeaudit.suggest._triage import TriageReport, triage_edges

__all__ = [
    "CrossSuggestReport",
    "JudgeAuditReport",
    "SuggestReport",
    "TriageReport",
    "judge_audit",
    "prompt_hash_of",
    "suggest_cross_pairs",
    "suggest_edges",
    "triage_edges",
]
