"""Segmentation quality and throughput: against human atomic facts (FActScore) and human claims (ExpertQA,
Factcheck-Bench).

**FActScore** (``../shared/data/factscore/``: real InstructGPT and PerplexityAI biographies, split by annotators
into sentences and each sentence into atomic facts; the Perplexity outputs keep their ``[n]`` markers, the
annotators' sentences do not). Per method it prints:

- *sentence ends* against the annotators' sentences. Texts are aligned on their *skeleton*: the characters
  that are neither white space nor an engine artefact (``[n]``, link chips). Each annotator sentence is found
  in order in the answer's skeleton (all are found); an end is the skeleton offset after the sentence's last
  character once closing punctuation and quotes are dropped, so ``tank.[1]`` and ``tank`` end at the same place.
  Precision / recall / F1 of the ends a splitter makes (ends in the few stretches no annotator sentence
  covers are left out). For claim-making methods also the share of annotators' sentence ends found among
  the method's claim ends.
- *claims per sentence* against *human facts per sentence*, and claims / facts.
- *fact matching*: within each annotated sentence that has human facts, each human atomic fact is matched to
  at most one claim of that sentence (a claim belongs to the sentence its start falls in), greedily by
  descending cosine similarity of all-MiniLM-L6-v2 embeddings (packaged offline), pairs below a threshold
  never matched. *Fact recall* = matched facts / facts; *claim precision* = matched claims / claims of those
  sentences. The threshold is chosen on InstructGPT and reported on PerplexityAI: the cosine that best
  separates (Youden's J) pairs the annotators made the same fact (the one model-proposed fact they rewrote
  into the one new human fact of a sentence) from pairs they made different facts (two human facts of one
  sentence).

The rules of ``rules-v2`` are developed on InstructGPT only (its answers, facts and the matcher's threshold);
PerplexityAI is held out and its figures are the ones reported against the targets.

Targets (PerplexityAI): the shared sentence splitter's F1 >= 0.97; >= 0.97 of the annotators' sentence ends
among the default method's claim ends; for the default method claims / facts >= 0.6 with claim precision
>= 0.8. The model-assisted method runs when ``CITEAUDIT_ATOMIC_BASE_URL`` (and ``CITEAUDIT_ATOMIC_MODEL``) are
set; the benchmark says so when not.

**Factcheck-Bench** (``../shared/data/factcheck-bench/factcheck-GPT-benchmark.jsonl``: 94 real ChatGPT answers,
split by annotators into sentences and each sentence into checkable claims): the same figures with its human
claims in the place of FActScore's facts (claims per human claim, claim precision and fact recall by the same
matcher at the threshold chosen on InstructGPT, sentence ends), and the same targets for the default method.
Sentences are aligned as FActScore's are, curly quotes read as straight; an answer with a sentence not found in
order in its response is left out and counted.

**ExpertQA** (``answer_string`` texts): agreement with ExpertQA's human claim boundaries (each ``claim_string``
located in its answer). A predicted claim matches a human claim when both spans are equal after trimming
white space, citation markers and closing punctuation (exact), or — the relaxed figure — when they overlap
with an intersection over union of at least 0.5 (one-to-one, greedy in text order). ExpertQA's claims are
whole sentences, so a method that splits sentences into clauses (rules-v2) agrees less with them by design;
its row without clause splitting is the comparable one.

Throughput: MB/s of answer text (UTF-8), median of several passes, with two baselines measured in the same
run on the same texts: the naive regex sentence splitter, and ``json.loads`` of the texts as JSON strings.
Target: at least 2 MB/s.

Last, ``citeaudit segment`` with rules-v2 end to end on the ExpertQA files imported into a SQLite file: the
command's service function on a fresh copy of the file per pass (reading each answer's claims and edges,
segmenting, writing the new claim sets with their claims, pending edges and locations), MB/s = answer text /
wall time (CPU time beside it, which moves less with the machine's load), against the segmenter alone on the same
texts and engine spans in the same run; the store side alone (each segmentation made beforehand); end to end in
one process and with the worker process that segments while the store writes (both forced), beside the command's
own choice (the worker only when a second core is idle); once also the command as a process. Last, the bound the
parts' CPU times set: one after the other in one process, overlapped on two cores (the slower part), and any
split of the work over two cores (half their sum). Target: at least 4 MB/s end to end.

Run: make bench   (or: python benchmarks/bench_segment.py [--repeat N] [--no-facts] [--end-to-end-only])
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from citeaudit.ingest import read_files, store_prepared
from citeaudit.ingest.sentences import ARTEFACT, sentences
from citeaudit.ingest.text import claim_text, trim_span
from citeaudit.segment import Rules, segment
from citeaudit.segment import resegment as resegment_module
from citeaudit.segment.resegment import SegmentReport, resegment
from citeaudit.segment.rules_v2 import RulesV2
from citeaudit.segment.rules_v2 import segment as segment_v2
from citeaudit.segment.worker import worker_possible
from citeaudit.store import Store
from citeaudit.store.pipeline import second_core_idle

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
DATA = SHARED / "expertqa"
FACTSCORE = SHARED / "factscore"
FACTCHECK = SHARED / "factcheck-bench" / "factcheck-GPT-benchmark.jsonl"
_NAIVE = re.compile(r"(?<=[.!?])\s+")
_CLOSING = ".!?。！？；:;,"
DEFAULT_METHOD = resegment_module.DEFAULT_METHOD
"""The method ``citeaudit segment`` uses when none is named."""

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


def rules(options: Rules | RulesV2) -> Callable[[str], list[Span]]:
    def split(text: str) -> list[Span]:
        found = segment_v2(text, (), options) if isinstance(options, RulesV2) else segment(text, (), options)
        return [(c.start, c.end) for c in found.claims]

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


# -- FActScore: sentences and atomic facts ----------------------------------------------------------------------

Claim = tuple[int, int, str]
"""``(start, end, text)`` of one claim in an answer."""
_CLOSING_SKELETON = ".!?。！？；\"'”’»)]"


@dataclass(frozen=True)
class Annotated:
    """One annotated answer: its text, skeleton map and the annotators' sentences with their facts."""

    text: str
    skeleton: str
    """The text without white space and engine artefacts."""
    before: list[int]
    """``before[i]`` = skeleton characters in ``text[:i]``."""
    sentences: list[tuple[int, int, list[str]]]
    """``(skeleton start, skeleton end without closing punctuation, human facts)`` of each annotator sentence."""


