"""The library's entry points that take a path (an audit file or a database), in one module to import.

A facade over the services, beside the command line and the web app: it composes ``scoring/`` (score, scope,
misattribution and agreement of what is at a path) and the core's :class:`~citeaudit.core.scored.ScoredPath`, and no
service imports it. ``citeaudit.score_path`` and the other names at the package root are the same functions.
"""

from __future__ import annotations

from citeaudit.core.scored import ScoredPath
from citeaudit.scoring.paths import (
    agreement_path,
    is_database,
    label_pairs_from_store,
    load_label_pairs,
    load_scope,
    misattribution_path,
    score_path,
    unresolved_links,
)

__all__ = [
    "ScoredPath",
    "agreement_path",
    "is_database",
    "label_pairs_from_store",
    "load_label_pairs",
    "load_scope",
    "misattribution_path",
    "score_path",
    "unresolved_links",
]
