"""``review serve``, ``reviewer add`` and ``audit-log export``: the review workflow's commands."""

from __future__ import annotations

import io
import json
import sys
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from citeaudit.cli.common import DbOption, console, err_console, existing_database, handles_errors
from citeaudit.core.errors import InvalidValue, StoreError

if TYPE_CHECKING:
    from citeaudit.store.review import ReviewStore

__all__ = ["audit_log_app", "review_app", "reviewer_app"]

_EXTRA_HINT = "the review UI needs its extra: pip install 'citeaudit[review]'"

review_app = typer.Typer(help="The review web UI.", no_args_is_help=True)
reviewer_app = typer.Typer(help="Review accounts.", no_args_is_help=True)
audit_log_app = typer.Typer(help="The append-only log of review actions.", no_args_is_help=True)


class Policy(StrEnum):
    """Review policies."""

    SINGLE = "single"
    """One human review gives the final label."""
    DOUBLE = "double"
    """Two independent human reviews; a disagreement goes to an adjudicator."""


class Role(StrEnum):
    """Account roles."""

    REVIEWER = "reviewer"
    """Labels edges, blind to everyone else's labels."""
    ADJUDICATOR = "adjudicator"
    """Also records the final label of disputed edges and sees the score."""
    ADMIN = "admin"
    """Changes project settings and sees everything; does not review."""


class LogFormat(StrEnum):
    """Audit-log export formats."""

    JSONL = "jsonl"
    """One JSON object per line."""
    CSV = "csv"
    """A header row, before and after as JSON text."""


@review_app.command("serve")
@handles_errors
def serve(
    db: DbOption = Path("citeaudit.db"),
    host: Annotated[str, typer.Option("--host", help="Address to listen on (keep it local).")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.", min=1, max=65535)] = 8000,
    policy: Annotated[
        Policy | None,
        typer.Option("--policy", help="Review policy to set before serving (kept in the database; logged)."),
    ] = None,
    session_hours: Annotated[
        float, typer.Option("--session-hours", help="How long a login lasts.", min=0.01, max=24 * 30)
    ] = 8.0,
    yes: Annotated[bool, typer.Option("--yes", help="Change the policy of a judged database without asking.")] = False,
    certfile: Annotated[
        Path | None, typer.Option("--ssl-certfile", help="Serve HTTPS with this certificate (PEM).")
    ] = None,
    keyfile: Annotated[Path | None, typer.Option("--ssl-keyfile", help="The certificate's private key (PEM).")] = None,
    leases: Annotated[
        bool,
        typer.Option(
            "--leases/--no-leases",
            help="Lease the queue's next edge to the reviewer, so reviewers working at once get different edges.",
        ),
    ] = True,
) -> None:
    """Serve the review UI for a database: blind single or double review, adjudication, evidence groups and the
    score page. Fully offline; log in with an account made by `citeaudit reviewer add`."""
    from citeaudit.store.review import ReviewStore
    from citeaudit.store.writers import busy_timeout

    try:
        import uvicorn

        from citeaudit.review.app import ReviewConfig, create_app
    except ImportError:
        raise StoreError(_EXTRA_HINT) from None
    if (certfile is None) != (keyfile is None):
        raise InvalidValue("review serve", "--ssl-certfile/--ssl-keyfile", "give both files or neither")
    ReviewStore.prepare(existing_database(db))
    with ReviewStore(db, busy_timeout()) as store:
        if (
            policy is not None
            and policy.value != store.accounts.settings()["policy"]
            and store.judgements.has_human_judgements()
        ):
            _confirm_policy(store, policy.value, yes)
        if policy is not None:
            changed = store.accounts.set_setting("serve", "policy", policy.value)
            if changed:
                err_console.print(f"policy {policy.value}: {changed} edge(s) changed review state")
        current = store.accounts.settings()["policy"]
    scheme = "https" if certfile is not None else "http"
    if certfile is None and not _loopback(host):
        err_console.print(
            f"warning: serving on {host} without TLS. The session and login cookies are Secure: a browser sends "
            "them back only over HTTPS (or to localhost), so logging in over plain http from another machine "
            "fails with a CSRF refusal. Serve with --ssl-certfile/--ssl-keyfile, put a TLS proxy or tunnel in "
            "front (see docs/review.md), or keep --host 127.0.0.1.",
            soft_wrap=True,
        )
    err_console.print(f"serving {db} on {scheme}://{host}:{port} ({current} review; Ctrl+C stops)")
    app = create_app(ReviewConfig(db=db, session_lifetime=timedelta(hours=session_hours), leases=leases))
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        ssl_certfile=None if certfile is None else str(certfile),
        ssl_keyfile=None if keyfile is None else str(keyfile),
    )


