"""What a reviewer reads and adds beside a label: a source's passages (its snapshot, else the engine's quotes, title
and publisher), the passages a model suggestion ranked, the link a reviewer found for a title-only source, and
evidence groups (several sources that support a claim only together)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from citeaudit.core.errors import InvalidValue, ReviewRefused, UnknownReference
from citeaudit.core.identity import url_location
from citeaudit.core.model import Label
from citeaudit.store.resolution import document_passages, latest_document
from citeaudit.store.review_base import ReviewPart, append_log, now
from citeaudit.store.review_records import GroupView, ShownPassage
from citeaudit.store.review_rules import require_account
from citeaudit.store.suggestions import StoredPassage, latest_passages

__all__ = ["ReviewEvidence"]


class ReviewEvidence(ReviewPart):
    """Passages, links found for sources and evidence groups (``ReviewStore.evidence``)."""

    def passages(self, source_pk: int) -> list[ShownPassage]:
        """The text of a source to read on the edge page.

        The passages of the source's latest snapshot (``citeaudit resolve``); before it has one, the text the
        database holds: the engine's quotes of the source, its title and publisher.
        """
        snapshot = latest_document(self._db, source_pk)
        if snapshot is not None:
            sha, text, _ = snapshot
            return [ShownPassage("snapshot", passage.text) for passage in document_passages(self._db, sha, text)]
        found = [
            ShownPassage("engine quote", quote)
            for (quote,) in self._db.execute(
                "SELECT DISTINCT quote FROM citations WHERE source_pk = ? AND quote IS NOT NULL LIMIT 50", (source_pk,)
            )
        ]
        title, publisher = self._db.execute(
            "SELECT title, publisher FROM sources WHERE pk = ?", (source_pk,)
        ).fetchone()
        found += [ShownPassage(origin, text) for origin, text in (("title", title), ("publisher", publisher)) if text]
        return found

    def suggested_passages(self, edge_pk: int) -> list[StoredPassage]:
        """The passages of the edge's latest model suggestion, ranked best first with their scores (evidence, not
        labels: shown to every viewer)."""
        return latest_passages(self._db, edge_pk)

    def attach_url(self, source_pk: int, url: str, reviewer: str) -> None:
        """Give a title-only source the link a reviewer found (logged with who and when). The source stays
        ``pending`` and keeps its key until it is resolved. ``reviewer`` is a review account."""
        with self._transaction() as db:
            require_account(db, reviewer, "review", "reviewer")
            row = db.execute("SELECT url, status FROM sources WHERE pk = ?", (source_pk,)).fetchone()
            if row is None:
                raise UnknownReference("review", f"source {source_pk}", f"no source {source_pk!r}")
            if row[0] is not None or row[1] != "pending":
                raise InvalidValue(
                    "review",
                    f"source {source_pk}",
                    f"only a pending title-only source takes a URL; this one has {row[0]!r}",
                )
            host, path = url_location(url)
            at = now()
            db.execute("UPDATE sources SET url = ?, host = ?, path = ? WHERE pk = ?", (url, host, path, source_pk))
            db.execute(
                "INSERT INTO source_url_attachments (source_pk, url, reviewer, attached_at) VALUES (?, ?, ?, ?)",
                (source_pk, url, reviewer, at),
            )
            append_log(db, reviewer, "source.attach_url", f"source:{source_pk}", {"url": None}, {"url": url})

    def url_attachments(self, source_pk: int) -> list[tuple[str, str, str]]:
        """``(url, reviewer, when)`` of every URL attached to the source."""
        return list(
            self._db.execute(
                "SELECT url, reviewer, attached_at FROM source_url_attachments WHERE source_pk = ? ORDER BY pk",
                (source_pk,),
            )
        )

    def claim_sources(self, claim_pk: int) -> list[tuple[int, str, str]]:
        """``(source pk, key, title or URL)`` of the sources a claim is linked to or its answer cites."""
        return list(
            self._db.execute(
                "SELECT DISTINCT s.pk, s.key, coalesce(s.title, s.url, s.key) FROM sources s WHERE s.pk IN ("
                "SELECT source_pk FROM edges WHERE claim_pk = ? UNION SELECT ci.source_pk FROM citations ci "
                "JOIN claims c ON c.answer_pk = ci.answer_pk WHERE c.pk = ? AND ci.kind = 'cited') ORDER BY s.pk",
                (claim_pk, claim_pk),
            )
        )

    def groups(self, claim_pk: int) -> list[GroupView]:
        """Evidence groups of a claim."""
        groups = []
        for pk, gid, label, documents, steps, reviewer in self._db.execute(
            "SELECT pk, id, label, required_documents, reasoning_steps, reviewer FROM evidence_groups "
            "WHERE claim_pk = ? ORDER BY pk",
            (claim_pk,),
        ).fetchall():
            keys = tuple(
                key
                for (key,) in self._db.execute(
                    "SELECT s.key FROM evidence_group_sources g JOIN sources s ON s.pk = g.source_pk "
                    "WHERE g.group_pk = ? ORDER BY g.ordinal",
                    (pk,),
                )
            )
            groups.append(GroupView(gid, label, keys, tuple(json.loads(documents)), tuple(json.loads(steps)), reviewer))
        return groups

    def group_counts(self) -> dict[str, int]:
        """Evidence groups by decision (``undecided`` for none), for the score page."""
        return {
            label or "undecided": n
            for label, n in self._db.execute("SELECT label, count(*) FROM evidence_groups GROUP BY label")
        }

    def create_group(
        self,
        claim_pk: int,
        source_pks: Sequence[int],
        required_documents: Sequence[str],
        reasoning_steps: Sequence[str],
        label: Label | None,
        reviewer: str,
    ) -> str:
        """Create an evidence group for a claim from two or more of its sources (logged); returns its id. The
        ``reviewer`` is a review account that reviews or adjudicates (an admin does neither)."""
        allowed = {pk for pk, _, _ in self.claim_sources(claim_pk)}
        chosen = list(dict.fromkeys(source_pks))
        if len(chosen) < 2:
            raise InvalidValue("review", "sources", f"an evidence group needs two or more sources, not {len(chosen)}")
        stray = [pk for pk in chosen if pk not in allowed]
        if stray:
            raise InvalidValue("review", "sources", f"source {stray[0]!r} is not cited for this claim")
        with self._transaction() as db:
            if require_account(db, reviewer, "review", "reviewer") == "admin":
                raise ReviewRefused(f"{reviewer!r} is an admin: admins manage the project; they do not review")
            (claim_id,) = db.execute("SELECT id FROM claims WHERE pk = ?", (claim_pk,)).fetchone()
            (n,) = db.execute("SELECT count(*) FROM evidence_groups WHERE claim_pk = ?", (claim_pk,)).fetchone()
            group_id = f"{claim_id}/g{n + 1}"
            while db.execute("SELECT 1 FROM evidence_groups WHERE id = ?", (group_id,)).fetchone():
                n += 1
                group_id = f"{claim_id}/g{n + 1}"
            pk = db.execute(
                "INSERT INTO evidence_groups (id, claim_pk, label, required_documents, reasoning_steps, reviewer) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    group_id,
                    claim_pk,
                    None if label is None else str(label),
                    json.dumps(list(required_documents)),
                    json.dumps(list(reasoning_steps)),
                    reviewer,
                ),
            ).lastrowid
            db.executemany(
                "INSERT INTO evidence_group_sources VALUES (?, ?, ?)", [(pk, i, s) for i, s in enumerate(chosen)]
            )
            append_log(
                db,
                reviewer,
                "evidence_group.create",
                f"evidence_group:{group_id}",
                None,
                {
                    "claim": claim_id,
                    "sources": chosen,
                    "label": None if label is None else str(label),
                    "required_documents": list(required_documents),
                    "reasoning_steps": list(reasoning_steps),
                },
            )
        return group_id
