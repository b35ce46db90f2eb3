"""Scoring by platform on 10 M citation locations: citeaudit vs DuckDB SQL vs pandas vs a plain Python loop.

Every approach gets the same in-memory columns (generated from one seed) and must produce the same
per-platform counts (checked). Each runs in its own process so that its peak RSS is its own, after one untimed
run; times are medians of repeated runs, reported as ratios to DuckDB's best variant measured in the same
invocation (packed keys at default threads and at one thread, and the (claim, source) pair as the group key).
The columnar entry points (``citeaudit.scoring.columnar``: Arrow tables, and Parquet files written from them) are timed
alternately with the core on the same data in one process, and compared with it: twice, once with glibc keeping
the memory the process frees (``MALLOC_MMAP_MAX_=0``, ``MALLOC_TRIM_THRESHOLD_``), which the verdict takes, and
once with glibc's defaults, printed beside it. With the defaults, every large array is mapped afresh and handed back
to the kernel when freed, and the kernel zeroes each page again when it is next touched. On a virtual machine that
reports freed pages to its host (virtio free page reporting, as on the machines these figures come from), that
zeroing also waits on the host: measured, one round of the Parquet entry spent from 0.1 s to 1.8 s in the kernel,
nearly all of it zeroing pages, where most rounds of the core spent 0.1-0.2 s (docs/performance.md). Kept memory
takes that wait out of both sides alike; the work measured is the same. (Within one call the entry points keep
what they free anyway, and hand it back at its end: ``citeaudit.core.memory.memory_kept``, which the core's runs
here enter too; with the allocator configured through the environment, it leaves it as it is.)

Then the path a user runs: `citeaudit score DB --by platform` on a database of 10 M citation locations, against
SQLite's own SQL computing the same per-platform counts on the same file and DuckDB over a Parquet copy of the same
rows (default threads and one thread), each a process of its own whose peak RSS is measured; all must agree.

Targets: the core within 1.5x of DuckDB's best; a columnar entry point within 1.5x of the core; `citeaudit score
DB` within 1.5x of SQLite's SQL and 1.5 GB peak RSS. The generated database (about 2 GB; built in 3 to 10 min) and
its Parquet copy are kept between runs with --keep.

Run: make bench   (or: python benchmarks/bench_scoring.py [--locations N] [--repeat K] [--keep FOLDER])
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from citeaudit.core.memory import memory_kept
from citeaudit.core.scoring import SUPPORTED_CODE, ScoringColumns, collapse_locations, score_columns

PLATFORMS = ["chatgpt", "copilot", "gemini", "perplexity", "claude"]
N_QUESTIONS = 50
FACTS_PER_QUESTION = 3
N_CODES = 7


def generate(n_locations: int, seed: int = 7) -> dict[str, Any]:
    """Columns for ~n_locations citation locations, ~20 % of them duplicates of an existing (claim, source)."""
    rng = np.random.default_rng(seed)
    n_answers = max(10, n_locations // 100)
    claims_per_answer = 10
    n_claims = n_answers * claims_per_answer
    n_sources = max(100, n_locations // 20)
    n_unique = int(n_locations * 0.8)
    edges_per_claim = max(1, n_unique // n_claims)
    answer_platform = rng.integers(0, len(PLATFORMS), n_answers)
    answer_question = rng.integers(0, N_QUESTIONS, n_answers)
    claim_answer = np.repeat(np.arange(n_answers), claims_per_answer)
    mapped = rng.random(n_claims) < 0.5
    claim_fact = np.where(
        mapped,
        answer_question[claim_answer] * FACTS_PER_QUESTION + rng.integers(0, FACTS_PER_QUESTION, n_claims),
        -1,
    )
    edge_claim = np.repeat(np.arange(n_claims), edges_per_claim)
    edge_source = rng.integers(0, n_sources, len(edge_claim))
    # a label code per (claim, source): a function of the pair, so duplicates agree
    edge_code = rng.choice(N_CODES, size=len(edge_claim), p=[0.45, 0.15, 0.1, 0.1, 0.1, 0.08, 0.02])
    duplicates = rng.integers(0, len(edge_claim), n_locations - len(edge_claim))
    loc_claim = np.concatenate([edge_claim, edge_claim[duplicates]])
    loc_source = np.concatenate([edge_source, edge_source[duplicates]])
    loc_code = np.concatenate([edge_code, edge_code[duplicates]])
    # two random picks of one source for one claim must carry one code: make the code a function of the pair
    pair = loc_claim * n_sources + loc_source
    order = np.argsort(pair, kind="stable")
    first = np.concatenate(([True], pair[order][1:] != pair[order][:-1]))
    group_start = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))
    loc_code[order] = loc_code[order][group_start]
    shuffle = rng.permutation(n_locations)
    return {
        "loc_claim": loc_claim[shuffle].astype(np.int64),
        "loc_source": loc_source[shuffle].astype(np.int64),
        "loc_code": loc_code[shuffle].astype(np.int64),
        "claim_answer": claim_answer.astype(np.int64),
        "claim_fact": claim_fact.astype(np.int64),
        "answer_platform": answer_platform.astype(np.int64),
        "answer_question": answer_question.astype(np.int64),
        "source_official": rng.random(n_sources) < 0.05,
        "n_sources": n_sources,
    }


def run_citeaudit(data: dict[str, Any]) -> dict[str, list[int]]:
    with memory_kept():  # as the entry points that take tables, files or a database score
        return _core(data)


def _core(data: dict[str, Any]) -> dict[str, list[int]]:
    edge_claim, edge_source, edge_code, edge_locations = collapse_locations(
        data["loc_claim"], data["loc_source"], data["loc_code"], data["n_sources"]
    )
    n_facts = N_QUESTIONS * FACTS_PER_QUESTION
    columns = ScoringColumns(
        answer_dims={
            "platform": [PLATFORMS[p] for p in data["answer_platform"]],
            # repeats are looked for in (question, platform) cells
            "question": [f"q{q}" for q in data["answer_question"].tolist()],
        },
        answer_question=data["answer_question"],
        question_facts=[np.arange(q * FACTS_PER_QUESTION, (q + 1) * FACTS_PER_QUESTION) for q in range(N_QUESTIONS)],
        fact_severity=np.full(n_facts, 4, dtype=np.int64),
        claim_answer=data["claim_answer"],
        claim_fact=data["claim_fact"],
        claim_severity=np.full(len(data["claim_answer"]), 4, dtype=np.int64),
        edge_claim=edge_claim,
        edge_source=edge_source,
        edge_code=edge_code,
        edge_locations=edge_locations,
        source_official=data["source_official"],
        citation_answer=np.zeros(0, dtype=np.int64),
        citation_source=np.zeros(0, dtype=np.int64),
    )
    result = score_columns(columns, scoring="strict-v1", fingerprint="bench", by=["platform"])
    return {
        dict(g.by)["platform"]: [
            g.answers,
            g.official_rate.numerator,
            g.edges.unique,
            g.edges.locations,
            g.precision.numerator,
            g.coverage.denominator,
            g.coverage.numerator,
        ]
        for g in result.groups
    }


def _platform_counts(result: Any) -> dict[str, list[int]]:
    return {
        dict(g.by)["platform"]: [
            g.answers,
            g.official_rate.numerator,
            g.edges.unique,
            g.edges.locations,
            g.precision.numerator,
            g.coverage.denominator,
            g.coverage.numerator,
        ]
        for g in result.groups
    }


def _protocol() -> Any:
    from citeaudit.core.model import OfficialDomain, Protocol, Question, RequiredFact

    questions = tuple(
        Question(f"q{q}", f"Q{q}?", None, tuple(RequiredFact(f"q{q}f{f}", "fact") for f in range(FACTS_PER_QUESTION)))
        for q in range(N_QUESTIONS)
    )
    return Protocol("bench", "1", official_domains=(OfficialDomain(domain="brand.com"),), questions=questions)


def prepare_arrow(data: dict[str, Any]) -> None:
    """The same audit in the columnar layout as Arrow tables, text columns dictionary-encoded as Parquet keeps
    them (not timed: it stands for tables an application already holds)."""
    import pyarrow as pa

    def texts(codes: np.ndarray, values: list[str]) -> Any:
        return pa.DictionaryArray.from_arrays(pa.array(codes.astype(np.int32)), pa.array(values))

    fact_names = [f"q{q}f{f}" for q in range(N_QUESTIONS) for f in range(FACTS_PER_QUESTION)]
    fact = data["claim_fact"]
    labels = ["supported", "partial", "conflicting", "irrelevant", "unknown", "pending", "disputed"]
    data["arrow"] = {
        "answers": pa.table(
            {
                "question": texts(data["answer_question"], [f"q{q}" for q in range(N_QUESTIONS)]),
                "platform": texts(data["answer_platform"], PLATFORMS),
            }
        ),
        "claims": pa.table(
            {
                "answer": data["claim_answer"],
                "fact": pa.DictionaryArray.from_arrays(
                    pa.array(np.maximum(fact, 0).astype(np.int32), mask=fact < 0), pa.array(fact_names)
                ),
            }
        ),
        "locations": pa.table(
            {"claim": data["loc_claim"], "source": data["loc_source"], "label": texts(data["loc_code"], labels)}
        ),
        "sources": pa.table({"host": texts(data["source_official"].astype(np.int64), ["site.org", "brand.com"])}),
    }
    data["protocol"] = _protocol()


def prepare_parquet(data: dict[str, Any]) -> None:
    import pyarrow.parquet as pq

    prepare_arrow(data)
    folder = Path(tempfile.mkdtemp(prefix="bench-columnar-"))
    for name, table in data.pop("arrow").items():
        pq.write_table(table, folder / f"{name}.parquet")
    data["parquet"] = folder


def run_arrow(data: dict[str, Any]) -> dict[str, list[int]]:
    from citeaudit.scoring.columnar import score_arrow

    return _platform_counts(score_arrow(data["protocol"], data["arrow"], by=["platform"]))


def run_parquet(data: dict[str, Any]) -> dict[str, list[int]]:
    from citeaudit.scoring.columnar import score_parquet

    return _platform_counts(score_parquet(data["parquet"], data["protocol"], by=["platform"]))


DUCKDB_SQL = f"""
WITH edges AS (
    SELECT claim, source, any_value(code) AS code, count(*) AS n FROM locs GROUP BY claim, source
),
edge_answer AS (
    SELECT c.answer, e.source, e.code, e.n, c.claim, c.fact FROM edges e JOIN claims c ON c.claim = e.claim
),
per_platform_edges AS (
    SELECT a.platform, count(*) AS unique_edges, sum(n) AS locations,
           count(*) FILTER (WHERE code = {SUPPORTED_CODE}) AS supported
    FROM edge_answer ea JOIN answers a ON a.answer = ea.answer GROUP BY a.platform
),
official AS (
    SELECT a.platform, count(DISTINCT ea.answer) AS official_answers
    FROM edge_answer ea JOIN sources s ON s.source = ea.source JOIN answers a ON a.answer = ea.answer
    WHERE s.official GROUP BY a.platform
),
covered AS (
    SELECT a.platform, count(DISTINCT (ea.answer, ea.fact)) AS covered
    FROM edge_answer ea JOIN answers a ON a.answer = ea.answer
    WHERE ea.fact >= 0 AND ea.code = {SUPPORTED_CODE} GROUP BY a.platform
),
answers_per AS (
    SELECT platform, count(*) AS answers, count(*) * {FACTS_PER_QUESTION} AS pairs FROM answers GROUP BY platform
)
SELECT ap.platform, ap.answers, coalesce(o.official_answers, 0), coalesce(pe.unique_edges, 0),
       coalesce(pe.locations, 0), coalesce(pe.supported, 0), ap.pairs, coalesce(cv.covered, 0)
