"""Segmenting the answers in a database, and manual split / merge / edit, as new claim sets.

Each answer is all or nothing; answers are committed together in batches of a fraction of a second, and an
answer that fails (or an interruption) commits the answers finished before it, so an interrupted run keeps what
it finished. Re-running skips answers whose current claims were already made with the same method, version and
parameters (manual edits made on top of them are kept).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

from citeaudit.core.errors import InvalidValue
from citeaudit.core.model import Segmentation
from citeaudit.segment import atomic, rules_v2
from citeaudit.segment import rules as rules_v1
from citeaudit.segment.atomic import AtomicSettings, ChatEndpoint, ResponseCache
from citeaudit.segment.claimsets import SetPlan, plan_edit, plan_merge, plan_segmentation, plan_split
from citeaudit.segment.rules import Rules, Segmented
from citeaudit.segment.rules_v2 import RulesV2
from citeaudit.segment.worker import SegmentedAhead, segment_with, worker_possible
from citeaudit.store import Store
from citeaudit.store.claimsets import AnswerClaims
from citeaudit.store.pipeline import second_core_idle

__all__ = [
    "DEFAULT_METHOD",
    "METHODS",
    "MethodCounts",
    "SegmentReport",
    "compare_methods",
    "edit_claim",
    "merge_claims",
    "resegment",
    "resegment_atomic",
    "split_claim",
]

METHODS = rules_v2.RULES_METHODS
"""Segmentation methods ``citeaudit segment`` knows (the model-assisted one has its own entry point)."""
DEFAULT_METHOD = rules_v2.METHOD
"""The method ``citeaudit segment`` uses when none is named. ``rules-v1`` stays selectable: claim sets made
with it are reproduced exactly, and its method name and version stay in their fingerprint."""

MethodRules = Rules | RulesV2
"""The parameters of one rules method."""


def rules_for(method: str, rules: MethodRules | None = None) -> MethodRules:
    """The parameters for ``method`` (its defaults when ``rules`` is ``None``); refuses a mismatch."""
    if method not in METHODS:
        raise InvalidValue("--method", "", f"unknown segmentation method {method!r}; known: {', '.join(METHODS)}")
    expected = Rules if method == rules_v1.METHOD else RulesV2
    if rules is None:
        return expected()
    if not isinstance(rules, expected):
        raise InvalidValue("--method", "", f"the parameters given are not those of {method!r}")
    return rules


def _segment_with(text: str, regions: Sequence[tuple[int, int]], rules: MethodRules) -> Segmented:
    return segment_with(text, regions, rules)


WORKER_MIN_CHARS = 200_000
"""Characters of answer text to segment from which ``citeaudit segment`` segments in a worker process while it
writes (when a worker is possible, see :func:`~citeaudit.segment.worker.worker_possible`, and a second core is
idle). Starting and stopping the worker costs 9-13 ms (4 answers: 10-13 ms with it, 1.5 ms without, at load 5); the
overlap saves at most the store side's time, about 0.27 µs a character (0.13 s CPU for 480,000), so it pays from
about 40,000 characters; this threshold leaves five times that."""


@dataclass(slots=True)
class SegmentReport:
    """What one ``segment`` run or manual edit did, summed over answers."""

    answers: int = 0
    """Answers looked at."""
    already: int = 0
    """Answers whose current claims were already made this way (left as they are)."""
    sets: int = 0
    """New claim sets recorded."""
    kept: int = 0
    """Claims unchanged in text and span: they keep their edges and judgements."""
    new: int = 0
    """New claims (their edges are pending)."""
    retired: int = 0
    """Claims no longer current (kept in the history with their judgements)."""
    edges_kept: int = 0
    """Edges of kept claims."""
    edges_pending: int = 0
    """New edges, pending review."""
    judgements_kept: int = 0
    """Judgements that stay in force (on kept claims)."""
    judgements_not_transferred: int = 0
    """Judgements on retired claims: not moved to any new text."""
    facts_not_transferred: int = 0
    """Confirmed fact mappings of retired claims: not moved to any new text."""
    unattached: int = 0
    """Citation locations that fell on no claim (e.g. a marker in a skipped question)."""
    skipped: Counter[str] = field(default_factory=Counter)
    """Non-assertions skipped, by reason."""
    method: str = ""
    """The segmentation method."""
    claims_per_answer: Counter[int] = field(default_factory=Counter)
    """How many answers got how many claims from this run's segmentation (claims → answers)."""
    asked: int = 0
    """Requests sent to a model endpoint (``atomic-v1``)."""
    cached: int = 0
    """Model responses read from the cache instead (``atomic-v1``)."""
    malformed: int = 0
    """Model responses without a readable list of facts: their sentence stays one claim (``atomic-v1``)."""
    unanchored: list[str] = field(default_factory=list)
    """Facts whose words were not found in their sentence, kept as claims on the whole sentence
    (``atomic-v1``)."""

    def add(self, plan: SetPlan) -> None:
        """Count one recorded claim set."""
        self.sets += 1
        self.kept += plan.kept
        self.new += plan.new
        self.retired += plan.retired
        self.edges_kept += plan.edges_kept
        self.edges_pending += plan.edges_pending
        self.judgements_kept += plan.judgements_kept
        self.judgements_not_transferred += plan.judgements_not_transferred
        self.facts_not_transferred += plan.facts_not_transferred
        self.unattached += plan.unattached
        self.skipped.update(plan.skipped)

    def as_dict(self) -> dict[str, object]:
        """Plain mapping for JSON output (``claims_per_answer`` keys as strings, in numeric order)."""
        return {
            name: {str(k): v for k, v in sorted(value.items())} if isinstance(value, Counter) else value
            for name, value in ((n, getattr(self, n)) for n in self.__dataclass_fields__)
        }