def _skeleton(text: str) -> tuple[str, list[int]]:
    dropped = bytearray(len(text))
    for found in ARTEFACT.finditer(text):
        dropped[found.start() : found.end()] = b"\x01" * (found.end() - found.start())
    kept: list[str] = []
    before = [0] * (len(text) + 1)
    for i, char in enumerate(text):
        if not dropped[i] and not char.isspace():
            kept.append(char)
        before[i + 1] = len(kept)
    return "".join(kept), before


def _end_key(skeleton: str, start: int, end: int) -> int:
    while end > start and skeleton[end - 1] in _CLOSING_SKELETON:
        end -= 1
    return end


def load_factscore(name: str) -> list[Annotated]:
    """The annotated answers of one FActScore file (answers without annotations are left out)."""
    answers = []
    for line in (FACTSCORE / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if not record.get("annotations"):
            continue
        skeleton, before = _skeleton(record["output"])
        cursor = 0
        found = []
        for sentence in record["annotations"]:
            piece, _ = _skeleton(sentence["text"])
            at = skeleton.find(piece, cursor)
            if at < 0:
                raise SystemExit(f"{name}: annotator sentence {sentence['text']!r} not found in its output")
            cursor = at + len(piece)
            facts = [f["text"] for f in sentence.get("human-atomic-facts") or []]
            found.append((at, _end_key(skeleton, at, cursor), facts))
        answers.append(Annotated(record["output"], skeleton, before, found))
    return answers


_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})
"""Curly quotes read as straight ones when aligning (one character for one: offsets are kept)."""


def load_factcheck() -> tuple[list[Annotated], int]:
    """Factcheck-Bench's answers whose annotator sentences are all found, in order, in the response, each with
    its human claims as the sentence's facts; and how many answers were left out because one was not."""
    answers = []
    left_out = 0
    for line in FACTCHECK.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        text = record["response"]
        skeleton, before = _skeleton(text.translate(_QUOTES))
        cursor = 0
        found = []
        order = sorted(record["sentences"], key=lambda name: int(name.removeprefix("sentence")))
        for name in order:
            sentence = record["sentences"][name]
            piece, _ = _skeleton(sentence["text"].translate(_QUOTES))
            at = skeleton.find(piece, cursor)
            if at < 0 or not piece:
                break
            cursor = at + len(piece)
            found.append((at, _end_key(skeleton, at, cursor), [str(c) for c in sentence.get("claims") or []]))
        if len(found) < len(order):
            left_out += 1
            continue
        answers.append(Annotated(text, skeleton, before, found))
    return answers, left_out


