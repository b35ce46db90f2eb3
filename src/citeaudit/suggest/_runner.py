"""The one loop behind ``suggest`` for edges and for cross pairs: sort what is in scope into nothing to rank,
already suggested and to judge, then rank each item's snapshot passages for its claim, ask the judge about the
best ones and store both in a transaction of its own. What differs between edges and cross pairs (the lookup of an
earlier suggestion, how a suggestion is stored, what an item is called) is a :class:`SuggestTarget`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from citeaudit.core.errors import InvalidValue, JudgeError
from citeaudit.evidence import RankMethod
from citeaudit.judges import EdgeSuggestion, Judge, suggest_for_edge
from citeaudit.store import Store
from citeaudit.suggest._indexes import SnapshotIndexes

__all__ = ["SuggestTally", "SuggestTarget", "Suggestible", "check_settings", "prompt_hash_of", "run_suggestions"]


class Suggestible(Protocol):
    """An edge or a cross pair as the loop reads it."""

    @property
    def pk(self) -> int: ...
    @property
    def claim_id(self) -> str: ...
    @property
    def claim(self) -> str: ...
    @property
    def locale(self) -> str: ...
    @property
    def document_sha256(self) -> str | None: ...


class SuggestTally(Protocol):
    """The counts a run's report keeps, whatever else it reports."""

    suggested: int
    already_suggested: int
    no_snapshot: int
    empty_snapshot: int
    over_limit: int
    labels: Counter[str]


Record = Callable[[Store, int, str, str, EdgeSuggestion, Sequence[int]], None]
"""``record(store, item pk, document sha256, method, suggestion, passage ordinals)`` stores one suggestion with its
ranked passages in a transaction of its own."""


@dataclass(frozen=True, slots=True)
class SuggestTarget:
    """What suggesting for edges and for cross pairs does differently."""

    noun: str
    """What an item is called in an error (``edge``, ``cross pair``)."""
    short: str
    """The same, as the error says it again (``edge``, ``pair``)."""
    has_suggestion: Callable[[Any, int, str, str | None, str, str | None], bool]
    """``has_suggestion(connection, pk, judge, model, version, prompt hash)``: whether the same judge, model,
    version and prompt already suggested a label for the item."""
    record: Record
    """Stores one suggestion."""


def prompt_hash_of(judge: Judge) -> str | None:
    """The judge's prompt hash (the ``openai`` judge's), ``None`` for judges without a prompt."""
    value = getattr(judge, "prompt_sha256", None)
    return value if isinstance(value, str) else None


def check_settings(k: int, limit: int | None) -> None:
    """Refuses a number of passages below 1 or a negative limit, naming the option."""
    if k < 1:
        raise InvalidValue("--top", str(k), "the number of passages must be at least 1")
    if limit is not None and limit < 0:
        raise InvalidValue("--limit", str(limit), "the limit must be 0 or more")


def _to_judge(
    store: Store, items: Sequence[Suggestible], judge: Judge, target: SuggestTarget, refresh: bool, tally: SuggestTally
) -> list[Suggestible]:
    """The items to judge; those without a snapshot and those already suggested are counted instead."""
    prompt = prompt_hash_of(judge)
    todo: list[Suggestible] = []
    for item in items:
        if item.document_sha256 is None:
            tally.no_snapshot += 1
        elif not refresh and target.has_suggestion(
            store.connection, item.pk, judge.name, judge.model, judge.version, prompt
        ):
            tally.already_suggested += 1
        else:
            todo.append(item)
    return todo


def run_suggestions(
    store: Store,
    items: Sequence[Suggestible],
    judge: Judge,
    target: SuggestTarget,
    tally: SuggestTally,
    *,
    method: RankMethod,
    k: int,
    limit: int | None,
    refresh: bool,
    progress: Callable[[int, int], None] | None,
) -> None:
    """Suggest a label for each of ``items`` as the module docstring says, counting into ``tally``.

    A judge failure is re-raised as a ``JudgeError`` naming the item and what was stored before it.
    ``progress(done, total)`` follows the items to judge.
    """
    todo = _to_judge(store, items, judge, target, refresh, tally)
    indexes = SnapshotIndexes(store)
    total = len(todo) if limit is None else min(len(todo), limit)
    if progress:
        progress(0, total)
    for item in todo:
        if limit is not None and tally.suggested >= limit:
            tally.over_limit += 1
            continue
        sha = item.document_sha256
        assert sha is not None
        index, ordinals = indexes(sha)
        if not index.passages:
            tally.empty_snapshot += 1
            continue
        try:
            result = suggest_for_edge(judge, item.claim, index, k=k, method=method, claim_locale=item.locale)
        except JudgeError as exc:
            raise JudgeError(
                f"{exc} ({target.noun} {item.pk}, claim {item.claim_id!r}); nothing was stored for that "
                f"{target.short}, {tally.suggested} suggestion(s) stored before it are kept: rerun to continue"
            ) from exc
        target.record(store, item.pk, sha, str(method), result, ordinals)
        tally.suggested += 1
        tally.labels[str(result.suggestion.label)] += 1
        if progress:
            progress(tally.suggested, total)
