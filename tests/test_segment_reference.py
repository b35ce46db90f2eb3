"""rules-v2 gives the same claims, sentences and skipped pieces as its plain reference path, on real answers.

The segmenter passes over words that cannot cut a predicate without looking at them further, and cleans a
subject's text with regular expressions only when it holds a bracket. The reference path here looks at every word
and always runs both expressions. Both run on the ExpertQA answers, the FActScore InstructGPT and PerplexityAI
answers, and the recorded engine payloads after ingest (with their engine spans).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from citeaudit.ingest import Attachment, read_file, store_prepared
from citeaudit.interchange import load_protocol
from citeaudit.segment import clauses, phrases, words
from citeaudit.segment.rules_v2 import RulesV2, segment
from citeaudit.store import Store
from conftest import SHARED

DATA = SHARED / "data"
PROTOCOL = Path(__file__).parent / "fixtures" / "protocol.yaml"


class _EveryWord:
    """A set that holds every word: the predicate loop looks at each one."""

    def __contains__(self, word: object) -> bool:
        return True


def _plain_clean(text: str, start: int, end: int) -> str:
    piece = re.sub(r"\s*\([^()]*\)", "", text[start:end])
    piece = re.sub(r"\[\d{1,4}\]", "", piece)
    return " ".join(piece.split()).strip(" ,;")


def _answers(tmp_path: Path) -> list[tuple[str, tuple[tuple[int, int], ...]]]:
    if not (DATA / "expertqa").is_dir() or not (DATA / "factscore").is_dir() or not (DATA / "engine-payloads").is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"the shared data is missing at {DATA}: CI must have ../shared/data")
        pytest.skip(f"ExpertQA, FActScore or engine payloads not found under {DATA} (see SOURCES.md)")
    found: dict[str, tuple[tuple[int, int], ...]] = {}
    for path in sorted((DATA / "expertqa").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for body in json.loads(line)["answers"].values():
                found.setdefault(body.get("answer_string") or "", ())
    for name in ("InstructGPT", "PerplexityAI"):
        for line in (DATA / "factscore" / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
            found.setdefault(json.loads(line)["output"], ())
    protocol = load_protocol(PROTOCOL)
    attachment = Attachment(protocol, question_id=protocol.questions[0].id)
    with Store(tmp_path / "engines.db") as store:
        for payload in sorted((DATA / "engine-payloads").rglob("*.json")):
            store_prepared(store, read_file(payload, None, attachment))
        for answer_pk, _, _ in store.claims.answers():
            state = store.claims.of_answer(answer_pk)
            found[state.text] = state.regions
    return [(text, regions) for text, regions in found.items() if text]


def test_rules_v2_matches_its_plain_reference_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = _answers(tmp_path)
    assert len(answers) > 800
    settings = (RulesV2(), RulesV2(split_clauses=False))
    fast = [[segment(text, regions, rules) for rules in settings] for text, regions in answers]
    monkeypatch.setattr(clauses, "_CUT_WORDS", _EveryWord())
    for module in (words, clauses, phrases):
        monkeypatch.setattr(module, "_clean", _plain_clean)
    plain = [[segment(text, regions, rules) for rules in settings] for text, regions in answers]
    assert sum(len(made[0].claims) for made in plain) > 10_000
    for (text, _), ours, reference in zip(answers, fast, plain, strict=True):
        assert ours == reference, text[:80]
