"""Every offline judge against human stances, and the triage's thresholds chosen on one half and reported on the
other, from ../shared/data.

Factcheck-Bench (factcheck-bench/subtasks/subtask3_claim_evidence_stance.jsonl): 3 305 claim–evidence pairs from
real ChatGPT answers, each with a human stance that maps one to one onto a label (``STANCE_LABELS``: completely
supports → supported, partially supports → partial, refutes → conflicting, irrelevant → irrelevant). Each pair is
one edge with one passage. Per judge: the confusion matrix against the human stance, per-label precision and
recall with 95 % cluster-bootstrap intervals (clusters = claims, whose pairs share a claim and often a source),
Cohen's kappa and Krippendorff's alpha with their intervals (``citeaudit.core.agreement``), and the time per edge.
``checks`` is measured; ``relevance`` is the packaged all-MiniLM-L6-v2 as a relevance judge (irrelevant vs the
rest) with its precision–coverage curve; ``nli`` needs a local NLI model, which this machine does not have, and
``openai`` an endpoint (``CITEAUDIT_OPENAI_BASE_URL``): each says "not run" and why when it cannot run.

The triage (``citeaudit.judges.triage``): claims are split in two halves by a hash of their text (a claim's pairs
stay together). On the selection half each reason's threshold is the one that offers the most edges at
precision ≥ 0.95 (precision = offered edges whose human stance is the proposed label / offered edges); on the
held-out half the chosen thresholds are reported with their precision (interval as above) and the share of all
edges offered, the reviewer time saved. Target: precision ≥ 0.95 for each reason on the held-out half.

WiCE (wice/claim/test.jsonl): each claim against the top 3 windows of its article (what ``suggest`` shows), the
share of claims each judge flags by gold label: a flag on a supported claim is a false alarm.

The judge-bias battery (``citeaudit.judges.battery``) runs on the Factcheck-Bench edges for each measured judge
(the relevance judge and ``openai`` on the first ``--battery-limit`` edges: they are asked again per perturbation).

The claim–evidence similarities are kept in the temporary folder, so a rerun on the same pairs skips encoding.

Run: make bench   (or: python benchmarks/bench_judges.py [--limit N] [--resamples B] [--no-battery]
[--battery-limit N] [--wice-limit N])
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citeaudit.checks import run_checks
from citeaudit.core.agreement import LABELS, agreement
from citeaudit.core.model import Label
from citeaudit.core.raters import LabelPairs
from citeaudit.core.stats import Interval, cluster_bootstrap_ratio
from citeaudit.judges import ChecksJudge, Judge, JudgeRequest
from citeaudit.judges.battery import BatteryEdge, run_battery
from citeaudit.judges.triage import DEFAULT_THRESHOLDS, RelevanceJudge, TriageReason, TriageThresholds, triage_call

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
STANCES = SHARED / "factcheck-bench" / "subtasks" / "subtask3_claim_evidence_stance.jsonl"
TARGET_PRECISION = 0.95
MAX_LINE = 1 << 20

STANCE_LABELS: dict[str, Label] = {
    "completely-support": Label.SUPPORTED,
    "partially-support": Label.PARTIAL,
    "refute": Label.CONFLICTING,
    "irrelevant": Label.IRRELEVANT,
}
"""Factcheck-Bench's stance → citeaudit's label."""


class StanceFileError(ValueError):
    """A stance file line that cannot be read: the message names the file, the line and the value."""


@dataclass(frozen=True, slots=True)
class StancePair:
    """One claim–evidence pair with its human stance."""

    claim: str
    evidence: str
    label: Label
    line: int


def read_stance_pairs(path: Path) -> list[StancePair]:
    """Every pair of a Factcheck-Bench stance file; a malformed line or an unknown stance is an error naming the
    file, the line and the value (nothing is skipped)."""
    pairs: list[StancePair] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if len(raw) > MAX_LINE:
                raise StanceFileError(f"{path}:{number}: line longer than {MAX_LINE} bytes")
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                raise StanceFileError(f"{path}:{number}: not JSON ({exc})") from None
            if not isinstance(row, dict):
                raise StanceFileError(f"{path}:{number}: expected an object, got {type(row).__name__}")
            for key in ("claim", "evidence", "stance"):
                if not isinstance(row.get(key), str):
                    raise StanceFileError(f"{path}:{number}: {key!r} must be a string, got {row.get(key)!r}")
            stance = row["stance"]
            if stance not in STANCE_LABELS:
                raise StanceFileError(
                    f"{path}:{number}: unknown stance {stance!r}; stances: {', '.join(sorted(STANCE_LABELS))}"
                )
            pairs.append(StancePair(row["claim"], row["evidence"], STANCE_LABELS[stance], number))
    return pairs


def half_of(claim: str) -> int:
    """0 (selection) or 1 (held out): a hash of the claim's text, so every pair of a claim is on one side."""
    return hashlib.sha256(claim.encode()).digest()[0] & 1


