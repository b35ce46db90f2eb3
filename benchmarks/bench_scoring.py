"""Scoring by platform on 10 M citation locations: citeaudit vs DuckDB SQL vs pandas vs a plain Python loop.

Every approach gets the same in-memory columns (generated from one seed) and must produce the same
per-platform counts (checked). Each runs in its own process so that its peak RSS is its own; times are
medians of repeated runs, reported as ratios to DuckDB measured in the same invocation.

Then `citeaudit score` end to end (a real process) on a 1 M-edge database, against the time SQLite takes
just to read the same rows.

Run: make bench   (or: python benchmarks/bench_scoring.py [--locations N] [--repeat K])
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

from citeaudit.scoring import SUPPORTED_CODE, ScoringColumns, collapse_locations, score_columns

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


def run_duckdb(data: dict[str, Any]) -> dict[str, list[int]]:
    import duckdb
    import pyarrow as pa

    con = duckdb.connect()
    con.register("locs", pa.table({"claim": data["loc_claim"], "source": data["loc_source"], "code": data["loc_code"]}))
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
    rows = con.execute(DUCKDB_SQL).fetchall()
    return {PLATFORMS[r[0]]: [r[1], r[2], r[3], int(r[4]), r[5], r[6], r[7]] for r in rows}


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


APPROACHES = {"citeaudit": run_citeaudit, "duckdb": run_duckdb, "pandas": run_pandas, "python-loop": run_python}


def child(name: str, n_locations: int, repeat: int) -> None:
    data = generate(n_locations)
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = APPROACHES[name](data)
        times.append(time.perf_counter() - start)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"median_s": statistics.median(times), "times": times, "peak_rss_mb": peak_mb, "result": result}))


def measure(name: str, n_locations: int, repeat: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", name, "--locations", str(n_locations), "--repeat", str(repeat)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def build_database(path: Path, n_edges: int) -> None:
    """A database with n_edges unique edges written through the real import path."""
    from citeaudit.model import (
        Answer,
        Audit,
        Claim,
        Edge,
        Judgement,
        Label,
        Location,
        OfficialDomain,
        Protocol,
        Question,
        RequiredFact,
        Run,
        Source,
    )
    from citeaudit.store import Store

    rng = np.random.default_rng(3)
    questions = tuple(
        Question(f"q{q}", f"Question {q}?", "en-GB", tuple(RequiredFact(f"q{q}f{f}", f"fact {f}") for f in range(3)))
        for q in range(N_QUESTIONS)
    )
    protocol = Protocol("bench", "1", official_domains=(OfficialDomain(domain="brand.com"),), questions=questions)
    n_answers = max(1, n_edges // 50)
    n_sources = max(10, n_edges // 10)
    sources = tuple(
        Source(
            f"https://{'brand.com' if s % 20 == 0 else f'site{s % 997}.org'}/p{s}",
            f"https://{'brand.com' if s % 20 == 0 else f'site{s % 997}.org'}/p{s}",
        )
        for s in range(n_sources)
    )
    runs = tuple(Run(f"run-{p}", platform=p) for p in PLATFORMS)
    labels = list(Label)
    answers, claims, edges = [], [], []
    for a in range(n_answers):
        q = int(rng.integers(0, N_QUESTIONS))
        answers.append(Answer(f"a{a}", f"q{q}", f"run-{PLATFORMS[a % 5]}", "text"))
        for c in range(10):
            cid = f"a{a}c{c}"
            claims.append(Claim(cid, f"a{a}", "claim", required_fact_id=f"q{q}f{c % 3}" if c < 5 else None))
            for s in rng.choice(n_sources, 5, replace=False):
                draw = int(rng.integers(0, 6))
                judgements = () if draw == 5 else (Judgement(labels[draw], "li"),)
                edges.append(Edge(cid, sources[s].key, (Location("[1]"),), judgements))
    audit = Audit(protocol, runs, tuple(answers), tuple(claims), sources, tuple(edges))
    with Store(path) as store:
        store.import_audit(audit, b"bench-%d" % n_edges, "bench")


def time_end_to_end(n_edges: int, repeat: int) -> dict[str, Any]:
    import sqlite3

    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.db"
        start = time.perf_counter()
        build_database(db, n_edges)
        build_s = time.perf_counter() - start
        script = Path(sys.executable).with_name("citeaudit")
        runs = []
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run(
                [script, "score", db, "--by", "platform", "--format", "json"], check=True, capture_output=True
            )
            runs.append(time.perf_counter() - start)
        reads = []
        for _ in range(repeat):
            start = time.perf_counter()
            with sqlite3.connect(db) as con:
                con.execute("SELECT claim_pk, source_pk, final_code, n_locations FROM edges").fetchall()
            reads.append(time.perf_counter() - start)
        startup = []
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([script, "--help"], check=True, capture_output=True)
            startup.append(time.perf_counter() - start)
        return {
            "edges": n_edges,
            "build_s": build_s,
            "score_median_s": statistics.median(runs),
            "sqlite_read_edges_median_s": statistics.median(reads),
            "cli_startup_median_s": statistics.median(startup),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locations", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--db-edges", type=int, default=1_000_000)
    parser.add_argument("--skip", nargs="*", default=[], help="approaches to leave out")
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.locations, args.repeat)
        return
    print(
        f"scoring by platform: {args.locations:,} citation locations, median of {args.repeat} runs, "
        f"{os.cpu_count()} cores",
        flush=True,
    )
    results = {}
    for name in APPROACHES:
        if name in args.skip:
            continue
        repeat = 1 if name == "python-loop" else args.repeat
        results[name] = measure(name, args.locations, repeat)
        print(
            f"  {name:12s} {results[name]['median_s']:8.2f} s   peak RSS {results[name]['peak_rss_mb']:7.0f} MB",
            flush=True,
        )
    reference = results["citeaudit"]["result"]
    for name, found in results.items():
        assert found["result"] == reference, f"{name} disagrees with citeaudit: {found['result']} vs {reference}"
    print("  all approaches agree on every per-platform count")
    base = results["duckdb"]["median_s"]
    for name, found in results.items():
        print(f"  {name:12s} time ratio to DuckDB: {found['median_s'] / base:6.2f}x")
    target_ok = results["citeaudit"]["median_s"] <= 1.5 * base and results["citeaudit"]["peak_rss_mb"] <= 2048
    print(f"  target (citeaudit <= 1.5x DuckDB, peak RSS <= 2 GB): {'met' if target_ok else 'NOT met'}")
    end_to_end = time_end_to_end(args.db_edges, args.repeat)
    print(
        f"citeaudit score end to end on a {end_to_end['edges']:,}-edge database: "
        f"{end_to_end['score_median_s']:.2f} s (median; CLI start-up alone {end_to_end['cli_startup_median_s']:.2f} s; "
        f"SQLite reading the edge rows alone {end_to_end['sqlite_read_edges_median_s']:.2f} s, ratio "
        f"{end_to_end['score_median_s'] / end_to_end['sqlite_read_edges_median_s']:.1f}x; "
        f"building the database took {end_to_end['build_s']:.0f} s)"
    )


if __name__ == "__main__":
    main()
