"""The import as `citeaudit ingest` runs it into a new database (chunks written by a second thread, secondary indexes
built after the rows, a rollback journal until the file is complete) stores exactly what the plain construction
stores: every chunk written in turn on the caller's thread, every index kept up to date row by row, into a
database in write-ahead-log mode. Compared table by table and row by row (keys included); only the columns
that hold the wall-clock time of the import are left out."""

from __future__ import annotations

import json
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import answer, claim, document, edge
from citeaudit import Store
from citeaudit.core.errors import DuplicateId, InputError
from citeaudit.ingest import Attachment, ingest_files, plan_imports
from citeaudit.interchange import load_audit, load_protocol
from citeaudit.store.bulk import IN_ORDER_INDEXES
from citeaudit.store.chunk_rows import rows_of
from citeaudit.store.writers import new_database

SHARED = Path(__file__).resolve().parents[2] / "shared"
RECORDINGS = SHARED / "data" / "engine-payloads"
PROTOCOL = load_protocol(Path(__file__).parent / "fixtures" / "protocol.yaml")

CLOCK = {("payloads", "created_at"), ("imports", "imported_at"), ("fact_locks", "locked_at")}
"""Columns that hold when the import ran."""


class PlainStore(Store):
    """The reference construction: no writer thread, no index built after the rows, every reference checked by
    SQLite as its row is written."""

    write_thread = False
    defer_indexes = False
    checked_references = True


class ThreadedStore(Store):
    """The store as the command opens it when a second core is idle: chunks written by the writer thread."""

    write_thread = True


def contents(db: Path) -> tuple[dict[str, list[tuple[Any, ...]]], list[tuple[str, str, str | None]]]:
    """Every table's rows (clock columns left out) in key order, and the schema's tables, indexes and triggers.
    Every reference in the file is checked first: the import writes its rows without SQLite's check of each."""
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA foreign_key_check").fetchall() == []
        tables = [name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        rows = {}
        for table in tables:
            columns = [column for (_, column, *_) in connection.execute(f"PRAGMA table_info('{table}')")]
            kept = ", ".join(f'"{c}"' for c in columns if (table, c) not in CLOCK)
            rows[table] = sorted(connection.execute(f'SELECT {kept} FROM "{table}"').fetchall(), key=repr)
        schema = sorted(connection.execute("SELECT type, name, sql FROM sqlite_master").fetchall(), key=repr)
    return rows, schema


def as_the_command_does(db: Path, files: list[Path], attachment: Attachment, chunk: int) -> None:
    with new_database(db) as target, ThreadedStore(target, new=target != db) as store:
        ingest_files(store, plan_imports(files), attachment=attachment, chunk=chunk)


def plainly(db: Path, files: list[Path], attachment: Attachment, chunk: int) -> None:
    with Store(db):
        pass  # an existing database, in write-ahead-log mode, before the import
    with PlainStore(db) as store:
        ingest_files(store, plan_imports(files), attachment=attachment, chunk=chunk)


def recordings() -> list[Path]:
    found = sorted(RECORDINGS.rglob("*.json"))
    if not found:
        pytest.skip(f"recorded engine payloads not found at {RECORDINGS} (see SOURCES.md there)")
    return found


def test_every_real_recording_is_stored_as_the_plain_construction_stores_it(tmp_path: Path) -> None:
    files = recordings()
    attachment = Attachment(PROTOCOL, question_id="q01")
    as_the_command_does(tmp_path / "fast.db", files, attachment, chunk=2)
    plainly(tmp_path / "plain.db", files, attachment, chunk=2)
    fast, plain = contents(tmp_path / "fast.db"), contents(tmp_path / "plain.db")
    assert sum(len(rows) for rows in plain[0].values()) > 0
    assert fast == plain
    with sqlite3.connect(tmp_path / "fast.db") as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


SITES = [f"https://www.site{n}.example.org" for n in range(30)]
SENTENCES = [
    "The AX220 has a 20 L tank",
    "It is rated IP54 and can run outdoors",
    "The maximum working pressure is 10 bar",
    "Axtorp gives a 3-year warranty on AX compressors",
    "Spare parts are supplied for 10 years, e.g. valves",
    "The AX300 needs a 400 V three-phase supply",
]


def sonar_lines(count: int, seed: int) -> Iterator[dict[str, Any]]:
    """Sonar responses as the benchmark makes them: pages cited again and again, one or two markers a sentence,
    some past the source list (dangling), some answers failed, cut off or reasoning first."""
    rng = random.Random(seed)
    for n in range(count):
        if rng.random() < 0.05:
            yield {"error": {"code": 429, "message": "rate limited"}}
            continue
        results = [
            {"title": f"Result {k}", "url": f"{rng.choice(SITES)}/p/{rng.randrange(20)}?utm_source=perplexity"}
            for k in range(rng.randrange(0, 9))
        ]
        parts = [
            f"{sentence} " + "".join(f"[{rng.randrange(1, 10)}]" for _ in range(rng.choice((1, 1, 2)))) + "."
            for sentence in rng.sample(SENTENCES, rng.randrange(1, 6))
        ]
        text = " ".join(parts)
        if rng.random() < 0.1:
            text = "<think>Looking at [1] first.</think>\n" + text
        finish = "length" if rng.random() < 0.05 else "stop"
        yield {
            "id": f"pplx-{n}",
            "model": "sonar-pro",
            "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", "content": text}}],
            "search_results": results,
        }


