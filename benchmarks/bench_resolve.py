"""Resolver throughput against a local server that adds 100 ms latency to every response.

2 000 URLs over 50 host names (``h00.bench.test`` … mapped to 127.0.0.1 through the resolver's own
name-resolution hook), per-host cap 4, global cap 64. The ideal time is N × latency / effective concurrency,
with effective concurrency = min(global, hosts × per-host) = 64: 2 000 × 0.1 s / 64 = 3.125 s. Reported for
the resolver (text extracted in a thread, and in one worker process) and for a bare httpx baseline that only
GETs the same URLs at the same caps, one client per host name (no checks, no extraction, no database; one
client for all hosts is no baseline: httpcore's pool scans every connection for every queued request, and at
64 connections that alone took 16 ms of CPU a request here):
throughput as a fraction of that ideal (target ≥ 0.8), the time ratio to the baseline, CPU milliseconds per URL
of this process, and its peak RSS. The server (asyncio streams, HTTP/1.1 keep-alive)
runs in its own process. The CPU every process spends (this one, the extraction workers, the server) is also
summed per URL: no run can take less wall time than that total divided by the cores, which bounds the fraction
of the ideal that run could reach on this machine (printed as "CPU bound"). The CPU of the baseline's GETs
plus that of reading the same pages alone (timed here too) bounds any resolver built on httpx and trafilatura,
however its work is spread over the cores.

Run: make bench   (or: python benchmarks/bench_resolve.py [--urls N] [--hosts H] [--repeat R])
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from citeaudit.interchange import parse_audit_bytes
from citeaudit.sources import ResolveSettings, resolve_sources
from citeaudit.sources.extract import read_document
from citeaudit.store import Store

LATENCY = 0.1
PER_HOST = 4
GLOBAL = 64

PAGE = (
    "<html><head><title>Page {n}</title></head><body><article><h1>Page {n}</h1>"
    "<p>Paragraph one of page {n}: the AX220 has a 20 L tank and a 12 bar pump, per the data sheet.</p>"
    "<p>Paragraph two of page {n}: it is rated for outdoor use between minus ten and forty degrees.</p>"
    "</article></body></html>"
)
"""The page every URL serves (``{n}``: the last path segment)."""

SERVER = f"""
import asyncio, sys

PAGE = {PAGE!r}
LATENCY = float(sys.argv[2])

