"""What the compiled modules make of a fixed set of inputs, as JSON on stdout: run once on the installed build and
once on the Python source alone (``tests/test_compiled.py``), which must print the same.

Usage: python tests/compiled_reading.py SHARED_DATA_DIR MODULE... (the modules whose file suffix is reported)
"""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from citeaudit.core import identity, limits
from citeaudit.core.errors import InputError
from citeaudit.core.json_walk import past_limits
from citeaudit.core.model import OfficialDomain, Protocol, Question
from citeaudit.ingest import READERS, Attachment
from citeaudit.ingest.assemble import assemble_rows
from citeaudit.ingest.sentences import is_abbreviation, sentences
from citeaudit.ingest.text import SentenceIndex, candidates, claim_text, span_before, trim_claim, trim_span

PIECES = [
    "The AX220 has a 20 L tank",
    "It is rated IP54",
    "Dr. Smith",
    "e.g. the U.S. market",
    "approx. 3.5 bar",
    "No. 5",
    "Axtorp Inc. The",
    "z.B. 3. Oktober",
    '"Razzle Dazzle! The Best of"',
    "(c. 1900)",
    "specifications.Based on",
    "水箱。它",
    "etc. The next",
    "1.200 €",
    "example.com",
    "St. Louis",
    "…",
]
MARKS = [
    "",
    " ",
    "[1]",
    "[2][7]",
    " [3]",
    "[^4^]",
    "[cite: 1, 2]",
    "【4†source】",
    "\ue2001\ue201",
    "([a.com](https://a.com/x))",
]
STOPS = [".", "!", "?", "...", "?!", "。", "；", ":", ",", ""]
BREAKS = [" ", " ", " ", "\n", "\n\n", "\n- ", "\n1. ", "\n## ", "\n> ", "\t", "  "]


def random_text(rng: random.Random) -> str:
    """An answer text made of the pieces that split sentences and claims in different ways."""
    parts = []
    if rng.random() < 0.1:
        parts.append("<think>planning</think>" if rng.random() < 0.8 else "<think>never closed")
    for _ in range(rng.randint(0, 9)):
        parts.extend((rng.choice(PIECES), rng.choice(MARKS), rng.choice(STOPS), rng.choice(MARKS), rng.choice(BREAKS)))
    return "".join(parts)


def real_texts(shared: Path) -> list[str]:
    """Answers real engines wrote, with their ``[n]`` markers (ALCE's human evaluation set)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "output" and isinstance(item, str):
                    found.append(item)
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(json.loads((shared / "alce" / "human_eval_utility_completed.json").read_text(encoding="utf-8")))
    return found


def text_helpers(text: str) -> dict[str, Any]:
    """Every text helper the compiled modules hold, at every position worth asking about."""
    index = SentenceIndex(text, min(len(text), 5))
    positions = sorted({0, len(text) // 2, max(0, len(text) - 1)} | {i for i, c in enumerate(text) if c in "[.。\n"})
    spans = [(*index.claim_span(p), k) for k, p in enumerate(positions)]
    return {
        "sentences": [list(s) for s in sentences(text)],
        "containing": [index.containing(p) for p in positions],
        "claims": [[c.text, c.start, c.end, list(c.citations)] for c in candidates(text, spans)],
        "claim_text": [claim_text(text, s, e) for s, e, _ in spans],
        "trim": [[trim_span(text, s, e), trim_claim(text, s, e)] for s, e, _ in spans if s < e],
        "before": [span_before(text, p) for p in positions],
        "abbreviation": [is_abbreviation(text, i) for i, c in enumerate(text) if c == "."],
    }


def sonar(rng: random.Random, text: str, n: int) -> dict[str, Any]:
    results = [
        {"url": f"https://site{rng.randint(0, 9)}.example/p{rng.randint(0, 30)}", "title": f"T{k}"} for k in range(5)
    ]
    return {
        "id": f"r{n}",
        "model": "sonar",
        "choices": [{"message": {"content": text}, "finish_reason": rng.choice(["stop", "stop", "length"])}],
        "search_results": results,
    }


def payloads(rng: random.Random, texts: list[str], shared: Path) -> Iterator[bytes]:
    """Perplexity's own recorded responses, JSON Lines of Sonar answers, and some a reader must refuse (each
    refusal's message is compared)."""
    for folder in ("engine-payloads", "engine-recordings-2"):
        for path in sorted((shared / folder / "perplexity").iterdir()):
            yield path.read_bytes()
    yield "\n".join(json.dumps(sonar(rng, text, n)) for n, text in enumerate(texts)).encode()
    yield json.dumps(sonar(rng, "Tank [1].", 0) | {"search_results": [{"url": 7}]}).encode()
    yield json.dumps({"choices": []}).encode()
    yield json.dumps({"choices": [{"message": {"content": ["x"]}}]}).encode()
    yield b'{"id": "a", "choices": [{"message": {"content": "x [1]."}}]}\n{"id": "a", "choices": []}'
    yield json.dumps({"error": {"code": 429, "message": "rate limited"}}).encode()