DENSE_URLS = [
    "{site}/d/{n}/{k}?utm_source=perplexity",
    "{site}/d/{n}/{k}?b=2&a=1#part",
    "HTTPS://WWW.Site7.Example.org:443/d/{n}/{k}",
    "https://user:pw@{host}:8080/d/{n}/{k}",
    "https://www.google.com/url?q={site}/g/{n}/{k}&sa=D",
    "https://{dashed}.cdn.ampproject.org/c/s/{host}/amp/{n}/{k}",
    "https://www.bing.com/ck/a?!&&p=1&u=a1aHR0cHM6Ly9icmFuZC5jb20vYXgyMjA&ntb=1",
    "https://bränd.example/d/{n}/{k}",
    "http://[2001:db8::{k}]/d/{n}",
    "{site}/d/{n}/{k}\t",
    "{site}/p/{k}",
]
"""URLs of dense answers: new pages, spelt in every way the keys fold (case, default ports, tracking parameters,
fragments, wrappers around them), some of them a page cited before under another spelling."""


def dense_lines(count: int, seed: int) -> Iterator[dict[str, Any]]:
    """Dense Sonar responses: 8 search results whose URLs are mostly new, and 8 sentences, each closed by a
    marker naming one of them (8 claims, 8 sources and 8 edges an answer)."""
    rng = random.Random(seed)
    for n in range(count):
        urls = []
        for k in range(8):
            site = rng.choice(SITES)
            host = site.removeprefix("https://")
            shape = DENSE_URLS[0] if rng.random() < 0.5 else rng.choice(DENSE_URLS)
            urls.append(shape.format(site=site, host=host, dashed=host.replace(".", "-"), n=n, k=k))
        text = " ".join(f"{sentence} [{k}]." for k, sentence in enumerate(rng.sample(SENTENCES * 2, 8), start=1))
        yield {
            "id": f"pplx-{n}",
            "model": "sonar-pro",
            "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "search_results": [{"title": f"Result {k}", "url": url} for k, url in enumerate(urls)],
        }


def write_lines(path: Path, rows: Iterator[dict[str, Any]] | list[Any]) -> Path:
    import json

    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(("seed", "chunk"), [(1, 1), (2, 7), (3, 64)])
def test_synthetic_sonar_answers_are_stored_as_the_plain_construction_stores_them(
    tmp_path: Path, seed: int, chunk: int
) -> None:
    first = write_lines(tmp_path / "a.jsonl", sonar_lines(150, seed))
    second = write_lines(tmp_path / "b.jsonl", sonar_lines(40, seed + 100))  # a second import reuses sources
    attachment = Attachment(PROTOCOL, run_id="bench", question_id="q01")
    as_the_command_does(tmp_path / "fast.db", [first, second], attachment, chunk)
    plainly(tmp_path / "plain.db", [first, second], attachment, chunk)
    fast, plain = contents(tmp_path / "fast.db"), contents(tmp_path / "plain.db")
    assert len(plain[0]["edges"]) > 100
    assert fast == plain