FROM answers_per ap LEFT JOIN per_platform_edges pe USING (platform) LEFT JOIN official o USING (platform)
LEFT JOIN covered cv USING (platform)
"""


DUCKDB_PACKED_SQL = f"""
WITH edges AS (
    SELECT key, any_value(code) AS code, count(*) AS n FROM locs GROUP BY key
),
edge_answer AS (
    SELECT c.answer, e.key % {{n_sources}} AS source, e.code, e.n, c.fact
    FROM edges e JOIN claims c ON c.claim = e.key // {{n_sources}}
),
per_platform_edges AS (
    SELECT a.platform, count(*) AS unique_edges, sum(n) AS locations,
           count(*) FILTER (WHERE code = {SUPPORTED_CODE}) AS supported
    FROM edge_answer ea JOIN answers a ON a.answer = ea.answer GROUP BY a.platform
),
official AS (
    SELECT a.platform, count(*) AS official_answers FROM answers a WHERE a.answer IN (
        SELECT ea.answer FROM edge_answer ea JOIN sources s ON s.source = ea.source WHERE s.official
    ) GROUP BY a.platform
),
covered AS (
    SELECT a.platform, count(*) AS covered FROM (
        SELECT DISTINCT ea.answer * {{n_facts}} + ea.fact AS pair, ea.answer FROM edge_answer ea
        WHERE ea.fact >= 0 AND ea.code = {SUPPORTED_CODE}
    ) p JOIN answers a ON a.answer = p.answer GROUP BY a.platform
),
answers_per AS (
    SELECT platform, count(*) AS answers, count(*) * {FACTS_PER_QUESTION} AS pairs FROM answers GROUP BY platform
)
SELECT ap.platform, ap.answers, coalesce(o.official_answers, 0), coalesce(pe.unique_edges, 0),
       coalesce(pe.locations, 0), coalesce(pe.supported, 0), ap.pairs, coalesce(cv.covered, 0)
