"""Scoring beyond memory: the in-memory core, the DuckDB engine, Spark local and the Parquet export, side by side.

One generated audit (10 M citation locations by default; ``--large`` adds a 100 M run, which takes long and needs
disk: opt-in) is written as the engine's Parquet dataset and, up to ``--ledger-max`` locations (10 M), as a
citeaudit database. The generator works a block of answers at a time (their claims, edges, locations and
citations), so its memory stays under a gigabyte at any size; its peak RSS is printed. Each path runs in its own
process, so its peak RSS is its own (Spark's includes its JVM's):

* numpy — ``score_columns`` over in-memory columns (the RSS includes the columns themselves);
* duckdb engine — ``score_with_engine(PARQUET, "duckdb")``, with and without ``--ci`` (9 999 resamples), and
  held to 1 GB of memory (it spills to disk: the out-of-core path);
* hand-written DuckDB — one plain query for every count the engine reports per platform (edges per label,
  pending, disputed, pairs without a claim or an edge, the severity breakdown) on the same files (the baseline);
* spark local — ``score_with_engine(PARQUET, "spark")`` on a warm ``local[*]`` session (start-up reported apart);
* export — ``citeaudit export --format parquet`` from the database, against DuckDB's own SQLite-to-Parquet copy
  of the same tables (DuckDB's ``sqlite`` extension: when it cannot be loaded from the installed DuckDB, point
  ``--duckdb-sqlite DIR`` at ``pip install --target DIR duckdb==1.4.4 duckdb-ext-sqlite==1.4.4.20260205``).

Every path must give the same per-platform counts, all of them (checked). The engine's and the baseline's CPU
time is printed beside their elapsed time (it moves less with the shared machine's load). Targets: DuckDB engine
≤ 1.5× the hand-written query (elapsed time); export ≤ 2× DuckDB's copy; ``--ci`` adds ≤ 10 %.

Sizes above ``--ledger-max`` (the export and DuckDB's copy: building a 100 M-location ledger row by row takes
about 20 minutes), ``--spark-max`` (10 M: Spark local takes minutes per 10 M) and ``--numpy-max`` run without those
paths, and say so; at 100 M each path runs ``--large-repeat`` times (1). The last line gives each target with the
sizes it was measured at.

Run: python benchmarks/bench_scale.py [--locations N] [--large] [--repeat K] [--skip spark ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

PLATFORMS = ["chatgpt", "copilot", "gemini", "perplexity"]
N_QUESTIONS = 500
FACTS_PER_QUESTION = 4
N_RUNS = 8
LABELS = ["supported", "partial", "conflicting", "irrelevant", "unknown"]
# final label codes 0..4, 5 pending, 6 disputed
CODE_P = [0.45, 0.1, 0.08, 0.07, 0.1, 0.18, 0.02]


def protocol_body() -> Any:
    from citeaudit.interchange import ProtocolIn, protocol_from_mapping

    mapping = {
        "id": "bench-scale",
        "version": "1",
        "official_domains": ["brand.com"],
        "questions": [
            {
                "id": f"q{q:03d}",
                "text": f"Question {q}?",
                "locale": "en-GB" if q % 2 else "de-DE",
                "required_facts": [
                    {"id": f"q{q:03d}f{f}", "text": f"fact {f}", "severity": "high"} for f in range(FACTS_PER_QUESTION)
                ],
            }
            for q in range(N_QUESTIONS)
        ],
    }
    return protocol_from_mapping(ProtocolIn.model_validate(mapping), "bench", path="")


def run_platform(run: int) -> str:
    return PLATFORMS[run % len(PLATFORMS)]


ANSWERS_PER_BLOCK = 100_000
"""Answers generated at a time (500 k claims, 2 M edges, ~2.5 M locations): what bounds the generator's memory."""