def _key(answer: Annotated, start: int, end: int) -> int:
    return _end_key(answer.skeleton, answer.before[start], answer.before[end])


def _covered(answer: Annotated, key: int) -> bool:
    return any(start < key <= end for start, end, _ in answer.sentences)


@dataclass(frozen=True)
class Ends:
    """Sentence ends of a splitter against the annotators'."""

    matched: int
    predicted: int
    expected: int

    def line(self) -> str:
        precision, recall = self.matched / self.predicted, self.matched / self.expected
        return f"{precision:.3f} / {recall:.3f} / {2 * precision * recall / (precision + recall):.3f}"

    @property
    def f1(self) -> float:
        precision, recall = self.matched / self.predicted, self.matched / self.expected
        return 2 * precision * recall / (precision + recall)


def sentence_ends(answers: list[Annotated], split: Callable[[str], list[Span]]) -> Ends:
    matched = predicted = expected = 0
    for answer in answers:
        gold = {end for _, end, _ in answer.sentences}
        made = {key for s, e in split(answer.text) if _covered(answer, key := _key(answer, s, e))}
        matched += len(gold & made)
        predicted += len(made)
        expected += len(gold)
    return Ends(matched, predicted, expected)


def shared_splitter(text: str) -> list[Span]:
    """The sentence splitter ingest and ``rules-v2`` share."""
    return [(s.start, s.stop) for s in sentences(text)]


@dataclass
class FactFigures:
    """Claims of one method against the annotators' sentences and atomic facts."""

    ends_found: int = 0
    ends: int = 0
    claims: int = 0
    claims_outside: int = 0
    sentences: int = 0
    facts: int = 0
    fact_sentences: int = 0
    fact_claims: int = 0
    matched: int = 0
    pairs: list[tuple[list[str], list[str]]] = field(default_factory=list)

    def row(self, matched: bool) -> str:
        per_claim = self.claims / self.sentences
        per_fact = self.facts / self.sentences
        matching = "fact recall n/a  claim precision n/a"
        if matched:
            precision = self.matched / self.fact_claims if self.fact_claims else float("nan")
            matching = f"fact recall {self.matched / self.facts:.3f}  claim precision {precision:.3f}"
        return (
            f"ends found {self.ends_found / self.ends:.3f}  claims/sentence {per_claim:.2f} vs facts/sentence "
            f"{per_fact:.2f}  claims/facts {self.fact_claims / self.facts:.2f}  {matching}"
        )


def claim_figures(answers: list[Annotated], claims_of: Callable[[str], list[Claim]]) -> FactFigures:
    """Claims per annotated sentence and the (claims, facts) pairs to match, per sentence with facts."""
    figures = FactFigures()
    for answer in answers:
        made = claims_of(answer.text)
        ends = {_key(answer, s, e) for s, e, _ in made}
        by_sentence: list[list[str]] = [[] for _ in answer.sentences]
        for start, _, text in made:
            key = answer.before[start]
            index = next((i for i, (s, e, _) in enumerate(answer.sentences) if s <= key < e), None)
            if index is None:
                figures.claims_outside += 1
                continue
            by_sentence[index].append(text)
        figures.claims += sum(len(c) for c in by_sentence)
        figures.sentences += len(answer.sentences)
        for (_, end, facts), claims in zip(answer.sentences, by_sentence, strict=True):
            figures.ends += 1
            figures.ends_found += end in ends
            if facts:
                figures.fact_sentences += 1
                figures.facts += len(facts)
                figures.fact_claims += len(claims)
                figures.pairs.append((claims, facts))
    return figures


class Embeddings:
    """all-MiniLM-L6-v2 vectors, each distinct text encoded once."""

    def __init__(self) -> None:
        from citeaudit.evidence import default_encoder

        self.encoder = default_encoder()
        self.vectors: dict[str, Any] = {}

    def add(self, texts: Iterable[str]) -> None:
        missing = sorted({t for t in texts if t not in self.vectors})
        if missing:
            for text, row in zip(missing, self.encoder.encode(missing), strict=True):
                self.vectors[text] = row

    def cosine(self, first: str, second: str) -> float:
        return float(self.vectors[first] @ self.vectors[second])