FROM answers_per ap LEFT JOIN per_platform_edges pe USING (platform) LEFT JOIN official o USING (platform)
LEFT JOIN covered cv USING (platform)
"""


def _duckdb(data: dict[str, Any], *, packed: bool, threads: int | None) -> dict[str, list[int]]:
    """DuckDB over the same columns as Arrow tables (zero copy): integer platform codes throughout; with
    ``packed``, the (claim, source) key packed into one integer as citeaudit packs it."""
    import duckdb
    import pyarrow as pa

    con = duckdb.connect()
    if threads is not None:
        con.execute(f"SET threads = {threads}")
    if packed:
        locs = pa.table({"key": data["loc_claim"] * data["n_sources"] + data["loc_source"], "code": data["loc_code"]})
        sql = DUCKDB_PACKED_SQL.format(n_sources=data["n_sources"], n_facts=N_QUESTIONS * FACTS_PER_QUESTION)
    else:
        locs = pa.table({"claim": data["loc_claim"], "source": data["loc_source"], "code": data["loc_code"]})
        sql = DUCKDB_SQL
    con.register("locs", locs)
    con.register(
        "claims",
        pa.table(
            {"claim": np.arange(len(data["claim_answer"])), "answer": data["claim_answer"], "fact": data["claim_fact"]}
        ),
    )
    con.register(
        "answers", pa.table({"answer": np.arange(len(data["answer_platform"])), "platform": data["answer_platform"]})
    )
    con.register("sources", pa.table({"source": np.arange(data["n_sources"]), "official": data["source_official"]}))
    rows = con.execute(sql).fetchall()
    return {PLATFORMS[r[0]]: [r[1], r[2], r[3], int(r[4]), r[5], r[6], r[7]] for r in rows}


def run_duckdb(data: dict[str, Any]) -> dict[str, list[int]]:
    return _duckdb(data, packed=True, threads=None)


def run_duckdb_1t(data: dict[str, Any]) -> dict[str, list[int]]:
    return _duckdb(data, packed=True, threads=1)


def run_duckdb_pairs(data: dict[str, Any]) -> dict[str, list[int]]:
    return _duckdb(data, packed=False, threads=None)


def run_pandas(data: dict[str, Any]) -> dict[str, list[int]]:
    import pandas as pd

    locs = pd.DataFrame({"claim": data["loc_claim"], "source": data["loc_source"], "code": data["loc_code"]})
    edges = locs.groupby(["claim", "source"], sort=False).agg(code=("code", "first"), n=("code", "size")).reset_index()
    claims = pd.DataFrame({"answer": data["claim_answer"], "fact": data["claim_fact"]})
    edges = edges.join(claims, on="claim")
    edges["platform"] = data["answer_platform"][edges["answer"].to_numpy()]
    edges["supported"] = edges["code"] == SUPPORTED_CODE
    edges["official"] = data["source_official"][edges["source"].to_numpy()]
    per = edges.groupby("platform").agg(unique=("code", "size"), locations=("n", "sum"), supported=("supported", "sum"))
    official = edges[edges["official"]].groupby("platform")["answer"].nunique()
    covered = (
        edges[(edges["fact"] >= 0) & edges["supported"]].drop_duplicates(["answer", "fact"]).groupby("platform").size()
    )
    answers = pd.Series(data["answer_platform"]).value_counts()
    out = {}
    for p, name in enumerate(PLATFORMS):
        out[name] = [
            int(answers.get(p, 0)),
            int(official.get(p, 0)),
            int(per["unique"].get(p, 0)),
            int(per["locations"].get(p, 0)),
            int(per["supported"].get(p, 0)),
            int(answers.get(p, 0)) * FACTS_PER_QUESTION,
            int(covered.get(p, 0)),
        ]
    return out


def run_python(data: dict[str, Any]) -> dict[str, list[int]]:
    claim_answer = data["claim_answer"].tolist()
    claim_fact = data["claim_fact"].tolist()
    platform = data["answer_platform"].tolist()
    official = data["source_official"].tolist()
    edges: dict[tuple[int, int], list[int]] = {}
    for claim, source, code in zip(
        data["loc_claim"].tolist(), data["loc_source"].tolist(), data["loc_code"].tolist(), strict=True
    ):
        found = edges.get((claim, source))
        if found is None:
            edges[(claim, source)] = [code, 1]
        else:
            found[1] += 1
    stats = {name: [0, 0, 0, 0, 0, 0, 0] for name in PLATFORMS}
    official_answers: set[int] = set()
    covered: set[tuple[int, int]] = set()
    for (claim, source), (code, n) in edges.items():
        answer = claim_answer[claim]
        row = stats[PLATFORMS[platform[answer]]]
        row[2] += 1
        row[3] += n
        if code == SUPPORTED_CODE:
            row[4] += 1
            if claim_fact[claim] >= 0:
                covered.add((answer, claim_fact[claim]))
        if official[source]:
            official_answers.add(answer)
    for answer, p in enumerate(platform):
        row = stats[PLATFORMS[p]]
        row[0] += 1
        row[5] += FACTS_PER_QUESTION
        row[1] += answer in official_answers
    for answer, _fact in covered:
        stats[PLATFORMS[platform[answer]]][6] += 1
    return stats


APPROACHES = {
    "citeaudit": run_citeaudit,
    "columnar-arrow": run_arrow,
    "columnar-parquet": run_parquet,
    "duckdb": run_duckdb,
    "duckdb-1t": run_duckdb_1t,
    "duckdb-pairs": run_duckdb_pairs,
    "pandas": run_pandas,
    "python-loop": run_python,
}
DUCKDB_VARIANTS = ("duckdb", "duckdb-1t", "duckdb-pairs")
PREPARE = {"columnar-arrow": prepare_arrow, "columnar-parquet": prepare_parquet}


def child(name: str, n_locations: int, repeat: int) -> None:
    data = generate(n_locations)
    if name in PREPARE:
        PREPARE[name](data)
    if name != "python-loop":  # one untimed run: imports and one-time tables (the public suffix list) load once
        APPROACHES[name](data)
    times, core_times, read_times, result = [], [], [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = APPROACHES[name](data)
        times.append(time.perf_counter() - start)
        if name in PREPARE:  # the columnar entry points alternate with the core on the same data, in one process
            start = time.perf_counter()
            core = run_citeaudit(data)
            core_times.append(time.perf_counter() - start)
            assert result == core, f"{name} disagrees with the core: {result} vs {core}"
        if name == "columnar-parquet":  # the floor under it: pyarrow reading the same files, nothing else
            from citeaudit.scoring.columnar import read_parquet_tables

            start = time.perf_counter()
            read_parquet_tables(data["parquet"])
            read_times.append(time.perf_counter() - start)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    found = {"median_s": statistics.median(times), "times": times, "peak_rss_mb": peak_mb, "result": result}
    if core_times:
        found["core_median_s"] = statistics.median(core_times)
    if read_times:
        found["read_median_s"] = statistics.median(read_times)
    print(json.dumps(found))


KEPT_MEMORY = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(100 * 2**30)}
"""glibc told to keep what the process frees for its next allocations (module docstring)."""


def measure(name: str, n_locations: int, repeat: int, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", name, "--locations", str(n_locations), "--repeat", str(repeat)],
        capture_output=True,
        text=True,
        check=True,
        env=None if env is None else {**os.environ, **env},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


_PEAK = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def _timed_process(argv: list[str]) -> tuple[float, float]:
    """Wall seconds of a process run to completion, and its peak RSS in MB (measured by a parent of its own)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _PEAK, *argv], check=True, capture_output=True, text=True)
    return time.perf_counter() - start, int(done.stdout.split()[-1]) / 1024


