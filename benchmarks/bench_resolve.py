"""Resolver throughput against a local server that adds 100 ms latency to every response.

2 000 URLs over 50 host names (``h00.bench.test`` … mapped to 127.0.0.1 through the resolver's own
name-resolution hook), per-host cap 4, global cap 64. The ideal time is N × latency / effective concurrency,
with effective concurrency = min(global, hosts × per-host) = 64: 2 000 × 0.1 s / 64 = 3.125 s. Reported for the
resolver in its three extraction modes — ``extract_workers=None`` (the command's default: text read in the
fetching process, one worker process started only once extraction backs up), ``0`` (never a worker for these
small pages) and ``1`` (every page through a worker) — and for a bare httpx baseline that only GETs the same URLs
at the same caps, one client per host name sharing one TLS context (no checks, no extraction, no database; one
client for all hosts is no baseline: httpcore's pool scans every connection for every queued request, and at
64 connections that alone took 16 ms of CPU a request here; a TLS context per client costs 15 ms to build).
The four run in turn, in a rotating order, ``--repeat`` times; medians are printed: throughput as a fraction of
the ideal (target ≥ 0.8), the time ratio to the baseline, CPU milliseconds per URL of this process and of all
processes. The server (asyncio streams, HTTP/1.1 keep-alive) runs in its own process and counts the requests it
holds at once, per host name and in all, so the caps are checked, not assumed.

Bounds from the same run: the CPU every process spends (this one, the extraction workers, the server) summed per
URL, divided by the cores, is a time no run can beat (printed per mode as "CPU bound"); the CPU of the
baseline's GETs plus that of reading the same pages alone (timed here too) bounds any resolver built on httpx and
trafilatura, however its work is spread over the cores. The baseline's own fraction is the other bound: a
resolver makes the same GETs through the same client, and more.

The last line says "met" or "not met" for (a) the resolver's default mode at ≥ 0.8 of the ideal and (b) that
mode never slower than without a worker (the median of its time over the no-worker time, paired run by run, at
most 1 + a margin: half the spread of the no-worker runs themselves, 3 % at least, since runs of the same code
differ by that much on a shared machine).

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
import asyncio, json, sys

PAGE = {PAGE!r}
LATENCY = float(sys.argv[2])
held, peaks = {{}}, {{}}

def count(key, step):
    held[key] = held.get(key, 0) + step
    peaks[key] = max(peaks.get(key, 0), held[key])

async def serve(reader, writer):
    # HTTP/1.1 keep-alive, GET only: read a request head, wait LATENCY, answer; until the client closes.
    # /peaks answers (and resets) the most requests held at once per Host header, and in all ("*").
    try:
        while True:
            head = await reader.readuntil(b"\\r\\n\\r\\n")
            path = head.split(b" ", 2)[1].decode()
            if path == "/peaks":
                body = json.dumps(peaks).encode()
                peaks.clear()
            else:
                host = next(
                    (line.split(b":", 1)[1].strip().split(b":")[0].decode() for line in head.split(b"\\r\\n")
                     if line.lower().startswith(b"host:")), "?"
                )
                count(host, 1)
                count("*", 1)
                try:
                    await asyncio.sleep(LATENCY)
                finally:
                    count(host, -1)
                    count("*", -1)
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


def machine_busy() -> float:
    """CPU seconds the whole machine has been busy since boot (``/proc/stat``: all but idle and iowait)."""
    ticks = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


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


def peaks(port: int) -> dict[str, int]:
    """The most requests the server held at once since the last call, per host name and in all (``*``)."""
    found: dict[str, int] = httpx.get(f"http://127.0.0.1:{port}/peaks", timeout=10, trust_env=False).json()
    return found


async def bare_httpx(urls: list[str], port: int) -> None:
    """Baseline: the same GETs at the same caps, straight to 127.0.0.1 with the Host header set, through one
    client per host name whose pool holds the per-host cap, all sharing one TLS context (the cheapest way to use
    httpx at these caps)."""
    global_slots = asyncio.Semaphore(GLOBAL)
    limits = httpx.Limits(max_connections=PER_HOST, max_keepalive_connections=PER_HOST)
    context = httpx.create_ssl_context(trust_env=False)
    clients: dict[str, httpx.AsyncClient] = {}
    hosts: dict[str, asyncio.Semaphore] = {}

    async def get(url: str) -> None:
        host, _, path = url.removeprefix("http://").partition("/")
        client = clients.get(host)
        if client is None:
            client = clients[host] = httpx.AsyncClient(limits=limits, verify=context, trust_env=False, timeout=30)
        # host slot first, as the resolver takes them: a request waiting for a busy host holds no global slot
        async with hosts.setdefault(host, asyncio.Semaphore(PER_HOST)), global_slots:
            response = await client.get(f"http://127.0.0.1:{port}/{path}", headers={"Host": host})
            response.raise_for_status()

    try:
        await asyncio.gather(*(get(url) for url in urls))
    finally:
        for client in clients.values():
            await client.aclose()


BARE = "bare httpx GETs"
MODES = {"resolve, worker when it pays (None)": None, "resolve, no worker (0)": 0, "resolve, worker always (1)": 1}
AUTO, OFF, ON = MODES


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=2000)
    parser.add_argument("--hosts", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(LATENCY)])
    try:
        wait_for(port)
        names = [f"h{i:02d}.bench.test" for i in range(args.hosts)]
        urls = [f"http://{names[i % args.hosts]}:{port}/page/{i}" for i in range(args.urls)]
        effective = min(GLOBAL, args.hosts * PER_HOST)
        ideal = args.urls * LATENCY / effective
        settings = {
            name: ResolveSettings(
                concurrency=GLOBAL,
                per_host=PER_HOST,
                timeout=30,
                host_map=tuple((name, "127.0.0.1") for name in names),
                extract_workers=workers,
            )
            for name, workers in MODES.items()
        }
        order = [BARE, *MODES]
        wall: dict[str, list[float]] = {name: [] for name in order}
        cpu: dict[str, list[float]] = {name: [] for name in order}
        total: dict[str, list[float]] = {name: [] for name in order}
        worker_cpu: dict[str, list[float]] = {name: [] for name in order}
        others: dict[str, list[float]] = {name: [] for name in order}
        seen: dict[str, list[dict[str, int]]] = {name: [] for name in order}
        peaks(port)
        for round_ in range(args.repeat):
            for name in order[round_ % len(order) :] + order[: round_ % len(order)]:
                with tempfile.TemporaryDirectory() as folder:
                    if name != BARE:
                        db = Path(folder) / "bench.db"
                        build_db(db, urls)
                    start, used = time.perf_counter(), time.process_time()
                    server_before, children_before = process_cpu(server.pid), children_cpu()
                    busy_before = machine_busy()
                    if name == BARE:
                        asyncio.run(bare_httpx(urls, port))
                    else:
                        report = resolve_sources(db, settings[name])
                        if report.resolved != args.urls:
                            raise SystemExit(f"{name}: {report.resolved} of {args.urls} resolved: {report.failed}")
                    wall[name].append(time.perf_counter() - start)
                    cpu[name].append(time.process_time() - used)
                    # the extraction worker has ended (and been waited for) when the run returns
                    worker_cpu[name].append(children_cpu() - children_before)
                    total[name].append(cpu[name][-1] + worker_cpu[name][-1] + process_cpu(server.pid) - server_before)
                    # what the rest of the machine (other programs) used meanwhile, in cores
                    others[name].append(max(0.0, machine_busy() - busy_before - total[name][-1]) / wall[name][-1])
                    seen[name].append(peaks(port))
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        # Reading the page alone (what every resolver does with each body), in this process.
        bodies = [PAGE.format(n=i).encode() for i in range(args.urls)]
        used = time.process_time()
        for i, body in enumerate(bodies):
            read_document(body, "text/html; charset=utf-8", f"http://h.bench.test/page/{i}")
        reading_ms = (time.process_time() - used) * 1000 / args.urls
        baseline = statistics.median(wall[BARE])
        cores = os.cpu_count() or 1
        setup = f"{args.urls} URLs, {args.hosts} hosts, latency {LATENCY * 1000:.0f} ms, per-host {PER_HOST}"
        print(f"resolve: {setup}, global {GLOBAL}; ideal {ideal:.3f} s (N x latency / {effective}); "
              f"{args.repeat} rounds of the four, in turn; medians")  # fmt: skip
        print(
            f"  load average at the start of the summary {os.getloadavg()[0]:.1f} on {cores} cores; other programs "
            f"used {statistics.median(v for runs in others.values() for v in runs):.2f} cores during the runs "
            f"(median; {min(v for runs in others.values() for v in runs):.2f} to "
            f"{max(v for runs in others.values() for v in runs):.2f})"
        )
        for name in order:
            median = statistics.median(wall[name])
            every = statistics.median(total[name])
            bound = ideal / max(ideal, every / cores)
            started = sum(1 for value in worker_cpu[name] if value > 0)
            print(f"  {name:<37} {median:6.3f} s  fraction of ideal {ideal / median:.2f}  "
                  f"vs bare httpx {median / baseline:.2f}x  CPU ms/URL: this process "
                  f"{statistics.median(cpu[name]) * 1000 / args.urls:.2f}, all {every * 1000 / args.urls:.2f} "
                  f"(CPU bound {bound:.2f})" + ("" if name == BARE else f"; a worker ran in {started} of "
                  f"{args.repeat}"))  # fmt: skip
        getting_ms = statistics.median(total[BARE]) * 1000 / args.urls
        least = (getting_ms + reading_ms) * args.urls / 1000 / cores
        cpu_bound = ideal / max(ideal, least)
        bare_fraction = ideal / baseline
        print(
            f"  bound, CPU: the GETs through httpx {getting_ms:.2f} ms of CPU a URL (the baseline, server included) "
            f"+ reading the page {reading_ms:.2f} ms = {getting_ms + reading_ms:.2f} ms; on {cores} cores of its own "
            f"no run takes less than {least:.2f} s: at most {cpu_bound:.2f} of the ideal"
        )
        print(
            f"  bound, network path: the baseline makes the same GETs with nothing else and reaches "
            f"{bare_fraction:.2f} of the ideal; a resolver on httpx that also reads and stores every page "
            f"reaches at most about {min(cpu_bound, bare_fraction):.2f}"
        )
        host_peak = max(value for runs in seen.values() for run in runs for key, value in run.items() if key != "*")
        global_peak = max(run.get("*", 0) for runs in seen.values() for run in runs)
        lowest = min(run.get("*", 0) for runs in seen.values() for run in runs)
        caps_ok = host_peak <= PER_HOST and global_peak <= GLOBAL
        print(
            f"  caps, counted by the server over all {len(order) * args.repeat} runs: per host at most {host_peak} "
            f"held at once (cap {PER_HOST}), in all at most {global_peak} (cap {GLOBAL}; every run reached at "
            f"least {lowest}): {'kept' if caps_ok else 'BROKEN'}"
        )
        paired = [auto / off for auto, off in zip(wall[AUTO], wall[OFF], strict=True)]
        forced = [on / off for on, off in zip(wall[ON], wall[OFF], strict=True)]
        spread = (max(wall[OFF]) - min(wall[OFF])) / statistics.median(wall[OFF])
        slower = statistics.median(paired)
        print(
            f"  worker when it pays / no worker, run by run: {' '.join(f'{r:.2f}' for r in paired)} (median "
            f"{slower:.2f}); worker always / no worker: {' '.join(f'{r:.2f}' for r in forced)} (median "
            f"{statistics.median(forced):.2f}); the no-worker runs alone spread over {spread:.0%} of their median"
        )
        print(f"  peak RSS of this process: {peak_mib:.0f} MiB (extraction workers not included)")
        fraction = ideal / statistics.median(wall[AUTO])
        # Runs of the same code differ: the no-worker runs' own spread (half of it, 3 % at least) is the margin.
        margin = max(0.03, spread / 2)
        met_a, met_b = fraction >= 0.8 and caps_ok, slower <= 1 + margin
        why = "" if met_a else f" (the bounds above: {min(cpu_bound, bare_fraction):.2f})"
        print(
            f"(a) >= 0.8 of the ideal: {fraction:.2f}{why}: {'met' if met_a else 'not met'}; (b) never slower than "
            f"without a worker: {slower:.2f}x (margin {margin:.2f}): {'met' if met_b else 'not met'}; "
            + ("met" if met_a and met_b else "not met")
        )
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    import machine

    machine.run(main)