def resegment(
    store: Store,
    method: str | None = None,
    rules: MethodRules | None = None,
    run: str | None = None,
    actor: str | None = None,
    advance: Callable[[int], None] | None = None,
    force: bool = False,
    *,
    worker: bool | None = None,
) -> SegmentReport:
    """Segment every answer (or one run's) with ``method`` into a new claim set.

    ``method`` defaults to the method ``rules`` belong to, else :data:`DEFAULT_METHOD`. Engine-given spans
    (the claims as ingested) are the starting point: no new claim crosses one. A claim whose text and span are
    unchanged keeps its edges and judgements; every other claim is new and pending. ``advance(n)`` is called
    after each answer (for a progress bar). Answers already segmented this way are left alone unless ``force``
    (which also replaces manual edits made on top of that segmentation).

    ``worker``: segment in a worker process while this one writes (``True``: whenever one is possible,
    ``False``: never, ``None``: when one is possible, a second core is idle and there are at least
    :data:`WORKER_MIN_CHARS` characters to segment). The database ends up the same either way.
    """
    if method is None:
        method = rules_v1.METHOD if isinstance(rules, Rules) else DEFAULT_METHOD
    chosen = rules_for(method, rules)
    segmentation = chosen.segmentation()
    report = SegmentReport(method=method)
    answer_pks = [answer_pk for answer_pk, _, _ in store.claims.answers(run)]
    ahead: SegmentedAhead | None = None
    if worker is not False and worker_possible() and (worker or second_core_idle()):
        todo = [
            (pk, text, regions)
            for pk, text, regions, current in store.claims.segment_inputs(answer_pks)
            if force or current != segmentation
        ]
        if worker or sum(len(text) for _, text, _ in todo) >= WORKER_MIN_CHARS:
            ahead = SegmentedAhead(chosen, todo)

    def make(state: AnswerClaims) -> Segmented:
        if ahead is not None:
            return ahead.take(state.pk, state.text, state.regions)
        return _segment_with(state.text, state.regions, chosen)

    context: AbstractContextManager[object] = ahead if ahead is not None else nullcontext()
    with context:
        return _run(store, answer_pks, segmentation, make, report, actor, advance, force)


def resegment_atomic(
    store: Store,
    settings: AtomicSettings,
    endpoint: ChatEndpoint | None,
    cache: ResponseCache,
    run: str | None = None,
    actor: str | None = None,
    advance: Callable[[int], None] | None = None,
    force: bool = False,
) -> SegmentReport:
    """Segment every answer (or one run's) with ``atomic-v1``: facts from a chat model, anchored to the answer;
    as :func:`resegment` otherwise. Unanchored facts are kept on their sentence and reported."""
    report = SegmentReport(method=atomic.METHOD)

    def make(state: AnswerClaims) -> Segmented:
        outcome = atomic.decompose(state.text, state.regions, settings, endpoint, cache)
        report.asked += outcome.asked
        report.cached += outcome.cached
        report.malformed += outcome.malformed
        report.unanchored.extend(f"{u.fact} (words {u.span!r} not found)" for u in outcome.unanchored)
        return outcome.segmented

    answer_pks = [answer_pk for answer_pk, _, _ in store.claims.answers(run)]
    return _run(store, answer_pks, settings.segmentation(), make, report, actor, advance, force)