_SQLITE_CHILD = (
    "import json, sys; sys.path.insert(0, {here!r}); import scoring_db; "
    "print(json.dumps(scoring_db.sqlite_by_platform(sys.argv[1])))"
)
_DUCKDB_CHILD = (
    "import json, sys, duckdb; sys.path.insert(0, {here!r}); import scoring_db; con = duckdb.connect(); "
    "t = int(sys.argv[2]); t and con.execute(f'SET threads = {{t}}'); "
    "print(json.dumps(con.execute(scoring_db.DUCKDB_PARQUET_SQL.format(folder=sys.argv[1])).fetchall()))"
)


def _cli_rows(db: Path) -> list[tuple[object, ...]]:
    """``citeaudit score DB --by platform --format csv`` as the SQL baselines' rows."""
    import csv

    script = Path(sys.executable).with_name("citeaudit")
    done = subprocess.run(
        [script, "score", db, "--by", "platform", "--format", "csv"], check=True, capture_output=True, text=True
    )
    rows = list(csv.DictReader(done.stdout.splitlines()))
    names = ("answers", "official_rate_numerator", "edges_unique", "edges_locations", "precision_numerator")
    return [
        (r["platform"], *(int(r[n]) for n in names), int(r["required_pairs"]), int(r["required_covered"]))
        for r in rows
        if r["platform"]
    ]


