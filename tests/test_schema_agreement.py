"""The shipped JSON Schema and the audit reader agree.

- Every document the schema accepts is scored without error, once the rules JSON Schema cannot state hold
  (:func:`meaningful`: ids unique, references that point somewhere, spans inside their text, a known scoring
  convention, registrable official domains, weights for every severity, no lone surrogates).
- Every document the reader accepts passes the schema: damaged copies of the bundled audits are either refused
  or valid.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeaudit import score
from citeaudit.core.errors import InputError
from citeaudit.interchange import parse_audit_bytes
from conftest import EXAMPLES, REPO
from test_fuzz_readers import _get, _paths, damaged

SCHEMA: dict[str, Any] = json.loads(
    (REPO / "src" / "citeaudit" / "schemas" / "audit-v1.schema.json").read_text(encoding="utf-8")
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

# Short text from a few letters, so ids and texts collide often; no surrogates (see meaningful()).
TEXT = st.text(st.sampled_from("ab c\u00e9\u4e2d\n"), max_size=6)


def _strategy(node: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values the schema ``node`` accepts (the keywords the shipped schema uses)."""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[1]
        return st.deferred(lambda: _strategy(SCHEMA["$defs"][name]))
    if "anyOf" in node:
        return st.one_of([_strategy(option) for option in node["anyOf"]])
    if "const" in node:
        return st.just(node["const"])
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node.get("type")
    if kind == "null":
        return st.none()
    if kind == "string":
        if "pattern" in node:
            return st.from_regex(node["pattern"].removeprefix("^").removesuffix("$"), fullmatch=True)
        return TEXT.filter(lambda s: len(s) >= node.get("minLength", 0))
    if kind == "integer":
        return st.integers(node.get("minimum", -(2**63)), min(node.get("maximum", 2**63 - 1), 2**63 - 1))
    if kind == "number":
        low = node.get("minimum", node.get("exclusiveMinimum"))
        return st.floats(
            min_value=low,
            max_value=node.get("maximum"),
            exclude_min="exclusiveMinimum" in node,
            allow_nan=False,
            allow_infinity=False,
        )
    if kind == "array":
        return st.lists(_strategy(node["items"]), min_size=node.get("minItems", 0), max_size=2)
    if kind == "object":
        if "properties" in node:
            return _object(node)
        keys = _strategy(node["propertyNames"]) if "propertyNames" in node else TEXT
        values = (
            _strategy(node["additionalProperties"]) if isinstance(node.get("additionalProperties"), dict) else st.none()
        )
        return st.dictionaries(keys, values, max_size=2)
    raise AssertionError(f"schema keyword not covered: {node}")


def _object(node: dict[str, Any], rich: tuple[str, ...] = ()) -> st.SearchStrategy[dict[str, Any]]:
    """An object of ``node``; the arrays named in ``rich`` always present and never empty."""
    required = set(node.get("required", ())) | set(rich)
    fields = {name: _strategy(sub) for name, sub in node["properties"].items()}
    for name in rich:
        fields[name] = st.lists(_strategy(node["properties"][name]["items"]), min_size=1, max_size=3)
    optional = sorted(set(fields) - required)
    return st.fixed_dictionaries(
        {name: fields[name] for name in sorted(required)},
        optional={name: fields[name] for name in optional},
    )


