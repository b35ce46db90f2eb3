"""Segmentation of answers into claims (``rules-v1``), claim sets with their history, manual edits and the
mapping of claims to required facts."""

from citeaudit.segment.rules import METHOD, VERSION, ClaimSpan, Rules, Segmented, Skipped, SkipReason, segment

__all__ = ["METHOD", "VERSION", "ClaimSpan", "Rules", "Segmented", "SkipReason", "Skipped", "segment"]