def _run(
    store: Store,
    answer_pks: Sequence[int],
    segmentation: Segmentation,
    make: Callable[[AnswerClaims], Segmented],
    report: SegmentReport,
    actor: str | None,
    advance: Callable[[int], None] | None,
    force: bool,
) -> SegmentReport:
    def planner(state: AnswerClaims, current: Segmentation) -> tuple[SetPlan, Segmentation] | None:
        if state.current_set is not None and current == segmentation and not force:
            report.already += 1
            return None
        segmented = make(state)
        report.claims_per_answer[len(segmented.claims)] += 1
        return plan_segmentation(segmented, state.claims, state.edges, state.history), segmentation

    def done(plan: SetPlan | None) -> None:
        report.answers += 1
        if plan is not None:
            report.add(plan)
        if advance is not None:
            advance(1)

    store.claims.change_each(answer_pks, planner, "segment", actor, done)
    return report


@dataclass(frozen=True, slots=True)
class MethodCounts:
    """How many claims each rules method makes of one answer, next to its current claims."""

    answer: str
    """Answer id."""
    current: int
    """Current claims."""
    by_method: dict[str, int]
    """Claims each method in :data:`METHODS` makes (default parameters), by method name."""


def compare_methods(store: Store, run: str | None = None) -> list[MethodCounts]:
    """Claims per answer for every rules method, computed without writing anything."""
    found = []
    for answer_pk, _, _ in store.claims.answers(run):
        state = store.claims.of_answer(answer_pk)
        counts = {m: len(_segment_with(state.text, state.regions, rules_for(m)).claims) for m in METHODS}
        found.append(MethodCounts(state.id, len(state.claims), counts))
    return found


def _claims_of(state: AnswerClaims, claim_ids: Sequence[str]) -> list[int]:
    current = {c.id: i for i, c in enumerate(state.claims)}
    missing = [cid for cid in claim_ids if cid not in current]
    if missing:
        raise InvalidValue(
            state.id, "claims", f"{missing[0]!r} is not a current claim of answer {state.id!r} (edited before?)"
        )
    return [current[cid] for cid in claim_ids]


def _manual(store: Store, claim_ids: Sequence[str], action: str, actor: str, make: Callable[..., SetPlan]) -> SetPlan:
    if not actor:
        raise InvalidValue("--reviewer", "", "manual claim changes are recorded with who made them: pass --reviewer")
    answers = {store.claims.answer_of(cid) for cid in claim_ids}
    if len(answers) != 1:
        raise InvalidValue("claims", "", f"claims {list(claim_ids)!r} belong to {len(answers)} different answers")

    def planner(state: AnswerClaims, current: Segmentation) -> tuple[SetPlan, Segmentation]:
        chosen = [state.claims[i] for i in _claims_of(state, claim_ids)]
        return make(state, chosen), current

    plan = store.claims.change(answers.pop(), planner, action, actor)
    assert plan is not None  # the planner always decides
    return plan


def split_claim(store: Store, claim_id: str, at: int, actor: str) -> SetPlan:
    """Split a current claim at answer offset ``at``."""
    return _manual(
        store,
        [claim_id],
        "split",
        actor,
        lambda s, chosen: plan_split(s.id, s.text, s.claims, s.edges, s.history, chosen[0], at),
    )


def merge_claims(store: Store, claim_ids: Sequence[str], actor: str) -> SetPlan:
    """Merge current claims of one answer into one."""
    return _manual(
        store,
        claim_ids,
        "merge",
        actor,
        lambda s, chosen: plan_merge(s.id, s.text, s.claims, s.edges, s.history, chosen),
    )


def edit_claim(
    store: Store, claim_id: str, actor: str, text: str | None = None, start: int | None = None, end: int | None = None
) -> SetPlan:
    """Change a current claim's text and/or span."""
    if text is None and start is None and end is None:
        raise InvalidValue("claim edit", "", "nothing to change: pass --text, --start and/or --end")
    return _manual(
        store,
        [claim_id],
        "edit",
        actor,
        lambda s, chosen: plan_edit(s.id, s.text, s.claims, s.edges, s.history, chosen[0], text, start, end),
    )
