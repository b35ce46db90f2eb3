"""Accounts and sessions for the review UI: Argon2id password hashes (memory-hard), random session tokens kept only
as their SHA-256, one CSRF token per session, session expiry and a login rate limit."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections import deque
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from citeaudit.core.clock import Clock, iso, system_clock

__all__ = [
    "SESSION_COOKIE",
    "LoginLimiter",
    "csrf_matches",
    "expiry",
    "hash_password",
    "new_token",
    "token_digest",
    "verify_password",
]

SESSION_COOKIE = "citeaudit_session"
"""Name of the session cookie (Secure, HttpOnly, SameSite=Strict)."""

_HASHER = PasswordHasher()  # Argon2id with the library's current recommended memory and time costs


def hash_password(password: str) -> str:
    """Argon2id hash of ``password``; an empty password is refused."""
    if not password:
        raise ValueError("a password must not be empty")
    return _HASHER.hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    """Whether ``password`` matches ``password_hash`` (never raises for a wrong password)."""
    try:
        return _HASHER.verify(password_hash, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def new_token() -> str:
    """A fresh unguessable token (session, CSRF or form submission id)."""
    return secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    """What the database keeps of a session token: a leaked database gives no live session."""
    return hashlib.sha256(token.encode()).hexdigest()


def csrf_matches(expected: str, given: str | None) -> bool:
    """Constant-time comparison of the session's CSRF token with the one a form sent."""
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())


def expiry(lifetime: timedelta, clock: Clock = system_clock) -> str:
    """ISO-8601 UTC time ``lifetime`` from now by ``clock``, in the same form as
    :func:`citeaudit.store.review_base.now` (sessions are compared with it as text)."""
    return iso(clock() + lifetime)


class LoginLimiter:
    """At most ``attempts`` failed logins per key within ``window`` seconds (the login form keys them by account
    and address together).

    Kept in memory: a restart clears it, which only gives an attacker a fresh window after an operator action.
    """

    def __init__(self, attempts: int = 5, window: float = 300.0, clock: Clock = system_clock) -> None:
        if attempts < 1 or window <= 0:
            raise ValueError(f"attempts must be >= 1 and window > 0, not {attempts!r} and {window!r}")
        self.attempts = attempts
        self.window = window
        self._clock = clock
        self._failures: dict[str, deque[datetime]] = {}
        self._lock = threading.Lock()

    def _recent(self, key: str, at: datetime) -> deque[datetime]:
        failures = self._failures.setdefault(key, deque())
        # times kept as the clock gives them (whole microseconds), so the window's edge is exact
        while failures and failures[0] <= at - timedelta(seconds=self.window):
            failures.popleft()
        return failures

    def blocked(self, *keys: str) -> bool:
        """Whether any of ``keys`` (address, account) has used up its attempts."""
        at = self._clock()
        with self._lock:
            return any(len(self._recent(key, at)) >= self.attempts for key in keys)

    def failed(self, *keys: str) -> None:
        """Count one failed login against each key."""
        at = self._clock()
        with self._lock:
            for key in keys:
                self._recent(key, at).append(at)

    def succeeded(self, account: str) -> None:
        """A good password clears the account's failures (the address keeps its count)."""
        with self._lock:
            self._failures.pop(account, None)
