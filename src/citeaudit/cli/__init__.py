"""The ``citeaudit`` command line: one module per command group, library errors turned into exit code 2.

The command modules are loaded when a command is first asked for: ``citeaudit score FILE`` imports the
``score`` module alone, while ``citeaudit --help``, which lists every command with its help, loads them all.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

__all__ = ["app", "main"]


def _register(module: str) -> Callable[[typer.Typer], None]:
    """Registration by the module's own ``register(app)``."""

    def register(root: typer.Typer) -> None:
        importlib.import_module(f"{__name__}.{module}").register(root)

    return register


def _register_sources(root: typer.Typer) -> None:
    from citeaudit.cli import copies, sources

    sources.register(root)
    copies.register(root, sources.app)
    # `citeaudit sources …` is the same group as `citeaudit source …`.
    root.add_typer(sources.app, name="sources")


def _register_protocol(root: typer.Typer) -> None:
    from citeaudit.cli import protocol

    root.add_typer(protocol.app, name="protocol")


def _register_review(root: typer.Typer) -> None:
    from citeaudit.cli import review

    root.add_typer(review.review_app, name="review")
    root.add_typer(review.reviewer_app, name="reviewer")
    root.add_typer(review.audit_log_app, name="audit-log")


_GROUPS: dict[str, Callable[[typer.Typer], None]] = {
    "data": _register("data"),
    "collect": _register("collect"),
    "score": _register("score"),
    "sql": _register("sql"),
    "misattribution": _register("misattribution"),
    "report": _register("report"),
    "agreement": _register("agreement"),
    "sources": _register_sources,
    "segment": _register("segment"),
    "demo": _register("demo"),
    "checks": _register("checks"),
    "suggest": _register("suggest"),
    "protocol": _register_protocol,
    "review": _register_review,
    "answers": _register("answers"),
    "config": _register("config"),
    "trend": _register("trend"),
    "judgements": _register("judgements"),
}
"""How each command module adds its commands to the root."""

_COMMANDS = (
    ("ingest", "data"),
    ("export", "data"),
    ("formats", "data"),
    ("schema", "data"),
    ("collect", "collect"),
    ("score", "score"),
    ("compare", "score"),
    ("sql", "sql"),
    ("trend", "trend"),
    ("misattribution", "misattribution"),
    ("report", "report"),
    ("agreement", "agreement"),
    ("resolve", "sources"),
    ("conflicts", "sources"),
    ("segment", "segment"),
    ("demo", "demo"),
    ("checks", "checks"),
    ("suggest", "suggest"),
    ("protocol", "protocol"),
    ("source", "sources"),
    ("sources", "sources"),
    ("claim", "segment"),
    ("facts", "segment"),
    ("answers", "answers"),
    ("config", "config"),
    ("review", "review"),
    ("reviewer", "review"),
    ("audit-log", "review"),
    ("judgements", "judgements"),
    ("judge", "suggest"),
)
"""Every root command (commands, then groups, as ``--help`` lists them) and the module group it comes from."""

_BUILT: dict[str, dict[str, Any]] = {}
"""The commands each module group made, built once per process (the groups' Typer apps are module-level)."""


def _built(group: str) -> dict[str, Any]:
    if group not in _BUILT:
        root = typer.Typer()
        _GROUPS[group](root)
        _BUILT[group] = dict(typer.main.get_group(root).commands)
    return _BUILT[group]


class _Commands(MutableMapping[str, Any]):
    """The root's commands by name: looking one up loads its module only; listing them loads them all."""

    def __init__(self) -> None:
        self._home = dict(_COMMANDS)
        self._added: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name in self._added:
            return self._added[name]
        return _built(self._home[name])[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._added[name] = command

    def __delitem__(self, name: str) -> None:
        del self._added[name]

    def __iter__(self) -> Iterator[str]:
        yield from (name for name, _ in _COMMANDS)
        yield from (name for name in self._added if name not in self._home)

    def __len__(self) -> int:
        return len(_COMMANDS) + len([name for name in self._added if name not in self._home])


class _LazyGroup(TyperGroup):
    """The root group, its commands loaded on demand."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = _Commands()


app = typer.Typer(
    name="citeaudit",
    help="Audit the citations in AI answers: official-domain rate, citation precision and fact coverage, "
    "each with its numerator and denominator.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    cls=_LazyGroup,
)


@app.callback()
def _root(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            envvar="CITEAUDIT_CONFIG",
            help="Project file with default options (default: ./citeaudit.toml when there is one).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """The project file's settings become the commands' option defaults (the command line still wins)."""
    ctx.meta["citeaudit.config"] = config
    if config is None and not Path("citeaudit.toml").is_file():
        return  # no project file: nothing more to load
    from rich.markup import escape

    from citeaudit.cli.common import EXIT_BAD_INPUT, err_console
    from citeaudit.cli.config import Defaults, find_config, load_settings
    from citeaudit.core.errors import CiteauditError

    try:
        path = find_config(config)
        settings = load_settings(path) if path is not None else {}
    except CiteauditError as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True, highlight=False)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    if settings:
        ctx.default_map = Defaults(settings)


def main() -> None:
    """Console-script entry point."""
    app()
