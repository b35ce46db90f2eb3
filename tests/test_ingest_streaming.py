"""Engine payloads imported a chunk at a time: the same database whatever the chunk size, one transaction over
every file of a command, and source counts reckoned over the whole file."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import Result

from citeaudit import MalformedInput, Protocol, Question, Store
from citeaudit.ingest import READERS, Attachment, ingest_files, read_file

PROTOCOL = Protocol("p", "1", questions=(Question("q1", "Tell me about the AX220."),))
ATTACHMENT = Attachment(PROTOCOL, run_id="r1")
SITE = "https://www.site{}.example.org/page"


def sonar(n: int, cited: Sequence[int], retrieved: Sequence[int] = (), dangling: bool = False) -> dict[str, Any]:
    """A Sonar response citing search results [1].. in order; ``dangling`` adds a marker past the list."""
    results = [{"url": SITE.format(site), "title": f"Site {site}"} for site in [*cited, *retrieved]]
    text = " ".join(f"Fact {k} of answer {n} [{k + 1}]." for k in range(len(cited)))
    if dangling:
        text += f" A fact with no source [{len(results) + 1}]."
    return {
        "id": f"pplx-{n}",
        "model": "sonar",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "search_results": results,
    }


FAILED = {"error": {"code": 429, "message": "rate limited"}}


def payloads() -> list[dict[str, Any]]:
    # 9 records: sites 1 and 2 come back again and again, one answer failed, one has a dangling marker, one a
    # retrieved-only result; the order is such that every chunk size from 1 to 9 cuts somewhere different.
    return [
        sonar(0, [1, 2]),
        sonar(1, [2, 3], retrieved=[4]),
        FAILED,
        sonar(3, [1], dangling=True),
        sonar(4, [5, 1, 2]),
        sonar(5, [3]),
        FAILED,
        sonar(7, [6, 6]),
        sonar(8, [1, 2, 3, 4, 5, 6]),
    ]


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


_TABLES = {
    "answers": "SELECT pk, id, run_pk, question_pk, text, platform, model FROM answers ORDER BY pk",
    "citations": 'SELECT pk, answer_pk, ordinal, source_pk, url, title, marker, kind, start, "end" FROM citations '
    "ORDER BY pk",
    "claims": 'SELECT pk, id, answer_pk, text, start, "end" FROM claims ORDER BY pk',
    "edges": "SELECT * FROM edges ORDER BY pk",
    "edge_locations": 'SELECT edge_pk, marker, start, "end" FROM edge_locations ORDER BY rowid',
    "sources": "SELECT pk, key, url, title, status FROM sources ORDER BY pk",
    "failures": "SELECT ordinal, status, reason, run_id FROM ingest_failures ORDER BY ordinal",
    "runs": "SELECT pk, id, platform FROM runs ORDER BY pk",
}


def contents(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(db) as connection:
        return {name: connection.execute(sql).fetchall() for name, sql in _TABLES.items()}


def state(db: Path) -> str:
    with sqlite3.connect(db) as connection:
        return hashlib.sha256("\n".join(connection.iterdump()).encode()).hexdigest()


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[tuple[Any, ...]]], Any]:
    """The payload file, and what importing it in one piece (read_file, then one audit) stores."""
    folder = tmp_path_factory.mktemp("whole")
    path = write_jsonl(folder / "sonar.jsonl", payloads())
    with Store(folder / "whole.db") as store:
        prepared = read_file(path, READERS["perplexity"], ATTACHMENT)
        report = store.import_audit(prepared.audit, prepared.data, str(path), "perplexity")
    return path, contents(folder / "whole.db"), report


@settings(max_examples=12, deadline=None)
@given(st.integers(min_value=1, max_value=10))
def test_every_chunk_size_stores_what_one_piece_stores(whole: Any, size: int) -> None:
    path, expected, expected_report = whole
    told: list[int] = []
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "chunked.db") as store:
        ((_, reader, report),) = ingest_files(
            store, [path], READERS["perplexity"], ATTACHMENT, progress=lambda _, n: told.append(n), chunk=size
        )
        assert contents(Path(folder) / "chunked.db") == expected
    assert reader.name == "perplexity"
    assert report == expected_report
    # 9 records in chunks of `size`: full chunks, then the rest
    assert told == [size] * (9 // size) + ([9 % size] if 9 % size else [])


def test_the_one_piece_figures(whole: Any) -> None:
    _, stored, report = whole
    # 7 answers (2 failed); one claim per marked sentence: 2 + 2 + 2 + 3 + 1 + 2 + 6 = 18, answer 3's second
    # sentence carrying a dangling marker (a citation without source, so that claim has no edge)
    assert (report.answers, report.failures, report.claims, report.dangling, report.retrieved) == (7, 2, 18, 1, 1)
    # sites 1..6 are the sources; the 18 - 1 = 17 other claims cite one source each: 17 edges, one location each
    assert (report.sources_new, report.sources_known, report.edges, report.locations) == (6, 0, 17, 17)
    assert [row[0] for row in stored["failures"]] == [2, 6]  # ordinals in the file, not in a chunk


def test_source_counts_cover_the_whole_file(tmp_path: Path) -> None:
    first = write_jsonl(tmp_path / "first.jsonl", [sonar(0, [1, 2]), sonar(1, [2])])
    second = write_jsonl(tmp_path / "second.jsonl", [sonar(10, [1, 7]), sonar(11, [7]), sonar(12, [8, 1])])
    with Store(tmp_path / "a.db") as store:
        ingest_files(store, [first], READERS["perplexity"], ATTACHMENT, chunk=1)
        ((_, _, report),) = ingest_files(store, [second], READERS["perplexity"], ATTACHMENT, chunk=1)
    # the second file cites sites 1, 7 and 8: 1 was stored before it, 7 and 8 are new, though 7 comes again in a
    # later chunk (where it is already stored, by this same import)
    assert (report.sources_new, report.sources_known) == (2, 1)


def test_a_problem_late_in_a_later_file_leaves_the_database_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    good = write_jsonl(tmp_path / "good.jsonl", [sonar(0, [1])])
    with Store(db) as store:
        ingest_files(store, [good], READERS["perplexity"], ATTACHMENT)
    before = state(db)
    other = write_jsonl(tmp_path / "other.jsonl", payloads())
    broken = tmp_path / "broken.jsonl"
    # four good lines (two chunks of 2 are written), then line 5 is cut off after 12 characters
    broken.write_text(
        "".join(json.dumps(sonar(20 + n, [9])) + "\n" for n in range(4)) + '{"id": "x", \n', encoding="utf-8"
    )
    with Store(db) as store, pytest.raises(MalformedInput) as raised:
        ingest_files(store, [other, broken], READERS["perplexity"], ATTACHMENT, chunk=2)
    assert (raised.value.source, raised.value.location) == (str(broken), "line 5 column 13")
    assert state(db) == before


def test_a_file_already_imported_is_not_read_again(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "sonar.jsonl", payloads())
    told: list[int] = []
    with Store(tmp_path / "a.db") as store:
        ingest_files(store, [path], READERS["perplexity"], ATTACHMENT)
        ((_, _, report),) = ingest_files(
            store, [path], READERS["perplexity"], ATTACHMENT, progress=lambda _, n: told.append(n)
        )
    assert report.already_imported
    assert told == []  # no chunk was read


def test_the_command_imports_every_file_or_none(cli: Callable[..., Result], tmp_path: Path, db_path: Path) -> None:
    protocol = tmp_path / "protocol.yaml"
    protocol.write_text("id: p\nversion: '1'\nquestions:\n  - id: q1\n    text: Tell me about the AX220.\n")
    good = write_jsonl(tmp_path / "good.jsonl", payloads())
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(sonar(30, [1])) + "\n" + "{oops\n", encoding="utf-8")
    result = cli("ingest", good, broken, "--db", db_path, "--questions", protocol, "--format", "perplexity")
    assert result.exit_code == 2
    assert f"{broken}: line 2 column 2: invalid JSON" in result.stderr
    # a first import that fails leaves no database, not even a partial one beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.jsonl", "good.jsonl", "protocol.yaml"]
    result = cli("ingest", good, "--db", db_path, "--questions", protocol, "--format", "perplexity")
    assert result.exit_code == 0, result.stderr
    assert "7 answers, 18 claims, 17 edges" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["audit.db", "broken.jsonl", "good.jsonl", "protocol.yaml"]


def _edge_indexes(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'edges' ORDER BY name"
        ).fetchall()


def test_an_import_into_an_empty_database_ends_with_every_queue_index(tmp_path: Path) -> None:
    # the queue indexes are dropped while the first rows go in and built again at the end of the transaction
    Store(tmp_path / "empty.db").close()
    expected = _edge_indexes(tmp_path / "empty.db")
    assert [name for name, _ in expected if name.startswith("edges_queue")] == [
        "edges_queue",
        "edges_queue_keys",
    ]
    first = write_jsonl(tmp_path / "first.jsonl", payloads())
    second = write_jsonl(tmp_path / "second.jsonl", [sonar(40, [1, 9])])
    with Store(tmp_path / "a.db") as store:
        ingest_files(store, [first, second], READERS["perplexity"], ATTACHMENT, chunk=2)
        # every index entry matches its row; the queue reads through the rebuilt index
        assert store.connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        plan = " ".join(
            row[3]
            for row in store.connection.execute(
                "EXPLAIN QUERY PLAN SELECT pk FROM edges WHERE final_code = 5 "
                "ORDER BY ((pk * 2654435761) % 4294967296) LIMIT 10"
            )
        )
        assert "edges_queue" in plan
    assert _edge_indexes(tmp_path / "a.db") == expected


def test_a_failed_import_into_an_empty_database_keeps_its_queue_indexes(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    Store(db).close()
    before = state(db)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(sonar(0, [1])) + "\n" + '{"id": "x", \n', encoding="utf-8")
    with Store(db) as store, pytest.raises(MalformedInput):
        ingest_files(store, [broken], READERS["perplexity"], ATTACHMENT, chunk=1)
    assert state(db) == before


def test_reading_files_without_writing_gives_one_import_a_file(tmp_path: Path) -> None:
    from citeaudit.ingest import read_files

    first = write_jsonl(tmp_path / "first.jsonl", payloads())
    second = write_jsonl(tmp_path / "second.jsonl", [sonar(40, [1, 9])])
    imports = read_files([first, second], attachment=ATTACHMENT)  # formats recognised from the content
    assert [(item.source, item.reader.name) for item in imports] == [
        (str(first), "perplexity"),
        (str(second), "perplexity"),
    ]
    assert imports[0] == read_file(first, READERS["perplexity"], ATTACHMENT)
    assert imports[1].data == second.read_bytes()
