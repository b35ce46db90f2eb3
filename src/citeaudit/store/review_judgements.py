"""A person's judgements of edges and what the review policy makes of them: the edge page's edge, its judgements,
recording one (the gate every door goes through), what the edge page may offer, importing and exporting a file of
judgements, and what a change of policy would do.

Every judgement is recorded in one ``BEGIN IMMEDIATE`` transaction with the policy's check
(:func:`~citeaudit.store.review_rules.edge_judgement_refusal`), the edge's new state (:func:`recompute`) and its
audit-log row, so two reviewers submitting at once cannot both pass the rules and an action never parts from its
record.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterator, Mapping, Sequence

from citeaudit.core.errors import InvalidValue, ReviewRefused, UnknownReference
from citeaudit.core.model import Judgement, Label, Origin, ReviewState, Stage
from citeaudit.core.review_policy import DOORS, StoredJudgement, counted_judgements
from citeaudit.core.scoring import PENDING_CODE, edge_code
from citeaudit.store.judgements import INSERT_SHOWN_JUDGEMENT, JUDGEMENT_COLUMNS, judgement_from_row, judgement_row
from citeaudit.store.reading import CURRENT_CLAIM
from citeaudit.store.review_base import POLICIES, ReviewPart, append_log, code_label, now, settings_reviews_required
from citeaudit.store.review_queue import adjust_count
from citeaudit.store.review_records import EdgeView, FileJudgement, Reviewer
from citeaudit.store.review_rules import edge_judgement_refusal, edge_judgements, reviewer_account

__all__ = ["ReviewJudgements", "recompute", "recompute_all"]


def recompute(db: sqlite3.Connection, edge_pk: int, reviews_required: int) -> tuple[object, object, bool]:
    """Bring one edge's stored state in step with its judgements: ``(before, after, changed)``."""
    state, code = db.execute("SELECT review_state, final_code FROM edges WHERE pk = ?", (edge_pk,)).fetchone()
    judgements = counted_judgements(edge_judgements(db, edge_pk), reviews_required)
    new_state, new_code = edge_code(judgements, reviews_required)
    before = {"review_state": state, "final_label": code_label(code)}
    after = {"review_state": str(new_state), "final_label": code_label(new_code)}
    if (state, code) != (str(new_state), new_code):
        db.execute(
            "UPDATE edges SET review_state = ?, final_code = ? WHERE pk = ?", (str(new_state), new_code, edge_pk)
        )
        return before, after, True
    return before, after, False


def recompute_all(db: sqlite3.Connection, reviews_required: int) -> int:
    """Bring every judged edge's stored state in step with its judgements under a policy needing
    ``reviews_required`` reviews; returns how many edges changed."""
    changed = 0
    judged = [pk for (pk,) in db.execute("SELECT DISTINCT edge_pk FROM judgements WHERE origin = 'human'")]
    for edge_pk in judged:
        changed += recompute(db, edge_pk, reviews_required)[2]
    return changed


