"""The scoring convention as SQL text over the engine tables, for DuckDB and Spark SQL.

One definition, generated here and nowhere else: the engines under ``citeaudit.engines`` run this text, and
``citeaudit sql`` prints it for users who run it on their own cluster. This module only writes text; it never
connects to anything.

The tables (:data:`TABLES`) are what ``citeaudit export --format parquet`` writes, one folder per table,
hive-partitioned by ``protocol`` (and ``run`` for the per-answer tables). Keys are integers so that the
hundred-million-row joins stay cheap; ids are carried beside them for people reading the tables.

The query has two stages:

* :func:`cells_sql` — one pass over the big tables down to *cells*: counts per (group, question, severity).
  Every count of the convention is a sum over cells, and the cluster bootstrap over questions needs only the
  per-question cells, so this small result is all an engine sends back.
* :func:`scoring_sql` — the cells rolled up into one row per ``--by`` group plus the whole scope (``GROUPING
  SETS``), with numerators, denominators, counts per label and the values, which are ``NULL`` exactly when
  their denominator is 0.

Notes: every metric is undefined exactly when its denominator is 0, and its value is then ``NULL``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from citeaudit.core.errors import ScopeError
from citeaudit.core.model import Label
from citeaudit.core.protocol import convention_for

__all__ = [
    "CELL_COUNTS",
    "DIALECTS",
    "DIMENSIONS",
    "PARTITIONS",
    "TABLES",
    "Column",
    "Dialect",
    "cells_sql",
    "partition_value",
    "preamble_sql",
    "scoring_sql",
    "unresolved_sql",
]

DIMENSIONS = ("platform", "run", "question", "model", "locale", "sample")
"""Answer columns a score can be grouped or filtered by (the ``answers`` table has each one)."""


@dataclass(frozen=True, slots=True)
class Column:
    """One column of an engine table."""

    name: str
    """Column name."""
    type: str
    """SQL type: ``BIGINT``, ``VARCHAR``, ``DOUBLE`` or ``BOOLEAN``."""
    nullable: bool = False
    """Whether the column may hold ``NULL``."""


def _columns(*spec: str) -> tuple[Column, ...]:
    """``"name TYPE"`` or ``"name TYPE NULL"`` strings as columns."""
    found = []
    for item in spec:
        parts = item.split()
        found.append(Column(parts[0], parts[1], nullable=len(parts) > 2))
    return tuple(found)


TABLES: Mapping[str, tuple[Column, ...]] = {
    "protocols": _columns(
        "protocol_id VARCHAR",
        "version VARCHAR",
        "scoring VARCHAR",
        "fingerprint VARCHAR",
        "weighted BOOLEAN",
        "body VARCHAR",
    ),
    "required_facts": _columns(
        "fact BIGINT", "fact_id VARCHAR", "question VARCHAR", "severity VARCHAR NULL", "weight DOUBLE"
    ),
    "sources": _columns("source BIGINT", "source_key VARCHAR", "official BOOLEAN", "status VARCHAR"),
    "answers": _columns(
        "answer BIGINT",
        "answer_id VARCHAR",
        "question VARCHAR",
        "platform VARCHAR NULL",
        "model VARCHAR NULL",
        "locale VARCHAR NULL",
        "sample VARCHAR NULL",
        "run_kind VARCHAR",
    ),
    "claims": _columns(
        "claim BIGINT", "claim_id VARCHAR", "answer BIGINT", "fact BIGINT NULL", "severity VARCHAR NULL"
    ),
    "edges": _columns("claim BIGINT", "source BIGINT", "label VARCHAR NULL", "review_state VARCHAR"),
    "edge_locations": _columns("claim BIGINT", "source BIGINT"),
    "citations": _columns("answer BIGINT", "source BIGINT"),
}
"""Every engine table and its columns (partition columns not included: see :data:`PARTITIONS`).

