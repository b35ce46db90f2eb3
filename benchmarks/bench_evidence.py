"""Evidence ranking on WiCE test claims measured as reviewers see it, and the checks judge on AttributionBench,
from ../shared/data.

What reviewers get (the target): WiCE (claim/test.jsonl) gives each claim its cited article as a list of sentences
and the minimal sets of sentences that support it. The article is rebuilt as the sentences in order, one per
paragraph, and cut into passages exactly as the store keeps a snapshot
(``citeaudit.core.passages.split_paragraphs``), which is what ``suggest`` ranks and stores. For every claim labelled
``supported`` (partially and not supported claims are left out and counted; a gold set that is empty is never a hit)
the top 3 units are checked: does some gold sentence lie inside them (one), does some gold set lie inside them whole
(all), and how many characters does a reviewer read (the units' spans). Each ranking change is compared with the one
before it, paired per claim: the difference in "all" with an exact McNemar p-value over the discordant claims, and
the difference in characters with a Wilcoxon signed-rank p-value. Window size and trim were chosen on WiCE dev.
Target: all gold sentences in the top 3 for ≥ 0.80 of the supported test claims at ≤ 1 200 characters read on
average, for the ranking reviewers get unless told otherwise (``citeaudit.evidence.SUGGEST_METHOD``, the default of
``suggest``).

Throughput counts one edge per claim on the sentences, with the source's index built for that edge (the worst
case: no reuse), as wall-clock and per CPU-second (the machine is shared; the load average is printed). Baselines
in the same run, each building the same per-edge index and scoring the claim: rank-bm25 (BM25Okapi with the same
Lucene idf, so the same scores) and bm25s (its own tokenizer and stopwords); ratio = baseline time / citeaudit
time. Goal: BM25 ≥ 500 edges/s.

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
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import scipy.stats
from rank_bm25 import BM25Okapi

from citeaudit.checks import run_checks
from citeaudit.core.model import Label
from citeaudit.core.passages import Passage, split_paragraphs
from citeaudit.evidence import SUGGEST_METHOD, PassageIndex, RankMethod
from citeaudit.evidence._rank import _STOPWORDS, _tokens
from citeaudit.evidence._windows import WINDOW_TRIM, windows_to_units
from citeaudit.judges import ChecksJudge, JudgeRequest
from citeaudit.judges.battery import BatteryEdge, run_battery

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
TOP = 3
TARGET_ALL, TARGET_CHARS = 0.80, 1200


def load_rows(split: str = "test") -> list[dict[str, Any]]:
    path = SHARED / "wice" / "claim" / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- what reviewers get -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """A supported WiCE claim with its article as the store would keep it."""

    text: str
    passages: list[Passage]
    sentences: list[tuple[int, int]]
    """Each article sentence's span in the rebuilt text."""
    gold: list[list[int]]
    """The non-empty gold sets (sentence indexes)."""


def supported_claims(rows: list[dict[str, Any]], limit: int | None) -> tuple[list[Claim], dict[str, int]]:
    claims: list[Claim] = []
    left_out: Counter[str] = Counter()
    for row in rows:
        if row["label"] != "supported":
            left_out[f"labelled {row['label']}"] += 1
            continue
        gold = [list(s) for s in row["supporting_sentences"] if s]
        left_out["empty gold sets (never a hit)"] += len(row["supporting_sentences"]) - len(gold)
        if not gold:
            left_out["supported without a gold sentence"] += 1
            continue
        spans, position = [], 0
        for sentence in row["evidence"]:
            spans.append((position, position + len(sentence)))
            position += len(sentence) + 2
        text = "\n\n".join(row["evidence"])
        passages = split_paragraphs(text)
        claims.append(Claim(str(row["claim"]), passages, spans, gold))
    return (claims[:limit] if limit else claims), dict(left_out)


Ranker = Callable[[Claim, PassageIndex], list[tuple[int, int]]]


def by_method(method: RankMethod) -> Ranker:
    def rank(claim: Claim, index: PassageIndex) -> list[tuple[int, int]]:
        return [(p.start, p.end) for p in index.rank(claim.text, TOP, method)]

    return rank