URL_PIECES = {
    "scheme": ["https://", "http://", "HTTPS://", "ftp://", "", "//", "mailto:"],
    "host": [
        "www.Axtorp.com",
        "axtorp.com.",
        "shop.axtorp.co.uk",
        "brand.github.io",
        "xn--bcher-kva.de",
        "bücher.de",
        "[::1]",
        "[2001:db8::1",
        "127.0.0.1",
        "user:pw@axtorp.com",
        "axtorp.com:443",
        "axtorp.com:8080",
        "axtorp.com:x",
        "www.google.com",
        "google.co.uk",
        "www.bing.com",
        "axtorp-com.cdn.ampproject.org",
        "shop.brand.newtld",
        "",
    ],
    "path": ["", "/", "/docs/AX220", "/url", "/ck/a", "/amp/s/axtorp.com/p", "/c/s/axtorp.com/a", "/v/", "/a b", "/é"],
    "query": [
        "",
        "?q=https://axtorp.com/x&sa=U",
        "?url=http://b.example/y",
        "?u=a1aHR0cHM6Ly9heHRvcnAuY29tL2Jpbmc",
        "?u=a1!!",
        "?utm_source=x&b=2&a=1",
        "?gclid=1&id=7&id=3",
        "?&&x",
        "?FBCLID=2",
    ],
    "tail": ["", "#frag", " ", "\t", "\n"],
}


def recorded(shared: Path) -> list[str]:
    """The text of every JSON file the engines' recorded responses hold, in a stable order."""
    return [
        path.read_text(encoding="utf-8")
        for folder in ("engine-payloads", "engine-recordings-2")
        for path in sorted((shared / folder).rglob("*.json"))
    ]


def urls(rng: random.Random, texts: list[str]) -> list[str]:
    """URLs in the engines' recorded responses, and random ones made of the pieces the
    normaliser, the unwrapper and the domain rules treat apart."""
    found = [url for text in texts for url in sorted(set(re.findall(r'https?://[^"\\\s]+', text)))]
    for _ in range(3000):
        found.append("".join(rng.choice(values) for values in URL_PIECES.values()))
    return found


def url_keys(url: str) -> dict[str, Any]:
    """What the compiled URL identity makes of ``url``: its keys, location, domain and official match, or the
    error it raises."""

    def outcome(read: Any, *args: Any) -> Any:
        try:
            return read(*args)
        except (InputError, ValueError) as exc:
            return f"{type(exc).__name__}: {exc}"

    host, path = identity.url_location(url)
    official = identity.OfficialMatcher(
        [OfficialDomain(domain="axtorp.com"), OfficialDomain(host="google.co.uk", path_prefix="/url")]
    )
    return {
        "normalized": outcome(identity.normalize_url, url),
        "identity": outcome(identity.identity_url, url),
        "unwrapped": outcome(identity.unwrap, url),
        "effective": outcome(identity.effective_url, url),
        "location": [host, path],
        "domain": outcome(identity.registrable_domain, host or ""),
        "host_of": outcome(identity.host_of, url),
        "key": outcome(identity.source_identity, url, "payload", "$.url"),
        "registry": outcome(identity.SourceRegistry().url_key_located, "payload", "$", url),
        "official": [official(url), official.match_host(host)],
        "title": identity.title_key("a1", url),
    }


def documents(rng: random.Random, texts: list[str]) -> Iterator[Any]:
    """Parsed documents for the walk: every recorded response, and random ones nested up to one level past the
    depth limit, with numbers at and just past the limits."""
    for text in texts:
        yield json.loads(text)
    leaves: list[Any] = [
        "text",
        True,
        None,
        0,
        1.5,
        limits.MAX_INT,
        limits.MAX_INT + 1,
        limits.MIN_INT,
        limits.MIN_INT - 1,
        float("inf"),
        -float("inf"),
        1e308,
    ]
    for _ in range(1500):
        value: Any = rng.choice(leaves)
        for _ in range(rng.choice([0, 1, 5, limits.MAX_DEPTH - 1, limits.MAX_DEPTH, limits.MAX_DEPTH + 1])):
            value = [value, rng.choice(leaves)] if rng.random() < 0.5 else {"k": value, "n": rng.choice(leaves)}
        yield value


def import_rows(data: bytes) -> Any:
    protocol = Protocol("p", "1", questions=(Question("q1", "Tell me about the AX220."),))
    reader = READERS["perplexity"]
    assert reader.read_answers is not None
    try:
        parsed = reader.read_answers(data, "payload")
        return [
            [rows.sources, rows.answers, rows.citations, rows.claims, rows.edges, rows.locations, rows.failures]
            for rows in assemble_rows(parsed, Attachment(protocol, run_id="r"), "payload", "0" * 64, None, size=7)
        ]
    except InputError as exc:
        return f"{type(exc).__name__}: {exc}"


def main() -> None:
    shared = Path(sys.argv[1])
    rng = random.Random(20261203)
    texts = real_texts(shared) + [random_text(rng) for _ in range(3000)]
    recordings = recorded(shared)
    report: dict[str, Any] = {
        "texts": [text_helpers(text) for text in texts],
        "imports": [import_rows(data) for data in payloads(rng, texts, shared)],
        "urls": [url_keys(url) for url in urls(rng, recordings)],
        "walks": [
            past_limits(value, limits.MAX_DEPTH, limits.MIN_INT, limits.MAX_INT) for value in documents(rng, recordings)
        ],
    }
    # asked once everything ran: a reader's module is imported when its reader is first asked for
    report["modules"] = {name: Path(str(sys.modules[name].__file__)).suffix for name in sys.argv[2:]}
    json.dump(report, sys.stdout, ensure_ascii=True, sort_keys=True)


if __name__ == "__main__":
    main()