``answers`` holds the dimensions already resolved (an answer's platform, else its run's); ``claims.severity``
is the claim's own; ``edges`` holds one row per edge, that is per (claim, source), with its final label
(``NULL`` while pending or disputed); ``edge_locations`` one row per citation location, so duplicated citations
collapse in the query; ``sources.status`` is the source's resolution state (``resolved``, ``pending``: its link
not followed yet, ``failed``); ``citations`` the *cited* citations (retrieved-only ones never count); ``protocols.body``
the protocol as JSON;
``required_facts.weight`` is 0 when the protocol declares no weights (``protocols.weighted`` says whether it does)."""

PARTITIONS: Mapping[str, tuple[str, ...]] = {
    name: ("protocol",) if name in ("protocols", "required_facts", "sources") else ("protocol", "run")
    for name in TABLES
}
"""Hive partition columns of each table (folder names ``protocol=…/run=…``, not stored in the files).
``run`` is the run id, the ``run`` dimension of an answer."""

CELL_COUNTS = (
    "edges",
    "locations",
    *(str(label) for label in Label),
    "pending",
    "disputed",
    "pairs",
    "covered",
    "without_claim",
    "without_edge",
    "pending_pairs",
    "answers",
    "official",
)
"""Integer counts of one cell, in the order :func:`cells_sql` returns them (then ``weighted_pairs`` and
``weighted_covered``, sums of fact weights)."""


@dataclass(frozen=True, slots=True)
class Dialect:
    """What differs between the SQL of two engines: small parameters, not a second copy of the query."""

    name: str
    """Engine name, as ``--engine`` spells it."""
    text_type: str
    """Type name for text in ``CAST``."""
    grouping: str
    """The function telling a ``GROUPING SETS`` total row from a group row."""
    backslash_escapes: bool
    """Whether a backslash escapes in string literals (Spark) or is an ordinary character (DuckDB)."""
    materialized: str = ""
    """How a common table expression read several times is computed once (``MATERIALIZED `` in DuckDB;
    Spark reuses the shuffle of an identical subplan by itself)."""

    def literal(self, text: str) -> str:
        """``text`` as a string literal of this dialect."""
        if self.backslash_escapes:
            return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return "'" + text.replace("'", "''") + "'"


DIALECTS: Mapping[str, Dialect] = {
    "duckdb": Dialect("duckdb", "VARCHAR", "GROUPING", backslash_escapes=False, materialized="MATERIALIZED "),
    "spark": Dialect("spark", "STRING", "grouping_id", backslash_escapes=True),
}
"""The dialects the SQL is generated for, by engine name."""


def partition_value(fingerprint: str) -> str:
    """The ``protocol=`` folder value of a protocol: its fingerprint without the colon, shortened.

    Letters first, so neither engine takes it for a number."""
    return fingerprint.replace(":", "-")[: len("sha256-") + 16]


def _check_by(by: Sequence[str]) -> tuple[str, ...]:
    unknown = [d for d in by if d not in DIMENSIONS]
    if unknown:
        raise ScopeError(f"cannot group by {unknown[0]!r}; choose from {', '.join(DIMENSIONS)}")
    return tuple(dict.fromkeys(by))


def _in(dialect: Dialect, column: str, values: Sequence[str]) -> str:
    return f"{column} IN ({', '.join(dialect.literal(v) for v in sorted(values))})"


def cells_sql(
    dialect: Dialect,
    *,
    by: Sequence[str] = (),
    protocol: str | None = None,
    run_kinds: Sequence[str] = ("platform",),
    where: Mapping[str, Sequence[str]] | None = None,
    scoring: str = "strict-v1",
) -> str:
    """The one-pass query from the engine tables to cells: counts per (``by`` values, question, severity).

    ``protocol`` is a :func:`partition_value` (``None``: the tables hold one protocol); ``run_kinds`` and
    ``where`` select answers as :class:`citeaudit.core.scope.Scope` does. Rows of answer counts have severity
    ``NULL``; edge and pair rows have the claim's (else its fact's) severity, ``'none'`` when unset."""
    return (
        "WITH\n" + ",\n".join(_cte_parts(dialect, by, protocol, run_kinds, where, scoring)) + "\n" + _cells_select(by)
    )


def unresolved_sql(
    dialect: Dialect,
    *,
    protocol: str | None = None,
    run_kinds: Sequence[str] = ("platform",),
    where: Mapping[str, Sequence[str]] | None = None,
    scoring: str = "strict-v1",
) -> str:
    """How many sources the answers in scope cite (a cited citation, or an edge of one of their claims) whose link
    has not been followed yet (``status = 'pending'``): while any are, the official-domain rate is provisional.
    One row, column ``unresolved``; the arguments select answers as :func:`cells_sql`'s do."""
    scoped = _cte_parts(dialect, (), protocol, run_kinds, where, scoring)[:2]

    def partition(alias: str) -> str:
        # the per-run tables' partitions, as the cells query prunes them
        found = [f"{alias}protocol = {dialect.literal(protocol)}"] if protocol is not None else []
        if where and "run" in where:
            found.append(_in(dialect, alias + "run", where["run"]))
        return " AND ".join(found) or "TRUE"

    in_protocol = f"protocol = {dialect.literal(protocol)}" if protocol is not None else "TRUE"
    return (
        "WITH\n"
        + ",\n".join(scoped)
        + ",\ncited AS (\n  SELECT ci.source FROM citations ci JOIN scoped_answers a ON a.answer = ci.answer\n"
        f"  WHERE {partition('ci.')}\n"
        "  UNION\n"
        "  SELECT l.source FROM edge_locations l JOIN scoped_claims c ON c.claim = l.claim\n"
        f"  WHERE {partition('l.')}\n)\n"
        "SELECT count(*) AS unresolved FROM cited\n"
        f"  JOIN (SELECT source FROM sources WHERE {in_protocol} AND status = 'pending') s ON s.source = cited.source\n"
    )