# -- figures ------------------------------------------------------------------------------------------------------


def _ci(hits: np.ndarray, counted: np.ndarray, clusters: np.ndarray, resamples: int) -> Interval:
    totals = np.bincount(clusters, weights=hits * counted)
    counts = np.bincount(clusters, weights=counted.astype(float))
    return cluster_bootstrap_ratio(totals, counts, resamples=resamples, seed=0)


def _rate(numerator: int, denominator: int) -> str:
    return f"{numerator}/{denominator} = {numerator / denominator:.3f}" if denominator else f"{numerator}/0 = n/a"


def _interval(ci: Interval | None) -> str:
    return "[n/a]" if ci is None or ci.low is None or ci.high is None else f"[{ci.low:.3f}, {ci.high:.3f}]"


def measure(
    name: str,
    gold: Sequence[Label],
    judged: Sequence[Label],
    clusters: Sequence[str],
    seconds: float,
    resamples: int,
) -> None:
    """Print the confusion matrix, per-label precision and recall, kappa and alpha, and the time per edge."""
    n = len(gold)
    cluster_ids = np.unique(np.array(clusters), return_inverse=True)[1].reshape(-1)
    print(f"  {name}: {n} edges, {seconds / n * 1000:.2f} ms per edge")
    print("    confusion (rows: human stance, columns: judge)")
    print("    " + " " * 12 + "".join(f"{label!s:>12}" for label in LABELS))
    for g in LABELS:
        row = [sum(1 for a, b in zip(gold, judged, strict=True) if a is g and b is j) for j in LABELS]
        if any(row) or any(a is g for a in gold):
            print(f"    {g!s:>12}" + "".join(f"{c:>12}" for c in row))
    gold_array = np.array([str(g) for g in gold])
    judged_array = np.array([str(j) for j in judged])
    for label in LABELS:
        said = judged_array == str(label)
        truth = gold_array == str(label)
        if not said.any() and not truth.any():
            continue
        hit = (said & truth).astype(float)
        precision = _ci(hit, said, cluster_ids, resamples) if said.any() else None
        recall = _ci(hit, truth, cluster_ids, resamples) if truth.any() else None
        print(
            f"    {label!s:<12} precision {_rate(int(hit.sum()), int(said.sum()))} {_interval(precision)}   "
            f"recall {_rate(int(hit.sum()), int(truth.sum()))} {_interval(recall)}"
        )
    measured = agreement(LabelPairs(tuple(gold), tuple(judged), tuple(clusters)), resamples=resamples)
    kappa, alpha = measured.cohen_kappa, measured.krippendorff_alpha
    value = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
    print(
        f"    agreement with the humans: observed {value(measured.observed.value)}, "
        f"Cohen's kappa {value(kappa.value)} {_interval(kappa.ci)}, "
        f"Krippendorff's alpha {value(alpha.value)} {_interval(alpha.ci)} ({measured.clusters} claims)"
    )


def binary(
    gold: Sequence[Label], judged: Sequence[Label], clusters: Sequence[str], flag: Label, resamples: int
) -> None:
    """Agreement on the one question a judge that says one label (or nothing) answers: ``flag`` or not. The two
    sides are coded as ``flag`` and ``unknown`` (standing for "the rest")."""

    def side(labels: Sequence[Label]) -> tuple[Label, ...]:
        return tuple(flag if label is flag else Label.UNKNOWN for label in labels)

    measured = agreement(LabelPairs(side(gold), side(judged), tuple(clusters)), resamples=resamples)
    kappa, alpha = measured.cohen_kappa, measured.krippendorff_alpha
    value = lambda v: "n/a" if v is None else f"{v:.3f}"  # noqa: E731
    print(
        f"    agreement on {flag} vs the rest: observed {value(measured.observed.value)}, "
        f"Cohen's kappa {value(kappa.value)} {_interval(kappa.ci)}, "
        f"Krippendorff's alpha {value(alpha.value)} {_interval(alpha.ci)}"
    )


def judged_by(judge: Judge, pairs: Sequence[StancePair]) -> tuple[list[Label], float]:
    start = time.perf_counter()
    labels = [judge.judge(JudgeRequest(p.claim, (p.evidence,))).label for p in pairs]
    return labels, time.perf_counter() - start