def windows_trimmed_at(trim: float, boost: bool = False) -> Ranker:
    """Windows as ``RankMethod.WINDOW`` with another trim (−1: no trim), optionally with the claim's entities and
    numbers repeated in the query (each counts once more in BM25)."""

    def rank(claim: Claim, index: PassageIndex) -> list[tuple[int, int]]:
        query = claim.text
        if boost:
            extra = [t for t in re.findall(r"\w+", query) if t[:1].isupper() or any(c.isdigit() for c in t)]
            query = f"{query} {' '.join(extra)}"
        windows = index.windows
        scores = windows.bm25_scores(query)
        order = np.lexsort((np.arange(len(scores)), -scores))
        units = windows_to_units(index.passages, order, scores, index.bm25_scores(query), TOP, trim=trim)
        return [(u.start, u.end) for u in units]

    return rank


@dataclass(frozen=True)
class Outcome:
    one: np.ndarray
    whole: np.ndarray
    chars: np.ndarray
    seconds: float


def measure(claims: list[Claim], ranker: Ranker, indexes: list[PassageIndex]) -> Outcome:
    one, whole, chars = [], [], []
    start = time.perf_counter()
    for claim, index in zip(claims, indexes, strict=True):
        spans = ranker(claim, index)

        def shown(sentence: int, spans: list[tuple[int, int]] = spans, claim: Claim = claim) -> bool:
            s, e = claim.sentences[sentence]
            return any(a <= s and e <= b for a, b in spans)

        one.append(any(shown(i) for gold in claim.gold for i in gold))
        whole.append(any(all(shown(i) for i in gold) for gold in claim.gold))
        chars.append(sum(b - a for a, b in spans))
    seconds = time.perf_counter() - start
    return Outcome(np.array(one), np.array(whole), np.array(chars, dtype=float), seconds)


def paired(before: Outcome, after: Outcome) -> str:
    gained = int(np.sum(after.whole & ~before.whole))
    lost = int(np.sum(before.whole & ~after.whole))
    p_all = scipy.stats.binomtest(gained, gained + lost, 0.5).pvalue if gained + lost else 1.0
    difference = after.chars - before.chars
    p_chars = scipy.stats.wilcoxon(difference).pvalue if np.any(difference) else 1.0
    return (
        f"Δ all {after.whole.mean() - before.whole.mean():+.3f} ({gained} claims gained, {lost} lost; "
        f"McNemar exact p = {p_all:.3g}), Δ characters {difference.mean():+.0f} (Wilcoxon p = {p_chars:.3g})"
    )


def reviewers(args: argparse.Namespace, split: str = "test") -> tuple[float, float]:
    """The figures of the method ``suggest`` uses unless told otherwise (``SUGGEST_METHOD``), for the target:
    (share all, mean characters)."""
    claims, left_out = supported_claims(load_rows(split), args.limit)
    n = len(claims)
    passages = statistics.mean(len(c.passages) for c in claims)
    print(f"WiCE {split}: {n} supported claims, {passages:.1f} stored passages per article; left out: {left_out}")
    print(f"  top {TOP} units as suggest stores them: one gold sentence / a whole gold set / characters read")
    # (name, ranker, compared with window rather than the line above, the RankMethod it is when it is one)
    steps: list[tuple[str, Ranker, bool, RankMethod | None]] = [
        ("bm25 on stored passages (before)", by_method(RankMethod.BM25), False, RankMethod.BM25),
        ("+ windows of 3 adjacent passages", windows_trimmed_at(-1.0), False, None),
        (f"+ ends trimmed at {WINDOW_TRIM} (= window)", by_method(RankMethod.WINDOW), False, RankMethod.WINDOW),
        ("+ entities and numbers boosted", windows_trimmed_at(WINDOW_TRIM, boost=True), True, None),
    ]
    if not args.no_dense:
        steps.append(
            (
                "window + MiniLM re-rank (window-hybrid)",
                by_method(RankMethod.WINDOW_HYBRID),
                True,
                RankMethod.WINDOW_HYBRID,
            )
        )
    indexes = [PassageIndex(c.passages) for c in claims]
    results: dict[str, Outcome] = {}
    previous: Outcome | None = None
    window: Outcome | None = None
    default: Outcome | None = None
    for name, ranker, against_window, method in steps:
        outcome = measure(claims, ranker, indexes)
        results[name] = outcome
        print(
            f"  {name:<42} one {outcome.one.mean():.3f}  all {outcome.whole.mean():.3f}  "
            f"chars {outcome.chars.mean():6.0f}  ({outcome.seconds:.1f} s)"
        )
        if previous is not None:
            base = window if against_window and window else previous
            print(f"    vs {'window' if base is window else 'the line above'}: {paired(base, outcome)}")
        if method is RankMethod.WINDOW:
            window = outcome
        if method is SUGGEST_METHOD:
            default = outcome
        if not name.startswith("+ entities"):
            previous = outcome
    if default is None:  # the default is a dense ranking and --no-dense skipped it
        default = measure(claims, by_method(SUGGEST_METHOD), indexes)
    print(
        f"  what reviewers get ({SUGGEST_METHOD}, the default of suggest): one {default.one.mean():.3f}  "
        f"all {default.whole.mean():.3f}  chars {default.chars.mean():6.0f}"
    )
    return float(default.whole.mean()), float(default.chars.mean())