def database_paths(n_locations: int, repeat: int, keep: Path | None) -> dict[str, Any]:
    """``citeaudit score DB --by platform`` against SQLite's own SQL on the same file and DuckDB over a
    Parquet copy of the same rows, each a process of its own; every one must report the same counts."""
    import scoring_db

    with tempfile.TemporaryDirectory() as folder:
        root = keep or Path(folder)
        root.mkdir(parents=True, exist_ok=True)
        db, parquet = root / f"score-{n_locations}.db", root / f"score-{n_locations}-parquet"
        start = time.perf_counter()
        if not db.exists():
            scoring_db.build(db, n_locations)
        if not parquet.exists():
            scoring_db.to_parquet(db, parquet)
        build_s = time.perf_counter() - start
        expected = sorted(_cli_rows(db))
        here = str(Path(__file__).resolve().parent)
        paths = {
            "citeaudit score": [str(Path(sys.executable).with_name("citeaudit")), "score", str(db), "--by", "platform"],
            "SQLite SQL": [sys.executable, "-c", _SQLITE_CHILD.format(here=here), str(db)],
            "DuckDB Parquet": [sys.executable, "-c", _DUCKDB_CHILD.format(here=here), str(parquet), "0"],
            "DuckDB Parquet 1t": [sys.executable, "-c", _DUCKDB_CHILD.format(here=here), str(parquet), "1"],
        }
        for name in ("SQLite SQL", "DuckDB Parquet"):
            done = subprocess.run(paths[name], check=True, capture_output=True, text=True)
            found = sorted(tuple(int(v) if isinstance(v, float) else v for v in row) for row in json.loads(done.stdout))
            assert found == expected, f"{name} disagrees with citeaudit score: {found} vs {expected}"
        times: dict[str, list[float]] = {name: [] for name in paths}
        peaks: dict[str, float] = dict.fromkeys(paths, 0.0)
        for _ in range(repeat):  # round-robin, so a change in the machine's load falls on every path alike
            for name, argv in paths.items():
                seconds, peak = _timed_process(argv)
                times[name].append(seconds)
                peaks[name] = max(peaks[name], peak)
        sizes = scoring_db.sizes(n_locations)
    return {
        "sizes": sizes,
        "build_s": build_s,
        "median_s": {name: statistics.median(t) for name, t in times.items()},
        "peak_rss_mb": peaks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locations", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--db-locations", type=int, default=10_000_000)
    parser.add_argument("--keep", type=Path, help="keep the generated database and Parquet copy in this folder")
    parser.add_argument("--skip", nargs="*", default=[], help="approaches to leave out (or 'database')")
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.locations, args.repeat)
        return
    print(
        f"scoring by platform: {args.locations:,} citation locations in memory, median of {args.repeat} runs, "
        f"{os.cpu_count()} cores",
        flush=True,
    )
    results, defaults = {}, {}
    for name in APPROACHES:
        if name in args.skip:
            continue
        repeat = 1 if name == "python-loop" else args.repeat
        if name in PREPARE:
            defaults[name] = measure(name, args.locations, repeat)
        results[name] = measure(name, args.locations, repeat, KEPT_MEMORY if name in PREPARE else None)
        kept = " (freed memory kept)" if name in PREPARE else ""
        print(
            f"  {name:12s} {results[name]['median_s']:8.2f} s   peak RSS {results[name]['peak_rss_mb']:7.0f} MB{kept}",
            flush=True,
        )
    # the columnar entry points were checked against the core in their own process; the others against its run
    reference = results["citeaudit"]["result"] if "citeaudit" in results else None
    for name, found in results.items():
        if reference is not None:
            assert found["result"] == reference, f"{name} disagrees with citeaudit: {found['result']} vs {reference}"
    print("  all approaches agree on every per-platform count")
    verdicts = []
    duckdb_runs = [results[n]["median_s"] for n in DUCKDB_VARIANTS if n in results]
    if duckdb_runs:
        duckdb_best = min(duckdb_runs)
        for name, found in results.items():
            print(f"  {name:12s} time ratio to DuckDB's best: {found['median_s'] / duckdb_best:6.2f}x")
        core_s = results["citeaudit"]["median_s"]
        core_ok = core_s <= 1.5 * duckdb_best
        verdicts.append(f"core <= 1.5x DuckDB's best ({core_s / duckdb_best:.2f}x): {'met' if core_ok else 'not met'}")
    for name in ("columnar-arrow", "columnar-parquet"):
        if name in results:
            ratio = results[name]["median_s"] / results[name]["core_median_s"]
            print(
                f"  {name:12s} time ratio to the in-memory core run alternately in the same process, freed "
                f"memory kept ({results[name]['core_median_s']:.2f} s there): {ratio:6.2f}x"
            )
            if "read_median_s" in results[name]:
                read = results[name]["read_median_s"]
                print(
                    f"  {'':12s} pyarrow reading the same files whole, nothing else: {read:.2f} s "
                    f"({read / results[name]['core_median_s']:.2f}x the core; the entry streams the locations)"
                )
            default = defaults[name]["median_s"] / defaults[name]["core_median_s"]
            print(
                f"  {'':12s} with glibc's defaults (freed memory handed back as each call ends): "
                f"{defaults[name]['median_s']:.2f} s against {defaults[name]['core_median_s']:.2f} s, {default:.2f}x"
            )
            verdicts.append(
                f"{name} <= 1.5x the core ({ratio:.2f}x with freed memory kept; {default:.2f}x with glibc's "
                f"defaults): {'met' if ratio <= 1.5 else 'not met'}"
            )
    if "database" not in args.skip:
        found = database_paths(args.db_locations, args.repeat, args.keep)
        n = found["sizes"]
        print(
            f"on a database of {n['locations']:,} citation locations ({n['edges']:,} edges, {n['answers']:,} "
            f"answers; built in {found['build_s']:.0f} s), each path a process, median of {args.repeat}:",
            flush=True,
        )
        sqlite_s = found["median_s"]["SQLite SQL"]
        for name, seconds in found["median_s"].items():
            print(
                f"  {name:18s} {seconds:7.2f} s  {seconds / sqlite_s:5.2f}x SQLite's SQL   "
                f"peak RSS {found['peak_rss_mb'][name]:6.0f} MB"
            )
        cli_s, cli_mb = found["median_s"]["citeaudit score"], found["peak_rss_mb"]["citeaudit score"]
        cli_ok = cli_s <= 1.5 * sqlite_s and cli_mb <= 1536
        verdicts.append(
            f"citeaudit score DB <= 1.5x SQLite's SQL ({cli_s / sqlite_s:.2f}x) and <= 1.5 GB ({cli_mb:.0f} MB): "
            f"{'met' if cli_ok else 'not met'}"
        )
    print("target: " + "; ".join(verdicts))


if __name__ == "__main__":
    import machine

    machine.run(main)