def similarities(relevance: RelevanceJudge, pairs: Sequence[StancePair]) -> tuple[np.ndarray, float]:
    """Each pair's claim–evidence cosine and the seconds it took to encode them; kept in the temporary folder
    (keyed by the pairs and the model), so a rerun on the same data reads them back (and says so)."""
    key = hashlib.sha256(json.dumps([relevance.model, [(p.claim, p.evidence) for p in pairs]]).encode()).hexdigest()[
        :16
    ]
    cache = Path(tempfile.gettempdir()) / f"citeaudit-bench-judges-{key}.npz"
    if cache.exists():
        stored = np.load(cache)
        print(f"  (similarities read back from {cache}; encoding took {float(stored['seconds']):.1f} s)")
        return stored["similarity"], float(stored["seconds"])
    start = time.perf_counter()
    texts = sorted({p.claim for p in pairs} | {p.evidence for p in pairs})
    rows = relevance.encoder.encode(texts)  # one embedding per distinct text
    row_of = {t: rows[i] for i, t in enumerate(texts)}
    similarity = np.array([float(row_of[p.claim] @ row_of[p.evidence]) for p in pairs])
    seconds = time.perf_counter() - start
    np.savez(cache, similarity=similarity, seconds=np.array(seconds))
    return similarity, seconds


def precision_coverage(gold: Sequence[Label], similarity: np.ndarray) -> None:
    """The relevance judge's curve: edges below each threshold, and how many of them the humans call irrelevant."""
    irrelevant = np.array([g is Label.IRRELEVANT for g in gold])
    print("    precision–coverage of 'irrelevant' (similarity below t):")
    for t in (0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50):
        below = similarity < t
        k = int(below.sum())
        hits = int((below & irrelevant).sum())
        print(f"      t = {t:.2f}  coverage {_rate(k, len(gold))}  precision {_rate(hits, k)}")


# -- the triage ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Edge:
    """A Factcheck-Bench pair as the triage sees it."""

    pair: StancePair
    similarity: float
    conflict: str | None


def offered(edges: Sequence[Edge], thresholds: TriageThresholds, reason: TriageReason) -> list[Edge]:
    out = []
    for e in edges:
        call = triage_call(e.pair.claim, [e.pair.evidence], [e.similarity], [e.conflict], thresholds)
        if call is not None and call.reason is reason:
            out.append(e)
    return out


def precision_of(chosen: Sequence[Edge], reason: TriageReason) -> tuple[int, int]:
    return sum(1 for e in chosen if e.pair.label is reason.label), len(chosen)


def choose(edges: Sequence[Edge], reason: TriageReason) -> tuple[float, int, int]:
    """The threshold offering the most edges at precision ≥ the target on ``edges`` (the most precise one when
    none reaches it): ``(threshold, hits, offered)``."""
    grid = [round(0.01 * i, 2) for i in range(0, 101)]
    best: tuple[float, int, int] | None = None
    fallback: tuple[float, int, int] | None = None
    for t in grid:
        if reason is TriageReason.CHECK_CONFLICT:
            thresholds = TriageThresholds(conflict_min=t, irrelevant_below=-1.0)
        else:
            thresholds = TriageThresholds(conflict_min=1.0, irrelevant_below=t)
        hits, n = precision_of(offered(edges, thresholds, reason), reason)
        if n == 0:
            continue
        if hits / n >= TARGET_PRECISION and (best is None or n > best[2]):
            best = (t, hits, n)
        if (
            fallback is None
            or hits / n > fallback[1] / fallback[2]
            or (hits / n == fallback[1] / fallback[2] and n > fallback[2])
        ):
            fallback = (t, hits, n)
    chosen = best or fallback
    return chosen if chosen is not None else (float("nan"), 0, 0)


def _off_by_default(reason: TriageReason) -> bool:
    return reason is TriageReason.CHECK_CONFLICT and DEFAULT_THRESHOLDS.conflict_min is None