def meaningful(document: dict[str, Any]) -> dict[str, Any]:
    """``document`` changed only where a rule JSON Schema cannot state is broken (it stays schema-valid)."""
    protocol = document["protocol"]
    protocol["scoring"] = "strict-v1"  # a known convention
    protocol["official_domains"] = ["brand.com", {"host": "shop.example.net", "path_prefix": "/b/"}][
        : len(protocol.get("official_domains", []))
    ]
    # competitors: unique names, and domains that are registrable (rules JSON Schema cannot state)
    for ci, competitor in enumerate(protocol.get("competitors", [])):
        competitor["name"] = f"competitor {ci}"
        competitor["domains"] = [f"rival{ci}.com", {"host": f"shop{ci}.example.net", "path_prefix": "/r/"}][
            : len(competitor.get("domains", []))
        ]
    questions = protocol.setdefault("questions", [])
    if not questions:
        questions.append({"id": "q", "text": "?"})
    facts: dict[str, list[str]] = {}
    for qi, question in enumerate(questions):
        question["id"] = f"q{qi}"
        facts[question["id"]] = []
        for fi, fact in enumerate(question.get("required_facts", [])):
            fact["id"] = f"q{qi}f{fi}"
            facts[question["id"]].append(fact["id"])
            if protocol.get("weights") is not None:
                fact["severity"] = "high"
    if protocol.get("weights") is not None:
        protocol["weights"]["high"] = 1.0
    runs = document.get("runs", [])
    for ri, run in enumerate(runs):
        run["id"] = f"r{ri}"
    answers = document.get("answers", [])
    for ai, answer in enumerate(answers):
        answer["id"] = f"a{ai}"
        answer["question_id"] = questions[ai % len(questions)]["id"]
        if runs:
            answer["run_id"] = runs[ai % len(runs)]["id"]
        for citation in answer.get("citations", []):
            _span(citation, len(answer["text"]))
            if citation.get("kind") == "dangling":
                for name in ("url", "title", "source_key"):
                    citation.pop(name, None)
            elif not (citation.get("url") or (citation.get("title") or "").strip() or citation.get("source_key")):
                citation["url"] = "https://brand.com/p"
    texts = {a["id"]: a["text"] for a in answers}
    claims = document.get("claims", []) if answers else []
    document["claims"] = claims
    for ci, claim in enumerate(claims):
        claim["id"] = f"c{ci}"
        answer = answers[ci % len(answers)]
        claim["answer_id"] = answer["id"]
        _span(claim, len(texts[answer["id"]]))
        known = facts[answer["question_id"]]
        if claim.get("required_fact_id") is not None:
            claim["required_fact_id"] = known[ci % len(known)] if known else None
    edges = document.get("edges", []) if claims else []
    document["edges"] = edges
    for ei, edge in enumerate(edges):
        claim = claims[ei % len(claims)]
        edge["claim_id"] = claim["id"]
        _span(edge, len(texts[claim["answer_id"]]))
        if not (edge.get("url") or (edge.get("title") or "").strip() or edge.get("source_key")):
            edge["url"] = "https://brand.com/e"
        if edge.get("label") is None:
            for name in ("reviewer", "passage", "period", "reasoning", "created_at"):
                edge.pop(name, None)
    for si, source in enumerate(document.get("sources", [])):
        source["key"] = f"s{si}"
    groups = document.get("evidence_groups", []) if claims else []
    document["evidence_groups"] = groups
    for gi, group in enumerate(groups):
        group["id"] = f"g{gi}"
        group["claim_id"] = claims[gi % len(claims)]["id"]
    for fi, failed in enumerate(document.get("failed_answers", [])):
        if failed.get("question_id") is not None:
            failed["question_id"] = questions[fi % len(questions)]["id"]
        if runs:
            failed["run_id"] = runs[fi % len(runs)]["id"]
    return document


def _span(row: dict[str, Any], length: int) -> None:
    if row.get("start") is None or row.get("end") is None:
        row.pop("start", None)
        row.pop("end", None)
        return
    start, end = sorted((row["start"] % (length + 1), row["end"] % (length + 1)))
    row["start"], row["end"] = start, end


PROPERTY = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    derandomize=True,
)


@PROPERTY
@given(document=_object(SCHEMA, rich=("answers", "claims", "edges")).map(meaningful))
def test_every_document_the_schema_accepts_is_scored(document: dict[str, Any]) -> None:
    VALIDATOR.validate(document)  # the changes meaningful() made kept it schema-valid
    audit = parse_audit_bytes(json.dumps(document).encode(), "generated.audit.json")
    result = score(audit)
    assert result.precision.denominator == len(audit.edges)


SEEDS = [
    json.loads((EXAMPLES / name).read_text(encoding="utf-8"))
    for name in ("four-claim.audit.json", "exporter.audit.json")
]


@settings(PROPERTY, max_examples=300)
@given(data=st.data())
def test_every_document_the_reader_accepts_passes_the_schema(data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(SEEDS), label="seed")
    (document,), duplicate = data.draw(damaged([seed], most=2), label="damage")
    if duplicate:
        return  # a duplicate key cannot be written as a Python value; its refusal has its own test
    try:
        parse_audit_bytes(json.dumps(document).encode(), "damaged.audit.json")
    except InputError:
        return
    VALIDATOR.validate(document)


SWEEP = [["x"], {"x": 1}, None, True, 26, 26.0, 2**63, "26", "", 1.5, "https://brand.com/p"]
"""Values put, one at a time, in every place of the four-claim audit."""


def test_no_single_change_to_the_four_claim_audit_splits_reader_and_schema() -> None:
    seed = SEEDS[0]
    disagreements = []
    for path in _paths(seed):
        if not path:
            continue
        for value in SWEEP:
            document = json.loads(json.dumps(seed))
            _get(document, path[:-1])[path[-1]] = value
            try:
                parse_audit_bytes(json.dumps(document).encode(), "changed.audit.json")
            except InputError:
                continue
            if not VALIDATOR.is_valid(document):
                disagreements.append((path, value))
    assert not disagreements, disagreements[:10]
