"""Copy grouping over 100 000 synthetic snapshots (about 2 KB each, 10 % near-duplicates).

Near-duplicates are copies of a base page with their paragraphs reordered, boilerplate lines added and about
1 % of their words replaced. Reported: throughput (pages/s), the ratio to shingling alone (the floor any
shingle-based method pays) in the same run, peak RSS, and pairwise precision and recall of the grouping
against the known duplicates (target: both >= 0.95). With the WiCE evidence pages present, it also prints
the largest exact Jaccard similarity between distinct real pages (the basis of the default threshold).

Run: make bench   (or: python benchmarks/bench_copies.py [--pages N])
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import time
from itertools import combinations
from pathlib import Path

import numpy as np

from citeaudit.sources.copies import CopySettings, Page, copy_groups, shingles

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
BOILERPLATE = ["Home > Products", "Share this page", "Cookie settings", "Subscribe to our newsletter", "Contact us"]


def synthetic(n: int, seed: int = 5) -> tuple[list[Page], list[int]]:
    """``n`` pages and, per page, the index of the base page it copies (itself for an original)."""
    rng = np.random.default_rng(seed)
    vocabulary = np.array([f"t{i:05d}" for i in range(30_000)])
    zipf = 1.0 / np.arange(1, len(vocabulary) + 1) ** 1.05
    zipf /= zipf.sum()
    originals = int(n * 0.9)
    pages: list[Page] = []
    truth: list[int] = []
    paragraphs_of: list[list[list[str]]] = []
    for i in range(originals):
        words = vocabulary[rng.choice(len(vocabulary), size=300, p=zipf)].tolist()
        paragraphs = [words[k : k + 50] for k in range(0, 300, 50)]
        paragraphs_of.append(paragraphs)
        pages.append(Page(f"p{i}", "\n".join(" ".join(p) for p in paragraphs)))
        truth.append(i)
    edit = random.Random(seed)
    for j in range(n - originals):
        base = edit.randrange(originals)
        paragraphs = [list(p) for p in paragraphs_of[base]]
        edit.shuffle(paragraphs)
        for paragraph in paragraphs:
            for k in range(len(paragraph)):
                if edit.random() < 0.01:
                    paragraph[k] = f"x{edit.randrange(10**6)}"
        lines = [edit.choice(BOILERPLATE), *(" ".join(p) for p in paragraphs), edit.choice(BOILERPLATE)]
        pages.append(Page(f"d{j}", "\n".join(lines)))
        truth.append(base)
    return pages, truth


def pairs(groups: list[list[int]]) -> set[tuple[int, int]]:
    return {pair for group in groups for pair in combinations(sorted(group), 2)}


def real_page_ceiling() -> float | None:
    folder = SHARED / "data" / "wice" / "claim"
    if not folder.exists():
        return None
    texts: dict[str, str] = {}
    for split in ("dev", "test"):
        for line in (folder / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts.setdefault(row["evidence"][0], "\n".join(row["evidence"]))
    sets = [set(shingles(t)) for t in texts.values() if len(t.split()) >= 30]
    best = 0.0
    for a, b in combinations(sets, 2):
        if a and b:
            best = max(best, len(a & b) / len(a | b))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    args = parser.parse_args()
    pages, truth = synthetic(args.pages)
    size = sum(len(p.text.encode()) for p in pages) / len(pages)

    start = time.perf_counter()
    for p in pages:
        shingles(p.text)
    floor = time.perf_counter() - start

    start = time.perf_counter()
    result = copy_groups(pages, CopySettings())
    elapsed = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    index = {p.key: i for i, p in enumerate(pages)}
    predicted = pairs([[index[k] for k in g.members] for g in result.groups])
    true_groups: dict[int, list[int]] = {}
    for i, base in enumerate(truth):
        true_groups.setdefault(base, []).append(i)
    expected = pairs([g for g in true_groups.values() if len(g) > 1])
    hits = len(predicted & expected)
    precision = hits / len(predicted) if predicted else float("nan")
    recall = hits / len(expected) if expected else float("nan")

    print(f"copy grouping of {len(pages):,} synthetic pages ({size:,.0f} bytes each on average):")
    print(f"  shingling alone   {floor:6.2f} s")
    print(
        f"  copy_groups       {elapsed:6.2f} s  ({len(pages) / elapsed:,.0f} pages/s); ratio to shingling "
        f"{elapsed / floor:.1f}x; peak RSS {peak_mb:,.0f} MB"
    )
    print(f"  {len(result.groups):,} groups; pairs: {len(predicted):,} found, {len(expected):,} known, {hits:,} both")
    print(f"  pairwise precision {precision:.4f}, recall {recall:.4f}")
    ceiling = real_page_ceiling()
    if ceiling is not None:
        print(f"  distinct real pages (WiCE): largest exact Jaccard {ceiling:.3f} (default threshold 0.7)")
    met = precision >= 0.95 and recall >= 0.95
    print(f"target (pairwise precision and recall both >= 0.95): {'met' if met else 'not met'}")


if __name__ == "__main__":
    import machine

    machine.run(main)