@pytest.mark.parametrize(("seed", "chunk"), [(1, 1), (2, 7), (3, 64)])
def test_dense_answers_are_stored_as_the_plain_construction_stores_them(tmp_path: Path, seed: int, chunk: int) -> None:
    first = write_lines(tmp_path / "a.jsonl", dense_lines(60, seed))
    second = write_lines(tmp_path / "b.jsonl", dense_lines(20, seed))  # the same pages again: no new source
    attachment = Attachment(PROTOCOL, run_id="bench", question_id="q01")
    as_the_command_does(tmp_path / "fast.db", [first, second], attachment, chunk)
    plainly(tmp_path / "plain.db", [first, second], attachment, chunk)
    fast, plain = contents(tmp_path / "fast.db"), contents(tmp_path / "plain.db")
    # 80 answers of 8 sentences, each a claim with one edge: 80 x 8 = 640 claims and edges; the first file's
    # 480 URLs are 8 a line, most of them new (the second file cites the same ones: no source of its own)
    assert len(plain[0]["claims"]) == len(plain[0]["edges"]) == 640
    assert 200 < len(plain[0]["sources"]) <= 480
    assert fast == plain


def test_a_dense_answers_sources_are_keyed_and_located_as_their_urls_say(tmp_path: Path) -> None:
    """Sources written many to a statement: each row by hand, and each tied once to the protocol."""
    urls = [
        "HTTPS://WWW.Site7.Example.org:443/d/1?utm_source=x&b=2&a=1#top",
        "https://www.google.com/url?q=https://brand.com/ax220&sa=D",
        "https://user:pw@brand.com:8080/x",
        "https://www.site7.example.org/d/1?a=1&b=2",  # the first page again, spelt another way
    ]
    line = {
        "id": "pplx-0",
        "model": "sonar-pro",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "A [1]. B [2]. C [3]. D [4]."}}],
        "search_results": [{"title": f"R{k}", "url": url} for k, url in enumerate(urls)],
    }
    payload = write_lines(tmp_path / "a.jsonl", [line])
    as_the_command_does(tmp_path / "a.db", [payload], Attachment(PROTOCOL, run_id="r", question_id="q01"), 2)
    with sqlite3.connect(tmp_path / "a.db") as db:
        rows = db.execute("SELECT key, url, title, status, host, path FROM sources ORDER BY pk").fetchall()
        tied = db.execute("SELECT count(*), count(DISTINCT source_pk) FROM protocol_sources").fetchone()
        edges = db.execute("SELECT count(*) FROM edges").fetchone()[0]
    # keys: scheme and host lower-cased, the default port, the fragment and utm_ parameters dropped, the rest of
    # the query sorted; a Google click wrapper keyed by its target; user info dropped, another port kept
    assert rows == [
        ("https://www.site7.example.org/d/1?a=1&b=2", urls[0], "R0", "pending", "www.site7.example.org", "/d/1"),
        ("https://brand.com/ax220", urls[1], "R1", "pending", "brand.com", "/ax220"),
        ("https://brand.com:8080/x", urls[2], "R2", "pending", "brand.com", "/x"),
    ]
    assert tied == (3, 3)
    assert edges == 4  # four claims, each citing one of the three pages (the first two the same one)


def test_a_source_row_is_sent_once_as_first_seen_whatever_spelling_cites_it_later() -> None:
    """Chunks of one answer: the page first cited as ``first`` is sent with the first chunk, under that spelling;
    another spelling of it in a later chunk sends nothing again, and the first spelling cited once more neither."""
    from citeaudit.ingest import READERS
    from citeaudit.ingest.assemble import assemble_rows

    first, again = "https://www.site7.example.org/d/1?utm_source=x", "HTTPS://WWW.Site7.Example.org:443/d/1#top"
    other = "https://brand.com/ax220"
    cited = [[first], [again, other], [first]]
    lines = [
        {
            "id": f"pplx-{n}",
            "model": "sonar-pro",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "A [1]. B [2]."}}],
            "search_results": [{"title": f"R{n}.{k}", "url": url} for k, url in enumerate(urls)],
        }
        for n, urls in enumerate(cited)
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    reader = READERS["perplexity"]
    assert reader.read_answers is not None
    chunks = list(
        assemble_rows(
            reader.read_answers(data, "a.jsonl"),
            Attachment(PROTOCOL, run_id="r", question_id="q01"),
            "a.jsonl",
            "0" * 64,
            "perplexity",
            size=1,
        )
    )
    sent = [[(row[0], row[1], row[3]) for row in chunk.sources] for chunk in chunks]
    # (key, url, title): the page keyed without the tracking parameter, the default port and the fragment
    page = "https://www.site7.example.org/d/1"
    assert sent == [[(page, first, "R0.0")], [("https://brand.com/ax220", other, "R1.1")], []]


