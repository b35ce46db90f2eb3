"""A citeaudit database of N citation locations for the scoring benchmarks, and the same rows as Parquet.

The protocol, its questions and runs go through the real import (so the protocol body, fingerprint and schema are
the store's own); the bulk rows (answers, claims, sources, citations, edges, edge locations) are then generated
by SQLite itself from a deterministic hash of each row number, since building ten million model objects to
import them would measure the builder, not the scorer. Every column the scorer and the importer's readers use is
filled as the importer fills it.

Shape: 100 locations an answer, 10 claims an answer (half mapped to one of its question's 3 facts), 8 unique
edges a claim (a quarter of them cited at two locations), 8 cited citations an answer, one source per 20
locations, 1 source in 200 on the official domain, 5 platforms (one run each).

With ``brand=True`` (the brand figures' benchmark) the protocol also declares a brand and two competitors (each
owning one host in 997), the runs have a collection date, every answer has about 800 characters of text (a
quarter name the brand, a quarter a competitor), each answer has 2 retrieved citations (1 in 20 of them an
official page), and the claims read as claims do: a tenth name a model identifier (``AX17``), four tenths another
number, half no number; every claim with a number is worded apart from the others. Human judgements of the
identifier claims' edges quote a passage, one in four about another model, and carry a time; one claim at risk in
four has a cross pair, judged by a reviewer (a third supported).
"""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

PLATFORMS = ("chatgpt", "copilot", "gemini", "perplexity", "claude")
N_QUESTIONS = 50
FACTS_PER_QUESTION = 3
CLAIMS_PER_ANSWER = 10
EDGES_PER_CLAIM = 8
CITATIONS_PER_ANSWER = 8

# A row's label: bucket of a hash of its pk (percent): supported 45, partial 15, conflicting 10, irrelevant 10,
# unknown 10, pending 8, disputed 2 (codes 0..6 as the scorer numbers them).
_CODE = (
    "CASE WHEN h < 45 THEN 0 WHEN h < 60 THEN 1 WHEN h < 70 THEN 2 WHEN h < 80 THEN 3 WHEN h < 90 THEN 4 "
    "WHEN h < 98 THEN 5 ELSE 6 END"
)
_STATE = "CASE WHEN h < 90 THEN 'labelled' WHEN h < 98 THEN 'pending' ELSE 'disputed' END"
_LABELS = ("supported", "partial", "conflicting", "irrelevant", "unknown")