async def serve(reader, writer):
    # HTTP/1.1 keep-alive, GET only: read a request head, wait LATENCY, answer; until the client closes.
    try:
        while True:
            head = await reader.readuntil(b"\\r\\n\\r\\n")
            path = head.split(b" ", 2)[1].decode()
            await asyncio.sleep(LATENCY)
            body = PAGE.format(n=path.rsplit("/", 1)[-1]).encode()
            writer.write(
                b"HTTP/1.1 200 OK\\r\\nContent-Type: text/html; charset=utf-8\\r\\n"
                + b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()

async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", int(sys.argv[1]), backlog=4096)
    async with server:
        await server.serve_forever()

asyncio.run(main())
"""


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a running process has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    """CPU seconds of this process's children that have ended (the extraction workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise SystemExit("benchmark server did not start")


def build_db(path: Path, urls: list[str]) -> None:
    document = {
        "format": "citeaudit.audit/v1",
        "protocol": {"id": "bench", "version": "1", "questions": [{"id": "q1", "text": "Q?"}]},
        "answers": [{"id": "a1", "question_id": "q1", "run_id": "r1", "platform": "p", "text": "x" * 10}],
        "claims": [{"id": "c1", "answer_id": "a1", "text": "x"}],
        "edges": [{"claim_id": "c1", "url": url} for url in urls],
    }
    payload = json.dumps(document).encode()
    with Store(path) as store:
        store.import_audit(parse_audit_bytes(payload, "bench.json"), payload, "bench.json")


async def bare_httpx(urls: list[str], port: int) -> None:
    """Baseline: the same GETs at the same caps, straight to 127.0.0.1 with the Host header set, through one
    client per host name whose pool holds the per-host cap (the cheapest way to use httpx at these caps)."""
    global_slots = asyncio.Semaphore(GLOBAL)
    limits = httpx.Limits(max_connections=PER_HOST, max_keepalive_connections=PER_HOST)
    clients: dict[str, httpx.AsyncClient] = {}
    hosts: dict[str, asyncio.Semaphore] = {}

    async def get(url: str) -> None:
        host, _, path = url.removeprefix("http://").partition("/")
        client = clients.get(host)
        if client is None:
            client = clients[host] = httpx.AsyncClient(limits=limits, trust_env=False, timeout=30)
        # host slot first, as the resolver takes them: a request waiting for a busy host holds no global slot
        async with hosts.setdefault(host, asyncio.Semaphore(PER_HOST)), global_slots:
            response = await client.get(f"http://127.0.0.1:{port}/{path}", headers={"Host": host})
            response.raise_for_status()

    try:
        await asyncio.gather(*(get(url) for url in urls))
    finally:
        for client in clients.values():
            await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=2000)
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(LATENCY)])
    try:
        wait_for(port)
        names = [f"h{i:02d}.bench.test" for i in range(args.hosts)]
        urls = [f"http://{names[i % args.hosts]}:{port}/page/{i}" for i in range(args.urls)]
        effective = min(GLOBAL, args.hosts * PER_HOST)
        ideal = args.urls * LATENCY / effective
        variants = {
            f"resolve, extract_workers={workers}": ResolveSettings(
                concurrency=GLOBAL,
                per_host=PER_HOST,
                timeout=30,
                host_map=tuple((name, "127.0.0.1") for name in names),
                extract_workers=workers,
            )
            for workers in (0, 1)
        }
        wall: dict[str, list[float]] = {name: [] for name in ["bare httpx GETs", *variants]}
        cpu: dict[str, list[float]] = {name: [] for name in wall}
        total: dict[str, list[float]] = {name: [] for name in wall}
        for _ in range(args.repeat):
            start, used = time.perf_counter(), time.process_time()
            others = process_cpu(server.pid) + children_cpu()
            asyncio.run(bare_httpx(urls, port))
            wall["bare httpx GETs"].append(time.perf_counter() - start)
            cpu["bare httpx GETs"].append(time.process_time() - used)
            total["bare httpx GETs"].append(
                cpu["bare httpx GETs"][-1] + process_cpu(server.pid) + children_cpu() - others
            )
            for name, settings in variants.items():
                with tempfile.TemporaryDirectory() as folder:
                    db = Path(folder) / "bench.db"
                    build_db(db, urls)
                    start, used = time.perf_counter(), time.process_time()
                    others = process_cpu(server.pid) + children_cpu()
                    report = resolve_sources(db, settings)
                    wall[name].append(time.perf_counter() - start)
                    cpu[name].append(time.process_time() - used)
                    total[name].append(cpu[name][-1] + process_cpu(server.pid) + children_cpu() - others)
                    if report.resolved != args.urls:
                        raise SystemExit(f"{name}: only {report.resolved} of {args.urls} resolved: {report.failed}")
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        # Reading the page alone (what every resolver does with each body), in this process.
        bodies = [PAGE.format(n=i).encode() for i in range(args.urls)]
        used = time.process_time()
        for i, body in enumerate(bodies):
            read_document(body, "text/html; charset=utf-8", f"http://h.bench.test/page/{i}")
        reading_ms = (time.process_time() - used) * 1000 / args.urls
        baseline = statistics.median(wall["bare httpx GETs"])
        setup = f"{args.urls} URLs, {args.hosts} hosts, latency {LATENCY * 1000:.0f} ms, per-host {PER_HOST}"
        print(f"resolve: {setup}, global {GLOBAL}; ideal {ideal:.3f} s (N x latency / {effective}); {args.repeat} runs")
        cores = os.cpu_count() or 1
        for name in wall:
            median = statistics.median(wall[name])
            per_url = statistics.median(cpu[name]) * 1000 / args.urls
            every = statistics.median(total[name])
            bound = ideal / max(ideal, every / cores)
            print(f"  {name:<28} {median:7.3f} s  fraction of ideal {ideal / median:.2f}  "
                  f"vs bare httpx {median / baseline:.2f}x  CPU of this process {per_url:.2f} ms/URL, "
                  f"of all processes {every * 1000 / args.urls:.2f} ms/URL (CPU bound {bound:.2f})")  # fmt: skip
        getting_ms = statistics.median(total["bare httpx GETs"]) * 1000 / args.urls
        least = (getting_ms + reading_ms) * args.urls / 1000 / cores
        print(
            f"  any resolver on this machine: the GETs through httpx {getting_ms:.2f} ms of CPU a URL (the baseline, "
            f"server included) + reading the page {reading_ms:.2f} ms = {getting_ms + reading_ms:.2f} ms; on "
            f"{cores} cores no run takes less than {least:.2f} s, at most {ideal / max(ideal, least):.2f} of the ideal"
        )
        print(
            f"  target: fraction of ideal >= 0.80; load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        print(f"  peak RSS of this process: {peak_mib:.0f} MiB (extraction workers not included)")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
