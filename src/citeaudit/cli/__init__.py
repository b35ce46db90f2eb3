"""The ``citeaudit`` command line: one module per command group, library errors turned into exit code 2.

The command modules are loaded when a command is first asked for: ``citeaudit score FILE`` and
``citeaudit score --help`` import the ``score`` module alone. ``citeaudit --help`` loads none: it lists the
names and one-line help of the table below (``tests/test_startup_imports.py`` holds it to the real commands).
"""

from __future__ import annotations

import gc
import importlib
import os
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

__all__ = ["app", "main"]

ENDS_WITH_THE_COMMAND: list[bool] = [False]
"""Whether this process ends when its command returns: true in the console script (:func:`main`), false when a
longer-lived program runs a command (tests, a notebook). See :func:`citeaudit.cli.common.left_to_the_end`."""


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

_COMMANDS: dict[str, tuple[str, str]] = {
    "ingest": ("data", "Import files into the database, each as an import of its own; the same file twice is a no-op."),
    "export": (
        "data",
        "Export everything measured under one protocol: losslessly as citeaudit.audit/v1, as flat tables "
        "(answers, citations, required facts, claims, edges, judgements, scores: enough to rebuild every "
        "headline number) in CSV or JSON Lines, or as the engine tables in Parquet (streamed, "
        "hive-partitioned by protocol and run; `citeaudit score DIR --engine duckdb|spark` reads them).",
    ),
    "formats": (
        "data",
        "List the readers `citeaudit ingest` knows: what each reads (API versions, payload variants), the "
        "saved event streams it reads, and what it does with citations that have no position in the answer "
        "text.",
    ),
    "schema": ("data", "Print the JSON Schema of the citeaudit.audit/v1 interchange format."),
    "collect": (
        "collect",
        "Ask each question of each engine (per locale and repeat) once, archiving every raw response.",
    ),
    "score": ("score", "Score precision, coverage and official-domain rate under strict-v1 (micro: pooled counts)."),
    "compare": (
        "score",
        "Compare two scopes paired per question: B − A with a cluster-bootstrap interval, a permutation "
        "p-value (Holm-adjusted across groups) and the minimum detectable effect. Refused unless both were "
        "measured the same way on the same questions. Differences are associations, never effects.",
    ),
    "sql": (
        "sql",
        "Print the strict-v1 convention as SQL over the engine tables (answers, claims, edges, "
        "edge_locations, citations, required_facts, sources, protocols): one row per --by group and one for "
        "the whole scope, with numerators, denominators, counts per label and values (NULL when the "
        "denominator is 0).",
    ),
    "trend": (
        "trend",
        "The three numbers per collection (oldest first) with cluster-bootstrap intervals. Where the protocol"
        " fingerprint changes between two collections the trend is broken: the break is marked with the "
        "changed components, and the two sides are not to be read as one series.",
    ),
    "misattribution": (
        "misattribution",
        "Misattributed claims: claims whose own edges are not supported (claims at risk) but that a reviewer "
        "found supported by another source of the same answer or by an official page (a cross pair). Cross "
        "pairs are proposed by `citeaudit suggest --cross-pairs`, judged in review, and never scored as "
        "edges.",
    ),
    "report": (
        "report",
        "Write one self-contained HTML file: disclosure, the three numbers with intervals, tables by group "
        "and by question, labels, joint support, severity, diagnostics, the unsupported claims with their "
        "evidence, official citations, the trend across collections (a database with two or more), and the "
        "comparison when --compare or --compare-where is given.",
    ),
    "agreement": (
        "agreement",
        "Agreement of two raters on the same edges (each rater's latest review judgement per edge): observed "
        "agreement, Cohen's kappa, Krippendorff's alpha and Gwet's AC1 with cluster-bootstrap intervals over "
        "answers, the confusion matrix, per-class agreement, prevalence, a kappa-paradox warning, and "
        "supported-vs-rest precision, recall, F1 and accuracy taking A as gold.",
    ),
    "resolve": (
        "sources",
        "Follow every cited link to its page and keep a snapshot: redirects and wrappers followed and "
        "recorded, canonical link, title, main text, dates and passages; each source ends resolved or failed "
        "with a reason. Resumable: a rerun reads only what is still pending.",
    ),
    "conflicts": (
        "sources",
        "List every claim with supported and conflicting sources, and every required fact supported in one "
        "answer and contradicted in another: each source's date, version, models, scope, official flag and "
        "copy group, with a suggested reason (newer version, other model, other market, copy of a third "
        "party, unresolved).",
    ),
    "segment": ("segment", "Split every answer into claims with exact spans, as a new claim set per answer."),
    "demo": ("demo", "Build a demo database from the bundled examples and print their scores."),
    "checks": (
        "checks",
        "Compare the quantities, model identifiers, certificates and dates of a claim with a passage.",
    ),
    "suggest": (
        "suggest",
        "Rank each unlabelled edge's snapshot passages for its claim and store the judge's suggestion.",
    ),
    "protocol": ("protocol", "Protocol files: the fixed question set and everything that changes a score."),
    "source": ("sources", "One source: attach a link to a title-only card, read its passages."),
    "sources": ("sources", "One source: attach a link to a title-only card, read its passages."),
    "claim": (
        "segment",
        "Look at and change an answer's claims by hand; every change is a new claim set, recorded with who "
        "and when. Unchanged claims keep their judgements; changed ones start pending.",
    ),
    "facts": (
        "segment",
        "Map claims to the required facts of their question: proposals from lexical similarity and entity "
        "agreement (dense embeddings with the models extra), confirmed by a reviewer before coverage counts "
        "them.",
    ),
    "answers": ("answers", "The answers in a database: ids, platform, run, question, review state."),
    "config": ("config", "The project file citeaudit.toml: what is in force and from where."),
    "review": ("review", "The review web UI."),
    "reviewer": ("review", "Review accounts."),
    "audit-log": ("review", "The append-only log of review actions."),
    "judgements": ("judgements", "Labels from and to CSV or JSON Lines files."),
    "judge": ("suggest", "Model judges: how far their suggestions can be trusted."),
}
"""Every root command (commands, then groups, as ``--help`` lists them): the module group it comes from and the
first paragraph of its help, on one line, which ``--help`` lists without loading the module."""

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
        self._home = {name: group for name, (group, _) in _COMMANDS.items()}
        self._added: dict[str, Any] = {}
        self.listing = False

    def __getitem__(self, name: str) -> Any:
        if name in self._added:
            return self._added[name]
        if self.listing:
            return TyperCommand(name, short_help=_COMMANDS[name][1])
        return _built(self._home[name])[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._added[name] = command

    def __delitem__(self, name: str) -> None:
        del self._added[name]

    def __iter__(self) -> Iterator[str]:
        yield from _COMMANDS
        yield from (name for name in self._added if name not in self._home)

    def __len__(self) -> int:
        return len(_COMMANDS) + len([name for name in self._added if name not in self._home])


class _LazyGroup(TyperGroup):
    """The root group, its commands loaded on demand; its help lists them from the table, loading none."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = self._commands = _Commands()

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The root's help: each command's name and one-line help, read from the table."""
        self._commands.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._commands.listing = False


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
    # numpy's BLAS starts a pool of threads, one a core, as it is loaded: about 0.1 s of CPU a command on this
    # machine's two cores, for citeaudit's one matrix product (the bootstrap's resamples × kinds of cluster, a few
    # columns wide), which a pool does not speed up. A value the user set is kept.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    ENDS_WITH_THE_COMMAND[0] = True
    try:
        app()
    finally:
        # The command is done (its files and connections closed by their blocks): what is left is frozen, so the
        # collections Python runs as it ends do not walk it. At 100 000 edges the report process ended 0.15 s
        # sooner (three walks of what the report left, each about 0.035 s); collecting once more here first would
        # cost a small `score` 0.03 s of its start-up. Python runs no finalizer at exit it does not have to.
        gc.freeze()
