"""The review side of cross pairs: what the cross-pair pages read and the judgement a person posts there, over the
review store's connection. The SQL is :mod:`citeaudit.store.cross_pairs`' (proposing pairs, model judgements and
the scores read them too); this part names what the web UI needs of it."""

from __future__ import annotations

from citeaudit.core.model import Judgement, Stage
from citeaudit.core.passages import Passage
from citeaudit.store.cross_pairs import (
    CrossPairRow,
    cross_pair,
    cross_pair_list,
    cross_ranked_passages,
    cross_refusal,
    record_cross_judgement,
)
from citeaudit.store.resolution import passages_of
from citeaudit.store.review_base import ReviewPart

__all__ = ["ReviewCrossPairs"]


class ReviewCrossPairs(ReviewPart):
    """Cross pairs as reviewers judge them (``ReviewStore.cross``)."""

    def pair(self, pair_pk: int) -> CrossPairRow | None:
        """One cross pair of a current claim with its judgements, or ``None``."""
        return cross_pair(self._db, pair_pk)

    def pairs(self, limit: int = 200) -> list[CrossPairRow]:
        """Cross pairs of current claims, those without a human judgement first, then in proposal order."""
        return cross_pair_list(self._db, limit)

    def source_passages(self, source_key: str) -> list[Passage]:
        """The passages of the latest snapshot of the pair's source (empty when it has none)."""
        return passages_of(self._db, source_key)

    def ranked_passages(self, pair_pk: int) -> list[tuple[int, float, str]]:
        """``(rank, score, text)`` of the passages the pair's latest model judgement was shown, best first."""
        return cross_ranked_passages(self._db, pair_pk)

    def refusal(self, pair_pk: int, reviewer: str, stage: Stage) -> str | None:
        """Why ``reviewer`` may not record a judgement of ``stage`` on the pair now (``None`` when they may), by
        the rules :meth:`record_judgement` follows."""
        return cross_refusal(self._db, pair_pk, reviewer, stage)

    def record_judgement(self, pair_pk: int, judgement: Judgement, *, submission: str, door: str = "api") -> int:
        """Record a person's judgement of the pair in one transaction with its audit-log row, checked there by the
        rules every door follows (a :class:`~citeaudit.core.errors.ReviewRefused` when they refuse it); a
        ``submission`` seen before records nothing again. Returns the judgement's row id."""
        with self._transaction() as db:
            return record_cross_judgement(db, pair_pk, judgement, submission=submission, door=door)
