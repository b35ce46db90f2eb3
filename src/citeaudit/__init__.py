"""citeaudit: audit the citations in answers from AI answer engines.

Three numbers kept apart, each with its numerator and denominator: the official-domain citation rate,
citation precision and fact coverage (strict convention ``strict-v1``).

>>> import citeaudit
>>> audit = citeaudit.load_audit("four-claim.audit.json")   # doctest: +SKIP
>>> citeaudit.score(audit).precision                          # doctest: +SKIP
Metric(numerator=1, denominator=3, ci=None)

The names below are loaded on first use, so that ``import citeaudit.core.model`` or ``citeaudit --help`` does not
load every reader, the store and numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citeaudit.core.agreement import Agreement
    from citeaudit.core.errors import (
        CiteauditError,
        DuplicateId,
        IncomparableRuns,
        InputError,
        InvalidValue,
        MalformedInput,
        ProtocolError,
        SchemaVersionMismatch,
        ScopeError,
        StoreError,
        UnknownFormat,
        UnknownReference,
    )
    from citeaudit.core.identity import OfficialMatcher, normalize_url, registrable_domain
    from citeaudit.core.model import (
        Answer,
        Audit,
        Brand,
        Citation,
        CitationKind,
        Claim,
        Competitor,
        Edge,
        EvidenceGroup,
        Judgement,
        Label,
        Location,
        OfficialDomain,
        Origin,
        Protocol,
        Question,
        RequiredFact,
        ReviewState,
        Run,
        RunKind,
        Segmentation,
        Severity,
        Source,
        SourceStatus,
        Stage,
        review_outcome,
    )
    from citeaudit.core.protocol import differing_components, fingerprint, fingerprint_components
    from citeaudit.core.raters import LabelPairs, Rater
    from citeaudit.core.results import Metric, ScopeScore, ScoreResult
    from citeaudit.core.scope import Scope
    from citeaudit.core.scored import ScoredPath
    from citeaudit.core.scoring import IntervalSettings, score, score_reference
    from citeaudit.core.stats import Interval, cluster_bootstrap_ratio
    from citeaudit.interchange import audit_to_document, load_audit, load_protocol, parse_audit_bytes
    from citeaudit.scoring.comparison import Comparison, compare_paths
    from citeaudit.scoring.paths import agreement_path, label_pairs_from_store, load_label_pairs, score_path
    from citeaudit.store import ImportReport, Store

__version__ = "0.1.0"

__all__ = [
    "Agreement",
    "Answer",
    "Audit",
    "Brand",
    "Citation",
    "CitationKind",
    "CiteauditError",
    "Claim",
    "Comparison",
    "Competitor",
    "DuplicateId",
    "Edge",
    "EvidenceGroup",
    "ImportReport",
    "IncomparableRuns",
    "InputError",
    "Interval",
    "IntervalSettings",
    "InvalidValue",
    "Judgement",
    "Label",
    "LabelPairs",
    "Location",
    "MalformedInput",
    "Metric",
    "OfficialDomain",
    "OfficialMatcher",
    "Origin",
    "Protocol",
    "ProtocolError",
    "Question",
    "Rater",
    "RequiredFact",
    "ReviewState",
    "Run",
    "RunKind",
    "SchemaVersionMismatch",
    "Scope",
    "ScopeError",
    "ScopeScore",
    "ScoreResult",
    "ScoredPath",
    "Segmentation",
    "Severity",
    "Source",
    "SourceStatus",
    "Stage",
    "Store",
    "StoreError",
    "UnknownFormat",
    "UnknownReference",
    "agreement_path",
    "audit_to_document",
    "cluster_bootstrap_ratio",
    "compare_paths",
    "differing_components",
    "fingerprint",
    "fingerprint_components",
    "label_pairs_from_store",
    "load_audit",
    "load_label_pairs",
    "load_protocol",
    "normalize_url",
    "parse_audit_bytes",
    "registrable_domain",
    "review_outcome",
    "score",
    "score_path",
    "score_reference",
]

# Each public name and the module it lives in.
_HOME = {
    "Agreement": "citeaudit.core.agreement",
    "Answer": "citeaudit.core.model",
    "Audit": "citeaudit.core.model",
    "Brand": "citeaudit.core.model",
    "Citation": "citeaudit.core.model",
    "CitationKind": "citeaudit.core.model",
    "CiteauditError": "citeaudit.core.errors",
    "Claim": "citeaudit.core.model",
    "Comparison": "citeaudit.scoring.comparison",
    "Competitor": "citeaudit.core.model",
    "DuplicateId": "citeaudit.core.errors",
    "Edge": "citeaudit.core.model",
    "EvidenceGroup": "citeaudit.core.model",
    "ImportReport": "citeaudit.store",
    "IncomparableRuns": "citeaudit.core.errors",
    "InputError": "citeaudit.core.errors",
    "Interval": "citeaudit.core.stats",
    "IntervalSettings": "citeaudit.core.scoring",
    "InvalidValue": "citeaudit.core.errors",
    "Judgement": "citeaudit.core.model",
    "Label": "citeaudit.core.model",
    "LabelPairs": "citeaudit.core.raters",
    "Location": "citeaudit.core.model",
    "MalformedInput": "citeaudit.core.errors",
    "Metric": "citeaudit.core.results",
    "OfficialDomain": "citeaudit.core.model",
    "OfficialMatcher": "citeaudit.core.identity",
    "Origin": "citeaudit.core.model",
    "Protocol": "citeaudit.core.model",
    "ProtocolError": "citeaudit.core.errors",
    "Question": "citeaudit.core.model",
    "Rater": "citeaudit.core.raters",
    "RequiredFact": "citeaudit.core.model",
    "ReviewState": "citeaudit.core.model",
    "Run": "citeaudit.core.model",
    "RunKind": "citeaudit.core.model",
    "SchemaVersionMismatch": "citeaudit.core.errors",
    "Scope": "citeaudit.core.scope",
    "ScopeError": "citeaudit.core.errors",
    "ScopeScore": "citeaudit.core.results",
    "ScoreResult": "citeaudit.core.results",
    "ScoredPath": "citeaudit.core.scored",
    "Segmentation": "citeaudit.core.model",
    "Severity": "citeaudit.core.model",
    "Source": "citeaudit.core.model",
    "SourceStatus": "citeaudit.core.model",
    "Stage": "citeaudit.core.model",
    "Store": "citeaudit.store",
    "StoreError": "citeaudit.core.errors",
    "UnknownFormat": "citeaudit.core.errors",
    "UnknownReference": "citeaudit.core.errors",
    "agreement_path": "citeaudit.scoring.paths",
    "audit_to_document": "citeaudit.interchange",
    "cluster_bootstrap_ratio": "citeaudit.core.stats",
    "compare_paths": "citeaudit.scoring.comparison",
    "differing_components": "citeaudit.core.protocol",
    "fingerprint": "citeaudit.core.protocol",
    "fingerprint_components": "citeaudit.core.protocol",
    "label_pairs_from_store": "citeaudit.scoring.paths",
    "load_audit": "citeaudit.interchange",
    "load_label_pairs": "citeaudit.scoring.paths",
    "load_protocol": "citeaudit.interchange",
    "normalize_url": "citeaudit.core.identity",
    "parse_audit_bytes": "citeaudit.interchange",
    "registrable_domain": "citeaudit.core.identity",
    "review_outcome": "citeaudit.core.model",
    "score": "citeaudit.core.scoring",
    "score_path": "citeaudit.scoring.paths",
    "score_reference": "citeaudit.core.scoring",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