class ReviewJudgements(ReviewPart):
    """Judgements of edges and their policy outcomes (``ReviewStore.judgements``)."""

    def edge(self, edge_pk: int) -> EdgeView | None:
        """The edge, its claim, answer and source."""
        row = self._db.execute(
            'SELECT e.pk, e.review_state, e.final_code, c.pk, c.id, c.text, c.start, c."end", c.severity, a.id, '
            "a.text, coalesce(a.platform, r.platform), r.id, q.id, q.text, s.pk, s.key, s.url, s.resolved_url, "
            "s.title, s.status, "
            "s.reason, e.n_locations FROM edges e JOIN claims c ON c.pk = e.claim_pk "
            "JOIN answers a ON a.pk = c.answer_pk JOIN runs r ON r.pk = a.run_pk "
            "JOIN questions q ON q.pk = a.question_pk JOIN sources s ON s.pk = e.source_pk WHERE e.pk = ?",
            (edge_pk,),
        ).fetchone()
        if row is None:
            return None
        return EdgeView(row[0], ReviewState(row[1]), *row[2:])

    def of_edge(self, edge_pk: int) -> list[StoredJudgement]:
        """Every judgement on the edge, oldest first. The web layer decides which of them a viewer may see."""
        return edge_judgements(self._db, edge_pk)

    def record_judgement(
        self,
        edge_pk: int,
        judgement: Judgement,
        submission: str,
        *,
        door: str = "api",
        detail: Mapping[str, object] | None = None,
        suggestions_shown: bool | None = None,
    ) -> tuple[bool, ReviewState]:
        """Append a person's judgement and bring the edge's state in step, in one transaction with its audit-log
        row.

        The rules every door follows are checked inside that transaction
        (:func:`citeaudit.store.review_rules.edge_judgement_refusal`), so two reviewers submitting at once
        cannot both pass them: the reviewer must be a review account, and its role (read from the account, never
        from the caller), the edge's state, its reviewers and its claim (a retired claim takes no judgement)
        must allow the review or adjudication; else :class:`ReviewRefused` and nothing is written.

        ``door`` (one of :data:`~citeaudit.core.review_policy.DOORS`) and ``detail`` (where a quoted passage was
        selected, the file and row it came from) go into the audit-log row. A submission id seen before records
        nothing (a retried form post). ``suggestions_shown`` is whether the page the person judged on showed
        model suggestions (``None`` for a door without a page); stored with the judgement, it makes the effective
        protocol of a scope holding it record the assistance. Returns ``(recorded, new state)``.
        """
        if door not in DOORS:
            raise InvalidValue("review", "door", f"door {door!r} is not one of {', '.join(DOORS)}")
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM judgements WHERE submission = ?", (submission,)).fetchone():
                (state,) = db.execute("SELECT review_state FROM edges WHERE pk = ?", (edge_pk,)).fetchone()
                return False, ReviewState(state)
            if db.execute("SELECT 1 FROM edges WHERE pk = ?", (edge_pk,)).fetchone() is None:
                raise UnknownReference("review", f"edge {edge_pk}", f"no edge {edge_pk!r}")
            why = edge_judgement_refusal(db, edge_pk, judgement)
            if why is not None:
                raise ReviewRefused(f"edge {edge_pk}: {why}")
            shown = None if suggestions_shown is None else int(suggestions_shown)
            pk = db.execute(INSERT_SHOWN_JUDGEMENT, (*judgement_row(edge_pk, judgement, submission), shown)).lastrowid
            (code_before,) = db.execute("SELECT final_code FROM edges WHERE pk = ?", (edge_pk,)).fetchone()
            before, after, _ = recompute(db, edge_pk, settings_reviews_required(db))
            (code_after,) = db.execute("SELECT final_code FROM edges WHERE pk = ?", (edge_pk,)).fetchone()
            assert isinstance(after, dict)
            append_log(
                db,
                judgement.reviewer or "",
                "judgement" if judgement.stage is Stage.REVIEW else "adjudication",
                f"edge:{edge_pk}",
                before,
                {
                    **after,
                    "judgement": pk,
                    "label": str(judgement.label),
                    "rationale": judgement.reasoning,
                    "door": door,
                    **({} if suggestions_shown is None else {"suggestions_shown": suggestions_shown}),
                    **(detail or {}),
                },
            )
        # the edges waiting for a review, as counted a few seconds ago, follow this write at once: a reviewer's
        # progress keeps its total while they work instead of growing with each edge they finish
        adjust_count(self.path, "waiting", (code_after == PENDING_CODE) - (code_before == PENDING_CODE))
        return True, ReviewState(after["review_state"])

    def refusal(self, edge_pk: int, reviewer: Reviewer, stage: Stage) -> str | None:
        """Why ``reviewer`` may not record a judgement of ``stage`` on the edge now (``None`` when they may):
        what the edge page asks before it offers a form, by the same rules as :meth:`record_judgement`."""
        probe = Judgement(Label.UNKNOWN, reviewer.name, Origin.HUMAN, stage)
        return edge_judgement_refusal(self._db, edge_pk, probe)

    def policy_change(self, policy: str) -> dict[tuple[str, str], int]:
        """What switching to ``policy`` would do, without doing it: ``(state before, state after)`` → number of
        judged edges whose state would change that way."""
        if policy not in POLICIES:
            raise InvalidValue("settings", "policy", f"policy {policy!r} is not one of {', '.join(POLICIES)}")
        moves: dict[tuple[str, str], int] = {}
        for edge_pk, state, code in self._db.execute(
            "SELECT pk, review_state, final_code FROM edges WHERE pk IN "
            "(SELECT edge_pk FROM judgements WHERE origin = 'human')"
        ).fetchall():
            counted = counted_judgements(edge_judgements(self._db, edge_pk), POLICIES[policy])
            new_state, new_code = edge_code(counted, POLICIES[policy])
            if (state, code) != (str(new_state), new_code):
                before = code_label(code)
                after = code_label(new_code)
                key = (f"{state}: {before}" if before else state, f"{new_state}: {after}" if after else str(new_state))
                moves[key] = moves.get(key, 0) + 1
        return moves

    def has_human_judgements(self) -> bool:
        """Whether any person has judged an edge (a policy change then needs confirming)."""
        return self._db.execute("SELECT 1 FROM judgements WHERE origin = 'human' LIMIT 1").fetchone() is not None

    def import_judgements(
        self, file: str, reviewer: str, rows: Sequence[FileJudgement], sha256: str, os_user: str | None = None
    ) -> tuple[int, int]:
        """Record ``reviewer``'s labels from a file as reviews, by the rules every door follows, all or nothing: a
        row naming no current edge, or one the rules refuse, is an :class:`InvalidValue` naming the file, its line
        and value, and nothing is written.

        ``reviewer`` must be an account that reviews (not an admin). A file's labels are one person's: the same
        file (by its ``sha256``) imported before under another account is refused. A row is recorded when it
        differs from the reviewer's latest judgement of its edge (a judgement's history is append-only and the
        latest wins, so importing an earlier file again brings its labels back); a row equal to it is already
        recorded. The import (file, hash, account, operating-system user, counts) is an audit-log row of its own,
        and every judgement's row names the door, file, hash and line. Returns ``(recorded, already recorded)``."""
        account = reviewer_account(self._db, reviewer)
        if account is None:
            raise UnknownReference(file, "--reviewer", f"no review account {reviewer!r}; add it with `reviewer add`")
        if account.role == "admin":
            raise InvalidValue(file, "--reviewer", f"{reviewer!r} is an admin account: admins do not review")
        edges = [self._file_edge(file, row) for row in rows]
        recorded = 0
        with self._transaction() as db:
            earlier = [
                str(actor)
                for (actor,) in db.execute(
                    "SELECT DISTINCT actor FROM audit_log WHERE action = 'judgements.import' "
                    "AND json_extract(after, '$.sha256') = ? ORDER BY actor",
                    (sha256,),
                )
                if actor != reviewer
            ]
            if earlier:
                raise InvalidValue(
                    file,
                    "--reviewer",
                    f"this file (sha256 {sha256}) was imported as {earlier[0]!r}: its labels are {earlier[0]}'s, "
                    f"and the same labels under {reviewer!r} would count as a second, independent review",
                )
            for row, edge_pk in zip(rows, edges, strict=True):
                judgement = Judgement(
                    row.label,
                    reviewer,
                    Origin.HUMAN,
                    Stage.REVIEW,
                    row.passage,
                    row.period,
                    row.reasoning,
                    now(),
                    severity=row.severity,
                )
                if self._is_latest(db, edge_pk, judgement):
                    continue
                try:
                    done, _ = self.record_judgement(
                        edge_pk,
                        judgement,
                        f"import:{sha256}:{row.line}:{secrets.token_hex(8)}",
                        door="judgements import",
                        detail={"file": file, "sha256": sha256, "line": row.line},
                    )
                except ReviewRefused as refused:
                    raise InvalidValue(file, f"line {row.line}", f"{str(refused)!s}") from None
                recorded += done
            append_log(
                db,
                reviewer,
                "judgements.import",
                f"file:{file}",
                None,
                {
                    "file": file,
                    "sha256": sha256,
                    "os_user": os_user,
                    "rows": len(rows),
                    "recorded": recorded,
                    "door": "judgements import",
                },
            )
        return recorded, len(rows) - recorded

    @staticmethod
    def _is_latest(db: sqlite3.Connection, edge_pk: int, judgement: Judgement) -> bool:
        """Whether ``judgement`` says what its reviewer's latest review of the edge says (label, passage, period,
        reasoning, severity)."""
        row = db.execute(
            "SELECT label, passage, period, reasoning, severity FROM judgements WHERE edge_pk = ? AND reviewer = ? "
            "AND origin = 'human' AND stage = 'review' ORDER BY pk DESC LIMIT 1",
            (edge_pk, judgement.reviewer),
        ).fetchone()
        severity = None if judgement.severity is None else str(judgement.severity)
        wanted = (str(judgement.label), judgement.passage, judgement.period, judgement.reasoning, severity)
        return row is not None and tuple(row) == wanted

    def _file_edge(self, file: str, row: FileJudgement) -> int:
        where = f"line {row.line}"
        claims = self._db.execute("SELECT pk, current FROM claims WHERE id = ?", (row.claim_id,)).fetchall()
        if not claims:
            raise UnknownReference(file, where, f"no claim {row.claim_id!r}")
        current = [pk for pk, flag in claims if flag == 1]
        if not current:
            raise InvalidValue(file, where, f"claim {row.claim_id!r} is retired (replaced by a later segmentation)")
        found = self._db.execute(
            "SELECT e.pk FROM edges e JOIN sources s ON s.pk = e.source_pk WHERE e.claim_pk = ? "
            "AND (s.key = ? OR s.url = ? OR s.resolved_url = ?) ORDER BY e.pk LIMIT 1",
            (current[0], row.source, row.source, row.source),
        ).fetchone()
        if found is None:
            raise UnknownReference(file, where, f"claim {row.claim_id!r} cites no source {row.source!r}")
        return int(found[0])

    def export_judgements(self, reviewer: str | None = None) -> Iterator[tuple[FileJudgement, str, str, str]]:
        """Every human judgement on a current claim's edge (or only ``reviewer``'s), oldest first, as file rows
        with who gave it, the stage and when."""
        sql = (
            f"SELECT c.id, s.key, {JUDGEMENT_COLUMNS} FROM judgements j JOIN edges e ON e.pk = j.edge_pk "
            "JOIN claims c ON c.pk = e.claim_pk JOIN sources s ON s.pk = e.source_pk "
            f"WHERE j.origin = 'human' AND {CURRENT_CLAIM}"
        )
        params: tuple[object, ...] = ()
        if reviewer is not None:
            sql += " AND j.reviewer = ?"
            params = (reviewer,)
        for claim_id, key, *row in self._db.execute(sql + " ORDER BY j.pk", params):
            j = judgement_from_row(row)
            yield (
                FileJudgement(0, claim_id, key, j.label, j.passage, j.period, j.reasoning, j.severity),
                j.reviewer or "",
                str(j.stage),
                j.created_at or "",
            )
