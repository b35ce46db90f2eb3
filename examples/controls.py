"""The four-claim fixture built in code, scored under strict-v1, and one control.

One answer with four claims about the AX220:
  c1 "20 L tank"         cites s1 (a page that says so)      -> supported
  c2 "operates outdoors" cites s2 (a page that says indoors)  -> conflicting
  c3 "CE certified"      cites s3 (a page that did not load)  -> unknown
  c4 "service in the EU" cites nothing                         -> no edge

Expected: precision 1/3 (one supported edge among three unique edges: c4 has none, so it is not in the
denominator) and coverage 1/4 (four required facts, only c1's has a supported edge). Citing s1 again for c1
adds a citation location, not an edge, so neither number moves.

Run it with `python examples/controls.py` (citeaudit installed) or `make demo`.
"""

from __future__ import annotations

import json

import citeaudit

TEXT = (
    "The AX220 has a 20 L tank [1]. It can operate outdoors [2]. It is CE certified [3]. "
    "Service is available across the EU."
)
S1, S2, S3 = "https://s1.example.org/ax220", "https://s2.example.org/ax220", "https://s3.example.org/ax220"


def marker(text: str, mark: str, after: int = 0) -> tuple[int, int]:
    """Where ``mark`` sits in ``text`` (character offsets), searching from ``after``."""
    start = text.index(mark, after)
    return start, start + len(mark)


def fixture(s1_citations: int) -> citeaudit.Audit:
    """The four-claim fixture, with c1 citing s1 ``s1_citations`` times ("[1]" repeated after the first claim)."""
    text = TEXT.replace("[1]", "[1]" * s1_citations)
    # Every "[1]" is a citation location of s1 for c1, each with the same human label.
    s1_spans = []
    position = 0
    for _ in range(s1_citations):
        span = marker(text, "[1]", position)
        s1_spans.append(span)
        position = span[1]
    s2_span, s3_span = marker(text, "[2]"), marker(text, "[3]")
    facts = [
        ("f1", "AX220 has a 20 L tank", "high"),
        ("f2", "AX220 can operate outdoors", "medium"),
        ("f3", "AX220 is CE certified", "high"),
        ("f4", "AX220 service is available in the EU", "low"),
    ]

    def edge(cid: str, url: str, span: tuple[int, int], label: str) -> dict[str, object]:
        return {
            "claim_id": cid,
            "url": url,
            "marker": text[span[0] : span[1]],
            "start": span[0],
            "end": span[1],
            "label": label,
            "reviewer": "fixture",
        }

    def located(cid: str, words: str, fact: str) -> dict[str, object]:
        start = text.index(words)
        return {
            "id": cid,
            "answer_id": "a1",
            "text": words,
            "start": start,
            "end": start + len(words),
            "required_fact_id": fact,
        }

    document = {
        "format": "citeaudit.audit/v1",
        "protocol": {
            "id": "four-claim-controls",
            "version": "1",
            "official_domains": ["axtorp-machines.com"],
            "questions": [
                {
                    "id": "q1",
                    "text": "Describe the AX220.",
                    "required_facts": [{"id": f, "text": t, "severity": s} for f, t, s in facts],
                }
            ],
        },
        "runs": [{"id": "controls", "kind": "fixture", "platform": "fixture"}],
        "answers": [
            {
                "id": "a1",
                "question_id": "q1",
                "run_id": "controls",
                "text": text,
                "citations": [
                    *({"url": S1, "marker": "[1]", "start": a, "end": b} for a, b in s1_spans),
                    {"url": S2, "marker": "[2]", "start": s2_span[0], "end": s2_span[1]},
                    {"url": S3, "marker": "[3]", "start": s3_span[0], "end": s3_span[1]},
                ],
            }
        ],
        "claims": [
            located("c1", "The AX220 has a 20 L tank", "f1"),
            located("c2", "It can operate outdoors", "f2"),
            located("c3", "It is CE certified", "f3"),
            located("c4", "Service is available across the EU", "f4"),
        ],
        "edges": [
            *(edge("c1", S1, span, "supported") for span in s1_spans),
            edge("c2", S2, s2_span, "conflicting"),
            edge("c3", S3, s3_span, "unknown"),
        ],
    }
    # parse_audit_bytes checks the document exactly as `citeaudit ingest` checks a file.
    return citeaudit.parse_audit_bytes(json.dumps(document).encode("utf-8"), "controls")


def show(title: str, audit: citeaudit.Audit) -> tuple[citeaudit.Metric, citeaudit.Metric]:
    overall = citeaudit.score(audit).overall
    edges = overall.edges
    print(f"{title}: {edges.locations} citation location(s) -> {edges.unique} unique edge(s)")
    print(f"  precision {overall.precision.numerator}/{overall.precision.denominator} = {overall.precision.value:.3f}")
    print(f"  coverage  {overall.coverage.numerator}/{overall.coverage.denominator} = {overall.coverage.value:.3f}")
    return overall.precision, overall.coverage


if __name__ == "__main__":
    once = show("s1 cited once for c1", fixture(1))
    twice = show("s1 cited twice for c1 (a duplicated citation)", fixture(2))
    # Strict-v1 counts unique (claim, source) edges: the duplicate is one more location, the same edge.
    print("duplicating s1's citation changes nothing:", "yes" if once == twice else "NO")
