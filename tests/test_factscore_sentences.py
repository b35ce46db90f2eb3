"""The shared sentence splitter against the FActScore annotators' sentences of real Perplexity answers.

``../shared/data/factscore/PerplexityAI.jsonl`` holds Perplexity outputs with their ``[n]`` markers and, per
answer, the sentences human annotators cut it into (without the markers). Sentence ends are compared on a
skeleton of the text: white space and ``[n]`` markers dropped, closing punctuation and quotes at the end of a
sentence not counted, so that "… 1961.[2]" and the annotators' "… 1961." end at the same place. This check is
written apart from ``benchmarks/bench_segment.py`` (which reports the same figure) so that each can catch the other.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from citeaudit.ingest.sentences import sentences

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "factscore" / "PerplexityAI.jsonl"
MARKER = re.compile(r"\[\d+\]")
CLOSING = set(".!?。！？\"'”’)]")


def _data() -> Path:
    if not DATA.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{DATA} is missing: CI runs with ../shared beside the checkout")
        pytest.skip(f"FActScore data not found at {DATA} (see ../shared/data/SOURCES.md)")
    return DATA


def _skeleton(text: str) -> tuple[str, list[int]]:
    """The text without white space and markers, and for each position of ``text`` the skeleton length before it."""
    dropped = [False] * len(text)
    for found in MARKER.finditer(text):
        for i in range(found.start(), found.end()):
            dropped[i] = True
    kept: list[str] = []
    before = [0]
    for i, char in enumerate(text):
        if not dropped[i] and not char.isspace():
            kept.append(char)
        before.append(len(kept))
    return "".join(kept), before


def _end(skeleton: str, start: int, end: int) -> int:
    while end > start and skeleton[end - 1] in CLOSING:
        end -= 1
    return end


def test_the_splitter_finds_the_annotators_sentence_ends() -> None:
    matched = made_total = gold_total = answers = 0
    for line in _data().read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if not record.get("annotations"):
            continue
        answers += 1
        text = record["output"]
        skeleton, before = _skeleton(text)
        gold: set[int] = set()
        cursor = 0
        for sentence in record["annotations"]:
            piece, _ = _skeleton(sentence["text"])
            at = skeleton.find(piece, cursor)
            assert at >= 0, sentence["text"]  # every annotator sentence is a piece of its output, in order
            cursor = at + len(piece)
            gold.add(_end(skeleton, at, cursor))
        made: set[int] = set()
        for found in sentences(text):
            assert text[found.start : found.stop].strip()  # a sentence is never empty
            start, end = before[found.start], before[found.stop]
            if end > start:
                made.add(_end(skeleton, start, end))
        matched += len(gold & made)
        made_total += len(made)
        gold_total += len(gold)
    # SOURCES.md: 166 annotated PerplexityAI answers
    assert answers == 166
    precision, recall = matched / made_total, matched / gold_total
    f1 = 2 * precision * recall / (precision + recall)
    # the target for the splitter: F1 >= 0.97 against the annotators' sentence ends
    assert f1 >= 0.97, (precision, recall, f1)
