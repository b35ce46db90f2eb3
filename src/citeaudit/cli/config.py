"""The project file ``citeaudit.toml``: the options an analyst repeats, written once.

Found in the working directory, or named by ``--config`` (env ``CITEAUDIT_CONFIG``)::

    db = "audit.db"               # every command's --db (and the PATH of score, report and trend)
    protocol = "protocol.yaml"    # ingest --questions, collect --protocol, report --protocol-file (engine names)

    [resolve]                     # citeaudit resolve and citeaudit source set-url
    map_host = ["docs.example.test=127.0.0.1"]
    concurrency = 8
    per_host = 2
    timeout = 10.0
    max_bytes = 10485760
    allow_private = false

    [review]
    policy = "double"             # citeaudit review serve --policy

A setting reaches a command as that option's default: what the command line says wins, then an environment
variable the option reads (``CITEAUDIT_DB``), then the file, then the built-in default. ``citeaudit config
show`` prints what is in force and where each value comes from. Relative paths in the file are read from the
file's folder, so the file works from anywhere.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from rich.text import Text

from citeaudit.cli.common import console, handles_errors
from citeaudit.core.errors import InputError, InvalidValue
from citeaudit.core.limits import load_toml

__all__ = ["CONFIG_NAME", "Defaults", "Setting", "config_app", "find_config", "load_settings", "register"]

CONFIG_NAME = "citeaudit.toml"
"""The file looked for in the working directory."""

ALL = "*"
"""Every command (those listed in :data:`_NOT_FOR` aside)."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting of the file: where it goes and what it must be."""

    key: str
    """Dotted key in the file (``resolve.map_host``)."""
    kind: type
    """``str``, ``int``, ``float``, ``bool``, ``list`` (of strings) or ``Path`` (a file, relative to the file)."""
    targets: tuple[tuple[str, str], ...]
    """``(command path, parameter name)`` pairs it is the default of; ``*`` is every command."""
    help: str


_RESOLVE = ("resolve", "source set-url", "sources set-url")

SETTINGS: tuple[Setting, ...] = (
    Setting("db", Path, ((ALL, "db"), ("score", "path"), ("report", "path"), ("trend", "path")), "database file"),
    Setting(
        "protocol",
        Path,
        (("ingest", "questions"), ("collect", "protocol"), ("report", "protocol_file")),
        "protocol file (YAML)",
    ),
    Setting("resolve.map_host", list, tuple((c, "map_host") for c in _RESOLVE), "NAME=IP host mappings"),
    Setting("resolve.concurrency", int, tuple((c, "concurrency") for c in _RESOLVE), "requests in flight"),
    Setting("resolve.per_host", int, tuple((c, "per_host") for c in _RESOLVE), "requests in flight to one host"),
    Setting("resolve.timeout", float, tuple((c, "timeout") for c in _RESOLVE), "seconds without progress"),
    Setting("resolve.max_bytes", int, tuple((c, "max_bytes") for c in _RESOLVE), "largest body read (bytes)"),
    Setting("resolve.allow_private", bool, tuple((c, "allow_private") for c in _RESOLVE), "private addresses"),
    Setting("review.policy", str, (("review serve", "policy"),), "review policy (single or double)"),
)
"""Everything the file may hold."""

_NOT_FOR = frozenset({"demo"})
"""Commands a setting for every command leaves alone (``demo`` builds its own database)."""

_ENV = {"db": "CITEAUDIT_DB"}
"""Settings an environment variable also sets (and, being more specific to the moment, wins over the file)."""


def find_config(explicit: Path | None) -> Path | None:
    """The file in use: ``explicit`` (which must exist), else ``citeaudit.toml`` here if there is one."""
    if explicit is not None:
        if not explicit.is_file():
            raise InputError(str(explicit), "", "no such configuration file")
        return explicit
    here = Path(CONFIG_NAME)
    return here if here.is_file() else None


def _check(path: Path, setting: Setting, value: object) -> object:
    kind = setting.kind
    if kind is list:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InvalidValue(str(path), setting.key, f"expected a list of strings (got {value!r})")
        return list(value)
    if kind is Path:
        if not isinstance(value, str) or not value:
            raise InvalidValue(str(path), setting.key, f"expected a file name (got {value!r})")
        resolved = Path(value).expanduser()
        return resolved if resolved.is_absolute() else path.parent / resolved
    if kind is bool and not isinstance(value, bool):
        raise InvalidValue(str(path), setting.key, f"expected true or false (got {value!r})")
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise InvalidValue(str(path), setting.key, f"expected a whole number (got {value!r})")
    if kind is float and (isinstance(value, bool) or not isinstance(value, int | float)):
        raise InvalidValue(str(path), setting.key, f"expected a number (got {value!r})")
    if kind is str and not isinstance(value, str):
        raise InvalidValue(str(path), setting.key, f"expected text (got {value!r})")
    return float(value) if kind is float else value  # type: ignore[arg-type]


def _host_pairs(value: object) -> str | None:
    import ipaddress

    for pair in value if isinstance(value, list) else []:
        name, sep, address = str(pair).partition("=")
        if not sep or not name.strip():
            return f"{pair!r} is not NAME=IP"
        try:
            ipaddress.ip_address(address.strip())
        except ValueError:
            return f"{address.strip()!r} in {pair!r} is not an IP address"
    return None