def _cte_parts(
    dialect: Dialect,
    by: Sequence[str],
    protocol: str | None,
    run_kinds: Sequence[str],
    where: Mapping[str, Sequence[str]] | None,
    scoring: str,
) -> list[str]:
    by = _check_by(by)
    convention = convention_for(scoring)
    # strict-v1 is the only convention so far; a variant would change the outcome and coverage rules below
    # through these fields, which the fingerprint already carries.
    assert (convention.partial, convention.unknown, convention.pending) == ("unsupported", "denominator", "unknown")
    keys = _cell_keys(by)

    def protocol_is(alias: str = "") -> str:
        return f"{alias}protocol = {dialect.literal(protocol)}" if protocol is not None else "TRUE"

    in_protocol = protocol_is()
    answer_filters = [in_protocol, _in(dialect, "run_kind", run_kinds)]
    for name, values in sorted((where or {}).items()):
        if name not in DIMENSIONS:
            raise ScopeError(f"cannot filter on {name!r}; choose from {', '.join(DIMENSIONS)}")
        answer_filters.append(_in(dialect, name, values))
    dims = ", ".join(keys)
    a_dims = ", ".join(f"a.{k}" for k in keys)
    outcomes = [str(label) for label in Label] + ["pending", "disputed"]
    zero_edges = ", ".join(f"0 AS {name}" for name in ("edges", "locations", *outcomes))
    zero_pairs = ", ".join(
        f"{z} AS {name}"
        for z, name in [("0", n) for n in ("pairs", "covered", "without_claim", "without_edge", "pending_pairs")]
        + [("CAST(0 AS DOUBLE)", "weighted_pairs"), ("CAST(0 AS DOUBLE)", "weighted_covered")]
    )
    no_severity = f"CAST(NULL AS {dialect.text_type})"
    # An edge's outcome as a small integer (its index in `outcomes`): integers are what the large aggregates carry.
    # A label outside the five counts in no outcome (but as an edge), as a text outcome would.
    outcome_code = (
        "CASE WHEN label IS NULL THEN CASE WHEN review_state = 'disputed' THEN "
        f"{outcomes.index('disputed')} ELSE {outcomes.index('pending')} END "
        + " ".join(f"WHEN label = '{o}' THEN {i}" for i, o in enumerate(outcomes[: len(Label)]))
        + f" ELSE {len(outcomes)} END"
    )

    # The per-run tables are partitioned by the run of their answer: a filter on runs prunes their folders too.
    def in_runs(alias: str = "") -> str:
        return f" AND {_in(dialect, alias + 'run', where['run'])}" if where and "run" in where else ""

    per_run = in_protocol + in_runs()
    return [
        # The answers in scope, with the dimensions they can be grouped by.
        f"scoped_answers AS (\n  SELECT answer, {', '.join(DIMENSIONS)}\n  FROM answers\n"
        f"  WHERE {' AND '.join(answer_filters)}\n)",
        # Their claims; a claim's severity is its own, else its required fact's, else 'none'.
        "scoped_claims AS (\n  SELECT c.claim, c.answer, c.fact, coalesce(c.severity, f.severity, 'none') AS severity\n"
        "  FROM claims c JOIN scoped_answers a ON a.answer = c.answer\n"
        f"  LEFT JOIN (SELECT fact, severity FROM required_facts WHERE {in_protocol}) f ON f.fact = c.fact\n"
        f"  WHERE {protocol_is('c.')}{in_runs('c.')}\n)",
        # Duplicated citations (same claim, same source) collapse into one edge; their count is kept. The
        # locations are counted per (claim, source) first, then meet the edges' labels in one join on that key
        # (``edges`` holds one row per (claim, source), as the ledger does): a located pair without an edge row
        # is pending, an edge row never located is no edge. An edge without a final label is pending (scored as
        # unknown, counted apart); disputed is pending too.
        "unique_edges AS (\n  SELECT l.claim, l.source, l.locations,\n"
        f"    coalesce(e.outcome, {outcomes.index('pending')}) AS outcome\n"
        "  FROM (\n"
        "    SELECT claim, source, count(*) AS locations\n"
        f"    FROM edge_locations WHERE {per_run}\n"
        "    GROUP BY claim, source\n"
        "  ) l\n"
        "  LEFT JOIN (\n"
        f"    SELECT claim, source, {outcome_code} AS outcome\n"
        f"    FROM edges WHERE {per_run}\n"
        "  ) e ON e.claim = l.claim AND e.source = l.source\n)",
        # One pass over the edges down to one row per claim, on the claim's integer key alone.
        "claim_totals AS (\n  SELECT u.claim, count(*) AS edges, CAST(sum(u.locations) AS BIGINT) AS locations,\n"
        + ",\n".join(f"    count(*) FILTER (WHERE u.outcome = {i}) AS {o}" for i, o in enumerate(outcomes))
        + f",\n    max(CASE WHEN u.outcome = {outcomes.index('supported')} THEN 1 ELSE 0 END) AS covers,\n"
        "    max(CASE WHEN s.source IS NULL THEN 0 ELSE 1 END) AS cites_official\n"
        "  FROM unique_edges u\n"
        f"  LEFT JOIN (SELECT source FROM sources WHERE {in_protocol} AND official) s ON s.source = u.source\n"
        "  GROUP BY u.claim\n)",
        # Every claim in scope with its edge totals (NULL without edges); everything after reads these rows.
        f"claim_edges AS {dialect.materialized}(\n"
        "  SELECT c.claim, c.answer, c.fact, c.severity, t.edges, t.locations,\n"
        + "".join(f"    t.{o},\n" for o in outcomes)
        + "    t.covers, t.cites_official\n"
        "  FROM scoped_claims c LEFT JOIN claim_totals t ON t.claim = c.claim\n)",
        # Only `supported` covers a fact; `partial` never does.
        "pair_outcomes AS (\n  SELECT answer, fact,\n"
        "    max(CASE WHEN edges IS NULL THEN 0 ELSE 1 END) AS with_edge,\n"
        "    max(coalesce(covers, 0)) AS covered,\n"
        # an edge without a final label (pending or disputed) may still cover the pair
        "    max(CASE WHEN coalesce(pending, 0) + coalesce(disputed, 0) > 0 THEN 1 ELSE 0 END) AS with_pending\n"
        "  FROM claim_edges\n  WHERE fact IS NOT NULL\n  GROUP BY answer, fact\n)",
        # An answer cites an official source through a cited citation or through an edge of its claims.
        "official_answers AS (\n  SELECT DISTINCT answer FROM (\n"
        "    SELECT ci.answer FROM citations ci\n"
        f"    JOIN (SELECT source FROM sources WHERE {in_protocol} AND official) s ON s.source = ci.source\n"
        f"    WHERE {protocol_is('ci.')}{in_runs('ci.')}\n"
        "    UNION ALL\n"
        "    SELECT answer FROM claim_edges WHERE cites_official = 1\n"
        "  ) cited\n)",
        "cell_rows AS (\n"
        f"  SELECT {a_dims}, e.severity, CAST(sum(e.edges) AS BIGINT) AS edges,\n"
        "    CAST(sum(e.locations) AS BIGINT) AS locations,\n"
        + ",\n".join(f"    CAST(sum(e.{o}) AS BIGINT) AS {o}" for o in outcomes)
        + f",\n    {zero_pairs}, 0 AS answers, 0 AS official\n"
        "  FROM claim_edges e JOIN scoped_answers a ON a.answer = e.answer\n"
        "  WHERE e.edges IS NOT NULL\n"
        f"  GROUP BY {a_dims}, e.severity\n"
        "  UNION ALL\n"
        # Every (answer, required fact of its question) is a pair, whether or not a claim maps to it.
        f"  SELECT {a_dims}, coalesce(f.severity, 'none') AS severity, {zero_edges},\n"
        "    count(*) AS pairs, CAST(sum(coalesce(p.covered, 0)) AS BIGINT) AS covered,\n"
        "    CAST(sum(CASE WHEN p.answer IS NULL THEN 1 ELSE 0 END) AS BIGINT) AS without_claim,\n"
        "    CAST(sum(CASE WHEN p.with_edge = 0 THEN 1 ELSE 0 END) AS BIGINT) AS without_edge,\n"
        "    CAST(sum(CASE WHEN p.covered = 0 AND p.with_pending = 1 THEN 1 ELSE 0 END) AS BIGINT) AS pending_pairs,\n"
        "    sum(f.weight) AS weighted_pairs,\n"
        "    sum(CASE WHEN p.covered = 1 THEN f.weight ELSE CAST(0 AS DOUBLE) END) AS weighted_covered,\n"
        "    0 AS answers, 0 AS official\n"
        "  FROM scoped_answers a\n"
        f"  JOIN (SELECT fact, question, severity, weight FROM required_facts WHERE {in_protocol}) f\n"
        "    ON f.question = a.question\n"
        "  LEFT JOIN pair_outcomes p ON p.answer = a.answer AND p.fact = f.fact\n"
        f"  GROUP BY {a_dims}, coalesce(f.severity, 'none')\n"
        "  UNION ALL\n"
        f"  SELECT {a_dims}, {no_severity} AS severity, {zero_edges}, {zero_pairs},\n"
        "    count(*) AS answers, CAST(sum(CASE WHEN o.answer IS NULL THEN 0 ELSE 1 END) AS BIGINT) AS official\n"
        "  FROM scoped_answers a LEFT JOIN official_answers o ON o.answer = a.answer\n"
        f"  GROUP BY {a_dims}\n)",
        f"cells AS (\n  SELECT {dims}, severity,\n"
        + ",\n".join(f"    CAST(sum({name}) AS BIGINT) AS {name}" for name in CELL_COUNTS)
        + ",\n    sum(weighted_pairs) AS weighted_pairs, sum(weighted_covered) AS weighted_covered\n"
        f"  FROM cell_rows\n  GROUP BY {dims}, severity\n)",
    ]