def greedy_matches(claims: list[str], facts: list[str], embeddings: Embeddings, threshold: float) -> int:
    """One-to-one matches of claims to facts, greedily by descending cosine, none below ``threshold``."""
    scored = sorted(
        ((embeddings.cosine(c, f), i, j) for i, c in enumerate(claims) for j, f in enumerate(facts)), reverse=True
    )
    used_claims: set[int] = set()
    used_facts: set[int] = set()
    for score, i, j in scored:
        if score < threshold:
            break
        if i not in used_claims and j not in used_facts:
            used_claims.add(i)
            used_facts.add(j)
    return len(used_claims)


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def calibration_pairs(name: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Same-fact pairs (a sentence's one rewritten model fact and its one new human fact) and different-fact
    pairs (two human facts of one sentence) from one FActScore file."""
    same: list[tuple[str, str]] = []
    different: list[tuple[str, str]] = []
    for line in (FACTSCORE / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
        for sentence in json.loads(line).get("annotations") or []:
            human = [f["text"] for f in sentence.get("human-atomic-facts") or []]
            model = [f["text"] for f in sentence.get("model-atomic-facts") or []]
            human_keys = {_normal(h) for h in human}
            model_keys = {_normal(m) for m in model}
            rewritten = [m for m in model if _normal(m) not in human_keys]
            new = [h for h in human if _normal(h) not in model_keys]
            if len(rewritten) == 1 and len(new) == 1:
                same.append((rewritten[0], new[0]))
            distinct = list(dict.fromkeys(human))
            different.extend((a, b) for i, a in enumerate(distinct) for b in distinct[i + 1 :])
    return same, different


def choose_threshold(embeddings: Embeddings, same: list[tuple[str, str]], different: list[tuple[str, str]]) -> float:
    """The cosine threshold with the highest Youden's J (true-positive rate minus false-positive rate)."""
    embeddings.add(t for pair in same + different for t in pair)
    positives = sorted(embeddings.cosine(a, b) for a, b in same)
    negatives = sorted(embeddings.cosine(a, b) for a, b in different)
    best, best_j = 0.5, -1.0
    for step in range(40, 100):
        threshold = step / 100
        tpr = 1 - bisect.bisect_left(positives, threshold) / len(positives)
        fpr = 1 - bisect.bisect_left(negatives, threshold) / len(negatives)
        if tpr - fpr > best_j:
            best, best_j = threshold, tpr - fpr
    return best


def _naive_claims(text: str) -> list[Claim]:
    return [(s, e, text[s:e]) for s, e in naive(text)]


def _sentence_claims(text: str) -> list[Claim]:
    return [(s.start, s.stop, claim_text(text, s.start, s.stop)) for s in sentences(text)]


def _rules_claims(options: Rules | RulesV2) -> Callable[[str], list[Claim]]:
    def claims(text: str) -> list[Claim]:
        found = segment_v2(text, (), options) if isinstance(options, RulesV2) else segment(text, (), options)
        return [(c.start, c.end, c.text) for c in found.claims]

    return claims


def _atomic_method() -> Callable[[str], list[Claim]] | None:
    """``atomic-v1`` when an endpoint and a model are configured (responses cached, so a rerun is free)."""
    base_url = os.environ.get("CITEAUDIT_ATOMIC_BASE_URL")
    model = os.environ.get("CITEAUDIT_ATOMIC_MODEL")
    if not base_url or not model:
        print(
            "atomic-v1: not run (no endpoint configured: set CITEAUDIT_ATOMIC_BASE_URL and CITEAUDIT_ATOMIC_MODEL, "
            "and CITEAUDIT_ATOMIC_API_KEY if the endpoint needs a key)"
        )
        return None
    from citeaudit.segment.atomic import AtomicSettings, ChatEndpoint, ResponseCache, decompose

    folder = Path(os.environ.get("CITEAUDIT_ATOMIC_CACHE") or Path(tempfile.gettempdir()) / "citeaudit-bench-atomic")
    cache = ResponseCache(folder)
    endpoint = ChatEndpoint(base_url)
    settings = AtomicSettings(model=model)
    print(f"atomic-v1: {model} at {base_url}, temperature 0, responses cached in {folder}")

    def claims(text: str) -> list[Claim]:
        found = decompose(text, (), settings, endpoint, cache).segmented
        return [(c.start, c.end, c.text) for c in found.claims]

    return claims


def factscore(with_facts: bool) -> bool | None:
    """Prints the FActScore figures; whether the targets are met (``None`` when the data is absent)."""
    if not FACTSCORE.is_dir():
        print(f"skipped: FActScore data not found at {FACTSCORE} (see shared/data/SOURCES.md)")
        return None
    data = {name: load_factscore(name) for name in ("InstructGPT", "PerplexityAI")}
    for name, answers in data.items():
        count = sum(len(a.sentences) for a in answers)
        facts = sum(len(f) for a in answers for _, _, f in a.sentences)
        print(f"FActScore {name}: {len(answers)} annotated answers, {count} annotator sentences, {facts} human facts")
    splitters: dict[str, Callable[[str], list[Span]]] = {
        "naive regex splitter": naive,
        "rules-v1 sentences": rules(Rules(split_coordination=False, skip_non_assertions=False)),
        "shared splitter (ingest, rules-v2)": shared_splitter,
    }
    targets: dict[str, bool] = {}
    for name, answers in data.items():
        print(f"sentence ends against the annotators' ({name}; precision / recall / F1):")
        for label, split in splitters.items():
            ends = sentence_ends(answers, split)
            print(f"  {label:36s} {ends.line()}   ({ends.predicted} ends vs {ends.expected})")
            if name == "PerplexityAI" and label.startswith("shared"):
                targets[f"splitter F1 {ends.f1:.3f} >= 0.97"] = ends.f1 >= 0.97
    methods: dict[str, Callable[[str], list[Claim]]] = {
        "naive regex splitter": _naive_claims,
        "shared splitter": _sentence_claims,
        "rules-v1": _rules_claims(Rules()),
        "rules-v2": _rules_claims(RulesV2()),
    }
    atomic_claims = _atomic_method()
    if atomic_claims is not None:
        methods["atomic-v1"] = atomic_claims
    embeddings = Embeddings() if with_facts else None
    threshold = None
    if embeddings is not None:
        same, different = calibration_pairs("InstructGPT")
        threshold = choose_threshold(embeddings, same, different)
        print(
            f"fact matcher: greedy one-to-one on all-MiniLM-L6-v2 cosine >= {threshold:.2f}, the threshold with the "
            f"best Youden's J on InstructGPT ({len(same)} same-fact pairs, {len(different)} different-fact pairs)"
        )
    else:
        print("fact matcher: not run (--no-facts)")
    for name, answers in data.items():
        role = "development set" if name == "InstructGPT" else "held out: never used to develop the rules"
        print(f"claims against the annotators' sentences and atomic facts ({name}, {role}):")
        for label, claims_of in methods.items():
            figures = claim_figures(answers, claims_of)
            if embeddings is not None and threshold is not None:
                embeddings.add(t for claims, facts in figures.pairs for t in claims + facts)
                figures.matched = sum(greedy_matches(c, f, embeddings, threshold) for c, f in figures.pairs)
            print(f"  {label:22s} {figures.row(embeddings is not None)}")
            if name == "PerplexityAI" and label == DEFAULT_METHOD:
                found, ratio = figures.ends_found / figures.ends, figures.fact_claims / figures.facts
                targets[f"{label} sentence ends found {found:.3f} >= 0.97"] = found >= 0.97
                targets[f"{label} claims/facts {ratio:.2f} >= 0.6"] = ratio >= 0.6
                if embeddings is None:
                    targets[f"{label} claim precision not measured (--no-facts)"] = False
                else:
                    precision = figures.matched / figures.fact_claims
                    targets[f"{label} claim precision {precision:.3f} >= 0.8"] = precision >= 0.8
    for target, verdict in targets.items():
        print(f"  target (PerplexityAI, held out) {target}: {'met' if verdict else 'NOT met'}")
    second = factcheck(methods, embeddings, threshold)
    return all(targets.values()) and second is not False


def factcheck(
    methods: dict[str, Callable[[str], list[Claim]]], embeddings: Embeddings | None, threshold: float | None
) -> bool | None:
    """The same figures on a second human set: Factcheck-Bench's ChatGPT answers, split by annotators into
    sentences and each sentence into checkable claims (matched as FActScore's facts are, with the threshold chosen
    on FActScore's InstructGPT). Whether the default method meets the targets there (``None`` without the data)."""
    if not FACTCHECK.exists():
        print(f"skipped: Factcheck-Bench data not found at {FACTCHECK} (see shared/data/SOURCES.md)")
        return None
    answers, left_out = load_factcheck()
    count = sum(len(a.sentences) for a in answers)
    claims = sum(len(f) for a in answers for _, _, f in a.sentences)
    print(
        f"Factcheck-Bench: {len(answers)} answers, {count} annotator sentences, {claims} human claims "
        f"({left_out} answer(s) left out: an annotator sentence not found in order in the response)"
    )
    ends = sentence_ends(answers, shared_splitter)
    print(f"  sentence ends, shared splitter (precision / recall / F1): {ends.line()}")
    targets: dict[str, bool] = {}
    print("claims against the annotators' sentences and human claims (Factcheck-Bench, never used to develop):")
    for label, claims_of in methods.items():
        figures = claim_figures(answers, claims_of)
        if embeddings is not None and threshold is not None:
            embeddings.add(t for made, human in figures.pairs for t in made + human)
            figures.matched = sum(greedy_matches(c, f, embeddings, threshold) for c, f in figures.pairs)
        row = figures.row(embeddings is not None).replace("fact recall", "human-claim recall")
        print(f"  {label:22s} {row.replace('facts', 'human claims')}")
        if label == DEFAULT_METHOD:
            ratio = figures.fact_claims / figures.facts
            targets[f"{label} claims / human claims {ratio:.2f} >= 0.6"] = ratio >= 0.6
            if embeddings is None:
                targets[f"{label} claim precision not measured (--no-facts)"] = False
            else:
                precision = figures.matched / figures.fact_claims
                targets[f"{label} claim precision {precision:.3f} >= 0.8"] = precision >= 0.8
    for target, verdict in targets.items():
        print(f"  target (Factcheck-Bench) {target}: {'met' if verdict else 'NOT met'}")
    return all(targets.values())


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
    parser.add_argument("--no-facts", action="store_true", help="skip the embedding-based fact matching")
    parser.add_argument("--no-expertqa", action="store_true", help="skip the ExpertQA agreement and throughput")
    parser.add_argument(
        "--end-to-end-only", action="store_true", help="only citeaudit segment end to end on the imported ExpertQA"
    )
    args = parser.parse_args()
    if args.end_to_end_only:
        if not DATA.is_dir():
            print(f"not met: ExpertQA data not found at {DATA} (see shared/data/SOURCES.md)")
            return
        rate = database(args.repeat)
        verdict = "met" if rate >= END_TO_END_TARGET else "not met"
        print(f"{verdict}: citeaudit segment end to end {rate:.2f} MB/s against >= {END_TO_END_TARGET:g} MB/s")
        return
    facts_met = factscore(not args.no_facts)
    speed_met = None if args.no_expertqa else expertqa(args.repeat)
    end_to_end = None if args.no_expertqa or not DATA.is_dir() else database(args.repeat)
    verdicts = [v for v in (facts_met, speed_met) if v is not None]
    if end_to_end is not None:
        verdicts.append(end_to_end >= END_TO_END_TARGET)
    if not verdicts:
        print("not met: no data to measure (see shared/data/SOURCES.md)")
        return
    parts = []
    if facts_met is not None:
        parts.append(f"FActScore targets {'met' if facts_met else 'not met'}")
    if speed_met is not None:
        parts.append(f"segmenter throughput {'met' if speed_met else 'not met'}")
    if end_to_end is not None:
        verdict = "met" if end_to_end >= END_TO_END_TARGET else "not met"
        parts.append(f"citeaudit segment end to end {end_to_end:.2f} MB/s against >= {END_TO_END_TARGET:g}: {verdict}")
    print(f"{'met' if all(verdicts) else 'not met'}: {'; '.join(parts)}")


def expertqa(repeat: int) -> bool | None:
    """Prints the ExpertQA agreement and throughput; whether the throughput target is met."""
    if not DATA.is_dir():
        print(f"skipped: ExpertQA data not found at {DATA} (see shared/data/SOURCES.md)")
        return None
    texts, gold, found, missing = load()
    size = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    print(
        f"ExpertQA answer_string texts: {len(texts)} unique answers, {size:.2f} MB, {found} human claims located "
        f"({missing} claim strings not found verbatim in their answer, left out)"
    )
    print("agreement with human claim boundaries (precision / recall / F1):")
    candidates = {
        "rules-v2": rules(RulesV2()),
        "rules-v2, no clause split": rules(RulesV2(split_clauses=False)),
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
    seg = timed(lambda: run_all(rules(RulesV2()), texts), repeat)
    seg_v1 = timed(lambda: run_all(rules(Rules()), texts), repeat)
    regex = timed(lambda: run_all(naive, texts), repeat)
    parse = timed(lambda: run_all(json.loads, encoded), repeat)
    print(f"throughput, median of {repeat}:")
    print(f"  json.loads of the texts     {size / parse:8.1f} MB/s")
    print(f"  naive regex splitter        {size / regex:8.1f} MB/s")
    print(f"  rules-v1                    {size / seg_v1:8.1f} MB/s; {seg_v1 / regex:.1f}x the regex splitter's time")
    print(
        f"  rules-v2 (default)          {size / seg:8.1f} MB/s; {seg / regex:.1f}x the regex splitter's time, "
        f"{seg / parse:.1f}x json.loads', {seg / seg_v1:.2f}x rules-v1's"
    )
    print(f"  target (default method >= 2 MB/s): {'met' if size / seg >= 2 else 'NOT met'}")
    return size / seg >= 2


END_TO_END_TARGET = 4.0
"""MB/s of answer text ``citeaudit segment`` (rules-v2) must reach end to end on a database."""


def _imported_database(folder: Path) -> Path:
    """A SQLite file with the ExpertQA files imported, as ``citeaudit ingest`` leaves it."""
    db = folder / "imported.db"
    with Store(db) as store:
        for item in read_files(sorted(DATA.glob("*.jsonl")), None, None):
            store_prepared(store, item)
    return db


def _without_segmenting(db: Path, made: dict[tuple[str, tuple[tuple[int, int], ...]], Any]) -> tuple[float, float]:
    """Seconds (wall, CPU) ``resegment`` takes on ``db`` in one process when each segmentation is looked up
    instead of made."""
    original = resegment_module._segment_with
    resegment_module._segment_with = lambda text, regions, rules: made[(text, tuple(regions))]  # type: ignore[assignment]
    try:
        with Store(db) as store:
            start, cpu = time.perf_counter(), time.process_time()
            resegment(store, worker=False)
            return time.perf_counter() - start, time.process_time() - cpu
    finally:
        resegment_module._segment_with = original


def _passes(imported: Path, folder: Path, worker: bool | None) -> tuple[float, float, SegmentReport]:
    """Seconds (wall, CPU of this process) of one ``resegment`` on a fresh copy of ``imported``."""
    copy = folder / "pass.db"
    shutil.copyfile(imported, copy)
    try:
        with Store(copy) as store:
            start, cpu = time.perf_counter(), time.process_time()
            report = resegment(store, worker=worker)
            return time.perf_counter() - start, time.process_time() - cpu, report
    finally:
        for leftover in folder.glob("pass.db*"):
            leftover.unlink()


def database(repeat: int) -> float:
    """``citeaudit segment`` (rules-v2, the default) end to end on the ExpertQA files imported into a SQLite file:
    each answer's claims and edges read, segmented, the new claim set with its claims, pending edges and their
    locations written. Each pass runs the command's service function on a fresh copy of the imported file: as the
    command chooses (a worker process or not), in one process, and with the worker; the baseline is the
    segmenter alone on the same texts and engine spans, and the store side alone (each segmentation made
    beforehand), timed in the same pass. Once, the command as a process too (its interpreter start and imports
    included). Returns the end-to-end MB/s of the command's own choice."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        imported = _imported_database(folder)
        with Store(imported) as store:
            states = [store.claims.of_answer(pk) for pk, _, _ in store.claims.answers()]
        size = sum(len(s.text.encode("utf-8")) for s in states) / 1e6
        made = {(s.text, s.regions): segment_v2(s.text, s.regions) for s in states}
        passes = max(3, repeat)
        with_worker = worker_possible()
        times: dict[str, list[tuple[float, float]]] = {"alone": [], "chosen": [], "one": [], "worker": [], "store": []}
        reports = []
        for _ in range(passes):
            start, cpu = time.perf_counter(), time.process_time()
            for state in states:
                segment_v2(state.text, state.regions)
            times["alone"].append((time.perf_counter() - start, time.process_time() - cpu))
            wall, cpu_time, report = _passes(imported, folder, None)
            times["chosen"].append((wall, cpu_time))
            reports.append(report)
            times["one"].append(_passes(imported, folder, False)[:2])
            if with_worker:
                times["worker"].append(_passes(imported, folder, True)[:2])
            copy = folder / "store.db"
            shutil.copyfile(imported, copy)
            times["store"].append(_without_segmenting(copy, made))
            for leftover in folder.glob("store.db*"):
                leftover.unlink()
        load = os.getloadavg()[0]
        chosen_worker = second_core_idle()
        copy = folder / "process.db"
        shutil.copyfile(imported, copy)
        command = [sys.executable, "-c", "from citeaudit.cli import main; main()", "segment", "--db", str(copy)]
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        process = time.perf_counter() - start
    wall = {k: statistics.median(w for w, _ in v) for k, v in times.items() if v}
    cpu = {k: statistics.median(c for _, c in v) for k, v in times.items() if v}
    report = reports[-1]
    print(f"citeaudit segment (rules-v2) on the imported ExpertQA database, median of {passes} passes:")
    print(
        f"  {report.answers} answers, {size:.2f} MB of text; {report.new} claims made, {report.retired} replaced, "
        f"{report.edges_pending} pending edges"
    )
    baseline = wall["alone"]
    print(f"  segmenter alone (baseline)      {size / baseline:6.2f} MB/s ({baseline:.3f} s; CPU {cpu['alone']:.3f} s)")
    print(
        f"  store side alone                {size / wall['store']:6.2f} MB/s ({wall['store']:.3f} s; CPU "
        f"{cpu['store']:.3f} s; each segmentation made beforehand: reading, planning, writing)"
    )
    print(
        f"  end to end in one process       {size / wall['one']:6.2f} MB/s ({wall['one']:.3f} s; CPU "
        f"{cpu['one']:.3f} s), {wall['one'] / baseline:.2f}x the segmenter's time"
    )
    if "worker" in wall:
        print(
            f"  end to end with the worker      {size / wall['worker']:6.2f} MB/s ({wall['worker']:.3f} s; CPU of this "
            f"process {cpu['worker']:.3f} s), {wall['worker'] / wall['one']:.2f}x the time in one process"
        )
    else:
        print("  end to end with the worker      not possible here (no fork, one core or other threads)")
    took = wall["chosen"]
    print(
        f"  end to end as the command chose {size / took:6.2f} MB/s ({took:.3f} s; CPU {cpu['chosen']:.3f} s), "
        f"{took / baseline:.2f}x the segmenter's time; {report.answers / took:,.0f} answers/s "
        f"(at load {load:.2f} after the passes it {'uses' if chosen_worker and with_worker else 'does not use'} "
        "the worker)"
    )
    print(f"  end to end as a process         {size / process:6.2f} MB/s ({process:.3f} s, start-up included, 1 run)")
    # The bound from the CPU times of the two parts, which move less with the load than wall time: one process runs
    # them one after the other; the worker overlaps them, so the slower part bounds it; no split of the work over
    # two cores can do better than half their sum.
    serial, overlapped, halved = (
        cpu["alone"] + cpu["store"],
        max(cpu["alone"], cpu["store"]),
        (cpu["alone"] + cpu["store"]) / 2,
    )
    print(
        f"  bound from the parts' CPU time: one process {size / serial:.2f} MB/s ({serial:.3f} s); segmenter and "
        f"store side overlapped on 2 cores {size / overlapped:.2f} MB/s ({overlapped:.3f} s); any split of the "
        f"work over 2 cores {size / halved:.2f} MB/s ({halved:.3f} s)"
    )
    met = size / took >= END_TO_END_TARGET
    print(f"  target (end to end >= {END_TO_END_TARGET:g} MB/s): {'met' if met else 'NOT met'}")
    return size / took


if __name__ == "__main__":
    import machine

    machine.run(main)
