"""The review policies' rules as properties: whatever order reviews come in, an edge has at most its policy's
number of reviewers, and under double review a change made after both reviews never alters the outcome."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeaudit.core.model import Judgement, Label, Origin, ReviewState, Stage
from citeaudit.core.review_policy import StoredJudgement, counted_judgements, review_refusal, reviewers_of
from citeaudit.core.scoring import edge_code

NAMES = ("ann", "bob", "cat", "dan")

reviews = st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(list(Label))), max_size=12)

# The rules are pure and fast; on a loaded machine drawing the inputs can still take a second, which is no failure.
UNTIMED = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def stored(sequence: list[tuple[str, Label]]) -> list[StoredJudgement]:
    return [
        StoredJudgement(pk, Judgement(label, name, Origin.HUMAN, Stage.REVIEW, created_at=f"2026-12-01T00:00:{pk:02d}"))
        for pk, (name, label) in enumerate(sequence, start=1)
    ]


def admitted(sequence: list[tuple[str, Label]], required: int) -> list[StoredJudgement]:
    """The reviews the store records when they are submitted in this order (refused ones are dropped)."""
    kept: list[StoredJudgement] = []
    for item in stored(sequence):
        state, _ = edge_code(counted_judgements(kept, required), required)
        name = item.judgement.reviewer or ""
        if review_refusal(kept, name, "reviewer", state, required) is None:
            kept.append(item)
    return kept


@UNTIMED
@given(reviews, st.sampled_from([1, 2]))
def test_an_edge_never_has_more_reviewers_than_its_policy(sequence: list[tuple[str, Label]], required: int) -> None:
    kept = admitted(sequence, required)
    assert len({j.judgement.reviewer for j in kept}) <= required
    assert len(reviewers_of(kept, required)) <= required


@UNTIMED
@given(reviews, reviews)
def test_under_double_review_later_changes_never_alter_the_outcome(
    before: list[tuple[str, Label]], later: list[tuple[str, Label]]
) -> None:
    first = admitted(before, 2)
    if len(reviewers_of(first, 2)) < 2:
        return
    outcome = edge_code(counted_judgements(first, 2), 2)
    everything = admitted(before + later, 2)
    assert edge_code(counted_judgements(everything, 2), 2) == outcome
    # and a disputed edge stays disputed until an adjudication
    if outcome[0] is ReviewState.DISPUTED:
        assert edge_code(counted_judgements(everything, 2), 2)[0] is ReviewState.DISPUTED