def sizes(n_locations: int) -> dict[str, int]:
    """Row counts for about ``n_locations`` citation locations."""
    answers = max(5, n_locations // 100)
    claims = answers * CLAIMS_PER_ANSWER
    return {
        "answers": answers,
        "claims": claims,
        "edges": claims * EDGES_PER_CLAIM,
        "locations": claims * EDGES_PER_CLAIM * 5 // 4,
        "sources": max(100, n_locations // 20),
    }


def build(path: Path, n_locations: int, *, brand: bool = False) -> dict[str, int]:
    """Write the database at ``path`` and return its row counts (``brand``: with a brand, competitors and texts
    for the brand figures, above)."""
    from citeaudit.core.model import (
        Audit,
        Brand,
        Competitor,
        OfficialDomain,
        Protocol,
        Question,
        RequiredFact,
        Run,
        Severity,
    )
    from citeaudit.store import Store

    severities = tuple(Severity)
    questions = tuple(
        Question(
            f"q{q}",
            f"Question {q}?",
            "en-GB",
            tuple(
                RequiredFact(f"q{q}f{f}", f"fact {f}", severity=severities[(q + f) % len(severities)])
                for f in range(FACTS_PER_QUESTION)
            ),
        )
        for q in range(N_QUESTIONS)
    )
    protocol = Protocol("bench", "1", official_domains=(OfficialDomain(domain="brand.com"),), questions=questions)
    runs = tuple(Run(f"run-{p}", platform=p) for p in PLATFORMS)
    if brand:
        protocol = dataclasses.replace(
            protocol,
            brand=Brand("Brand", ("AX series",)),
            competitors=(
                Competitor("Rival", (OfficialDomain(domain="site1.org"),)),
                Competitor("Forum", (OfficialDomain(domain="site2.org"),), ("the forum",)),
            ),
        )
        runs = tuple(dataclasses.replace(run, collected_at="2026-03-01") for run in runs)
    with Store(path) as store:
        store.import_audit(Audit(protocol, runs), b"bench-seed", "bench")
    n = sizes(n_locations)
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
        db.execute("BEGIN")
        _fill(db, n, brand=brand)
        db.execute("COMMIT")
    finally:
        db.close()
    return n


def _fill(db: sqlite3.Connection, n: dict[str, int], *, brand: bool = False) -> None:
    (protocol_pk,) = db.execute("SELECT pk FROM protocols").fetchone()
    (import_pk,) = db.execute("SELECT max(pk) FROM imports").fetchone()
    (q0,) = db.execute("SELECT min(pk) FROM questions").fetchone()
    (f0,) = db.execute("SELECT min(pk) FROM required_facts").fetchone()
    (r0,) = db.execute("SELECT min(pk) FROM runs").fetchone()
    answer_text, claim_text = (_ANSWER_TEXT, _CLAIM_TEXT) if brand else ("'text'", "'claim'")
    passage, judged_at = (_PASSAGE, _JUDGED_AT) if brand else ("NULL", "NULL")
    numbers = "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?)"
    # question of answer i: a hash of i; run: i % 5
    answer_question = f"((i * 2654435761) % 1000003) % {N_QUESTIONS}"
    db.execute(
        f"{numbers} INSERT INTO answers (pk, id, run_pk, question_pk, text, import_pk, retrieval) "
        f"SELECT i + 1, 'a' || i, {r0} + i % 5, {q0} + {answer_question}, {answer_text}, ?, "
        "'used' FROM n",
        (n["answers"] - 1, import_pk),
    )
    db.execute(
        f"{numbers} INSERT INTO sources (pk, key, url, status, host, path) "
        "SELECT i + 1, u, u, 'pending', h, '/p' || i FROM "
        "(SELECT i, CASE WHEN i % 200 = 0 THEN 'brand.com' ELSE 'site' || (i % 997) || '.org' END AS h, "
        "'https://' || CASE WHEN i % 200 = 0 THEN 'brand.com' ELSE 'site' || (i % 997) || '.org' END "
        "|| '/p' || i AS u FROM n)",
        (n["sources"] - 1,),
    )
    db.execute(f"INSERT INTO protocol_sources SELECT {protocol_pk}, pk FROM sources")
    # claim i belongs to answer i // 10; odd claims are mapped to fact (i % 3) of the answer's question
    db.execute(
        f"{numbers} INSERT INTO claims (pk, id, answer_pk, text, fact_pk) "
        f"SELECT i + 1, 'a' || (i / {CLAIMS_PER_ANSWER}) || 'c' || (i % {CLAIMS_PER_ANSWER}), "
        f"i / {CLAIMS_PER_ANSWER} + 1, {claim_text}, CASE WHEN i % 2 = 1 THEN {f0} + "
        f"(SELECT (question_pk - {q0}) * {FACTS_PER_QUESTION} FROM answers WHERE pk = i / {CLAIMS_PER_ANSWER} + 1) "
        f"+ i % {FACTS_PER_QUESTION} END FROM n",
        (n["claims"] - 1,),
    )
    # edge i: claim i // 8, source a hash of (claim, i % 8) distinct within the claim
    db.execute(
        f"{numbers} INSERT INTO edges SELECT i + 1, c + 1, (c * 7919 + j * 104729) % {n['sources']} + 1, "
        f"{_STATE}, {_CODE}, 1 + (i % 4 = 0) FROM "
        f"(SELECT i, i / {EDGES_PER_CLAIM} AS c, i % {EDGES_PER_CLAIM} AS j, ((i * 2654435761) % 1000003) % 100 AS h "
        "FROM n)",
        (n["edges"] - 1,),
    )
    db.execute("INSERT INTO edge_locations (edge_pk, marker) SELECT pk, '[1]' FROM edges")
    db.execute("INSERT INTO edge_locations (edge_pk, marker) SELECT pk, '[2]' FROM edges WHERE n_locations = 2")
    labels = " ".join(f"WHEN {code} THEN '{label}'" for code, label in enumerate(_LABELS))
    db.execute(
        f"INSERT INTO judgements (edge_pk, label, reviewer, origin, stage, passage, created_at) "
        f"SELECT pk, CASE final_code {labels} END, 'li', 'human', 'review', "
        f"{passage}, {judged_at} FROM edges WHERE final_code < 5"
    )
    # citation i of answer a: the source of one of its edges
    db.execute(
        f"{numbers} INSERT INTO citations (answer_pk, ordinal, source_pk, url, marker, kind) "
        f"SELECT i / {CITATIONS_PER_ANSWER} + 1, i % {CITATIONS_PER_ANSWER}, s, 'https://x', '[1]', 'cited' FROM "
        f"(SELECT i, ((i / {CITATIONS_PER_ANSWER}) * {CLAIMS_PER_ANSWER} * 7919 + (i % {CITATIONS_PER_ANSWER}) "
        f"* 104729) % {n['sources']} + 1 AS s FROM n)",
        (n["answers"] * CITATIONS_PER_ANSWER - 1,),
    )
    if brand:  # two retrieved citations an answer, after its cited ones; 1 in 20 an official page
        db.execute(
            f"{numbers} INSERT INTO citations (answer_pk, ordinal, source_pk, url, marker, kind) "
            f"SELECT i / 2 + 1, {CITATIONS_PER_ANSWER} + i % 2, CASE WHEN i % 20 = 0 THEN 1 + 200 * ((i / 20) % "
            f"{max(1, n['sources'] // 200)}) ELSE (i * 7919) % {n['sources']} + 1 END, 'https://x', NULL, 'retrieved' "
            "FROM n",
            (n["answers"] * 2 - 1,),
        )
        # a cross pair for every claim at risk (no supported edge), judged by a reviewer: half supported
        db.execute(
            "INSERT INTO cross_pairs (claim_pk, source_pk, kind, proposed_at) "
            f"SELECT c.pk, (c.pk * 31) % {n['sources']} + 1, 'co_cited', '2026-03-02T00:00:00Z' FROM claims c "
            "WHERE c.pk % 4 = 0 AND c.pk NOT IN (SELECT claim_pk FROM edges WHERE final_code = 0)"
        )
        db.execute(
            "INSERT INTO cross_judgements (cross_pair_pk, label, reviewer, origin, stage, passage, created_at) "
            "SELECT pk, CASE pk % 3 WHEN 0 THEN 'supported' ELSE 'irrelevant' END, 'li', 'human', 'review', "
            "'It says so', '2026-03-03T00:00:00Z' FROM cross_pairs"
        )


# Texts for brand=True. An answer: about 800 characters, a quarter naming the brand, a quarter a competitor.
_ANSWER_TEXT = (
    "replace(hex(zeroblob(130)), '00', 'word ') || CASE i % 4 WHEN 0 THEN ' The Brand AX' || (i % 40) "
    "WHEN 1 THEN ' Rival sells one too' WHEN 2 THEN ' as the forum says' ELSE ' nothing else' END"
)
# A claim (i): a tenth name a model identifier, four tenths another number, half no number at all.
_CLAIM_TEXT = (
    "CASE WHEN i % 10 = 0 THEN 'The AX' || (i % 97) || ' has a ' || (i % 30) || ' L tank, line ' || i "
    "WHEN i % 10 < 5 THEN 'It costs ' || (i % 500) || ' euros in shop ' || i "
    "ELSE 'The product is reliable and ' || CASE i % 3 WHEN 0 THEN 'quiet' WHEN 1 THEN 'light' ELSE 'cheap' END END"
)
# The passage a human judgement of edge `pk` quotes: for an identifier claim's edge, about that model (or, for one
# edge in 4, the next).
_PASSAGE = (
    "CASE WHEN (claim_pk - 1) % 10 = 0 THEN 'The AX' || ((claim_pk - 1) % 97 + (pk % 4 = 0)) || ' has a tank' END"
)
_JUDGED_AT = "'2026-03-0' || (1 + pk % 9) || 'T10:00:00Z'"


def sqlite_by_platform(path: Path) -> list[tuple[object, ...]]:
    """The per-platform counts ``citeaudit score --by platform`` reports, as one SQL statement in SQLite:
    answers, official answers, unique edges, locations, supported edges, required pairs, covered pairs."""
    db = sqlite3.connect(path)
    try:
        return db.execute(BY_PLATFORM_SQL).fetchall()
    finally:
        db.close()


# One pass over the edges, grouped per claim then per answer (twice as fast on this schema as joining the
# edges to the answers once per figure, which was measured first).
BY_PLATFORM_SQL = """
WITH a AS (
    SELECT a.pk AS answer, coalesce(a.platform, r.platform) AS platform, a.question_pk FROM answers a
    JOIN runs r ON r.pk = a.run_pk WHERE r.kind = 'platform'
),
official_src AS MATERIALIZED (SELECT pk FROM sources WHERE host = 'brand.com' OR host LIKE '%.brand.com'),
per_claim AS (
    SELECT c.answer_pk AS answer, c.fact_pk AS fact, count(*) AS edges, sum(e.n_locations) AS locs,
           sum(e.final_code = 0) AS supported, max(e.source_pk IN official_src) AS official
    FROM claims c JOIN edges e ON e.claim_pk = c.pk WHERE c.current = 1 GROUP BY c.pk
),
per_answer AS (
    SELECT answer, sum(edges) AS edges, sum(locs) AS locs, sum(supported) AS supported, max(official) AS official,
           count(DISTINCT CASE WHEN supported > 0 THEN fact END) AS covered
    FROM per_claim GROUP BY answer
),
cited_official AS MATERIALIZED (
    SELECT DISTINCT answer_pk FROM citations WHERE kind = 'cited' AND source_pk IN official_src
),
facts AS MATERIALIZED (SELECT question_pk, count(*) AS n FROM required_facts GROUP BY question_pk)
SELECT a.platform, count(*), sum(coalesce(pa.official, 0) OR a.answer IN cited_official), sum(coalesce(pa.edges, 0)),
       sum(coalesce(pa.locs, 0)), sum(coalesce(pa.supported, 0)), sum(coalesce(f.n, 0)), sum(coalesce(pa.covered, 0))
FROM a LEFT JOIN per_answer pa ON pa.answer = a.answer LEFT JOIN facts f ON f.question_pk = a.question_pk
GROUP BY a.platform ORDER BY a.platform
"""


def _columns(db: sqlite3.Connection, expressions: list[str], rest: str) -> list[object]:
    """Integer columns as numpy arrays, all from one statement so their rows line up (one text per column,
    parsed by numpy)."""
    import numpy as np

    row = db.execute(f"SELECT {', '.join(f'group_concat({e})' for e in expressions)} {rest}").fetchone()
    return [np.fromstring(t, dtype=np.int64, sep=",") if t else np.zeros(0, dtype=np.int64) for t in row]


def to_parquet(path: Path, folder: Path) -> None:
    """The rows ``citeaudit score`` reads, as Parquet files in ``folder`` (one a table), for DuckDB."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path)
    try:
        tables = {
            "answers": (
                "answers a JOIN runs r ON r.pk = a.run_pk",
                {"answer": "a.pk", "question": "a.question_pk"},
                "WHERE r.kind = 'platform'",
            ),
            "claims": (
                "claims c",
                {"claim": "c.pk", "answer": "c.answer_pk", "fact": "coalesce(c.fact_pk, -1)"},
                "WHERE c.current = 1",
            ),
            "edges": (
                "edges e",
                {"claim": "e.claim_pk", "source": "e.source_pk", "code": "e.final_code", "n": "e.n_locations"},
                "",
            ),
            "citations": (
                "citations c",
                {"answer": "c.answer_pk", "source": "c.source_pk"},
                "WHERE c.kind = 'cited' AND c.source_pk IS NOT NULL",
            ),
            "facts": ("required_facts f", {"fact": "f.pk", "question": "f.question_pk"}, ""),
        }
        for name, (source, columns, where) in tables.items():
            if name == "answers":  # few rows, one of them text: fetched as rows
                rows = db.execute(
                    "SELECT a.pk, a.question_pk, coalesce(a.platform, r.platform) FROM answers a "
                    "JOIN runs r ON r.pk = a.run_pk WHERE r.kind = 'platform'"
                ).fetchall()
                arrays: dict[str, object] = {
                    column: [row[i] for row in rows] for i, column in enumerate(("answer", "question", "platform"))
                }
            else:
                found = _columns(db, list(columns.values()), f"FROM {source} {where}")
                arrays = dict(zip(columns, found, strict=True))
            pq.write_table(pa.table(arrays), folder / f"{name}.parquet")
        hosts = db.execute("SELECT pk, host FROM sources ORDER BY pk").fetchall()
        pq.write_table(
            pa.table({"source": [pk for pk, _ in hosts], "host": [h for _, h in hosts]}), folder / "sources.parquet"
        )
    finally:
        db.close()


DUCKDB_PARQUET_SQL = """
WITH a AS (SELECT answer, platform, question FROM read_parquet('{folder}/answers.parquet')),
official_src AS (
    SELECT source FROM read_parquet('{folder}/sources.parquet') WHERE host = 'brand.com' OR host LIKE '%.brand.com'
),
e AS (
    SELECT c.answer, c.fact, e.source, e.code, e.n FROM read_parquet('{folder}/edges.parquet') e
    JOIN read_parquet('{folder}/claims.parquet') c ON c.claim = e.claim
),
per_edges AS (
    SELECT a.platform, count(*) AS unique_edges, sum(e.n) AS locations, count(*) FILTER (WHERE e.code = 0) AS supported
    FROM e JOIN a ON a.answer = e.answer GROUP BY a.platform
),
official AS (
    SELECT a.platform, count(*) AS official_answers FROM a WHERE a.answer IN (
        SELECT e.answer FROM e WHERE e.source IN (SELECT source FROM official_src)
        UNION SELECT c.answer FROM read_parquet('{folder}/citations.parquet') c
        WHERE c.source IN (SELECT source FROM official_src)
    ) GROUP BY a.platform
),
covered AS (
    SELECT a.platform, count(*) AS covered FROM (SELECT DISTINCT answer, fact FROM e WHERE fact >= 0 AND code = 0) p
    JOIN a ON a.answer = p.answer GROUP BY a.platform
),
facts AS (SELECT question, count(*) AS n FROM read_parquet('{folder}/facts.parquet') GROUP BY question),
per_answers AS (
    SELECT a.platform, count(*) AS answers, sum(coalesce(f.n, 0)) AS pairs FROM a LEFT JOIN facts f USING (question)
    GROUP BY a.platform
)
SELECT pa.platform, pa.answers, coalesce(o.official_answers, 0), coalesce(pe.unique_edges, 0),
       coalesce(pe.locations, 0), coalesce(pe.supported, 0), pa.pairs, coalesce(cv.covered, 0)
FROM per_answers pa LEFT JOIN per_edges pe USING (platform) LEFT JOIN official o USING (platform)
LEFT JOIN covered cv USING (platform) ORDER BY pa.platform
"""
