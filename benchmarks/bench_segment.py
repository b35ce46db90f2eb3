"""Segmentation quality and throughput: rules-v1 on the ExpertQA ``answer_string`` texts.

Quality: agreement with ExpertQA's human claim boundaries (each ``claim_string`` located in its answer).
A predicted claim matches a human claim when both spans are equal after trimming white space, citation
markers and closing punctuation (exact), or — the relaxed figure — when they overlap with an intersection
over union of at least 0.5 (one-to-one, greedy in text order). Reported: precision, recall and F1 of matched
spans, for rules-v1, rules-v1 without coordination splitting, and a naive regex sentence splitter.

Throughput: MB/s of answer text (UTF-8), median of several passes, with two baselines measured in the same
run on the same texts: the naive regex sentence splitter, and ``json.loads`` of the texts as JSON strings.
Target: at least 2 MB/s. Last, ``citeaudit segment`` end to end on the files imported into a SQLite file
(answers/s, MB/s), where reading and writing claim sets add to the segmentation itself.

Run: make bench   (or: python benchmarks/bench_segment.py [--repeat N])
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from citeaudit.ingest import read_files, store_prepared
from citeaudit.ingest.text import trim_span
from citeaudit.segment import Rules, segment
from citeaudit.segment.resegment import resegment
from citeaudit.store import Store

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "expertqa"
_NAIVE = re.compile(r"(?<=[.!?])\s+")
_CLOSING = ".!?。！？；:;,"

Span = tuple[int, int]


def load() -> tuple[list[str], list[list[Span]], int, int]:
    """Unique answer texts, the human claim spans of each, and how many claims were found / not found."""
    texts: dict[str, list[Span]] = {}
    found = missing = 0
    for path in sorted(DATA.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            for body in record["answers"].values():
                text = body.get("answer_string")
                if not text or text in texts:
                    continue
                spans: list[Span] = []
                cursor = 0
                for claim in body.get("claims") or []:
                    claim_string = (claim.get("claim_string") or "").strip()
                    if not claim_string:
                        continue
                    at = text.find(claim_string, cursor)
                    if at < 0:
                        at = text.find(claim_string)
                    if at < 0:
                        missing += 1
                        continue
                    found += 1
                    spans.append((at, at + len(claim_string)))
                    cursor = at + len(claim_string)
                texts[text] = spans
    kept = [(t, s) for t, s in texts.items() if s]
    return [t for t, _ in kept], [s for _, s in kept], found, missing


def normalize(text: str, span: Span) -> Span:
    """The span without surrounding white space, markers and closing punctuation."""
    start, end = trim_span(text, *span)
    while end > start and text[end - 1] in _CLOSING:
        end -= 1
        start, end = trim_span(text, start, end)
    return start, end


def naive(text: str) -> list[Span]:
    """Split after . ! ? followed by white space: the simplest sentence splitter."""
    spans, start = [], 0
    for found in _NAIVE.finditer(text):
        spans.append((start, found.start()))
        start = found.end()
    spans.append((start, len(text)))
    return [s for s in spans if text[s[0] : s[1]].strip()]


def rules(options: Rules) -> Callable[[str], list[Span]]:
    def split(text: str) -> list[Span]:
        return [(c.start, c.end) for c in segment(text, (), options).claims]

    return split


@dataclass(frozen=True)
class Agreement:
    """Matched spans of one segmenter against the human claims."""

    exact: int
    relaxed: int
    predicted: int
    expected: int

    def prf(self, matched: int) -> str:
        precision = matched / self.predicted if self.predicted else float("nan")
        recall = matched / self.expected if self.expected else float("nan")
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else float("nan")
        return f"{precision:.3f} / {recall:.3f} / {f1:.3f}"


def agreement(texts: list[str], gold: list[list[Span]], split: Callable[[str], list[Span]]) -> Agreement:
    exact = relaxed = predicted = expected = 0
    for text, human in zip(texts, gold, strict=True):
        human_spans = [normalize(text, s) for s in human]
        machine = [normalize(text, s) for s in split(text)]
        predicted += len(machine)
        expected += len(human_spans)
        exact += len(set(human_spans) & set(machine))
        relaxed += _overlaps(human_spans, machine)
    return Agreement(exact, relaxed, predicted, expected)


def _overlaps(human: list[Span], machine: list[Span]) -> int:
    used: set[int] = set()
    matched = 0
    for h_start, h_end in human:
        for j, (m_start, m_end) in enumerate(machine):
            if j in used:
                continue
            inter = min(h_end, m_end) - max(h_start, m_start)
            union = max(h_end, m_end) - min(h_start, m_start)
            if union > 0 and inter / union >= 0.5:
                used.add(j)
                matched += 1
                break
    return matched


def timed(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run_all(split: Callable[[str], object], texts: Iterable[str]) -> None:
    for text in texts:
        split(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"skipped: ExpertQA data not found at {DATA} (see shared/data/SOURCES.md)")
        sys.exit(0)
    texts, gold, found, missing = load()
    size = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(
        f"ExpertQA answer_string texts: {len(texts)} unique answers, {size:.2f} MB, {found} human claims located "
        f"({missing} claim strings not found verbatim in their answer, left out)"
    )
    print("agreement with human claim boundaries (precision / recall / F1):")
    candidates = {
        "rules-v1": rules(Rules()),
        "rules-v1, no coordination split": rules(Rules(split_coordination=False)),
        "naive regex splitter": naive,
    }
    for name, split in candidates.items():
        result = agreement(texts, gold, split)
        print(
            f"  {name:34s} exact {result.prf(result.exact)}   IoU>=0.5 {result.prf(result.relaxed)}   "
            f"({result.predicted} claims vs {result.expected})"
        )
    encoded = [json.dumps(t) for t in texts]
    seg = timed(lambda: run_all(rules(Rules()), texts), args.repeat)
    regex = timed(lambda: run_all(naive, texts), args.repeat)
    parse = timed(lambda: run_all(json.loads, encoded), args.repeat)
    print(f"throughput, median of {args.repeat}:")
    print(f"  json.loads of the texts     {size / parse:8.1f} MB/s")
    print(f"  naive regex splitter        {size / regex:8.1f} MB/s")
    print(
        f"  rules-v1                    {size / seg:8.1f} MB/s; {seg / regex:.1f}x the regex splitter's time, "
        f"{seg / parse:.1f}x json.loads'"
    )
    print(f"  target (>= 2 MB/s): {'met' if size / seg >= 2 else 'NOT met'}")
    database(args.repeat)


def database(repeat: int) -> None:
    """``citeaudit segment`` end to end on the ExpertQA files imported into a fresh SQLite file: reading each
    answer's claims and edges, segmenting, and writing the new claim set, one transaction per answer."""
    times, reports = [], []
    for _ in range(max(1, repeat // 2)):
        with tempfile.TemporaryDirectory() as folder:
            db = Path(folder) / "expertqa.db"
            with Store(db) as store:
                for item in read_files(sorted(DATA.glob("*.jsonl")), None, None):
                    store_prepared(store, item)
                texts = [store.answer_claims(pk).text for pk, _, _ in store.answers_for_claims()]
                start = time.perf_counter()
                reports.append(resegment(store))
                times.append(time.perf_counter() - start)
    size = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    took = statistics.median(times)
    report = reports[-1]
    print(f"citeaudit segment on the imported ExpertQA database, median of {len(times)}:")
    print(
        f"  {report.answers} answers ({size:.2f} MB of text) in {took:.2f} s: {report.answers / took:,.0f} answers/s, "
        f"{size / took:.2f} MB/s; {report.new} claims made, {report.retired} replaced, "
        f"{report.unattached} citation locations on no new claim"
    )


if __name__ == "__main__":
    main()