def test_a_second_import_into_a_database_with_rows_is_stored_alike(tmp_path: Path) -> None:
    """Into tables that already hold rows no index is dropped; the writer thread still writes the chunks."""
    first = write_lines(tmp_path / "a.jsonl", sonar_lines(60, 5))
    second = write_lines(tmp_path / "b.jsonl", sonar_lines(60, 6))
    attachment = Attachment(PROTOCOL, run_id="bench", question_id="q01")
    for name, kind in (("fast.db", ThreadedStore), ("plain.db", PlainStore)):
        for path in (first, second):
            with kind(tmp_path / name) as store:
                ingest_files(store, [path], attachment=attachment, chunk=9)
    assert contents(tmp_path / "fast.db") == contents(tmp_path / "plain.db")


def test_bad_input_after_chunks_were_written_leaves_the_database_and_its_indexes_as_they_were(
    tmp_path: Path,
) -> None:
    db = tmp_path / "ledger.db"
    with Store(db):
        pass
    before = contents(db)
    rows: list[Any] = list(sonar_lines(40, 8))
    rows[33] = {"choices": "not a list"}
    path = write_lines(tmp_path / "bad.jsonl", rows)
    with ThreadedStore(db) as store, pytest.raises(InputError) as caught:
        ingest_files(store, [path], attachment=Attachment(PROTOCOL, run_id="bench", question_id="q01"), chunk=4)
    assert str(caught.value).startswith(f"{path}: line 34: choices")
    assert contents(db) == before


def test_a_clash_found_by_the_writer_is_raised_and_nothing_of_the_import_is_kept(tmp_path: Path) -> None:
    """An answer id already in the database is found while writing (on the writer thread): the same one-line
    error as the plain construction gives, and the database as it was."""
    attachment = Attachment(PROTOCOL, run_id="bench", question_id="q01")
    rows = [dict(row, answer_id=f"a{n}") for n, row in enumerate(sonar_lines(30, 9)) if "choices" in row]
    earlier = write_lines(tmp_path / "earlier.jsonl", rows[20:22])
    later = write_lines(tmp_path / "later.jsonl", rows)
    messages = []
    for name, kind in (("fast.db", ThreadedStore), ("plain.db", PlainStore)):
        with kind(tmp_path / name) as store:
            ingest_files(store, [earlier], attachment=attachment)
        before = contents(tmp_path / name)
        with kind(tmp_path / name) as store, pytest.raises(DuplicateId) as caught:
            ingest_files(store, [later], attachment=attachment, chunk=4)
        messages.append(str(caught.value))
        assert contents(tmp_path / name) == before
    assert messages[0] == messages[1]
    assert "already in the database" in messages[0]


@pytest.mark.parametrize("table", ["answers", "claims"])
def test_an_id_written_twice_while_its_index_is_kept_is_the_same_one_line_error(
    tmp_path: Path, four_claim_path: Path, table: str
) -> None:
    """With a worker reading (``overlapped``), the answers' and claims' unique indexes are kept while the rows are
    written: an id written twice is refused as its row is written, and named as when the index is made after the
    rows; nothing of the import is kept."""
    audit = load_audit(four_claim_path)
    first = rows_of(audit)
    if table == "answers":  # the same chunk twice: its first answer id comes again first
        second, twice = first, f"answer id {audit.answers[0].id!r}"
    else:  # other answer ids, the same claim ids: the first claim's comes again first
        second = first._replace(answers=[(f"other-{row[0]}", *row[1:]) for row in first.answers])
        twice = f"claim id {audit.claims[0].id!r}"
    db = tmp_path / "ledger.db"
    with Store(db):
        pass
    before = contents(db)
    with Store(db) as store, pytest.raises(DuplicateId) as caught:
        store.import_chunks([first, second], b"an id twice", "twice.json", overlapped=True)
    assert str(caught.value) == f"twice.json: {table}: {twice} is written twice by this import"
    assert contents(db) == before


