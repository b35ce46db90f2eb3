"""What reading within limits costs: the bounded JSON loader against the standard library's parser.

The bounded loader (``citeaudit.core.limits.load_json``, behind every reader) refuses duplicate keys, nesting past 100
levels, NaN and infinities, integers past 64 bits and lone surrogates. Measured on the same Perplexity Sonar
payloads as the ingest benchmark, in both shapes engines deliver: JSON Lines (one payload a line) and one JSON
document (a list of payloads). Baseline in the same run: ``json.loads`` on the same text, the floor of any reader.
Reported: medians and the ratio of each shape. Target: the bounded loader takes at most 2.5× the baseline in
both shapes (parsing is about a fortieth of ingest time, so that is a few per cent of an import).

Run: make bench   (or: python benchmarks/bench_limits.py [--answers N])
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import statistics
import time
from collections.abc import Callable

from bench_ingest import sonar_payload
from citeaudit.ingest.payload import load_payloads

TARGET = 2.5


def _median_seconds(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _read_all(data: bytes) -> list[object]:
    return list(load_payloads(data, "bench"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(7)
    payloads = [sonar_payload(rng, n) for n in range(args.answers)]
    lines = "\n".join(json.dumps(p) for p in payloads).encode()
    document = json.dumps(payloads).encode()

    # Baselines and the bounded loader alternate, so machine load falls on both alike.
    results = {}
    for shape, data, baseline in (
        ("JSON Lines", lines, lambda: [json.loads(line) for line in lines.decode().split("\n")]),
        ("one JSON document", document, lambda: json.loads(document)),
    ):
        base = _median_seconds(baseline, args.repeat)
        bounded = _median_seconds(functools.partial(_read_all, data), args.repeat)
        results[shape] = (base, bounded)

    print(f"parsing {args.answers:,} Sonar payloads, median of {args.repeat}:")
    for shape, (base, bounded) in results.items():
        print(f"  {shape:18} json.loads {base:6.3f} s   bounded loader {bounded:6.3f} s   ratio {bounded / base:4.2f}x")
    worst = max(bounded / base for base, bounded in results.values())
    verdict = "met" if worst <= TARGET else "not met"
    print(f"target (bounded loader at most {TARGET}x json.loads in both shapes; worst {worst:.2f}x): {verdict}")


if __name__ == "__main__":
    import machine

    machine.run(main)