def _at_least(low: float) -> Callable[[object], str | None]:
    def rule(value: object) -> str | None:
        assert isinstance(value, int | float)
        return None if value >= low else f"{value!r} is below the smallest allowed, {low!r}"

    return rule


_RULES: dict[str, Callable[[object], str | None]] = {
    "resolve.map_host": _host_pairs,
    "resolve.concurrency": _at_least(1),
    "resolve.per_host": _at_least(1),
    "resolve.timeout": _at_least(0.001),
    "resolve.max_bytes": _at_least(1),
}
"""What a setting's value must also be, as the command-line option says it (checked here, so that the refusal
names the file and the key rather than an option the user did not type)."""


def load_settings(path: Path) -> dict[str, object]:
    """The settings of the file at ``path`` by dotted key, checked; an unknown key is refused, never ignored."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(path), "", f"cannot read: {exc}") from None
    raw = load_toml(text, str(path))
    flat: dict[str, object] = {}
    for key, value in raw.items():
        if isinstance(value, dict):
            for inner, item in value.items():
                flat[f"{key}.{inner}"] = item
        else:
            flat[key] = value
    known = {s.key: s for s in SETTINGS}
    for key in flat:
        if key not in known:
            raise InvalidValue(str(path), key, f"unknown setting {key!r}; settings: {', '.join(known)}")
    checked = {key: _check(path, known[key], value) for key, value in flat.items()}
    for key, value in checked.items():
        refusal = _RULES[key](value) if key in _RULES else None
        if refusal is not None:
            raise InvalidValue(str(path), key, refusal)
    return checked


class Defaults(dict[str, Any]):
    """A Click ``default_map`` for the command at ``path``: its options' values from the file, and the map of
    each subcommand under its name (Click asks the parent's map for a child's by the child's name)."""

    def __init__(self, settings: Mapping[str, object], path: tuple[str, ...] = ()) -> None:
        super().__init__()
        self._settings = settings
        self._path = path
        command = " ".join(path)
        for setting in SETTINGS:
            if setting.key not in settings:
                continue
            for target, parameter in setting.targets:
                everywhere = target == ALL and bool(path) and path[0] not in _NOT_FOR
                if target == command or everywhere:
                    self[parameter] = settings[setting.key]

    def get(self, key: str, default: Any = None) -> Any:
        # Click asks the same map for an option's value and for a subcommand's map: only a subcommand gets one.
        if key in self:
            return self[key]
        if key in _subcommands(self._path):
            return Defaults(self._settings, (*self._path, key))
        return default


def _subcommands(path: tuple[str, ...]) -> frozenset[str]:
    """Names of the commands under the group at ``path`` (the root at ``()``); empty for a command."""
    from citeaudit.cli import _COMMANDS, _built

    homes = {name: group for name, (group, _) in _COMMANDS.items()}
    if not path:
        return frozenset(homes)
    if path[0] not in homes:
        return frozenset()
    command: Any = _built(homes[path[0]])[path[0]]
    for name in path[1:]:
        command = getattr(command, "commands", {}).get(name)
    return frozenset(getattr(command, "commands", {}))


config_app = typer.Typer(help="The project file citeaudit.toml: what is in force and from where.")


@config_app.command("show")
@handles_errors
def show(ctx: typer.Context) -> None:
    """Print every setting in force, its value and where it comes from (the command line still wins)."""
    explicit = ctx.find_root().meta.get("citeaudit.config")
    path = find_config(explicit)
    settings = load_settings(path) if path is not None else {}
    console.print(
        f"configuration file: {path.resolve() if path else f'none ({CONFIG_NAME} not found here; --config names one)'}",
        soft_wrap=True,
        markup=False,
    )
    table = Table("setting", "value", "from", "used by", header_style="bold")
    for setting in SETTINGS:
        env = _ENV.get(setting.key)
        value: object
        if env and os.environ.get(env):
            value, source = os.environ[env], f"environment {env}"
        elif setting.key in settings:
            value, source = settings[setting.key], str(path)
        else:
            value, source = _builtin(setting.key), "built-in default"
        used = ", ".join(
            f"{'every command' if target == ALL else target} {_option(parameter, target)}"
            for target, parameter in setting.targets
        )
        table.add_row(setting.key, Text(_shown(value)), Text(source), Text(used))
    console.print(table)


def _option(parameter: str, target: str) -> str:
    return "PATH" if parameter == "path" else f"--{parameter.replace('_', '-')}"


def _shown(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):
        return ", ".join(value) or "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _builtin(key: str) -> object:
    return {
        "db": "citeaudit.db",
        "resolve.concurrency": 16,
        "resolve.per_host": 4,
        "resolve.timeout": 10.0,
        "resolve.max_bytes": 10 * 1024 * 1024,
        "resolve.allow_private": False,
        "review.policy": "as stored in the database (single unless set)",
    }.get(key)


def register(app: typer.Typer) -> None:
    """Add this group's commands to ``app``."""
    app.add_typer(config_app, name="config")
