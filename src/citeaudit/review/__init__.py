"""The review workflow's web UI (extra ``citeaudit[review]``): blind single or double review, adjudication,
evidence groups and a score page that matches ``citeaudit score``."""

from __future__ import annotations

__all__: list[str] = []
