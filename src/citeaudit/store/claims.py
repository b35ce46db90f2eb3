"""A store's answers and their claims (``store.claims``): which answers there are to segment, an answer's
claims as they stand, and new claim sets planned and recorded in the store's transactions (the SQL is
:mod:`citeaudit.store.claimsets`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from citeaudit.core.clock import utc_now
from citeaudit.core.errors import UnknownReference
from citeaudit.core.model import Protocol, Segmentation
from citeaudit.store.claimsets import (
    AnswerClaims,
    NewSet,
    SetPlan,
    answer_claims,
    answer_claims_many,
    answers_in,
    claim_answer,
    segment_inputs,
    write_claim_set,
    write_claim_sets,
)
from citeaudit.store.connection import Access
from citeaudit.store.review_rules import require_account

__all__ = ["Claims", "Planner"]

Planner = Callable[[AnswerClaims, Segmentation], tuple[SetPlan, Segmentation] | None]
"""Decides an answer's new claim set from its current claims and their segmentation (``None``: leave it)."""


class Claims:
    """A store's answers and claims. ``protocol`` gives the stored protocol of a row id (the store's, which
    parses each protocol once): an answer without a claim set has the claims its protocol's segmentation made."""

    def __init__(self, access: Access, protocol: Callable[[int], Protocol]) -> None:
        self._access = access
        self._protocol = protocol

    def answers(self, run: str | None = None) -> list[tuple[int, str, int]]:
        """``(answer pk, answer id, protocol pk)`` of every answer, or of one run's."""
        return answers_in(self._access.db, run)

    def answer_pk(self, answer_id: str) -> int:
        """Row id of an answer (UnknownReference when there is no such answer)."""
        row = self._access.db.execute("SELECT pk FROM answers WHERE id = ?", (answer_id,)).fetchone()
        if row is None:
            raise UnknownReference("answer", "", f"no answer {answer_id!r} in {str(self._access.path)!r}")
        return int(row[0])

    def answer_of(self, claim_id: str) -> int:
        """Row id of the answer a claim belongs to (UnknownReference when there is no such claim)."""
        return claim_answer(self._access.db, claim_id)

    def of_answer(self, answer_pk: int) -> AnswerClaims:
        """An answer's current claims, edges, claim history and engine-given spans."""
        return answer_claims(self._access.db, answer_pk)

    def segment_inputs(
        self, answer_pks: Sequence[int]
    ) -> list[tuple[int, str, tuple[tuple[int, int], ...], Segmentation | None]]:
        """``(answer pk, text, engine-given spans, segmentation of the newest claim set or None)`` of each answer,
        read in bulk (see :func:`~citeaudit.store.claimsets.segment_inputs`)."""
        return segment_inputs(self._access.db, answer_pks)

    def change(self, answer_pk: int, planner: Planner, action: str, actor: str | None) -> SetPlan | None:
        """Read an answer's claims, let ``planner`` decide its new claim set (``None``: leave it) and record
        that set, all in one transaction. ``planner`` gets the current claims and their segmentation."""
        with self._access.transaction() as db:
            if actor is not None:
                require_account(db, actor, f"claim {action}")
            state = answer_claims(db, answer_pk)
            (protocol_pk,) = db.execute(
                "SELECT r.protocol_pk FROM answers a JOIN runs r ON r.pk = a.run_pk WHERE a.pk = ?", (answer_pk,)
            ).fetchone()
            ingested_as = self._protocol(protocol_pk).segmentation
            current = state.current_set.segmentation if state.current_set else ingested_as
            decided = planner(state, current)
            if decided is None:
                return None
            plan, segmentation = decided
            write_claim_set(db, state, plan, segmentation, ingested_as, action, actor, utc_now())
            return plan

    def change_each(
        self,
        answer_pks: Sequence[int],
        planner: Planner,
        action: str,
        actor: str | None,
        done: Callable[[SetPlan | None], None],
        batch_seconds: float = 0.25,
        group: int = 64,
    ) -> None:
        """:meth:`change` for each answer in turn, ``done`` told each outcome. Answers are read, planned and
        written ``group`` at a time (a few queries per group instead of several per answer) and committed
        together, one transaction per ``batch_seconds`` of work: a commit costs more than segmenting a short
        answer. Each answer is still all or nothing: when the planner fails on an answer (or the run is
        interrupted) the answers planned before it are written and committed, then the error is raised; when
        writing a group fails, none of its answers is written, those of the groups before it are committed."""
        if actor is not None:
            require_account(self._access.db, actor, action)
        position = 0
        while position < len(answer_pks):
            failure: BaseException | None = None
            with self._access.transaction() as db:
                deadline = time.monotonic() + batch_seconds
                while position < len(answer_pks) and failure is None:
                    outcomes: list[SetPlan | None] = []
                    sets: list[NewSet] = []
                    try:
                        chunk = _distinct_run(answer_pks, position, group)
                        for state, protocol_pk in answer_claims_many(db, chunk):
                            ingested_as = self._protocol(protocol_pk).segmentation
                            decided = planner(
                                state, state.current_set.segmentation if state.current_set else ingested_as
                            )
                            if decided is not None:
                                sets.append((state, decided[0], decided[1], ingested_as))
                            outcomes.append(None if decided is None else decided[0])
                            if time.monotonic() > deadline:
                                break  # slow answers (a model's): the rest of the group waits for the next batch
                    except BaseException as exc:  # what is planned before it is written and committed
                        failure = exc
                    try:
                        with self._access.transaction() as group_db:  # a savepoint: the group is written or not
                            write_claim_sets(group_db, sets, action, actor, utc_now())
                        for outcome in outcomes:
                            position += 1
                            done(outcome)
                    except BaseException as exc:
                        failure = exc
                    if time.monotonic() > deadline:
                        break
            if failure is not None:
                raise failure


def _distinct_run(answer_pks: Sequence[int], position: int, group: int) -> Sequence[int]:
    """Up to ``group`` answers from ``position`` on, ending before an answer that comes twice: an answer is read
    before any of its group is written, so the second time must be read in a later group."""
    chunk = answer_pks[position : position + group]
    seen: set[int] = set()
    for index, answer_pk in enumerate(chunk):
        if answer_pk in seen:
            return chunk[:index]
        seen.add(answer_pk)
    return chunk
