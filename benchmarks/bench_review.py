"""Review UI latency with 1 000 000 edges in the database: the queue page (first pages with and without filters,
and deep pages reached by the keyset cursor) and the edge page, fetched over HTTP from a real uvicorn server in a
separate process by a local load loop.

Baselines in the same run: a static file from the same server (the floor of one HTTP round trip through the
app), and, for the queue query alone, OFFSET pagination to the same depth (what keyset pagination avoids).
Reported: median and p95 per page kind, and ratios to the baselines. Target: p95 < 100 ms for queue and edge pages.

Run: make bench   (or: python benchmarks/bench_review.py [--edges N] [--requests N])
"""

from __future__ import annotations

import argparse
import random
import re
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

from citeaudit.review.auth import hash_password
from citeaudit.scoring import PENDING_CODE
from citeaudit.store import Store
from citeaudit.store.review import QUEUE_KEY, ReviewStore

PASSWORD = "benchmark-password"
PLATFORMS = ("perplexity", "openai", "gemini", "copilot")


def build(path: Path, n_edges: int, rng: random.Random) -> None:
    """A database shaped like a large audit: 10 questions (and an 11th asked of 1 answer in 200), 8 runs on 4
    platforms, 4 edges per claim, 5 claims per answer, 1 source per 5 edges; 60 % of edges pending, 35 % labelled,
    5 % disputed."""
    Store(path).close()
    n_claims = n_edges // 4
    n_answers = n_claims // 5
    n_sources = n_edges // 5
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous = OFF")
    db.execute("BEGIN")
    db.execute("INSERT INTO payloads VALUES ('p', 'application/json', 0, x'', '2026-11-30')")
    db.execute("INSERT INTO imports VALUES (1, 'p', 'bench', 'audit-json', '2026-11-30', '{}')")
    db.execute("INSERT INTO protocols VALUES (1, 'sha256:bench', 'bench', '1', 'strict-v1', '{}')")
    db.executemany(
        "INSERT INTO questions VALUES (?, 1, ?, ?, ?, 'en-GB')",
        [(q, q, f"q{q}", f"Question {q}?") for q in range(1, 12)],
    )
    db.executemany(
        "INSERT INTO runs VALUES (?, 1, ?, 'platform', ?, 'm', NULL, NULL, NULL)",
        [(r, f"run{r}", PLATFORMS[r % 4]) for r in range(1, 9)],
    )
    text = "The AX220 has a 20 L tank. It is rated IP54 and can run outdoors. " * 8
    db.executemany(
        "INSERT INTO answers (pk, id, run_pk, question_pk, text, platform, model, locale, payload_sha256, import_pk, "
        "retrieval, queries) VALUES (?, ?, ?, ?, ?, ?, 'm', 'en-GB', NULL, 1, 'used', NULL)",
        (
            (a, f"a{a}", a % 8 + 1, 11 if a % 200 == 0 else a % 10 + 1, text, PLATFORMS[(a % 8 + 1) % 4])
            for a in range(1, n_answers + 1)
        ),
    )
    db.executemany(
        'INSERT INTO claims (pk, id, answer_pk, text, start, "end") VALUES (?, ?, ?, ?, 0, 26)',
        ((c, f"c{c}", (c - 1) // 5 + 1, "The AX220 has a 20 L tank.") for c in range(1, n_claims + 1)),
    )
    db.executemany(
        "INSERT INTO sources (pk, key, url, status, host, path) VALUES (?, ?, ?, 'pending', ?, ?)",
        (
            (
                s,
                f"https://site{s % 997}.example/p/{s}",
                f"https://site{s % 997}.example/p/{s}",
                f"site{s % 997}.example",
                f"/p/{s}",
            )
            for s in range(1, n_sources + 1)
        ),
    )

    def edge_rows() -> Iterator[tuple[int, int, int, str, int, int]]:
        for e in range(1, n_edges + 1):
            draw = rng.random()
            state, code = ("pending", PENDING_CODE) if draw < 0.6 else ("labelled", rng.randrange(5))
            if draw > 0.95:
                state, code = "disputed", PENDING_CODE + 1
            yield (e, (e - 1) // 4 + 1, rng.randrange(1, n_sources + 1), state, code, 1)

    # (claim, source) is unique per edge: a claim's four edges draw distinct sources with overwhelming odds,
    # and INSERT OR IGNORE drops the rare clash (counted below)
    db.executemany("INSERT OR IGNORE INTO edges VALUES (?, ?, ?, ?, ?, ?)", edge_rows())
    db.execute("COMMIT")
    db.execute("ANALYZE")
    db.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(db: Path, port: int) -> subprocess.Popen[bytes]:
    code = (
        "import uvicorn, sys; from pathlib import Path; from citeaudit.review.app import ReviewConfig, create_app; "
        f"uvicorn.run(create_app(ReviewConfig(db=Path(sys.argv[1]))), host='127.0.0.1', port={port}, "
        "log_level='warning', access_log=False)"
    )
    server = subprocess.Popen([sys.executable, "-c", code, str(db)])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/static/review.css", timeout=1)
            return server
        except httpx.TransportError:
            time.sleep(0.1)
    server.kill()
    raise RuntimeError("server did not start")


def login(base: str, name: str) -> httpx.Client:
    client = httpx.Client(base_url=base, follow_redirects=False, timeout=30)
    form = client.get("/login")
    token = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert token is not None
    done = client.post(
        "/login",
        data={"name": name, "password": PASSWORD, "csrf": token.group(1)},
        headers={"Cookie": f"citeaudit_login_csrf={form.cookies['citeaudit_login_csrf']}"},
    )
    assert done.status_code == 303, done.text
    client.headers["Cookie"] = f"citeaudit_session={done.cookies['citeaudit_session']}"
    return client


def timed(fetch: Callable[[], httpx.Response], n: int) -> list[float]:
    """Wall-clock milliseconds of ``n`` sequential requests (each must succeed)."""
    times = []
    for _ in range(n):
        started = time.perf_counter()
        response = fetch()
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.text[:300]
    return times


def p95(times: list[float]) -> float:
    return statistics.quantiles(times, n=20)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=1_000_000)
    parser.add_argument("--requests", type=int, default=300, help="requests per page kind")
    args = parser.parse_args()
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "review-bench.db"
        started = time.perf_counter()
        build(db, args.edges, rng)
        with ReviewStore(db) as store:
            for name, role in (("ann", "reviewer"), ("ada", "adjudicator")):
                store.add_reviewer(name, role, hash_password(PASSWORD))
        with sqlite3.connect(db) as conn:
            (stored,) = conn.execute("SELECT count(*) FROM edges").fetchone()
        print(
            f"built {stored:,} edges ({args.edges - stored} (claim, source) clashes dropped) "
            f"in {time.perf_counter() - started:.1f} s"
        )

        port = free_port()
        server = start_server(db, port)
        base = f"http://127.0.0.1:{port}"
        try:
            ann = login(base, "ann")
            ada = login(base, "ada")
            n = args.requests
            timed(lambda: ann.get("/queue"), 20)  # warm the page cache and the template
            results: dict[str, list[float]] = {
                "static file (baseline)": timed(lambda: ann.get("/static/review.css"), n),
                "queue, first page": timed(lambda: ann.get("/queue"), n),
            }
            filters = [
                "platform=gemini",
                "run=run3",
                "question=q7",
                "question=q11",
                "state=labelled",
                "state=pending&platform=openai",
                "run=run2&platform=gemini",
                "run=run2&platform=openai",
            ]
            results["queue, filtered"] = timed(lambda: ann.get(f"/queue?{rng.choice(filters)}"), n)
            results["queue, disputes (adjudicator)"] = timed(lambda: ada.get("/queue?needs=adjudicate"), n)
            # deep pages: follow the cursor 200 pages in (10 000 edges), then time pages from there on
            cursors: list[str] = []
            url = "/queue"
            for _ in range(200 + n):
                page = ann.get(url)
                found = re.search(r'id="next-page" href="([^"]+)"', page.text)
                assert found is not None
                url = found.group(1).replace("&amp;", "&")
                cursors.append(url)
            deep = iter(cursors[200:])
            results["queue, page 200+ by cursor"] = timed(lambda: ann.get(next(deep)), n)
            edge_ids = [rng.randrange(1, stored + 1) for _ in range(n)]
            edges = iter(edge_ids)
            results["edge page"] = timed(lambda: ann.get(f"/edges/{next(edges)}"), n)
        finally:
            server.terminate()
            server.wait(10)

        baseline = statistics.median(results["static file (baseline)"])
        print(f"\n{'page':34} {'median ms':>10} {'p95 ms':>8} {'median / static':>16}")
        for name, times in results.items():
            print(
                f"{name:34} {statistics.median(times):10.2f} {p95(times):8.2f} "
                f"{statistics.median(times) / baseline:16.1f}"
            )
        worst = max(p95(t) for k, t in results.items() if k != "static file (baseline)")
        print(
            f"\nworst p95 of queue and edge pages: {worst:.1f} ms (target < 100 ms): "
            f"{'met' if worst < 100 else 'MISSED'}"
        )

        # the queue query alone, 10 000 edges deep: keyset cursor vs OFFSET
        with sqlite3.connect(db) as conn:
            where = f"e.final_code = {PENDING_CODE}"
            offset_sql = f"SELECT e.pk FROM edges e WHERE {where} ORDER BY {QUEUE_KEY} LIMIT 51 OFFSET 10000"
            (key,) = conn.execute(
                f"SELECT {QUEUE_KEY} FROM edges e WHERE {where} ORDER BY {QUEUE_KEY} LIMIT 1 OFFSET 10000"
            ).fetchone()
            keyset_sql = f"SELECT e.pk FROM edges e WHERE {where} AND {QUEUE_KEY} > {key} ORDER BY {QUEUE_KEY} LIMIT 51"

            def query(sql: str) -> list[float]:
                times = []
                for _ in range(50):
                    started = time.perf_counter()
                    conn.execute(sql).fetchall()
                    times.append((time.perf_counter() - started) * 1000)
                return times

            offset, keyset = query(offset_sql), query(keyset_sql)
        print(
            f"queue query 10 000 edges deep: keyset {statistics.median(keyset):.3f} ms, OFFSET "
            f"{statistics.median(offset):.3f} ms "
            f"(OFFSET / keyset = {statistics.median(offset) / statistics.median(keyset):.0f}x)"
        )


if __name__ == "__main__":
    main()
