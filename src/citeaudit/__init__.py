"""citeaudit: audit the citations in answers from AI answer engines.

Three numbers kept apart, each with its numerator and denominator: the official-domain citation rate,
citation precision and fact coverage (strict convention ``strict-v1``).

>>> import citeaudit
>>> audit = citeaudit.load_audit("four-claim.audit.json")   # doctest: +SKIP
>>> citeaudit.score(audit).precision                          # doctest: +SKIP
Metric(numerator=1, denominator=3, ci=None)

The names below are loaded on first use, so that ``import citeaudit.model`` or ``citeaudit --help`` does not
load every reader, the store and numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citeaudit.agreement import Agreement, LabelPairs, Rater
    from citeaudit.api import ScoredPath, agreement_path, label_pairs_from_store, load_label_pairs, score_path
    from citeaudit.comparison import Comparison, compare_paths
    from citeaudit.errors import (
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
    from citeaudit.identity import OfficialMatcher, normalize_url, registrable_domain
    from citeaudit.interchange import audit_to_document, load_audit, load_protocol, parse_audit_bytes
    from citeaudit.model import (
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
    from citeaudit.protocol import differing_components, fingerprint, fingerprint_components
    from citeaudit.results import Metric, ScopeScore, ScoreResult
    from citeaudit.scope import Scope
    from citeaudit.scoring import IntervalSettings, score, score_reference
    from citeaudit.stats import Interval, cluster_bootstrap_ratio
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
    "Agreement": "citeaudit.agreement",
    "Answer": "citeaudit.model",
    "Audit": "citeaudit.model",
    "Brand": "citeaudit.model",
    "Citation": "citeaudit.model",
    "CitationKind": "citeaudit.model",
    "CiteauditError": "citeaudit.errors",
    "Claim": "citeaudit.model",
    "Comparison": "citeaudit.comparison",
    "Competitor": "citeaudit.model",
    "DuplicateId": "citeaudit.errors",
    "Edge": "citeaudit.model",
    "EvidenceGroup": "citeaudit.model",
    "ImportReport": "citeaudit.store",
    "IncomparableRuns": "citeaudit.errors",
    "InputError": "citeaudit.errors",
    "Interval": "citeaudit.stats",
    "IntervalSettings": "citeaudit.scoring",
    "InvalidValue": "citeaudit.errors",
    "Judgement": "citeaudit.model",
    "Label": "citeaudit.model",
    "LabelPairs": "citeaudit.agreement",
    "Location": "citeaudit.model",
    "MalformedInput": "citeaudit.errors",
    "Metric": "citeaudit.results",
    "OfficialDomain": "citeaudit.model",
    "OfficialMatcher": "citeaudit.identity",
    "Origin": "citeaudit.model",
    "Protocol": "citeaudit.model",
    "ProtocolError": "citeaudit.errors",
    "Question": "citeaudit.model",
    "Rater": "citeaudit.agreement",
    "RequiredFact": "citeaudit.model",
    "ReviewState": "citeaudit.model",
    "Run": "citeaudit.model",
    "RunKind": "citeaudit.model",
    "SchemaVersionMismatch": "citeaudit.errors",
    "Scope": "citeaudit.scope",
    "ScopeError": "citeaudit.errors",
    "ScopeScore": "citeaudit.results",
    "ScoreResult": "citeaudit.results",
    "ScoredPath": "citeaudit.api",
    "Segmentation": "citeaudit.model",
    "Severity": "citeaudit.model",
    "Source": "citeaudit.model",
    "SourceStatus": "citeaudit.model",
    "Stage": "citeaudit.model",
    "Store": "citeaudit.store",
    "StoreError": "citeaudit.errors",
    "UnknownFormat": "citeaudit.errors",
    "UnknownReference": "citeaudit.errors",
    "agreement_path": "citeaudit.api",
    "audit_to_document": "citeaudit.interchange",
    "cluster_bootstrap_ratio": "citeaudit.stats",
    "compare_paths": "citeaudit.comparison",
    "differing_components": "citeaudit.protocol",
    "fingerprint": "citeaudit.protocol",
    "fingerprint_components": "citeaudit.protocol",
    "label_pairs_from_store": "citeaudit.api",
    "load_audit": "citeaudit.interchange",
    "load_label_pairs": "citeaudit.api",
    "load_protocol": "citeaudit.interchange",
    "normalize_url": "citeaudit.identity",
    "parse_audit_bytes": "citeaudit.interchange",
    "registrable_domain": "citeaudit.identity",
    "review_outcome": "citeaudit.model",
    "score": "citeaudit.scoring",
    "score_path": "citeaudit.api",
    "score_reference": "citeaudit.scoring",
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
