"""citeaudit: audit the citations in answers from AI answer engines.

Three numbers kept apart, each with its numerator and denominator: the official-domain citation rate,
citation precision and fact coverage (strict convention ``strict-v1``).

>>> import citeaudit
>>> audit = citeaudit.load_audit("four-claim.audit.json")   # doctest: +SKIP
>>> citeaudit.score(audit).precision                          # doctest: +SKIP
Metric(numerator=1, denominator=3, ci=None)
"""

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
