"""Write the bundled synthetic exporter audit (src/citeaudit/examples/exporter.audit.json).

A fictional machine maker, Axtorp Machines, sells the AX series of portable air compressors. Twelve
questions with required facts and severities are put to three engines; the answers state some facts
correctly, some wrongly and leave some out; they cite the maker's own sites, a distributor's brand pages
(official by host and path), reviews, forums and a look-alike domain. Reviewer labels cover all five labels,
with duplicated citations, pending edges, one dispute and a title-only source card.

Deterministic: the same seed always writes the same file (a test checks that the committed file matches).
Run: python scripts/make_exporter_example.py
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import yaml

EXAMPLES = Path(__file__).resolve().parent.parent / "src" / "citeaudit" / "examples"
OUT = EXAMPLES / "exporter.audit.json"
PROTOCOL_OUT = EXAMPLES / "exporter.protocol.yaml"
SEED = 20261120

OFFICIAL = [
    "axtorp-machines.com",
    "axtorp.de",
    {"host": "www.industrial-supply.co.uk", "path_prefix": "/brands/axtorp/"},
]

PAGES = {
    "ax150": (
        "https://www.axtorp-machines.com/products/ax150",
        "AX150 portable compressor – Axtorp Machines",
    ),
    "ax220": (
        "https://www.axtorp-machines.com/products/ax220?utm_source=chatgpt.com",
        "AX220 – technical data",
    ),
    "ax220_de": ("https://www.axtorp.de/produkte/ax220", "AX220 Kompressor – Axtorp Deutschland"),
    "ax300": ("https://www.axtorp-machines.com/products/ax300", "AX300 three-phase compressor"),
    "ax300_dist": (
        "https://www.industrial-supply.co.uk/brands/axtorp/ax300",
        "Axtorp AX300 | Industrial Supply UK",
    ),
    "doc": (
        "https://www.axtorp-machines.com/certificates/ax-series-declaration-of-conformity.pdf",
        "EU Declaration of Conformity – AX series",
    ),
    "warranty": ("https://www.axtorp-machines.com/service/warranty", "Warranty terms"),
    "service": ("https://www.axtorp-machines.com/service/network#countries", "Service network"),
    "parts": ("https://www.axtorp-machines.com/service/spare-parts", "Spare parts policy"),
    "review": (
        "https://www.compressor-reviews.net/axtorp-ax220-review?utm_source=openai&utm_medium=referral",
        "Axtorp AX220 review: quiet and compact",
    ),
    "magazine": (
        "https://www.tradetools-magazine.com/tests/portable-compressors-2026",
        "Portable compressors tested (2026)",
    ),
    "forum": ("https://forum.workshop-talk.org/t/ax150-in-a-paint-booth/1123", "AX150 in a paint booth?"),
    "wiki": ("https://en.wikipedia.org/wiki/Air_compressor", "Air compressor – Wikipedia"),
    "lookalike": ("https://axtorp-machines.com.deals-outlet.net/ax220", "AX220 -40% outlet"),
    "dist_other": (
        "https://www.industrial-supply.co.uk/brands/other/compressors",
        "Compressors | Industrial Supply UK",
    ),
}

# question id, question text, [(fact id, fact text, severity, correct sentence, wrong sentence, good pages)]
QUESTIONS = [
    (
        "q01",
        "What tank size does the AX220 have?",
        [
            (
                "f01",
                "AX220 tank is 20 L",
                "high",
                "The AX220 has a 20 L tank",
                "The AX220 has a 25 L tank",
                ["ax220", "ax220_de", "review"],
            )
        ],
    ),
    (
        "q02",
        "What is the maximum working pressure of the AX300?",
        [
            (
                "f02",
                "AX300 maximum working pressure is 10 bar",
                "high",
                "The AX300 works at up to 10 bar",
                "The AX300 reaches 12 bar",
                ["ax300", "ax300_dist", "magazine"],
            )
        ],
    ),
    (
        "q03",
        "Can the AX220 be used outdoors?",
        [
            (
                "f03",
                "AX220 is rated IP54 for outdoor use",
                "medium",
                "The AX220 is rated IP54 and can run outdoors",
                "The AX220 is for indoor use only",
                ["ax220", "review"],
            )
        ],
    ),
    (
        "q04",
        "Which certifications does the AX series carry?",
        [
            (
                "f04",
                "AX series is CE marked under the Machinery Directive",
                "critical",
                "All AX models carry CE marking under the Machinery Directive",
                "The AX series is CE marked under the Low Voltage Directive only",
                ["doc", "ax220"],
            ),
            (
                "f05",
                "AX300 is UKCA marked",
                "high",
                "The AX300 is also UKCA marked",
                "Only the AX150 is UKCA marked",
                ["ax300_dist", "doc"],
            ),
            (
                "f06",
                "No AX model is ATEX certified",
                "critical",
                "No AX model is ATEX certified",
                "The AX series is ATEX certified for zone 2",
                ["doc"],
            ),
        ],
    ),
    (
        "q05",
        "Is the AX150 suitable for explosive atmospheres?",
        [
            (
                "f07",
                "AX150 is not ATEX certified",
                "critical",
                "The AX150 is not ATEX certified and must not be used in explosive atmospheres",
                "The AX150 can be used in paint booths",
                ["ax150", "doc", "forum"],
            )
        ],
    ),
    (
        "q06",
        "What warranty does Axtorp give on AX compressors?",
        [
            (
                "f08",
                "AX compressors have a 3-year warranty",
                "medium",
                "Axtorp gives a 3-year warranty on AX compressors",
                "Axtorp gives a 1-year warranty",
                ["warranty", "magazine"],
            )
        ],
    ),
    (
        "q07",
        "Where can AX-series compressors be serviced?",
        [
            (
                "f09",
                "Service network covers the EU, the UK and Norway",
                "medium",
                "Authorised service is available in the EU, the UK and Norway",
                "Service is only available in Sweden",
                ["service"],
            ),
            (
                "f10",
                "Warranty service needs registration within 30 days",
                "low",
                "Warranty service requires registering the machine within 30 days",
                "No registration is needed",
                ["warranty"],
            ),
        ],
    ),
    (
        "q08",
        "What power supply does the AX300 need?",
        [
            (
                "f11",
                "AX300 needs a 400 V three-phase supply",
                "high",
                "The AX300 needs a 400 V three-phase supply",
                "The AX300 runs on a normal 230 V socket",
                ["ax300", "ax300_dist"],
            )
        ],
    ),
    (
        "q09",
        "How loud is the AX220?",
        [
            (
                "f12",
                "AX220 noise is 68 dB(A) at 1 m",
                "low",
                "The AX220 is rated at 68 dB(A) at 1 m",
                "The AX220 is rated at 58 dB(A)",
                ["ax220", "review", "ax220_de"],
            )
        ],
    ),
    (
        "q10",
        "How much does the AX150 weigh?",
        [("f13", "AX150 weighs 24 kg", "low", "The AX150 weighs 24 kg", "The AX150 weighs 14 kg", ["ax150"])],
    ),
    (
        "q11",
        "Which AX model suits a small workshop with a 230 V supply?",
        [
            (
                "f14",
                "AX150 and AX220 run on 230 V single-phase",
                "high",
                "The AX150 and the AX220 both run on 230 V single-phase",
                "Every AX model needs 400 V",
                ["ax150", "ax220", "magazine"],
            )
        ],
    ),
    (
        "q12",
        "Are spare parts available for discontinued AX models?",
        [
            (
                "f15",
                "Spare parts are supplied for 10 years after end of production",
                "medium",
                "Axtorp supplies spare parts for 10 years after a model is discontinued",
                "Spare parts stop when a model is discontinued",
                ["parts"],
            )
        ],
    ),
]

EXTRA_CLAIMS = [
    ("Axtorp Machines is a Swedish manufacturer founded in 1962", ["wiki", "lookalike"]),
    ("Oil-free compressors need less maintenance than oil-lubricated ones", ["wiki", "magazine"]),
    ("The AX220 is currently discounted by 40 %", ["lookalike"]),
    ("Industrial Supply UK stocks several compressor brands", ["dist_other"]),
]

ENGINES = [
    ("2026-11-perplexity", "perplexity", "sonar-pro"),
    ("2026-11-chatgpt", "chatgpt", "gpt-5-search"),
    ("2026-11-gemini", "gemini", "gemini-2.5-flash"),
]

REVIEWERS = ("li", "marta")
TITLE_ONLY = "Axtorp AX-series datasheet (PDF)"


def label_for(rng: random.Random, correct: bool, page: str, good: list[str]) -> tuple[str | None, str]:
    """A plausible reviewer label with its reasoning; None = not reviewed yet."""
    if rng.random() < 0.1:
        return None, ""
    if page == "forum":
        return "unknown", "forum thread behind a login wall; could not be read"
    if page == "lookalike":
        return "irrelevant", "look-alike outlet page; says nothing verifiable about the claim"
    if page not in good:
        return rng.choice(["irrelevant", "partial"]), "page is about the topic but not this statement"
    if not correct:
        return "conflicting", "the page states a different value"
    if page in ("review", "magazine") and rng.random() < 0.5:
        return "partial", "the page mentions the model but only part of the statement"
    return "supported", "stated in the specification"


def build() -> dict[str, object]:
    rng = random.Random(SEED)
    questions = [
        {
            "id": qid,
            "text": text,
            "locale": "en-GB",
            "required_facts": [{"id": f[0], "text": f[1], "severity": f[2]} for f in facts],
        }
        for qid, text, facts in QUESTIONS
    ]
    answers, claims, edges = [], [], []
    disputed_done = title_done = False
    for run_id, platform, _model in ENGINES:
        for qid, _text, facts in QUESTIONS:
            answer_id = f"{run_id}-{qid}"
            pieces: list[tuple[str, list[str], str | None, bool]] = []
            for fact_id, _ft, _sev, right, wrong, good in facts:
                roll = rng.random()
                if roll < 0.2:
                    continue  # fact left out
                correct = roll >= 0.35
                pages = [rng.choice(good)]
                if rng.random() < 0.35:
                    pages.append(rng.choice(list(PAGES)))
                pieces.append((right if correct else wrong, pages, fact_id if correct else None, correct))
            if rng.random() < 0.4:
                extra, pages = rng.choice(EXTRA_CLAIMS)
                pieces.append((extra, [rng.choice(pages)], None, True))
            markers: dict[str, int] = {}
            text = ""
            answer_citations = []
            for sentence, pages, fact_id, correct in pieces:
                start = len(text) + (1 if text else 0)
                text += (" " if text else "") + sentence
                end = len(text)
                claim_id = f"{answer_id}-c{len([c for c in claims if c['answer_id'] == answer_id]) + 1}"
                claim = {"id": claim_id, "answer_id": answer_id, "text": sentence, "start": start, "end": end}
                if fact_id:
                    claim["required_fact_id"] = fact_id
                if "AX" in sentence:
                    claim["entity"] = next(w for w in sentence.replace(",", " ").split() if w.startswith("AX"))
                claims.append(claim)
                cites = list(pages)
                if rng.random() < 0.15:
                    cites.append(cites[0])  # the engine repeats a marker: [1][1]
                for page in cites:
                    url, title = PAGES[page]
                    number = markers.setdefault(page, len(markers) + 1)
                    marker = f"[{number}]"
                    m_start = len(text)
                    text += marker
                    answer_citations.append(
                        {
                            "url": url,
                            "title": title,
                            "marker": marker,
                            "start": m_start,
                            "end": m_start + len(marker),
                        }
                    )
                    row = {
                        "claim_id": claim_id,
                        "url": url,
                        "marker": marker,
                        "start": m_start,
                        "end": m_start + len(marker),
                    }
                    label, why = label_for(rng, correct, page, [p for f in facts for p in f[5]])
                    if label:
                        row.update(
                            {
                                "label": label,
                                "reasoning": why,
                                "reviewer": rng.choice(REVIEWERS),
                                "created_at": "2026-11-24T10:00:00Z",
                            }
                        )
                    edges.append(row)
                text += "."
                if platform == "gemini" and fact_id and not title_done:
                    # A source card that shows only a title: pending until someone attaches its link.
                    title_done = True
                    answer_citations.append({"title": TITLE_ONLY})
                    edges.append({"claim_id": claim_id, "title": TITLE_ONLY})
            if platform == "perplexity":
                url, title = PAGES["wiki"]
                answer_citations.append({"url": url, "title": title, "kind": "retrieved"})
            answers.append(
                {
                    "id": answer_id,
                    "question_id": qid,
                    "run_id": run_id,
                    "text": text,
                    "citations": answer_citations,
                }
            )
    # One edge where two reviewers disagree: disputed until adjudicated.
    for row in edges:
        if row.get("label") == "supported" and not disputed_done:
            disputed_done = True
            row["judgements"] = [
                {
                    "label": "partial",
                    "reviewer": "marta" if row["reviewer"] == "li" else "li",
                    "reasoning": "the page gives the value for a different variant",
                    "created_at": "2026-11-25T09:30:00Z",
                }
            ]
    return {
        "format": "citeaudit.audit/v1",
        "protocol": {
            "id": "axtorp-ax-series",
            "version": "2026.11",
            "scoring": "strict-v1",
            "official_domains": OFFICIAL,
            "segmentation": {"method": "manual", "version": "1"},
            "questions": questions,
        },
        "runs": [
            {
                "id": r,
                "kind": "platform",
                "platform": p,
                "model": m,
                "collected_at": "2026-11-20",
                "locale": "en-GB",
            }
            for r, p, m in ENGINES
        ],
        "answers": answers,
        "claims": claims,
        "edges": edges,
    }


def render() -> str:
    """The audit file's exact text."""
    return json.dumps(build(), indent=2, ensure_ascii=False) + "\n"


def render_protocol() -> str:
    """The same protocol as a YAML protocol file (same fingerprint as the embedded one)."""
    protocol = build()["protocol"]
    header = "# Protocol of the bundled Axtorp AX-series example audit (synthetic).\n"
    return header + yaml.safe_dump(protocol, sort_keys=False, allow_unicode=True, width=100)


if __name__ == "__main__":
    OUT.write_text(render(), encoding="utf-8")
    PROTOCOL_OUT.write_text(render_protocol(), encoding="utf-8")
    sys.stdout.write(f"wrote {OUT} and {PROTOCOL_OUT}\n")