@pytest.mark.parametrize("overlapped", [True, False])
def test_with_a_worker_reading_the_answers_and_claims_indexes_are_kept_while_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, overlapped: bool
) -> None:
    import citeaudit.store.sqlite as sqlite_store
    from citeaudit.store.bulk import OVERLAPPED_INDEXES

    made: list[str] = []
    make = sqlite_store.make_indexes
    monkeypatch.setattr(
        sqlite_store,
        "make_indexes",
        lambda db, statements, origin: made.extend(statements) or make(db, statements, origin),
    )
    db = tmp_path / "ledger.db"
    path = write_lines(tmp_path / "a.jsonl", sonar_lines(20, 3))
    with Store(db) as store:
        ingest_files(
            store, [path], "perplexity", attachment=Attachment(PROTOCOL, question_id="q01"), chunk=5, worker=overlapped
        )
    after = {statement.split()[2] if statement.split()[1] == "INDEX" else statement.split()[3] for statement in made}
    # made after the rows: every secondary index but those kept in order, and but these with a worker reading
    assert (after & OVERLAPPED_INDEXES == set()) is overlapped
    assert "citations_source" in after
    with sqlite3.connect(db) as connection:
        names = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert names >= OVERLAPPED_INDEXES  # there at the end either way


def test_an_id_written_twice_into_empty_tables_is_found_when_its_index_is_made(
    tmp_path: Path, four_claim_path: Path
) -> None:
    """Into empty tables the import drops their unique indexes too and looks no id up (nothing was stored before
    it): an id its own chunks write twice, which a reader refuses first, is found when the index is made again, as
    the one-line error naming it, and nothing of the import is kept."""
    audit = load_audit(four_claim_path)
    db = tmp_path / "ledger.db"
    with Store(db):
        pass
    before = contents(db)
    first = audit.answers[0].id  # the answers' unique index is made first (unique ones first, by table name)
    with ThreadedStore(db) as store, pytest.raises(DuplicateId) as caught:
        store.import_chunks([rows_of(audit), rows_of(audit)], b"the same audit twice", "twice.json")
    assert str(caught.value) == f"twice.json: answers: answer id {first!r} is written twice by this import"
    assert contents(db) == before  # the indexes too: made again by the rollback
    with ThreadedStore(db) as store:  # the same chunk once is written, the indexes made from its rows
        store.import_chunks([rows_of(audit)], b"the audit once", "once.json")
    with sqlite3.connect(db) as connection:
        names = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"answers_id", "claims_id", "sources_key", "citations_answer_ordinal", "edges_claim_source"} <= names


@pytest.mark.parametrize("store_kind", [ThreadedStore, PlainStore])
@pytest.mark.parametrize("earlier", [False, True])
def test_a_citation_or_an_edge_a_chunk_holds_twice_is_named_and_nothing_is_written(
    tmp_path: Path, four_claim_path: Path, exporter_path: Path, store_kind: type[Store], earlier: bool
) -> None:
    """The unique indexes of citations and edges are written with the rows (into empty tables too: their keys come
    in order), so a chunk holding a citation or an edge twice, which the readers collapse first, is refused as it is
    written: the one-line error names the answer's citation or the claim's edge, and the transaction is rolled
    back, into empty tables and into tables holding rows alike."""
    audit = load_audit(four_claim_path)
    db = tmp_path / "ledger.db"
    with Store(db):
        pass
    if earlier:
        with store_kind(db) as store:
            store.import_audit(load_audit(exporter_path), b"another audit before", origin="before.json")
    before = contents(db)
    rows = rows_of(audit)
    cited = rows.citations[1]
    answer_id = rows.answers[cited[0]][0]
    edge = rows.edges[2]
    claim_id = rows.claims[edge[0]][0]
    twice = {
        "citations": (
            rows._replace(citations=[*rows.citations, cited]),
            f"twice.json: citations: citation {cited[1]} of answer {answer_id!r} is written twice by this import",
        ),
        "edges": (
            rows._replace(edges=[*rows.edges, edge]),
            f"twice.json: edges: edge from claim {claim_id!r} to source {edge[1]!r} is written twice by this import",
        ),
    }
    for chunk, message in twice.values():
        with store_kind(db) as store, pytest.raises(DuplicateId) as caught:
            store.import_chunks([chunk], b"a chunk with a row twice", "twice.json")
        assert str(caught.value) == message
        assert contents(db) == before