def triage(edges: Sequence[Edge], resamples: int) -> str:
    """Print the triage's figures; return the closing verdict line (per reason, over the shipped defaults)."""
    selection = [e for e in edges if half_of(e.pair.claim) == 0]
    held_out = [e for e in edges if half_of(e.pair.claim) == 1]
    print(
        f"triage: thresholds chosen on the selection half ({len(selection)} edges), reported on the held-out half "
        f"({len(held_out)} edges); target precision ≥ {TARGET_PRECISION:.2f} per reason"
    )
    conflict_t = choose(selection, TriageReason.CHECK_CONFLICT)
    irrelevant_t = choose(selection, TriageReason.IRRELEVANT)
    chosen = TriageThresholds(
        conflict_min=conflict_t[0] if conflict_t[2] else 1.0,
        irrelevant_below=irrelevant_t[0] if irrelevant_t[2] else -1.0,
    )
    print(
        f"  chosen: conflict_min {chosen.conflict_min:.2f} (selection {_rate(conflict_t[1], conflict_t[2])}), "
        f"irrelevant_below {chosen.irrelevant_below:.2f} (selection {_rate(irrelevant_t[1], irrelevant_t[2])}); "
        f"shipped defaults: conflict_min "
        f"{'off' if DEFAULT_THRESHOLDS.conflict_min is None else f'{DEFAULT_THRESHOLDS.conflict_min:.2f}'}, "
        f"irrelevant_below {DEFAULT_THRESHOLDS.irrelevant_below:.2f}"
    )
    claims = np.unique(np.array([e.pair.claim for e in held_out]), return_inverse=True)[1].reshape(-1)
    verdicts: list[bool] = []
    total_offered = 0
    closing: list[str] = []
    for name, thresholds in (("chosen here", chosen), ("shipped defaults", DEFAULT_THRESHOLDS)):
        print(f"  held-out half, thresholds {name}:")
        total_offered = 0
        verdicts = []
        closing = []
        for reason in TriageReason:
            if thresholds is DEFAULT_THRESHOLDS and _off_by_default(reason):
                why = (
                    f"off by default, no threshold reached {TARGET_PRECISION:.2f} on the selection half "
                    f"(best {_rate(conflict_t[1], conflict_t[2])})"
                )
                print(f"    {reason:<15} not offered: {why}")
                closing.append(f"{reason} not offered: {why}")
                continue
            offered_now = {id(e) for e in offered(held_out, thresholds, reason)}
            mask = np.array([id(e) in offered_now for e in held_out])
            hit = np.array([e.pair.label is reason.label for e in held_out], dtype=float)
            hits, n = int((hit * mask).sum()), int(mask.sum())
            ci = _ci(hit, mask, claims, resamples) if n else None
            met = n > 0 and hits / n >= TARGET_PRECISION
            verdicts.append(met)
            total_offered += n
            closing.append(f"{reason} {'met' if met else 'not met'} ({_rate(hits, n)})")
            print(
                f"    {reason:<15} precision {_rate(hits, n)} {_interval(ci)}  share of edges offered "
                f"{_rate(n, len(held_out))}  {'met' if met else 'not met'}"
            )
        print(
            f"    reasons offered: {_rate(total_offered, len(held_out))} of the held-out edges offered "
            f"— {'met' if verdicts and all(verdicts) else 'not met'}"
        )
    return (
        f"triage verdict (shipped defaults, held-out half, target precision ≥ {TARGET_PRECISION:.2f}): "
        + "; ".join(closing)
        + f"; {_rate(total_offered, len(held_out))} of the edges offered; over the reasons offered by default: "
        + ("met" if verdicts and all(verdicts) else "not met")
    )


# -- WiCE ---------------------------------------------------------------------------------------------------------


def wice(relevance: RelevanceJudge, limit: int | None) -> None:
    from citeaudit.core.passages import split_paragraphs
    from citeaudit.evidence import SUGGEST_METHOD, PassageIndex

    path = SHARED / "wice" / "claim" / "test.jsonl"
    if not path.exists():
        print(f"WiCE: not run: {path} is absent")
        return
    rows = [json.loads(line) for line in path.read_text().splitlines()][:limit]
    if not rows:
        print("WiCE: not run: --wice-limit 0")
        return
    checks = ChecksJudge()
    by_label: dict[str, list[int]] = {}
    start = time.perf_counter()
    for row in rows:
        text = "\n\n".join(row["evidence"])
        index = PassageIndex(split_paragraphs(text))
        shown = tuple(p.text for p in index.rank(row["claim"], 3, SUGGEST_METHOD))
        request = JudgeRequest(row["claim"], shown)
        counts = by_label.setdefault(row["label"], [0, 0, 0])
        counts[0] += 1
        counts[1] += checks.judge(request).label is Label.CONFLICTING
        counts[2] += relevance.judge(request).label is Label.IRRELEVANT
    seconds = time.perf_counter() - start
    print(
        f"WiCE test: {len(rows)} claims against the top 3 windows of their article "
        f"({seconds / len(rows) * 1000:.1f} ms each)"
    )
    for label, (n, conflicting, irrelevant) in sorted(by_label.items()):
        print(f"  {label:<20} checks conflicting {_rate(conflicting, n)}   relevance irrelevant {_rate(irrelevant, n)}")


