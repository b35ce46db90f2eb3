"""The core's protocol codec: what the store writes it reads back as the same protocol, without the file model.

The file path (pydantic model, then checks) stays the reference: for every protocol the trusted decoder and the
file reader must agree on the written form.
"""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from citeaudit.core.model import OfficialDomain, Protocol, Question, RequiredFact, Segmentation, Severity
from citeaudit.core.protocol import fingerprint, protocol_from_mapping_trusted, protocol_to_mapping
from citeaudit.interchange.reader import protocol_from_mapping
from citeaudit.interchange.schema import ProtocolIn

_text = st.text(alphabet="abcdefgh ÄéΩ-", min_size=1, max_size=12)
_ids = st.text(alphabet="abcdef0123", min_size=1, max_size=6)
_official = st.one_of(
    st.sampled_from(["brand.com", "brand.co.uk", "example.org"]).map(lambda d: OfficialDomain(domain=d)),
    st.builds(
        OfficialDomain,
        host=st.sampled_from(["docs.brand.com", "shop.example.org"]),
        path_prefix=st.one_of(st.none(), st.sampled_from(["/de", "/support/faq"])),
    ),
)
_parameters = st.dictionaries(
    st.sampled_from(["split", "max_len", "langs"]),
    st.one_of(st.booleans(), st.integers(-5, 500), st.lists(st.sampled_from(["de", "en"]), max_size=2)),
    max_size=3,
)


@st.composite
def protocols(draw: st.DrawFn) -> Protocol:
    weighted = draw(st.booleans())
    severities = st.sampled_from(list(Severity)) if weighted else st.one_of(st.none(), st.sampled_from(list(Severity)))
    fact_ids = iter(range(1000))
    questions = []
    for qi in range(draw(st.integers(0, 3))):
        facts = tuple(
            RequiredFact(f"f{next(fact_ids)}", draw(_text), draw(severities)) for _ in range(draw(st.integers(0, 3)))
        )
        questions.append(Question(f"q{qi}", draw(_text), draw(st.one_of(st.none(), st.just("de-DE"))), facts))
    parameters = draw(_parameters)
    segmentation = draw(
        st.one_of(
            st.just(Segmentation()),
            st.builds(
                Segmentation,
                method=st.just("rules-v1"),
                version=st.one_of(st.none(), st.just("1")),
                parameters=st.just(
                    tuple(
                        sorted((k, json.dumps(v, sort_keys=True, separators=(",", ":"))) for k, v in parameters.items())
                    )
                ),
            ),
        )
    )
    weights = tuple(sorted((s, draw(st.floats(0.25, 4.0, allow_nan=False))) for s in Severity)) if weighted else None
    return Protocol(
        id=draw(_ids),
        version=draw(_ids),
        official_domains=tuple(draw(st.lists(_official, max_size=3))),
        questions=tuple(questions),
        segmentation=segmentation,
        weights=weights,
    )


@given(protocols())
def test_the_stored_form_decodes_to_the_same_protocol(protocol: Protocol) -> None:
    body = json.dumps(protocol_to_mapping(protocol), sort_keys=True, ensure_ascii=False)  # as the store writes it
    decoded = protocol_from_mapping_trusted(json.loads(body))
    assert decoded == protocol
    assert fingerprint(decoded) == fingerprint(protocol)


@given(protocols())
def test_the_trusted_decoder_agrees_with_the_file_reader(protocol: Protocol) -> None:
    mapping = json.loads(json.dumps(protocol_to_mapping(protocol)))
    from_file = protocol_from_mapping(ProtocolIn.model_validate(mapping), "protocol.json", path="")
    assert protocol_from_mapping_trusted(mapping) == from_file


def test_an_unweighted_protocol_with_defaults_round_trips() -> None:
    # The smallest protocol: every optional part at its default, so the written form leaves them out.
    protocol = Protocol(id="p", version="1")
    mapping = protocol_to_mapping(protocol)
    assert mapping == {
        "id": "p",
        "version": "1",
        "scoring": "strict-v1",
        "official_domains": [],
        "segmentation": {"method": "external", "parameters": {}},
        "questions": [],
    }
    assert protocol_from_mapping_trusted(mapping) == protocol
