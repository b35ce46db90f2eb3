"""Segmentation of answers into claims (``rules-v2`` by default, ``rules-v1`` kept as it was, ``atomic-v1`` with a
chat model), claim sets with their history, manual edits and the mapping of claims to required facts. The names
below are ``rules-v1``'s; ``rules-v2`` lives in :mod:`citeaudit.segment.rules_v2`."""

from citeaudit.segment.rules import METHOD, VERSION, ClaimSpan, Rules, Segmented, Skipped, SkipReason, segment

__all__ = ["METHOD", "VERSION", "ClaimSpan", "Rules", "Segmented", "SkipReason", "Skipped", "segment"]