def _cell_keys(by: Sequence[str]) -> tuple[str, ...]:
    """The ``by`` dimensions, then ``question`` unless it is one of them (the bootstrap's cluster)."""
    by = tuple(dict.fromkeys(by))
    return by if "question" in by else (*by, "question")


def _cells_select(by: Sequence[str]) -> str:
    keys = _cell_keys(_check_by(by))
    return f"SELECT * FROM cells ORDER BY {', '.join(f'{k} NULLS FIRST' for k in (*keys, 'severity'))}"


def scoring_sql(
    dialect: Dialect,
    *,
    by: Sequence[str] = (),
    protocol: str | None = None,
    run_kinds: Sequence[str] = ("platform",),
    where: Mapping[str, Sequence[str]] | None = None,
    scoring: str = "strict-v1",
) -> str:
    """The whole convention as one query: a row per ``by`` group (``scope = 'group'``) and one for the whole
    scope (``scope = 'overall'``), each with numerators, denominators, counts per label, pending, provisional,
    collapsed locations and the three values (``NULL`` exactly when the denominator is 0)."""
    by = _check_by(by)
    ctes = _cte_parts(dialect, by, protocol, run_kinds, where, scoring)
    group_cols = ", ".join(by)
    # `pending` in a result counts disputed edges too (they have no final label either).
    totals = {name: f"sum({name})" for name in ("answers", "edges", "locations", *(str(label) for label in Label))}
    totals |= {"pending": "sum(pending + disputed)", "disputed": "sum(disputed)"}
    totals |= {name: f"sum({name})" for name in ("pairs", "covered", "without_claim", "without_edge", "official")}
    # coalesce: an empty scope has counts of 0 (and NULL values), never NULL counts
    sums = ",\n".join(f"    CAST(coalesce({expression}, 0) AS BIGINT) AS {name}" for name, expression in totals.items())
    if by:
        scope = f"CASE WHEN {dialect.grouping}({group_cols}) = 0 THEN 'group' ELSE 'overall' END AS scope, {group_cols}"
        grouping = f"\n  GROUP BY GROUPING SETS (({group_cols}), ())"
        order = f"\nORDER BY scope, {', '.join(f'{d} NULLS FIRST' for d in by)}"
    else:
        scope, grouping, order = "'overall' AS scope", "", ""
    rollup = f"totals AS (\n  SELECT {scope},\n{sums}\n  FROM cells{grouping}\n)"
    body = (
        "SELECT *,\n"
        "  locations - edges AS collapsed,\n"
        "  pending > 0 AS provisional,\n"
        "  supported AS precision_numerator, edges AS precision_denominator,\n"
        "  CAST(supported AS DOUBLE) / NULLIF(edges, 0) AS precision_value,\n"
        "  covered AS coverage_numerator, pairs AS coverage_denominator,\n"
        "  CAST(covered AS DOUBLE) / NULLIF(pairs, 0) AS coverage_value,\n"
        "  official AS official_rate_numerator, answers AS official_rate_denominator,\n"
        "  CAST(official AS DOUBLE) / NULLIF(answers, 0) AS official_rate_value\n"
        "FROM totals"
    )
    return "WITH\n" + ",\n".join([*ctes, rollup]) + "\n" + body + order


def preamble_sql(dialect: Dialect, root: str) -> str:
    """Views naming each engine table over a Parquet folder written by ``citeaudit export --format parquet``.

    Partition values are read as text (a run id of digits stays a run id)."""
    root = root.rstrip("/")
    lines = []
    for name in TABLES:
        path = f"{root}/{name}"
        if dialect.name == "spark":
            lines.append(
                f"CREATE OR REPLACE TEMPORARY VIEW {name} USING parquet OPTIONS (path {dialect.literal(path)});"
            )
        else:
            types = ", ".join(f"{p}: 'VARCHAR'" for p in PARTITIONS[name])
            lines.append(
                f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM "
                f"read_parquet({dialect.literal(path + '/**/*.parquet')}, "
                f"hive_partitioning = true, hive_types = {{{types}}});"
            )
    if dialect.name == "spark":
        lines.insert(0, "SET spark.sql.sources.partitionColumnTypeInference.enabled = false;")
    return "\n".join(lines)