# -- main ---------------------------------------------------------------------------------------------------------


def battery(name: str, judge: Judge, pairs: Sequence[StancePair], resamples: int) -> None:
    edges = [BatteryEdge(str(p.line), p.claim, (p.evidence,), p.label, cluster=p.claim) for p in pairs]
    start = time.perf_counter()
    report = run_battery(judge, edges, resamples=resamples)
    print(f"  bias battery, {name} ({time.perf_counter() - start:.1f} s, clusters = claims):")
    for result in report.results:
        rate = "n/a" if result.flip_rate is None else f"{result.flip_rate:.3f}"
        print(
            f"    {result.perturbation:<26} {result.flips:>4} of {result.edges:>4} flip  rate {rate}  {result.reading}"
        )
    print(f"    agreement with the humans: {report.agreement.verdict} ({report.agreement.why})")


def main() -> None:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="Use the first N pairs (and WiCE claims) only.")
    parser.add_argument("--resamples", type=int, default=2000, help="Bootstrap resamples for the intervals.")
    parser.add_argument("--no-battery", action="store_true", help="Skip the judge-bias battery.")
    parser.add_argument(
        "--battery-limit", type=int, default=300, help="Edges the relevance judge's battery runs on (it encodes each)."
    )
    parser.add_argument(
        "--wice-limit",
        type=int,
        default=None,
        help="Use the first N WiCE test claims only (each is ranked and encoded).",
    )
    args = parser.parse_args()
    if not STANCES.exists():
        print(f"not run: {STANCES} is absent (see ../shared/data/SOURCES.md); not met")
        return
    pairs = read_stance_pairs(STANCES)[: args.limit]
    gold = [p.label for p in pairs]
    clusters = [p.claim for p in pairs]
    counts = {str(label): sum(1 for g in gold if g is label) for label in LABELS}
    print(
        f"bench_judges: Factcheck-Bench stance pairs: {len(pairs)} edges, {len(set(clusters))} claims, "
        f"human labels {counts}; load {os.getloadavg()[0]:.2f}"
    )
    checks = ChecksJudge()
    labels, seconds = judged_by(checks, pairs)
    measure("checks", gold, labels, clusters, seconds, args.resamples)
    binary(gold, labels, clusters, Label.CONFLICTING, args.resamples)

    relevance = RelevanceJudge()
    similarity, seconds = similarities(relevance, pairs)
    relevance_labels = [Label.IRRELEVANT if s < relevance.threshold else Label.UNKNOWN for s in similarity]
    measure(
        f"relevance (all-MiniLM-L6-v2, irrelevant below {relevance.threshold:.2f}, else unknown)",
        gold,
        relevance_labels,
        clusters,
        seconds,
        args.resamples,
    )
    binary(gold, relevance_labels, clusters, Label.IRRELEVANT, args.resamples)
    precision_coverage(gold, similarity)
    print("  nli: not run: no local NLI model on this machine (weights are never fetched from a hub)")
    openai: Judge | None = None
    if os.environ.get("CITEAUDIT_OPENAI_BASE_URL") or os.environ.get("OPENAI_BASE_URL"):
        from citeaudit.judges import make_judge

        openai = make_judge("openai")
        labels, seconds = judged_by(openai, pairs)
        measure(f"openai ({openai.model})", gold, labels, clusters, seconds, args.resamples)
    else:
        print("  openai: not run: no endpoint (set CITEAUDIT_OPENAI_BASE_URL and CITEAUDIT_OPENAI_MODEL)")

    conflicts: list[str | None] = []
    for p in pairs:
        found = [f for f in run_checks(p.claim, p.evidence).findings if f.conflict]
        conflicts.append("; ".join(f"{f.kind}: {f.detail}" for f in found) or None)
    edges = [Edge(p, float(s), c) for p, s, c in zip(pairs, similarity, conflicts, strict=True)]
    verdict = triage(edges, args.resamples)
    if not args.no_battery:
        print("judge-bias battery on the Factcheck-Bench edges:")
        battery("checks", checks, pairs, args.resamples)
        battery(f"relevance, first {args.battery_limit} edges", relevance, pairs[: args.battery_limit], args.resamples)
        if openai is not None:
            battery(f"openai, first {args.battery_limit} edges", openai, pairs[: args.battery_limit], args.resamples)
        else:
            print("  bias battery, openai: not run: no endpoint")
    wice(relevance, args.wice_limit)
    print(verdict)


if __name__ == "__main__":
    import machine

    machine.run(main)