# -- throughput ---------------------------------------------------------------------------------------------------


def rank_sentences(rows: list[dict[str, Any]]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for row in rows:
        PassageIndex([str(s) for s in row["evidence"]]).rank(str(row["claim"]), k=5)
    return time.perf_counter() - wall, time.process_time() - cpu


class LuceneOkapi(BM25Okapi):  # type: ignore[misc]
    def _calc_idf(self, nd: dict[str, int]) -> None:
        self.idf = {t: float(np.log1p((self.corpus_size - n + 0.5) / (n + 0.5))) for t, n in nd.items()}


def rank_bm25_baseline(rows: list[dict[str, Any]]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for row in rows:
        model = LuceneOkapi([_tokens(str(s)) or [""] for s in row["evidence"]])
        scores = model.get_scores([t for t in _tokens(str(row["claim"])) if t not in _STOPWORDS])
        np.lexsort((np.arange(len(scores)), -scores))[:5]
    return time.perf_counter() - wall, time.process_time() - cpu


def bm25s_baseline(rows: list[dict[str, Any]]) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for row in rows:
        corpus = bm25s.tokenize([str(s) for s in row["evidence"]], stopwords="en", show_progress=False)
        model = bm25s.BM25()
        model.index(corpus, show_progress=False)
        query = list(bm25s.tokenize(str(row["claim"]), stopwords="en", return_ids=False, show_progress=False)[0])
        model.get_scores(query)
    return time.perf_counter() - wall, time.process_time() - cpu


def throughput(args: argparse.Namespace) -> bool:
    rows = load_rows()[: args.limit] if args.limit else load_rows()
    n = len(rows)
    timings = [rank_sentences(rows) for _ in range(args.repeat)]
    wall, cpu = statistics.median(t[0] for t in timings), statistics.median(t[1] for t in timings)
    print(
        f"BM25 throughput on {n} WiCE test claims (sentences, index built per edge): {n / wall:.1f} edges/s wall, "
        f"{n / cpu:.1f} per CPU-second (median of {args.repeat})"
    )
    for name, baseline in (("rank-bm25", rank_bm25_baseline), ("bm25s", bm25s_baseline)):
        runs = [baseline(rows) for _ in range(args.repeat)]
        base_wall, base_cpu = statistics.median(t[0] for t in runs), statistics.median(t[1] for t in runs)
        print(
            f"  {name} baseline (same per-edge index and scoring): {n / base_wall:.1f} edges/s wall, "
            f"{n / base_cpu:.1f} per CPU-second; its time / citeaudit's: {base_wall / wall:.2f} (wall), "
            f"{base_cpu / cpu:.2f} (CPU)"
        )
    met = n / cpu >= 500
    print(
        f"  BM25 target ≥ 500 edges/s: {'met' if n / wall >= 500 else 'not met'} on wall time, "
        f"{'met' if met else 'not met'} per CPU-second (load average {os.getloadavg()[0]:.1f})"
    )
    return met


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
    parser.add_argument("--no-dense", action="store_true", help="Skip the MiniLM re-ranker (no models extra).")
    parser.add_argument("--split", default="test", choices=("test", "dev"), help="WiCE split for the ranking.")
    args = parser.parse_args()
    if not SHARED.is_dir():
        sys.exit(f"shared data not found at {SHARED}")
    whole, chars = reviewers(args, args.split)
    fast = throughput(args)
    checks_false_alarms()
    attributionbench()
    ranking = whole >= TARGET_ALL and chars <= TARGET_CHARS
    print(
        f"targets: whole gold set in the top {TOP} for ≥ {TARGET_ALL:.2f} of supported claims at ≤ {TARGET_CHARS} "
        f"characters ({SUGGEST_METHOD}, the default: {whole:.3f} at {chars:.0f}) {'met' if ranking else 'not met'}; "
        f"BM25 ≥ 500 edges per CPU-second {'met' if fast else 'not met'} — {'met' if ranking and fast else 'not met'}"
    )


if __name__ == "__main__":
    import machine

    machine.run(main)