@dataclass(frozen=True)
class Shape:
    """The sizes of one generated audit: 1.25 locations per edge, 4 edges per claim, 5 claims per answer."""

    n_answers: int
    n_sources: int
    n_locations: int

    @property
    def n_claims(self) -> int:
        return self.n_answers * 5

    @property
    def n_edges(self) -> int:
        return self.n_claims * 4

    @classmethod
    def of(cls, n_locations: int) -> Shape:
        n_answers = max(1, n_locations * 4 // 5 // 4 // 5)
        n_edges = n_answers * 20
        return cls(n_answers, max(1000, n_locations // 10), max(n_locations, n_edges))


def audit_blocks(n_locations: int, seed: int = 11) -> Iterator[dict[str, Any]]:
    """The audit ``ANSWERS_PER_BLOCK`` answers at a time, with global integer keys (a block's claims, edges,
    locations and citations belong to its answers); the same blocks for the same arguments."""
    shape = Shape.of(n_locations)
    rng = np.random.default_rng(seed)
    source_official = rng.random(shape.n_sources) < 0.05
    extra_total = shape.n_locations - shape.n_edges
    for first in range(0, shape.n_answers, ANSWERS_PER_BLOCK):
        last = min(shape.n_answers, first + ANSWERS_PER_BLOCK)
        rng = np.random.default_rng([seed, first])
        n = last - first
        answers = np.arange(first, last)
        answer_question = rng.integers(0, N_QUESTIONS, n)
        answer_run = rng.integers(0, N_RUNS, n)
        claims = np.arange(first * 5, last * 5)
        claim_answer = np.repeat(answers, 5)
        mapped = rng.random(n * 5) < 0.5
        claim_fact = np.where(
            mapped,
            answer_question[claim_answer - first] * FACTS_PER_QUESTION + rng.integers(0, FACTS_PER_QUESTION, n * 5),
            -1,
        )
        edges = np.arange(first * 20, last * 20)
        edge_claim = np.repeat(claims, 4)
        slot = np.tile(np.arange(4), n * 5)
        # four distinct sources per claim: offsets a quarter of the pool apart
        edge_source = (edge_claim * 7919 + slot * (shape.n_sources // 4)) % shape.n_sources
        edge_code = rng.choice(7, size=n * 20, p=CODE_P)
        # the extra locations (duplicated citations) spread over the blocks in proportion to their edges
        extra = extra_total * last // shape.n_answers - extra_total * first // shape.n_answers
        loc_edge = np.concatenate([edges, rng.integers(edges[0], edges[-1] + 1, extra)])
        yield {
            "answer": answers,
            "answer_question": answer_question,
            "answer_run": answer_run,
            "claim": claims,
            "claim_answer": claim_answer,
            "claim_fact": claim_fact,
            "edge": edges,
            "edge_claim": edge_claim,
            "edge_source": edge_source,
            "edge_code": edge_code,
            "loc_edge": loc_edge,
            "citation_answer": np.repeat(answers, 3),
            "citation_source": rng.integers(0, shape.n_sources, n * 3),
            "source_official": source_official,
            "n_sources": shape.n_sources,
        }


def generate(n_locations: int, seed: int = 11) -> dict[str, Any]:
    """The whole audit in memory (the numpy path's input): the blocks' columns joined, one column at a time."""
    parts: dict[str, list[Any]] = {}
    shared: dict[str, Any] = {}
    for block in audit_blocks(n_locations, seed):
        for key, value in block.items():
            if key in ("source_official", "n_sources"):
                shared[key] = value
            elif key not in ("answer", "claim", "edge"):  # positions already
                parts.setdefault(key, []).append(value)
    found = dict(shared)
    for key in list(parts):
        found[key] = np.concatenate(parts.pop(key))
    return found


def write_parquet(n_locations: int, root: Path) -> None:
    """The engine dataset, written block by block as the export lays it out: one file per table and run, one row
    group per block (the generator never holds more than a block)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from citeaudit.core.convention_sql import partition_value
    from citeaudit.core.protocol import fingerprint
    from citeaudit.interchange import protocol_to_mapping

    protocol = protocol_body()
    part = f"protocol={partition_value(fingerprint(protocol))}"

    def put(table: str, columns: dict[str, Any]) -> None:
        folder = root / table / part
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table(columns), folder / "part-0.parquet")

    def ids(prefix: str, keys: Any) -> Any:
        return pc.binary_join_element_wise(prefix, pc.cast(pa.array(keys), pa.string()), "")

    body = json.dumps(protocol_to_mapping(protocol), sort_keys=True)
    put(
        "protocols",
        {
            "protocol_id": ["bench-scale"],
            "version": ["1"],
            "scoring": ["strict-v1"],
            "fingerprint": [fingerprint(protocol)],
            "weighted": [False],
            "body": [body],
        },
    )
    n_facts = N_QUESTIONS * FACTS_PER_QUESTION
    facts = np.arange(n_facts)
    put(
        "required_facts",
        {
            "fact": facts,
            "fact_id": [f"q{f // 4:03d}f{f % 4}" for f in facts],
            "question": [f"q{f // 4:03d}" for f in facts],
            "severity": ["high"] * n_facts,
            "weight": np.zeros(n_facts),
        },
    )
    questions = pa.array([f"q{q:03d}" for q in range(N_QUESTIONS)])
    locales = pa.array(["en-GB" if q % 2 else "de-DE" for q in range(N_QUESTIONS)])
    labels = pa.array([*LABELS, None, None], type=pa.string())
    states = pa.array(["labelled"] * 5 + ["pending", "disputed"])
    writers: dict[tuple[str, int], Any] = {}

    def append(table: str, run: int, columns: dict[str, Any]) -> None:
        batch = pa.table(columns)
        if (table, run) not in writers:
            folder = root / table / part / f"run=r{run}"
            folder.mkdir(parents=True, exist_ok=True)
            writers[table, run] = pq.ParquetWriter(folder / "part-0.parquet", batch.schema)
        writers[table, run].write_table(batch)

    sources_written = False
    try:
        for block in audit_blocks(n_locations):
            if not sources_written:
                sources = np.arange(block["n_sources"])
                put(
                    "sources",
                    {
                        "source": sources,
                        "source_key": ids("s", sources),
                        "official": block["source_official"],
                        # every link followed: the official-domain rate is final, as the hand-written SQL takes it
                        "status": pa.array(["resolved"] * len(sources), type=pa.string()),
                    },
                )
                sources_written = True
            first = block["answer"][0]
            answer_run = block["answer_run"]
            claim_run = answer_run[block["claim_answer"] - first]
            edge_run = claim_run[block["edge_claim"] - block["claim"][0]]
            loc_edge = block["loc_edge"] - block["edge"][0]
            loc_run = edge_run[loc_edge]
            citation_run = answer_run[block["citation_answer"] - first]
            for run in range(N_RUNS):
                at = np.flatnonzero(answer_run == run)
                answers = block["answer"][at]
                question = pa.array(block["answer_question"][at])
                append(
                    "answers",
                    run,
                    {
                        "answer": answers,
                        "answer_id": ids("a", answers),
                        "question": questions.take(question),
                        "platform": pa.array([run_platform(run)] * len(at)),
                        "model": pa.array(["m" + str(run % 2)] * len(at)),
                        "locale": locales.take(question),
                        "sample": pa.nulls(len(at), pa.string()),
                        "run_kind": pa.array(["platform"] * len(at)),
                    },
                )
                at = np.flatnonzero(claim_run == run)
                fact = block["claim_fact"][at]
                append(
                    "claims",
                    run,
                    {
                        "claim": block["claim"][at],
                        "claim_id": ids("c", block["claim"][at]),
                        "answer": block["claim_answer"][at],
                        "fact": pa.array(fact, mask=fact < 0),
                        "severity": pa.nulls(len(at), pa.string()),
                    },
                )
                at = np.flatnonzero(edge_run == run)
                code = pa.array(block["edge_code"][at])
                append(
                    "edges",
                    run,
                    {
                        "claim": block["edge_claim"][at],
                        "source": block["edge_source"][at],
                        "label": labels.take(code),
                        "review_state": states.take(code),
                    },
                )
                at = loc_edge[loc_run == run]
                append("edge_locations", run, {"claim": block["edge_claim"][at], "source": block["edge_source"][at]})
                at = np.flatnonzero(citation_run == run)
                append(
                    "citations", run, {"answer": block["citation_answer"][at], "source": block["citation_source"][at]}
                )
    finally:
        for writer in writers.values():
            writer.close()


def build_database(n_locations: int, path: Path) -> None:
    """A citeaudit database holding the same audit, block by block (rows written directly: the import path would
    take hours)."""
    from citeaudit.store import Store

    protocol = protocol_body()
    with Store(path) as store:
        protocol_pk = store.ensure_protocol(protocol)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA foreign_keys = OFF")
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("BEGIN")
    question_pk = dict(db.execute("SELECT ordinal, pk FROM questions WHERE protocol_pk = ?", (protocol_pk,)))
    fact_pk = {
        int(q) * FACTS_PER_QUESTION + int(o): pk
        for q, o, pk in db.execute(
            "SELECT q.ordinal, f.ordinal, f.pk FROM required_facts f JOIN questions q ON q.pk = f.question_pk"
        )
    }
    db.execute(
        "INSERT INTO imports (pk, payload_sha256, origin, format, imported_at, counts) "
        "VALUES (1, 'bench', 'bench', 'bench', '2026-12-01', '{}')"
    )
    db.executemany(
        "INSERT INTO runs (pk, protocol_pk, id, kind, platform, model) VALUES (?, ?, ?, 'platform', ?, ?)",
        [(r + 1, protocol_pk, f"r{r}", run_platform(r), f"m{r % 2}") for r in range(N_RUNS)],
    )
    states = ["labelled"] * 5 + ["pending", "disputed"]
    for block in audit_blocks(n_locations):
        if block["answer"][0] == 0:
            official = block["source_official"].tolist()
            db.executemany(
                "INSERT INTO sources (pk, key, url, status, host, path) VALUES (?, ?, ?, 'pending', ?, '/')",
                (
                    (
                        s + 1,
                        f"s{s}",
                        f"https://{'brand.com' if o else 'site.org'}/{s}",
                        "brand.com" if o else "site.org",
                    )
                    for s, o in enumerate(official)
                ),
            )
            db.executemany(
                "INSERT INTO protocol_sources VALUES (?, ?)", ((protocol_pk, s + 1) for s in range(block["n_sources"]))
            )
        db.executemany(
            "INSERT INTO answers (pk, id, run_pk, question_pk, text, import_pk) VALUES (?, ?, ?, ?, '', 1)",
            (
                (a + 1, f"a{a}", r + 1, question_pk[q])
                for a, r, q in zip(
                    block["answer"].tolist(),
                    block["answer_run"].tolist(),
                    block["answer_question"].tolist(),
                    strict=True,
                )
            ),
        )
        db.executemany(
            "INSERT INTO citations (answer_pk, ordinal, source_pk, kind) VALUES (?, ?, ?, 'cited')",
            (
                (a + 1, i % 3, s + 1)
                for i, (a, s) in enumerate(
                    zip(block["citation_answer"].tolist(), block["citation_source"].tolist(), strict=True)
                )
            ),
        )
        db.executemany(
            "INSERT INTO claims (pk, id, answer_pk, text, fact_pk) VALUES (?, ?, ?, '', ?)",
            (
                (c + 1, f"c{c}", a + 1, fact_pk[f] if f >= 0 else None)
                for c, a, f in zip(
                    block["claim"].tolist(), block["claim_answer"].tolist(), block["claim_fact"].tolist(), strict=True
                )
            ),
        )
        first_edge = int(block["edge"][0])
        n_locations_of = np.bincount(block["loc_edge"] - first_edge, minlength=len(block["edge"])).tolist()
        db.executemany(
            "INSERT INTO edges (pk, claim_pk, source_pk, review_state, final_code, n_locations) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                (e + 1, c + 1, s + 1, states[k], k, n)
                for e, c, s, k, n in zip(
                    block["edge"].tolist(),
                    block["edge_claim"].tolist(),
                    block["edge_source"].tolist(),
                    block["edge_code"].tolist(),
                    n_locations_of,
                    strict=True,
                )
            ),
        )
        db.executemany(
            "INSERT INTO edge_locations (edge_pk) VALUES (?)", ((e + 1,) for e in block["loc_edge"].tolist())
        )
    db.execute("COMMIT")
    db.close()


# -- the measured paths (each in its own process) -------------------------------------------------


def path_numpy(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    from citeaudit.core.scoring import ScoringColumns, collapse_locations, score_columns

    data = generate(args.locations)
    start = time.perf_counter()
    loc_claim = data["edge_claim"][data["loc_edge"]]
    loc_source = data["edge_source"][data["loc_edge"]]
    loc_code = data["edge_code"][data["loc_edge"]]
    edge_claim, edge_source, edge_code, edge_locations = collapse_locations(
        loc_claim, loc_source, loc_code, data["n_sources"]
    )
    del loc_claim, loc_source, loc_code
    runs = data["answer_run"]
    columns = ScoringColumns(
        answer_dims={
            "platform": [run_platform(r) for r in runs.tolist()],
            "question": [f"q{q:03d}" for q in data["answer_question"].tolist()],
        },
        answer_question=data["answer_question"],
        question_facts=[np.arange(q * FACTS_PER_QUESTION, (q + 1) * FACTS_PER_QUESTION) for q in range(N_QUESTIONS)],
        fact_severity=np.full(N_QUESTIONS * FACTS_PER_QUESTION, 1, dtype=np.int64),
        claim_answer=data["claim_answer"],
        claim_fact=data["claim_fact"],
        claim_severity=np.where(data["claim_fact"] >= 0, 1, 4).astype(np.int64),
        edge_claim=edge_claim,
        edge_source=edge_source,
        edge_code=edge_code,
        edge_locations=edge_locations,
        source_official=data["source_official"],
        citation_answer=data["citation_answer"],
        citation_source=data["citation_source"],
    )
    result = score_columns(columns, scoring="strict-v1", fingerprint="bench", by=["platform"])
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "counts": counts_of(result)}


def counts_of(result: Any) -> dict[str, list[Any]]:
    """Every count a group of the result reports: answers, official answers, edges, locations, edges per label,
    pending, disputed, required pairs, covered, without a claim, without an edge, then per severity its
    precision and coverage numerator and denominator."""
    found: dict[str, list[Any]] = {}
    for g in result.groups:
        found[str(dict(g.by)["platform"])] = [
            g.answers,
            g.official_rate.numerator,
            g.edges.unique,
            g.edges.locations,
            *(g.edges.by_label[label] for label in LABELS),
            g.edges.pending,
            g.edges.disputed,
            g.required.pairs,
            g.required.covered,
            g.required.without_claim,
            g.required.without_edge,
            *(
                value
                for name, part in sorted(g.severity.items())
                for value in (
                    name,
                    part.precision.numerator,
                    part.precision.denominator,
                    part.coverage.numerator,
                    part.coverage.denominator,
                )
            ),
        ]
    return found


def path_duckdb(root: Path, args: argparse.Namespace, ci: bool = False) -> dict[str, Any]:
    import duckdb  # noqa: F401  (imported before the clock starts, as in the hand-written baseline)

    from citeaudit.core.scoring import IntervalSettings
    from citeaudit.engines import score_with_engine
    from citeaudit.engines._duckdb import DuckDBRunner  # noqa: F401

    start, cpu = time.perf_counter(), time.process_time()
    result = score_with_engine(root, "duckdb", by=["platform"], ci=IntervalSettings() if ci else None).result
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"seconds": seconds, "cpu_s": cpu, "counts": counts_of(result)}


def path_duckdb_ci(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The engine with --ci end to end, and what the intervals add measured in-process on the same cells (the
    end-to-end difference of two 10-second runs is mostly the shared machine's noise)."""
    from citeaudit.core.cells import score_cells
    from citeaudit.core.convention_sql import DIALECTS, cells_sql
    from citeaudit.core.scoring import IntervalSettings
    from citeaudit.engines._duckdb import DuckDBRunner
    from citeaudit.engines._tables import choose_protocol_row

    found = path_duckdb(root, args, ci=True)
    with DuckDBRunner.over_parquet(str(root)) as runner:
        row = choose_protocol_row(runner.protocols(), None, str(root))
        cells = runner.query(cells_sql(DIALECTS["duckdb"], by=["platform"], protocol=row.partition))
    common = {"by": ["platform"], "scoring": row.scoring, "fingerprint": row.fingerprint, "weighted": False}
    start = time.perf_counter()
    score_cells(cells, **common)
    plain = time.perf_counter() - start
    start = time.perf_counter()
    score_cells(cells, ci=IntervalSettings(), **common)
    found["ci_extra_s"] = time.perf_counter() - start - plain
    return found


def path_duckdb_capped(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The engine held to 1 GB of memory: it must spill to disk, not fail (the out-of-core path)."""
    os.environ["CITEAUDIT_DUCKDB_MEMORY_LIMIT"] = "1GB"
    return path_duckdb(root, args)


HAND_WRITTEN = """
WITH e AS (
  SELECT claim, source, count(*) AS n FROM read_parquet('{root}/edge_locations/**/*.parquet') GROUP BY claim, source
),
a AS (
  SELECT answer, question, platform FROM read_parquet('{root}/answers/**/*.parquet') WHERE run_kind = 'platform'
),
f AS (
  SELECT fact, question, coalesce(severity, 'none') AS severity FROM read_parquet('{root}/required_facts/**/*.parquet')
),
s AS (SELECT source FROM read_parquet('{root}/sources/**/*.parquet') WHERE official),
ce AS (
  SELECT e.claim, count(*) AS edges, sum(e.n) AS locations,
    count(*) FILTER (WHERE label = 'supported') AS supported,
    count(*) FILTER (WHERE label = 'partial') AS partial,
    count(*) FILTER (WHERE label = 'conflicting') AS conflicting,
    count(*) FILTER (WHERE label = 'irrelevant') AS irrelevant,
    count(*) FILTER (WHERE label = 'unknown') AS unknown,
    count(*) FILTER (WHERE label IS NULL) AS pending,
    count(*) FILTER (WHERE label IS NULL AND review_state = 'disputed') AS disputed,
    count(s.source) > 0 AS official
  FROM e LEFT JOIN read_parquet('{root}/edges/**/*.parquet') x USING (claim, source) LEFT JOIN s USING (source)
  GROUP BY e.claim
),
cc AS MATERIALIZED (
  SELECT c.answer, c.fact, a.platform, coalesce(c.severity, f.severity, 'none') AS severity, ce.*
  FROM read_parquet('{root}/claims/**/*.parquet') c JOIN a USING (answer) LEFT JOIN f USING (fact)
  LEFT JOIN ce USING (claim)
),
pe AS (
  SELECT platform, severity, sum(edges) AS edges, sum(locations) AS locations, sum(supported) AS supported,
    sum(partial) AS partial, sum(conflicting) AS conflicting, sum(irrelevant) AS irrelevant, sum(unknown) AS unknown,
    sum(pending) AS pending, sum(disputed) AS disputed
  FROM cc WHERE edges IS NOT NULL GROUP BY platform, severity
),
pf AS (
  SELECT answer, fact, bool_or(edges IS NOT NULL) AS with_edge, bool_or(supported > 0) AS covered
  FROM cc WHERE fact IS NOT NULL GROUP BY answer, fact
),
pp AS (
  SELECT a.platform, f.severity, count(*) AS pairs, count(*) FILTER (WHERE pf.covered) AS covered,
    count(*) FILTER (WHERE pf.answer IS NULL) AS without_claim,
    count(*) FILTER (WHERE NOT pf.with_edge) AS without_edge
  FROM a JOIN f USING (question) LEFT JOIN pf USING (answer, fact) GROUP BY a.platform, f.severity
),
off AS (
  SELECT a.platform, count(DISTINCT o.answer) AS official FROM (
    SELECT answer FROM cc WHERE official
    UNION ALL SELECT answer FROM read_parquet('{root}/citations/**/*.parquet') JOIN s USING (source)
  ) o JOIN a USING (answer) GROUP BY a.platform
),
ap AS (SELECT platform, count(*) AS answers FROM a GROUP BY platform)
SELECT platform, severity, ap.answers, coalesce(off.official, 0),
  pe.edges, pe.locations, pe.supported, pe.partial, pe.conflicting, pe.irrelevant, pe.unknown, pe.pending, pe.disputed,
  pp.pairs, pp.covered, pp.without_claim, pp.without_edge
FROM pe FULL JOIN pp USING (platform, severity) JOIN ap USING (platform) LEFT JOIN off USING (platform)
ORDER BY platform, severity
"""
"""Every count the engine reports per platform (edges per label, pending, disputed, pairs without a claim or an
edge, the severity breakdown), written as an expert would for these files: the locations counted per (claim,
source), the edges rolled up per claim, then per-platform and per-severity sums. It computes neither the
per-question cells nor anything for other scopes (the engine does both)."""


def path_hand_written(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    import duckdb

    start, cpu = time.perf_counter(), time.process_time()
    con = duckdb.connect(config={"preserve_insertion_order": False})
    con.execute("SET enable_progress_bar = false")  # as the engine: no bar drawn on the output
    rows = con.execute(HAND_WRITTEN.format(root=root)).fetchall()
    # the rows are per (platform, severity): a platform's counts are their sums
    totals: dict[str, list[int]] = {}
    severity: dict[str, list[Any]] = {}
    for platform, name, answers, official, *edge_counts, pairs, covered, without_claim, without_edge in rows:
        edges = [int(v or 0) for v in edge_counts]
        required = [int(v or 0) for v in (pairs, covered, without_claim, without_edge)]
        found = totals.setdefault(platform, [int(answers), int(official)] + [0] * (len(edges) + len(required)))
        found[2:] = [x + y for x, y in zip(found[2:], edges + required, strict=True)]
        severity.setdefault(platform, []).extend([name, edges[2], edges[0], required[1], required[0]])
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    counts = {str(p): found + severity[p] for p, found in totals.items()}
    return {"seconds": seconds, "cpu_s": cpu, "counts": counts}


def path_spark(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    from citeaudit.engines import score_with_engine
    from citeaudit.engines._spark import local_session

    start = time.perf_counter()
    session = local_session()
    startup = time.perf_counter() - start
    start = time.perf_counter()
    result = score_with_engine(root, "spark", by=["platform"]).result
    seconds = time.perf_counter() - start
    jvm = children_peak_rss_mb()
    session.stop()
    return {"seconds": seconds, "startup_s": startup, "counts": counts_of(result), "children_rss_mb": jvm}


def path_export(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    from citeaudit.engines import export_parquet

    out = Path(args.scratch) / f"export-{os.getpid()}"
    start = time.perf_counter()
    export_parquet(Path(args.db), out)
    seconds = time.perf_counter() - start
    shutil.rmtree(out)
    return {"seconds": seconds}


DUCKDB_COPY = """
ATTACH '{db}' AS ledger (TYPE sqlite, READ_ONLY);
COPY (SELECT a.pk AS answer, a.id AS answer_id, q.id AS question, coalesce(a.platform, r.platform) AS platform,
             coalesce(a.model, r.model) AS model, coalesce(a.locale, q.locale) AS locale,
             CAST(r.sample AS VARCHAR) AS sample, r.kind AS run_kind, r.id AS run
      FROM ledger.answers a JOIN ledger.runs r ON r.pk = a.run_pk JOIN ledger.questions q ON q.pk = a.question_pk)
  TO '{out}/answers' (FORMAT parquet, PARTITION_BY (run));
COPY (SELECT c.pk AS claim, c.id AS claim_id, c.answer_pk AS answer, c.fact_pk AS fact, c.severity, r.id AS run
      FROM ledger.claims c JOIN ledger.answers a ON a.pk = c.answer_pk JOIN ledger.runs r ON r.pk = a.run_pk
      WHERE c.current = 1)
  TO '{out}/claims' (FORMAT parquet, PARTITION_BY (run));
COPY (SELECT e.claim_pk AS claim, e.source_pk AS source,
             CASE e.final_code WHEN 0 THEN 'supported' WHEN 1 THEN 'partial' WHEN 2 THEN 'conflicting'
                  WHEN 3 THEN 'irrelevant' WHEN 4 THEN 'unknown' END AS label, e.review_state, r.id AS run
      FROM ledger.edges e JOIN ledger.claims c ON c.pk = e.claim_pk JOIN ledger.answers a ON a.pk = c.answer_pk
      JOIN ledger.runs r ON r.pk = a.run_pk WHERE c.current = 1)
  TO '{out}/edges' (FORMAT parquet, PARTITION_BY (run));
COPY (SELECT e.claim_pk AS claim, e.source_pk AS source, r.id AS run
      FROM ledger.edge_locations l JOIN ledger.edges e ON e.pk = l.edge_pk JOIN ledger.claims c ON c.pk = e.claim_pk
      JOIN ledger.answers a ON a.pk = c.answer_pk JOIN ledger.runs r ON r.pk = a.run_pk WHERE c.current = 1)
  TO '{out}/edge_locations' (FORMAT parquet, PARTITION_BY (run));
COPY (SELECT ci.answer_pk AS answer, ci.source_pk AS source, r.id AS run
      FROM ledger.citations ci JOIN ledger.answers a ON a.pk = ci.answer_pk JOIN ledger.runs r ON r.pk = a.run_pk
      WHERE ci.kind = 'cited' AND ci.source_pk IS NOT NULL)
  TO '{out}/citations' (FORMAT parquet, PARTITION_BY (run));
COPY (SELECT s.pk AS source, s.key AS source_key, s.host = 'brand.com' AS official
      FROM ledger.sources s JOIN ledger.protocol_sources ps ON ps.source_pk = s.pk)
  TO '{out}/sources.parquet' (FORMAT parquet);
"""


def path_duckdb_copy(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    import duckdb

    out = Path(args.scratch) / f"copy-{os.getpid()}"
    out.mkdir()
    start = time.perf_counter()
    con = duckdb.connect()
    con.execute(f"LOAD '{args.sqlite_extension}'" if args.sqlite_extension else "LOAD sqlite")
    for statement in DUCKDB_COPY.format(db=args.db, out=out).split(";\n"):
        if statement.strip():
            con.execute(statement)
    seconds = time.perf_counter() - start
    shutil.rmtree(out)
    return {"seconds": seconds}


PATHS = {
    "numpy": path_numpy,
    "duckdb": path_duckdb,
    "duckdb --ci": path_duckdb_ci,
    "duckdb 1 GB cap": path_duckdb_capped,
    "duckdb hand-written": path_hand_written,
    "spark": path_spark,
    "export": path_export,
    "duckdb copy": path_duckdb_copy,
}


def peak_rss_mb(pid: int | str = "self") -> float:
    """The process's own high-water RSS (VmHWM: reset at exec, unlike ru_maxrss, which a child inherits)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def children_peak_rss_mb() -> float:
    """Sum of the high-water RSS of this process's live descendants (Spark's JVM)."""
    import psutil

    total = 0.0
    for process in psutil.Process().children(recursive=True):
        try:
            found = peak_rss_mb(process.pid)
        except (FileNotFoundError, ProcessLookupError):
            continue
        total += 0.0 if found != found else found  # a process without VmHWM (exiting) adds nothing
    return total


def child(args: argparse.Namespace) -> None:
    found = PATHS[args.child](Path(args.root), args)
    found["peak_rss_mb"] = peak_rss_mb() + found.pop("children_rss_mb", 0.0)
    found["load"] = os.getloadavg()[0]
    print(json.dumps(found))


def measure(name: str, root: Path, args: argparse.Namespace, extra_path: str | None = None) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--child",
        name,
        "--root",
        str(root),
        "--locations",
        str(args.locations),
        "--db",
        str(args.db),
        "--scratch",
        str(args.scratch),
    ]
    if args.sqlite_extension:
        command += ["--sqlite-extension", args.sqlite_extension]
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = extra_path + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        # a path that fails (e.g. killed for memory at 100 M) is reported, and the others still run
        last = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return {"failed": last[-300:]}
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def sqlite_extension(side_install: str | None) -> tuple[str | None, str | None]:
    """(PYTHONPATH to prepend, extension file) for a DuckDB that can read SQLite, or (None, None) when none."""
    probe = "import duckdb; c = duckdb.connect(); c.execute('LOAD sqlite')"
    if subprocess.run([sys.executable, "-c", probe], capture_output=True, check=False).returncode == 0:
        return None, None
    if side_install:
        found = sorted(Path(side_install).glob("duckdb_ext/extensions/*/*/sqlite_scanner.duckdb_extension"))
        if found:
            return side_install, str(found[-1])
    return "", None


def run_size(n_locations: int, args: argparse.Namespace, report: list[str]) -> dict[str, float]:
    args.locations = n_locations
    kept = Path(args.keep) / f"{n_locations}" if args.keep else None
    scratch = kept or Path(tempfile.mkdtemp(prefix="bench-scale-", dir=args.workdir))
    args.scratch = scratch
    root = scratch / "tables"
    args.db = scratch / "ledger.db"
    try:
        ledger = n_locations <= args.ledger_max
        if kept is not None and (kept / "complete").exists():
            print(f"[{n_locations:,} locations] reusing {kept}", flush=True)
        else:
            start = time.perf_counter()
            scratch.mkdir(parents=True, exist_ok=True)
            write_parquet(n_locations, root)
            written = time.perf_counter() - start
            if ledger:
                build_database(n_locations, args.db)
            (scratch / "complete").touch()
            print(
                f"[{n_locations:,} locations] generated block by block ({ANSWERS_PER_BLOCK:,} answers a block): "
                f"Parquet in {written:.0f} s"
                + (f", a database in {time.perf_counter() - start - written:.0f} s" if ledger else "")
                + f"; generator peak RSS {peak_rss_mb():.0f} MB (this process)",
                flush=True,
            )
        results: dict[str, dict[str, Any]] = {}
        side_path, extension = sqlite_extension(args.duckdb_sqlite)
        args.sqlite_extension = extension
        chosen = []
        limits = {
            "numpy": ("--numpy-max", args.numpy_max),
            "spark": ("--spark-max", args.spark_max),
            "export": ("--ledger-max", args.ledger_max),
            "duckdb copy": ("--ledger-max", args.ledger_max),
        }
        for name in PATHS:
            if name in args.skip or (name in ("export", "duckdb copy") and "export" in args.skip):
                continue
            if name in limits and n_locations > limits[name][1]:
                option, largest = limits[name]
                print(f"  {name}: not run at this size (above {option} {largest:,}; measured at the smaller size)")
                continue
            if name == "duckdb copy" and side_path == "":
                print("  duckdb copy: DuckDB's sqlite extension is not loadable here (see --duckdb-sqlite)")
                continue
            chosen.append(name)
        # Round-robin: each repetition runs every path once, so a change in the machine's load (it is shared)
        # falls on all paths alike instead of on whichever ran during it.
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in chosen}
        repeat = args.repeat if n_locations < 100_000_000 else args.large_repeat
        for repetition in range(repeat):
            for name in chosen:
                if name == "spark" and n_locations >= 10_000_000 and repetition > 0:
                    continue  # minutes per run at this size: once is enough to place it
                if runs[name] and "failed" in runs[name][-1]:
                    continue
                runs[name].append(measure(name, root, args, side_path if name == "duckdb copy" else None))
        for name in chosen:
            if "failed" in runs[name][-1]:
                print(f"  {name:22s} failed: {runs[name][-1]['failed']}", flush=True)
                continue
            best = min(runs[name], key=lambda r: r["seconds"])
            best["median_s"] = statistics.median(r["seconds"] for r in runs[name])
            if "cpu_s" in best:
                best["median_cpu_s"] = statistics.median(r["cpu_s"] for r in runs[name])
            results[name] = best
            rss = best["peak_rss_mb"]
            print(
                f"  {name:22s} median {best['median_s']:8.2f} s   peak RSS {rss:8.0f} MB   (load {best['load']:.1f})"
                + (f"   (session start {best['startup_s']:.1f} s)" if "startup_s" in best else "")
                + (f"   CPU {best['median_cpu_s']:.2f} s" if "median_cpu_s" in best else ""),
                flush=True,
            )
        reference = results.get("numpy", results.get("duckdb hand-written"))
        for name, found in results.items():
            if "counts" in found and reference is not None and found["counts"] != reference["counts"]:
                raise SystemExit(
                    f"{name} gives other counts than the baseline: {found['counts']} vs {reference['counts']}"
                )
        ratios = {}
        if "duckdb" in results and "duckdb hand-written" in results:
            ratios["engine"] = results["duckdb"]["median_s"] / results["duckdb hand-written"]["median_s"]
        if "duckdb" in results and "duckdb hand-written" in results:
            # CPU time (all threads) moves less with the shared machine's load than the elapsed time the target
            # is about: printed beside it, never in its place
            cpu_ratio = results["duckdb"]["median_cpu_s"] / results["duckdb hand-written"]["median_cpu_s"]
            report.append(f"{n_locations:,} locations: duckdb engine / hand-written, CPU time = {cpu_ratio:.2f}")
        if "duckdb --ci" in results and "duckdb" in results:
            extra = statistics.median(r["ci_extra_s"] for r in runs["duckdb --ci"] if "failed" not in r)
            end_to_end = results["duckdb --ci"]["median_s"] / results["duckdb"]["median_s"]
            report.append(
                f"{n_locations:,} locations: duckdb --ci / without, end to end = {end_to_end:.2f} "
                f"(two separate runs on a shared machine: noise of several %)"
            )
            ratios["ci"] = 1 + extra / results["duckdb"]["median_s"]
        if "export" in results and "duckdb copy" in results:
            ratios["export"] = results["export"]["median_s"] / results["duckdb copy"]["median_s"]
        for key, label in (
            ("engine", "duckdb engine / hand-written"),
            ("ci", "duckdb + what --ci adds (measured in-process) / without"),
            ("export", "export / duckdb copy"),
        ):
            if key in ratios:
                report.append(f"{n_locations:,} locations: {label} = {ratios[key]:.2f}")
        return ratios
    finally:
        if kept is None:
            shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locations", type=int, default=10_000_000)
    parser.add_argument("--large", action="store_true", help="also run 100 M locations (long; needs ~10 GB disk)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--large-repeat", type=int, default=1, help="repetitions at 100 M locations")
    parser.add_argument(
        "--ledger-max",
        type=int,
        default=10_000_000,
        help="largest size given a SQLite ledger (the export and DuckDB's copy; about 2 min and 3 GB per 10 M)",
    )
    parser.add_argument("--numpy-max", type=int, default=100_000_000, help="largest size for the in-memory path")
    parser.add_argument("--spark-max", type=int, default=10_000_000, help="largest size for Spark local (slow)")
    parser.add_argument("--skip", nargs="*", default=[], help=f"paths to leave out: {', '.join(PATHS)}")
    parser.add_argument("--duckdb-sqlite", default=None, help="pip --target folder with duckdb + duckdb-ext-sqlite")
    parser.add_argument("--workdir", default=None, help="where the generated data goes (default: system temp)")
    parser.add_argument("--keep", default=None, help="keep the generated data in this folder and reuse it next time")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--root", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--db", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--scratch", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--sqlite-extension", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    # the large size first: it is what --large is run for, and each size's figures are printed when it ends
    sizes = ([100_000_000] if args.large else []) + [args.locations]
    report: list[str] = []
    measured: dict[str, dict[int, float]] = {"engine": {}, "ci": {}, "export": {}}
    for size in sizes:
        printed = len(report)
        for key, ratio in run_size(size, args, report).items():
            measured[key][size] = ratio
        for line in report[printed:]:
            print(line, flush=True)
    verdicts = []
    for key, label, bound in (
        ("engine", "duckdb engine <= 1.5x hand-written SQL", 1.5),
        ("ci", "--ci <= +10 %", 1.10),
        ("export", "export <= 2x duckdb copy", 2.0),
    ):
        found = measured[key]
        sizes_of = ", ".join(f"{size / 1e6:g} M {ratio:.2f}" for size, ratio in sorted(found.items())) or "not measured"
        verdict = "not measured" if not found else "met" if all(r <= bound for r in found.values()) else "not met"
        verdicts.append(f"{label}: {verdict} ({sizes_of})")
    print("targets: " + "; ".join(verdicts))


if __name__ == "__main__":
    import machine

    machine.run(main)