@pytest.mark.parametrize("store_kind", [ThreadedStore, PlainStore])
def test_a_row_refused_inside_a_statement_of_many_rows_leaves_nothing(
    tmp_path: Path, four_claim_path: Path, store_kind: type[Store]
) -> None:
    """The import writes up to 64 rows to a statement, as INSERT OR FAIL (no statement journal): a row refused in
    the middle of a statement leaves the rows before it in place until the transaction is rolled back, which
    then takes them too. Here one answer has 100 citations and the 41st holds the 40th's ordinal again: the first
    statement stops at its 41st row, with 40 rows of it written."""
    audit = load_audit(four_claim_path)
    db = tmp_path / "ledger.db"
    with Store(db):
        pass
    before = contents(db)
    rows = rows_of(audit)
    cited = rows.citations[1]
    answer_id = rows.answers[cited[0]][0]
    many = [(cited[0], ordinal, *cited[2:]) for ordinal in range(100)]
    many.insert(40, many[39])  # ordinal 39 twice: rows 40 and 41 of the first statement of 64
    with store_kind(db) as store, pytest.raises(DuplicateId) as caught:
        store.import_chunks([rows._replace(citations=many)], b"a statement stopped half way", "half.json")
    assert str(caught.value) == (
        f"half.json: citations: citation 39 of answer {answer_id!r} is written twice by this import"
    )
    assert contents(db) == before