def _loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address or name (where browsers treat plain http as secure)."""
    import ipaddress

    if host in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _confirm_policy(store: ReviewStore, policy: str, yes: bool) -> None:
    """Say what changing the policy of a judged database does; go on only when confirmed."""
    moves = store.judgements.policy_change(policy)
    current = store.accounts.settings()["policy"]
    err_console.print(f"changing the review policy from {current} to {policy} changes {sum(moves.values())} edge(s):")
    for (before, after), n in sorted(moves.items()):
        err_console.print(f"  {n} edge(s): {before} -> {after}", soft_wrap=True)
    if yes:
        return
    if not sys.stdin.isatty():
        raise InvalidValue("review serve", "--policy", f"{policy!r} changes judged edges; confirm with --yes")
    if not typer.confirm("change the policy?", default=False):
        raise InvalidValue("review serve", "--policy", f"{policy!r} not confirmed; the policy stays {current!r}")


@reviewer_app.command("add")
@handles_errors
def add(
    name: Annotated[str, typer.Argument(help="Login name (recorded with every judgement).")],
    password: Annotated[
        str,
        typer.Option(
            "--password",
            envvar="CITEAUDIT_REVIEWER_PASSWORD",
            prompt=True,
            hide_input=True,
            confirmation_prompt=True,
            help="Password (prompted when not given; env CITEAUDIT_REVIEWER_PASSWORD).",
        ),
    ],
    role: Annotated[Role, typer.Option("--role", help="reviewer, adjudicator or admin.")] = Role.REVIEWER,
    db: DbOption = Path("citeaudit.db"),
) -> None:
    """Create a review account; the password is stored only as an Argon2id hash."""
    from citeaudit.store.review import ReviewStore
    from citeaudit.store.writers import busy_timeout

    try:
        from citeaudit.review.auth import hash_password
    except ImportError:
        raise StoreError(_EXTRA_HINT) from None
    if not name.strip() or name != name.strip():
        raise InvalidValue("reviewer add", "NAME", f"{name!r} is not a usable name (empty or padded with spaces)")
    if len(password) < 8:
        raise InvalidValue("reviewer add", "--password", "a password needs 8 or more characters")
    ReviewStore.prepare(db)
    with ReviewStore(db, busy_timeout()) as store:
        store.accounts.add_reviewer(name, role.value, hash_password(password))
    console.print(f"added {role.value} {name!r} to {db}")


@audit_log_app.command("export")
@handles_errors
def export(
    db: DbOption = Path("citeaudit.db"),
    fmt: Annotated[LogFormat, typer.Option("--format", help="jsonl or csv.")] = LogFormat.JSONL,
    out: Annotated[Path | None, typer.Option("--out", help="File to write (default: standard output).")] = None,
) -> None:
    """Export the audit log of review actions: who, when, what, and the state before and after."""
    from citeaudit.report.files import write_atomically
    from citeaudit.store.review import ReviewStore
    from citeaudit.store.writers import busy_timeout

    ReviewStore.prepare(existing_database(db))
    with ReviewStore(db, busy_timeout()) as store:
        entries = [entry.to_dict() for entry in store.audit_log.entries()]
    if fmt is LogFormat.JSONL:
        text = "".join(json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n" for entry in entries)
    else:
        buffer = io.StringIO()
        from citeaudit.report.csv_cells import SafeDictWriter

        writer = SafeDictWriter(buffer, fieldnames=["seq", "at", "actor", "action", "target", "before", "after"])
        writer.writeheader()
        for entry in entries:
            writer.writerow(
                {
                    **entry,
                    "before": json.dumps(entry["before"], sort_keys=True, ensure_ascii=False),
                    "after": json.dumps(entry["after"], sort_keys=True, ensure_ascii=False),
                }
            )
        text = buffer.getvalue()
    if out is None:
        console.out(text, end="", highlight=False)
    else:
        write_atomically(out, text.encode("utf-8"))
        err_console.print(f"wrote {len(entries)} audit-log entries to {out}")
