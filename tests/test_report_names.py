"""Names people read in the report: engines by their product name (the protocol's ``engines:`` labels or a
readable default), questions by their text, and strict checking of the labels a protocol file declares."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import Result

from citeaudit.core.protocol import fingerprint, protocol_from_mapping_trusted, protocol_to_mapping
from citeaudit.interchange import load_protocol
from citeaudit.interchange.reader import protocol_from_mapping
from citeaudit.interchange.schema import ProtocolIn
from citeaudit.report.names import DEFAULT_ENGINE_NAMES, EngineNames, question_names

Cli = Callable[..., Result]
EXAMPLES = Path(__file__).resolve().parent.parent / "src" / "citeaudit" / "examples"
BASE = (EXAMPLES / "exporter.protocol.yaml").read_text(encoding="utf-8")


def _protocol_file(tmp_path: Path, engines: str, name: str = "p.yaml") -> Path:
    path = tmp_path / name
    path.write_text(BASE + engines, encoding="utf-8")
    return path


def test_labels_from_the_mapping_and_the_list_forms(tmp_path: Path) -> None:
    mapping = load_protocol(
        _protocol_file(
            tmp_path,
            "engines:\n  openai: {platform: chatgpt, label: ChatGPT search}\n  perplexity: Perplexity Sonar\n"
            "  gemini:\n",
        )
    )
    listed = load_protocol(
        _protocol_file(
            tmp_path,
            "engines:\n- {name: openai, platform: chatgpt, label: ChatGPT search}\n"
            "- {name: perplexity, label: Perplexity Sonar}\n- gemini\n",
            "q.yaml",
        )
    )
    assert mapping.engine_names == listed.engine_names
    names = EngineNames(mapping)
    # the label is looked up by the platform the answers are recorded under (the engine's name when none is set)
    assert names("chatgpt") == "ChatGPT search"
    assert names("perplexity") == "Perplexity Sonar"
    # no label: the readable default for the platform; an unknown platform is shown as recorded
    assert names("gemini") == "Gemini (Google)"
    assert names("anthropic") == "Claude (Anthropic)"
    assert names("openai") == "ChatGPT (OpenAI)"
    assert names("you.com") == "you.com"
    assert names(None) == "—"


def test_a_label_changes_no_fingerprint_and_survives_the_store_body(tmp_path: Path) -> None:
    plain = load_protocol(_protocol_file(tmp_path, ""))
    labelled = load_protocol(
        _protocol_file(tmp_path, "engines:\n  openai: {platform: chatgpt, label: ChatGPT}\n", "l.yaml")
    )
    assert fingerprint(plain) == fingerprint(labelled)
    body = json.loads(json.dumps(protocol_to_mapping(labelled)))
    # the store keeps this body and reads it back trusted, and the engine tables read it as a protocol file
    assert protocol_from_mapping_trusted(body).engine_names == labelled.engine_names
    assert protocol_from_mapping(ProtocolIn.model_validate(body), "body", "").engine_names == labelled.engine_names
    # a protocol without labels is written exactly as before: no engines key
    assert "engines" not in protocol_to_mapping(plain)


def test_questions_are_named_by_id_and_text() -> None:
    protocol = load_protocol(EXAMPLES / "exporter.protocol.yaml")
    assert question_names(protocol)["q01"] == "q01 · What tank size does the AX220 have?"


@pytest.mark.parametrize(
    ("engines", "where", "value"),
    [
        ("engines:\n  openai: {label: Same}\n  gemini: {label: same}\n", "engines[1].label", "'same'"),
        ("engines:\n  openai: '   '\n", "engines[0].label", "'   '"),
        ("engines:\n  openai: [1, 2]\n", "engines[0].label", "[1, 2]"),
        ("engines:\n  copilot: Copilot\n", "engines[0].name", "'copilot'"),
        (
            "engines:\n- {name: openai, platform: chat, label: A}\n"
            "- {name: openai, id: o2, platform: chat, label: B}\n",
            "engines[1].label",
            "'B'",
        ),
    ],
)
def test_a_bad_label_is_refused_in_one_line_with_exit_2(
    cli: Cli, exporter_path: Path, tmp_path: Path, engines: str, where: str, value: str
) -> None:
    bad = _protocol_file(tmp_path, engines)
    out = tmp_path / "report.html"
    result = cli("report", exporter_path, "--out", out, "--resamples", "100", "--protocol-file", bad)
    assert result.exit_code == 2, result.stdout
    message = result.stderr.strip()
    assert "\n" not in message
    assert str(bad) in message
    assert where in message
    assert value in message
    assert "Traceback" not in result.stderr
    assert not out.exists()  # no partial write


def test_the_report_names_engines_and_questions(cli: Cli, exporter_path: Path, tmp_path: Path) -> None:
    labels = _protocol_file(tmp_path, "engines:\n  openai: {platform: chatgpt, label: ChatGPT search}\n")
    out = tmp_path / "r.html"
    # the protocol file comes from the project file, as for every other command that reads one
    (tmp_path / "citeaudit.toml").write_text(f'protocol = "{labels.name}"\n', encoding="utf-8")
    result = cli("--config", tmp_path / "citeaudit.toml", "report", exporter_path, "--out", out, "--resamples", "100")
    assert result.exit_code == 0, result.stderr
    html = out.read_text(encoding="utf-8")
    assert "ChatGPT search" in html
    assert "Gemini (Google)" in html  # the default for an engine without a label
    assert "<td>chatgpt</td>" not in html
    assert "q01 · What tank size does the AX220 have?" in html


@given(st.text(min_size=1, max_size=30))
def test_every_platform_gets_a_non_empty_name(platform: str) -> None:
    name = EngineNames()(platform)
    assert name
    assert name == DEFAULT_ENGINE_NAMES.get(platform.lower(), platform)