def test_every_statement_of_many_rows_an_import_writes_keeps_no_statement_journal(
    tmp_path: Path, four_claim_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite keeps a statement journal (a copy of every page a statement of several rows changes) for a statement
    that may stop half way and undo its rows (ABORT, the default), but not for INSERT OR FAIL or OR IGNORE: every
    statement the import writes rows with is one of those (20 000 Sonar answers wrote 263 MB of copies without)."""
    import citeaudit.store.importing as importing

    written: list[str] = []
    insert_rows = importing.insert_rows

    def recorded(db: sqlite3.Connection, sql: str, rows: Any) -> None:
        written.append(sql)
        insert_rows(db, sql, rows)

    monkeypatch.setattr(importing, "insert_rows", recorded)
    with Store(tmp_path / "ledger.db") as store:
        store.import_audit(load_audit(four_claim_path), b"the audit", origin="audit.json")
    tables = {sql.split(" INTO ", 1)[1].split()[0] for sql in written}
    # every table an import writes in bulk: sources and their protocol, answers, citations, claims, edges, locations
    assert tables == {"sources", "protocol_sources", "answers", "citations", "claims", "edges", "edge_locations"}
    assert [sql for sql in written if not sql.startswith(("INSERT OR FAIL INTO ", "INSERT OR IGNORE INTO "))] == []


def test_the_indexes_an_import_writes_with_its_rows_lead_with_a_parent_the_import_numbers_upward(
    tmp_path: Path,
) -> None:
    """Each index kept while an import writes into empty tables exists in the schema and leads with the row id of
    the row's parent (an answer, a claim, an edge), which the import gives out upward: its entries go at the end,
    as the rows do. An index renamed by a migration, or one keyed in no order, fails this."""
    db = tmp_path / "ledger.db"
    with Store(db):
        pass
    with sqlite3.connect(db) as connection:
        for name in sorted(IN_ORDER_INDEXES):
            columns = [column for (_, _, column) in connection.execute(f"PRAGMA index_info('{name}')")]
            assert columns, f"no index {name}"
            assert columns[0] in {"answer_pk", "claim_pk", "edge_pk"}, (name, columns)


# -- the sentence splitter's shortcuts decide as its rules do -------------------------------------------------

_TEXT = st.text(alphabet="aZ.e g]) [(\"'”»\u00a0\t\n5Inc.St", max_size=60)


@settings(max_examples=400, deadline=None)
@given(text=_TEXT, cut=st.integers(0, 60))
def test_a_full_stop_after_a_closing_bracket_is_judged_as_the_rules_judge_it(text: str, cut: int) -> None:
    from citeaudit.ingest import sentences

    for dot in (i for i, char in enumerate(text) if char == "." and i > 0 and text[i - 1] in "])"):
        limit = min(len(text), max(dot + 1, cut))
        assert sentences.is_abbreviation(text, dot, limit) == sentences._by_rules(text, dot, limit)


def _add_by_loops(text: str, begin: int, stop: int, end: int, region: int) -> list[tuple[int, int, int, int]]:
    """The sentence bounds as first written: white space skipped a character at a time."""
    while begin < stop and text[begin].isspace():
        begin += 1
    while stop > begin and text[stop - 1].isspace():
        stop -= 1
    if begin >= stop:
        return []
    trailing = end
    while trailing > stop and text[trailing - 1].isspace():
        trailing -= 1
    return [(begin, stop, max(stop, trailing), region)]


@settings(max_examples=400, deadline=None)
@given(text=st.text(alphabet="ab. \t\u00a0\u2028\u3000x", max_size=30), data=st.data())
def test_sentence_bounds_skip_white_space_as_the_character_loops_did(text: str, data: st.DataObject) -> None:
    from citeaudit.ingest import sentences

    begin = data.draw(st.integers(0, len(text)))
    stop = data.draw(st.integers(begin, len(text)))
    end = data.draw(st.integers(0, len(text)))
    found: list[sentences.Sentence] = []
    sentences._add(text, begin, stop, end, 0, found)
    assert [tuple(s) for s in found] == _add_by_loops(text, begin, stop, end, 0)


# -- the chunk writer -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("threaded", [True, False])
def test_the_chunk_writer_writes_every_chunk_in_order_and_hands_back_what_each_returned(threaded: bool) -> None:
    from citeaudit.store.pipeline import ChunkWriter

    written: list[int] = []

    def write(chunk: int) -> int:
        written.append(chunk)
        return chunk * 10

    import sys

    interval = sys.getswitchinterval()
    told: list[int] = []
    with ChunkWriter(write, threaded=threaded) as writer:
        for chunk in range(25):
            told.extend(writer.put(chunk))
        told.extend(writer.finish())
    assert sys.getswitchinterval() == interval  # as it was before the writer ran
    assert written == list(range(25))
    assert told == [chunk * 10 for chunk in range(25)]


def test_an_error_in_the_writer_is_raised_on_the_callers_thread_and_no_later_chunk_is_written() -> None:
    from citeaudit.store.pipeline import ChunkWriter

    written: list[int] = []

    def write(chunk: int) -> int:
        if chunk == 3:
            raise DuplicateId("f.jsonl", "answers[3].id", "answer 'a3' is already in the database")
        written.append(chunk)
        return chunk

    def run() -> None:
        with ChunkWriter(write) as writer:
            for chunk in range(50):
                writer.put(chunk)
            writer.finish()

    with pytest.raises(DuplicateId, match="a3"):
        run()
    assert written == [0, 1, 2]


def test_an_error_on_the_callers_thread_stops_the_writer_before_the_block_is_left() -> None:
    import threading

    from citeaudit.store.pipeline import ChunkWriter

    started = threading.Event()
    written: list[int] = []

    def write(chunk: int) -> int:
        started.set()
        written.append(chunk)
        return chunk

    def run() -> None:
        with ChunkWriter(write) as writer:
            writer.put(0)
            started.wait(5)
            raise InputError("f.jsonl", "line 2", "not JSON")

    with pytest.raises(InputError):
        run()
    count = len(written)
    assert written == list(range(count))
    assert not any(thread.name == "citeaudit-import-writer" for thread in threading.enumerate())


@pytest.mark.parametrize(
    ("cores", "load", "runnable", "idle"),
    [
        (2, 0.4, 1, True),  # this thread alone runnable, the minute quiet
        (2, 1.0, 1, True),  # the minute's average lags: right now nothing else runs
        (2, 1.9, 1, True),
        (2, 1.0, 2, False),  # another thread runs right now: no core is idle
        (2, 2.5, 1, True),  # a busy minute (imports run one after the other): idle at each of the five counts
        (2, 3.9, 1, True),
        (2, 4.0, 1, False),  # twice the cores over the minute: busy, whatever the moment says
        (2, 7.5, 1, False),
        (2, 2.5, 2, False),
        (1, 0.0, 1, False),  # one core only
        (8, 6.9, 7, True),
        (8, 6.9, 8, False),
        (2, 0.4, None, True),  # no count of the moment: the average alone, below the cores less one
        (2, 1.0, None, False),
        (8, 6.9, None, True),
    ],
)
def test_the_writer_thread_runs_only_when_a_second_core_is_idle(
    monkeypatch: pytest.MonkeyPatch, cores: int, load: float, runnable: int | None, idle: bool
) -> None:
    from citeaudit.store import pipeline

    monkeypatch.setattr(pipeline, "usable_cores", lambda: cores)
    monkeypatch.setattr(pipeline.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(pipeline.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(pipeline, "runnable_now", lambda: runnable)
    assert pipeline.second_core_idle() is idle


@pytest.mark.parametrize(
    ("counts", "idle"),
    [
        ([1, 1, 1, 1, 1], True),
        ([1, 1, 1, 2], False),  # the fourth count finds another thread runnable: it stops there
        ([1, 2], False),
        ([1, 1, None], False),  # the count went missing: no guide
    ],
)
def test_after_a_busy_minute_the_threads_are_counted_five_times(
    monkeypatch: pytest.MonkeyPatch, counts: list[int | None], idle: bool
) -> None:
    """A load average of one to two times the cores (a script importing file after file, each import with its
    worker, keeps it near the number of cores): a core is idle only if every count, a few milliseconds apart,
    finds fewer threads runnable than cores. Below the cores' number the first count decides alone."""
    from citeaudit.store import pipeline

    given = iter(counts)
    slept: list[float] = []
    monkeypatch.setattr(pipeline, "usable_cores", lambda: 2)
    monkeypatch.setattr(pipeline.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(pipeline.os, "getloadavg", lambda: (2.3, 2.1, 1.6))
    monkeypatch.setattr(pipeline, "runnable_now", lambda: next(given))
    monkeypatch.setattr(pipeline.time, "sleep", slept.append)
    assert pipeline.LOOKS == 5
    assert pipeline.second_core_idle() is idle
    assert list(given) == []  # counted until the first busy count, or five times: every count given was taken
    # one pause before each count after the first
    assert slept == [pipeline.LOOK_SECONDS] * (len(counts) - 1)

    monkeypatch.setattr(pipeline.os, "getloadavg", lambda: (1.9, 2.1, 1.6))  # a quiet minute: one count decides
    given = iter(counts)
    slept.clear()
    assert pipeline.second_core_idle() is True
    assert next(given) == counts[1]  # the first count alone was taken
    assert slept == []


def test_the_count_of_the_moment_is_the_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    """``runnable_now`` reads the fourth field of /proc/loadavg (this thread, running as it reads, is counted);
    without the file there is no count."""
    from citeaudit.store import pipeline

    found = pipeline.runnable_now()
    assert found is not None
    assert found >= 1

    def missing(*args: object, **kwargs: object) -> None:
        raise FileNotFoundError("/proc/loadavg")

    monkeypatch.setattr(pipeline, "open", missing, raising=False)
    assert pipeline.runnable_now() is None


def test_without_a_load_average_the_writer_thread_does_not_run(monkeypatch: pytest.MonkeyPatch) -> None:
    from citeaudit.store import pipeline

    def unknown() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(pipeline.os, "getloadavg", unknown)
    assert pipeline.second_core_idle() is False


def test_an_imports_report_counts_its_citations_by_kind_and_its_judgements(tmp_path: Path) -> None:
    # counted at C speed over every row (store/importing.py): each count below is the rows that have it
    review = {"label": "supported", "origin": "human", "reviewer": "ann", "stage": "review"}
    second = {"label": "partial", "origin": "human", "reviewer": "bob", "stage": "review"}
    doc = document(
        [
            answer("a1", citations=["https://brand.example/ax220"]),  # cited, no position: unplaced
            answer("a2", citations=["https://brand.example/ax300", "https://shop.example/ax300"]),  # two more
        ],
        [claim("c1", "a1"), claim("c2", "a2")],
        [
            edge("c1", "https://brand.example/ax220", judgements=[review, second]),
            edge("c2", "https://brand.example/ax300", judgements=[review]),
        ],
    )
    doc["answers"][1]["citations"] += [
        {"url": "https://other.example/", "kind": "retrieved"},  # retrieved: not cited, never unplaced
        {"marker": "[7]", "kind": "dangling", "start": 0, "end": 3},  # dangling: a marker with no source
        {"url": "https://shop.example/ax300", "marker": "[1]", "start": 4, "end": 7},  # placed: not unplaced
    ]
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with Store(tmp_path / "counts.db") as store:
        ((_, _, report),) = ingest_files(store, [path])
    # judgements: 2 on c1's edge + 1 on c2's = 3; unplaced: a1's one + a2's two listed without a position = 3 (the
    # placed, retrieved and dangling ones are not); one retrieved, one dangling
    assert (report.judgements, report.unplaced, report.retrieved, report.dangling) == (3, 3, 1, 1)
