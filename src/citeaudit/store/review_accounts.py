"""Review accounts, their login sessions and the project's review settings (the policy, whether model
suggestions are shown): what an admin manages. Changing the policy brings every judged edge's state in step in the
same transaction (:func:`~citeaudit.store.review_judgements.recompute_all`)."""

from __future__ import annotations

from citeaudit.core.errors import DuplicateId, InvalidValue
from citeaudit.store.review_base import (
    DEFAULT_SETTINGS,
    POLICIES,
    ReviewPart,
    append_log,
    now,
    read_settings,
    settings_reviews_required,
)
from citeaudit.store.review_judgements import recompute_all
from citeaudit.store.review_records import Reviewer
from citeaudit.store.review_rules import reviewer_account

__all__ = ["ROLES", "ReviewAccounts"]

ROLES = ("reviewer", "adjudicator", "admin")
"""Account roles, least to most rights."""


class ReviewAccounts(ReviewPart):
    """Accounts, sessions and settings (``ReviewStore.accounts``)."""

    def settings(self) -> dict[str, str]:
        """Project settings (``policy``, ``show_model_suggestions``) with their defaults."""
        return read_settings(self._db)

    def reviews_required(self) -> int:
        """Independent human reviews the current policy needs."""
        return settings_reviews_required(self._db)

    def set_setting(self, actor: str, key: str, value: str) -> int:
        """Change a setting (logged). Changing the policy recomputes every judged edge's state; returns how many
        edges changed."""
        if key not in DEFAULT_SETTINGS:
            raise InvalidValue("settings", key, f"unknown setting {key!r}; settings: {', '.join(DEFAULT_SETTINGS)}")
        if key == "policy" and value not in POLICIES:
            raise InvalidValue("settings", key, f"policy {value!r} is not one of {', '.join(POLICIES)}")
        if key == "show_model_suggestions" and value not in ("true", "false"):
            raise InvalidValue("settings", key, f"{value!r} is not true or false")
        with self._transaction() as db:
            before = self.settings()[key]
            if before == value:
                return 0
            db.execute("INSERT OR REPLACE INTO review_settings VALUES (?, ?)", (key, value))
            append_log(db, actor, "setting", key, before, value)
            return recompute_all(db, POLICIES[value]) if key == "policy" else 0

    def add_reviewer(self, name: str, role: str, password_hash: str, actor: str = "cli") -> Reviewer:
        """Create an account; a name already taken is a :class:`DuplicateId`."""
        if role not in ROLES:
            raise InvalidValue("reviewer", "role", f"role {role!r} is not one of {', '.join(ROLES)}")
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM reviewers WHERE name = ?", (name,)).fetchone():
                raise DuplicateId(str(self.path), "reviewers", f"reviewer {name!r} already exists")
            pk = db.execute(
                "INSERT INTO reviewers (name, role, password_hash, created_at) VALUES (?, ?, ?, ?)",
                (name, role, password_hash, now()),
            ).lastrowid
            assert pk is not None
            append_log(db, actor, "reviewer.add", f"reviewer:{name}", None, {"role": role})
        return Reviewer(pk, name, role, password_hash)

    def reviewer(self, name: str) -> Reviewer | None:
        """The account called ``name``."""
        return reviewer_account(self._db, name)

    def open_session(
        self, reviewer: Reviewer, token_sha256: str, csrf: str, expires_at: str, at: str | None = None
    ) -> None:
        """Record a login (logged); sessions expired at ``at`` (default now) are dropped on the way."""
        with self._transaction() as db:
            db.execute("DELETE FROM review_sessions WHERE expires_at <= ?", (at or now(),))
            db.execute(
                "INSERT INTO review_sessions VALUES (?, ?, ?, ?, ?)",
                (token_sha256, reviewer.pk, csrf, now(), expires_at),
            )
            append_log(db, reviewer.name, "login", f"reviewer:{reviewer.name}", None, None)

    def session(self, token_sha256: str, at: str) -> tuple[Reviewer, str] | None:
        """The account and CSRF token of a live session (``None`` when unknown or expired)."""
        row = self._db.execute(
            "SELECT r.pk, r.name, r.role, r.password_hash, s.csrf FROM review_sessions s "
            "JOIN reviewers r ON r.pk = s.reviewer_pk WHERE s.token_sha256 = ? AND s.expires_at > ?",
            (token_sha256, at),
        ).fetchone()
        return None if row is None else (Reviewer(*row[:4]), row[4])

    def close_session(self, token_sha256: str, actor: str) -> None:
        """Log out (logged)."""
        with self._transaction() as db:
            db.execute("DELETE FROM review_sessions WHERE token_sha256 = ?", (token_sha256,))
            append_log(db, actor, "logout", f"reviewer:{actor}", None, None)
